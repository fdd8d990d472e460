"""DistributedAgent in a real Jupyter kernel (nbclient): `await agent.atrain(...)`, the plain `agent.train(...)` under the
kernel's running loop, `agent.start(...)` + reading `agent.metrics` from later cells + `await agent.stop()`, a cell interrupt
during `await agent.atrain(...)` (checkpoint written), and nothing (child process, rlnb thread, task) left running afterwards."""
import json
import time

import nbformat
import psutil
import pytest
from nbclient import NotebookClient
from nbclient.util import run_sync

pytestmark = pytest.mark.slow  # the slow tier: agents in a real Jupyter kernel

CELLS = [
    """
import asyncio, threading, time, psutil
from pathlib import Path
from rlnb.agent.agent import DistributedAgent, list_checkpoints
threads_before = {t.ident for t in threading.enumerate()}
agent = DistributedAgent('CartPole-v1', tag='kernel', seed=0, work_dir=WORK_DIR, num_learners=2, num_actors=2, envs_per_actor=4, actor_mode='process',
                         hidden=(32, 32), buffer_warmup=256, buffer_capacity=20_000)
children_before = psutil.Process().children(recursive=True)
""",
    """
res = await agent.atrain(600, eval_interval=None, save_interval=None, progress=False, verbose=False)
import os, json
pids = [p.pid for p in psutil.Process().children(recursive=True) if 'resource_tracker' not in ' '.join(p.cmdline())]
assert len(pids) >= 2  # the actors' env processes
print(json.dumps(dict(kernel=os.getpid(), children=pids)))
""",

    "res = await agent.atrain(1_000, eval_interval=500, save_interval=500, num_eval_episodes=2, log_interval=0.5)",
    """
assert res['env_steps'] >= 1_000 and res['eval'] is not None and Path(res['checkpoint']).exists(), res
r2 = agent.train(1_500, eval_interval=None, save_interval=None, num_eval_episodes=2, progress=False, verbose=False)  # plain form, loop running
assert r2['env_steps'] >= 1_500 and r2['updates'] > res['updates'], r2
""",
    "task = agent.start(1_000_000, eval_interval=None, save_interval=None, log_interval=0.2)\nassert agent.running",
    """
t0, start_steps = time.monotonic(), agent.metrics['env_steps']
while agent.metrics['env_steps'] < start_steps + 500:  # the loop is free while this cell awaits: training proceeds
    assert time.monotonic() - t0 < 120, agent.metrics
    await asyncio.sleep(0.1)
""",
    """
m = agent.metrics  # a plain cell reads the live metrics
assert m['running'] and m['env_steps'] >= start_steps + 500 and m['env_steps_per_s'] > 0, m
""",
    """
out = await agent.stop()
assert out['stopped'] and not agent.running and Path(out['checkpoint']).exists() and list_checkpoints(WORK_DIR)
fig = agent.plot(Path(WORK_DIR) / 'curve.png')
""",
]

INTERRUPTED = "await agent.atrain(10**7, eval_interval=None, save_interval=None, log_interval=0.1, progress=False, verbose=False)"

AFTER_INTERRUPT = [
    """
assert not agent.running and agent.last_checkpoint.name == f"ckpt-{agent.algo.env_steps:012d}.msgpack", agent.last_checkpoint
assert agent.last_checkpoint.exists()  # the interrupted cell still wrote its checkpoint
await agent.aclose()
""",
    """
import json, gc
gc.collect()
t0 = time.monotonic()
while time.monotonic() - t0 < 10:  # processes and threads get a moment to be reaped
    children = [p for p in psutil.Process().children(recursive=True)  # multiprocessing's resource tracker lives as long as the kernel, by design
                if p.status() != psutil.STATUS_ZOMBIE and 'resource_tracker' not in ' '.join(p.cmdline())]
    new_threads = [t.name for t in threading.enumerate() if t.ident not in threads_before and not t.name.startswith('asyncio_')]
    if not children and not new_threads: break
    time.sleep(0.2)
tasks = [t.get_name() for t in asyncio.all_tasks() if not t.done() and t.get_name().startswith(('rlnb', 'kernel'))]
print(json.dumps(dict(children=[' '.join(p.cmdline()) for p in children], threads=new_threads, tasks=tasks, env_steps=agent.algo.env_steps)))
""",
]


def test_agent_in_a_jupyter_kernel(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"WORK_DIR = {str(tmp_path / 'run')!r}")] + [nbformat.v4.new_code_cell(c.strip()) for c in CELLS]
    after = [nbformat.v4.new_code_cell(c.strip()) for c in AFTER_INTERRUPT]
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        for i, cell in enumerate(nb.cells): client.execute_cell(cell, i)
        # a cell interrupt (the kernel's SIGINT) while `await agent.atrain(...)` runs
        metrics, rows = tmp_path / "run" / "metrics.csv", None
        rows0 = len(metrics.read_text().splitlines())
        msg_id = client.kc.execute(INTERRUPTED)
        t0 = time.monotonic()
        while len(metrics.read_text().splitlines()) < rows0 + 3:  # it is training
            assert time.monotonic() - t0 < 120, "the interrupted cell never trained"
            time.sleep(0.1)
        run_sync(client.km.interrupt_kernel)()
        while True:
            assert time.monotonic() - t0 < 300, "no reply to the interrupted cell"
            reply = run_sync(client.kc.get_shell_msg)(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id: break
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] in ("KeyboardInterrupt", "CancelledError"), reply["content"]
        n = len(nb.cells)
        nb.cells += after
        for j, cell in enumerate(after): client.execute_cell(cell, n + j)
    last = [o for o in nb.cells[-1].outputs if o.get("name") == "stdout"]
    report = json.loads(last[-1]["text"].strip().splitlines()[-1])
    assert report == dict(children=[], threads=[], tasks=[], env_steps=report["env_steps"]), report
    assert report["env_steps"] >= 2_000
    # the kernel has exited: neither it nor the env processes it started (their pids, printed while they ran) is left
    pids = json.loads([o for o in nb.cells[2].outputs if o.get("name") == "stdout"][-1]["text"].strip().splitlines()[-1])
    assert len(pids["children"]) >= 2
    def alive(pid):
        try: return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess: return False
    t0 = time.monotonic()
    while any(alive(p) for p in [pids["kernel"], *pids["children"]]) and time.monotonic() - t0 < 10: time.sleep(0.2)
    assert not [p for p in [pids["kernel"], *pids["children"]] if alive(p)], pids


CYCLES = """
import asyncio, gc, json, os, threading, time, psutil
from rlnb.agent.agent import DistributedAgent
agent = DistributedAgent('CartPole-v1', tag='cycles', seed=0, work_dir=WORK_DIR, num_learners=1, num_actors=2, envs_per_actor=4,
                         actor_mode='process', hidden=(32, 32), buffer_warmup=256, buffer_capacity=20_000)
me = psutil.Process()
def snapshot():
    gc.collect()
    return dict(threads=sorted(t.name for t in threading.enumerate()), tasks=len([t for t in asyncio.all_tasks() if not t.done()]), fds=me.num_fds(),
                children=len([p for p in me.children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]))
async def cycle():
    agent.start(10**9, eval_interval=None, save_interval=None, log_interval=0)
    s0, t0 = agent.metrics['env_steps'], time.monotonic()
    while agent.metrics['env_steps'] < s0 + 40:  # it trains between start and stop
        assert time.monotonic() - t0 < 120, agent.metrics
        await asyncio.sleep(0.005)
    out = await agent.stop()
    assert out['stopped'] and not agent.running
for _ in range(3): await cycle()  # warm-up: compiles, the replay's storage, the first checkpoints
before, t0 = snapshot(), time.monotonic()
for _ in range(100): await cycle()
seconds = time.monotonic() - t0
grew = lambda a: [k for k in a if len(a[k] if k == 'threads' else [0] * a[k]) > len(before[k] if k == 'threads' else [0] * before[k])]
while grew(after := snapshot()) and time.monotonic() - t0 - seconds < 10: time.sleep(0.1)  # a thread that is ending gets a moment
print(json.dumps(dict(before=before, after=after, grew=grew(after), seconds=seconds, env_steps=agent.algo.env_steps)))
await agent.aclose()
"""


def _cycles_report(tmp_path, code: str) -> dict:
    "Run `code` in a fresh kernel (with `WORK_DIR` set) and return the JSON report its last stdout line prints."
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"WORK_DIR = {str(tmp_path / 'run')!r}"), nbformat.v4.new_code_cell(code.strip())]
    client = NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    out = [o for o in nb.cells[-1].outputs if o.get("name") == "stdout"]
    return json.loads(out[-1]["text"].strip().splitlines()[-1])


def test_start_stop_100_cycles_in_a_kernel_leaks_nothing(tmp_path):
    "100 `agent.start()` / `await agent.stop()` cycles in one kernel, process actors: no growth in threads, tasks, fds or child processes."
    report = _cycles_report(tmp_path, CYCLES)
    print(f"\n100 start/stop cycles: {report}")
    assert report["grew"] == [], report  # multiprocessing's QueueFeederThread comes and goes with a queue's traffic: counts, not names, are compared
    assert report["env_steps"] >= 103 * 40


STEER_CYCLES = """
import asyncio, gc, json, tempfile, threading, time, psutil
from rlnb.agent.agent import DistributedAgent
agent = DistributedAgent('CartPole-v1', tag='steer-cycles', seed=0, work_dir=WORK_DIR, num_learners=1, num_actors=2, envs_per_actor=4,
                         hidden=(32, 32), buffer_warmup=256, buffer_capacity=20_000)
me, lr = psutil.Process(), agent.config.learning_rate
def snapshot():
    gc.collect()
    return dict(threads=sorted(t.name for t in threading.enumerate()), tasks=len([t for t in asyncio.all_tasks() if not t.done()]),
                fds=me.num_fds(), rss_mb=me.memory_info().rss / 2**20)
async def cycle(i):
    agent.start(10**9, eval_interval=None, save_interval=None, log_interval=0)
    s0, t0 = agent.metrics['env_steps'], time.monotonic()
    while agent.metrics['env_steps'] < s0 + 40:
        assert time.monotonic() - t0 < 120, agent.metrics
        await asyncio.sleep(0.005)
    agent.set(learning_rate=lr * (1 + i % 3) / 2)  # while it trains
    out = await agent.stop()
    assert out['stopped'] and not agent.running
    fork = agent.fork(tempfile.mkdtemp(), learning_rate=lr)
    await fork.aclose()
for i in range(20): await cycle(i)  # warm-up: compiles, the replay's storage, the allocator's pools (resident memory levels off by then)
before, t0 = snapshot(), time.monotonic()
for i in range(100): await cycle(i)
seconds = time.monotonic() - t0
after = snapshot()
print(json.dumps(dict(before=before, after=after, seconds=seconds, steering=len(open(f'{WORK_DIR}/steering.jsonl').read().splitlines()))))
await agent.aclose()
"""


def test_start_set_fork_stop_100_cycles_in_a_kernel_leaks_nothing(tmp_path):
    "100 start / set / stop / fork cycles in one kernel (issue 57): no growth in threads, tasks or fds, and under 50 MB of resident memory."
    report = _cycles_report(tmp_path, STEER_CYCLES)
    print(f"\n100 start/set/fork/stop cycles: {report}")
    b, a = report["before"], report["after"]
    assert a["threads"] == b["threads"] and a["tasks"] == b["tasks"] and a["fds"] <= b["fds"], report
    assert a["rss_mb"] - b["rss_mb"] < 50, report
    assert report["steering"] == 120  # every set of every cycle was logged
