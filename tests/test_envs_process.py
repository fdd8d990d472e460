"""Process-level tests of rlnb.envs.pool: killed children, restarts, interrupts, orphans, and nothing left behind.

The notebook (nbs/envs/15_pool.ipynb) tests the API mode by mode; these tests need real process boundaries:
signals sent from outside, a parent that dies, a script interrupted with SIGINT.
"""
import asyncio
import itertools
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import psutil
import pytest
import gymnasium as gym

from conftest import ROOT
from rlnb.core import EnvWorkerError
from rlnb.envs.pool import AsyncEnvWorker, AsyncWorkerPool, SyncEnvWorker, get_worker_pool

pytestmark = pytest.mark.slow  # the slow tier: env worker processes killed, interrupted and orphaned


def leftovers():
    "Child processes (the multiprocessing resource tracker excepted), rlnb threads."
    kids = []
    for p in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(p.cmdline())
        except psutil.Error:
            continue
        if "resource_tracker" not in cmd and p.status() != psutil.STATUS_ZOMBIE:
            kids.append((p.pid, cmd))
    threads = [t.name for t in threading.enumerate() if t.name.startswith("rlnb-")]
    return kids, threads


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("dead_before_send", [False, True])
def test_sigkilled_child_is_an_error_naming_the_worker(dead_before_send):
    "Killed while the action is on its way, or dead (its pipe closed) before the action is sent: both are the worker's error, at get_state."
    async def main():
        w = AsyncEnvWorker("CartPole-v1", mode="process", name="victim")
        try:
            await w.get_state()
            pid = w.pid
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while dead_before_send and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                assert time.monotonic() < deadline, "the killed child did not exit"
                time.sleep(0.005)  # not awaited: the loop must not see the pipe close before the action is sent
            w.send_action(0)
            with pytest.raises(EnvWorkerError, match=r"\[victim\].*died without reporting an error \(killed by signal SIGKILL\)") as e:
                await w.get_state(timeout=10)
            assert e.value.worker == "victim"
            with pytest.raises(EnvWorkerError, match="failed earlier"):
                w.send_action(0)
        finally:
            await w.aclose()
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert all(all(t is asyncio.current_task() for t in asyncio.all_tasks()) for _ in [0])

    run(main())
    assert leftovers() == ([], [])


def test_restart_after_sigkill_reports_the_lost_episode():
    async def main():
        async with AsyncWorkerPool([AsyncEnvWorker("CartPole-v1", mode="process", restart=True, max_restarts=1, name="phoenix")]) as pool:
            w = pool.workers[0]
            s, _ = await pool.get_state()
            for _ in range(3):
                pool.send_action(0, 0)
                s, _ = await pool.get_state()
            old = w.pid
            episode, step = s.episode, s.step
            os.kill(old, signal.SIGKILL)
            pool.send_action(0, 0)
            s, _ = await pool.get_state(timeout=20)
            assert s.restarted and s.first and s.episode == episode + 1
            lost = s.info["rlnb.lost_episode"]
            assert (lost["episode"], lost["step"], lost["restart"]) == (episode, step, 1) and "SIGKILL" in lost["error"]
            assert w.pid != old and w.restarts == 1
            pool.send_action(1, 0)
            s, _ = await pool.get_state(timeout=10)  # the fresh env steps normally
            assert not s.first and s.step == 1
            os.kill(w.pid, signal.SIGKILL)  # restarts used up: now it is an error
            pool.send_action(0, 0)
            with pytest.raises(EnvWorkerError, match=r"\[phoenix\].*gave up after 1 restarts"):
                await pool.get_state(timeout=10)

    run(main())
    assert leftovers() == ([], [])


def test_factory_failing_in_the_child_carries_the_remote_traceback():
    def broken():
        raise ValueError("no such simulator")

    async def main():
        w = AsyncEnvWorker(broken, mode="process", name="broken")
        with pytest.raises(EnvWorkerError, match=r"\[broken\] env failed during start: ValueError: no such simulator") as e:
            await w.get_state(timeout=20)
        assert "Traceback" in e.value.remote_traceback and "broken" in e.value.remote_traceback
        await w.aclose()

    run(main())
    assert leftovers() == ([], [])


def test_cleanup_kills_a_hung_child_after_cleanup_time(tmp_path):
    marker = str(tmp_path / "stepping")

    class Hangs(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, seed=None, options=None):
            return np.zeros(1, np.float32), {}

        def step(self, a):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # even a child that ignores SIGTERM goes away
            open(marker, "w").close()  # the test waits for this: the child is inside step
            time.sleep(60)

    async def main():
        w = AsyncEnvWorker(Hangs, mode="process", cleanup_time=0.3)
        await w.get_state()
        w.send_action(0)
        deadline = time.monotonic() + 60
        while not os.path.exists(marker):
            assert time.monotonic() < deadline, "the child never entered step"
            await asyncio.sleep(0.01)
        t0 = time.monotonic()
        w.cleanup()
        return time.monotonic() - t0

    elapsed = run(main())
    assert 0.25 <= elapsed < 10.0, elapsed  # it waited cleanup_time before killing; the upper bound catches a hang
    assert leftovers() == ([], [])


def test_keyboard_interrupt_and_cancellation_inside_the_pool_leave_nothing():
    async def body(stop):
        async with get_worker_pool(AsyncEnvWorker.from_environment("CartPole-v1", 2, mode="process")
                                   + AsyncEnvWorker.from_environment("CartPole-v1", 1, mode="thread")) as pool:
            for i in itertools.count():  # runs until stop() raises or the task is cancelled
                s, wid = await pool.get_state()
                pool.send_action(i % 2, wid)
                if i == 200:
                    stop()

    def interrupt():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(body(interrupt))
    assert leftovers() == ([], [])

    async def cancel_from_outside():
        running = asyncio.Event()
        task = asyncio.ensure_future(body(running.set))
        await asyncio.wait_for(running.wait(), timeout=60)  # cancel mid-run, whatever the machine's speed
        await asyncio.sleep(0.2)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []

    run(cancel_from_outside())
    assert leftovers() == ([], [])


SCRIPT = textwrap.dedent("""
    import asyncio, os, sys, time
    from rlnb.envs.pool import AsyncEnvWorker, get_worker_pool

    async def main(mode):
        workers = AsyncEnvWorker.from_environment('CartPole-v1', 2, mode='process')
        pool = get_worker_pool(workers)
        if mode == 'orphan':  # the parent dies without any cleanup
            await pool.get_state(); await pool.get_state()
            print(' '.join(str(w.pid) for w in workers), flush=True)
            os._exit(0)
        async with pool:
            n = 0
            while True:
                s, wid = await pool.get_state()
                pool.send_action(n % 2, wid); n += 1
                if n == 100: print(' '.join(str(w.pid) for w in workers), flush=True)

    if __name__ == '__main__':
        asyncio.run(main(sys.argv[1]))
""")


def _start_script(tmp_path, mode):
    path = tmp_path / "drive_pool.py"
    path.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([sys.executable, str(path), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ready, _, _ = select.select([proc.stdout], [], [], 120)  # a bounded wait for the first line, not a readline that can hang
    if not ready:
        proc.kill()
        raise AssertionError(f"the script printed nothing within 120 s: {proc.communicate()[1][-2000:]}")
    line = proc.stdout.readline()
    assert line.strip(), proc.stderr.read()
    return proc, [int(p) for p in line.split()]


def _gone(pids, within):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_sigint_to_a_script_closes_its_workers(tmp_path):
    proc, pids = _start_script(tmp_path, "run")
    assert all(psutil.pid_exists(p) for p in pids)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    finally:  # a failure here must not leave the script and its workers to the tests that count leftover processes
        if proc.poll() is None:
            for p in [proc.pid, *pids]:
                if psutil.pid_exists(p): psutil.Process(p).kill()
            proc.communicate()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, err[-2000:]
    assert _gone(pids, 15.0), f"worker processes {pids} outlived the interrupted script"


def test_children_exit_when_the_parent_dies(tmp_path):
    proc, pids = _start_script(tmp_path, "orphan")
    proc.communicate(timeout=30)
    assert _gone(pids, 10.0), f"orphaned worker processes {pids} kept running"


def test_same_seed_same_actions_same_observations_across_modes_with_vector_envs():
    actions = np.random.default_rng(3).integers(0, 2, (120, 8))

    async def trajectory(make):
        w = make()
        try:
            out = [(await w.get_state()).obs]
            for a in actions:
                w.send_action(a)
                s = await w.get_state()
                out.append(np.concatenate([s.obs, s.final_obs, s.reward[:, None], s.first[:, None]], 1))
            return out
        finally:
            await w.aclose()

    kw = dict(num_envs=8, vectorization_mode="vector_entry_point", seed=21, rank=1, world_size=3)
    ref = run(trajectory(lambda: SyncEnvWorker("CartPole-v1", **kw)))
    for mode in ("thread", "process"):
        got = run(trajectory(lambda: AsyncEnvWorker("CartPole-v1", mode=mode, **kw)))
        for a, b in zip(ref, got, strict=True):
            np.testing.assert_array_equal(a, b)
    assert leftovers() == ([], [])


@pytest.mark.slow
def test_forkserver_start_method():
    async def main():
        async with get_worker_pool(AsyncEnvWorker.from_environment("Acrobot-v1", 2, mode="process", start_method="forkserver")) as pool:
            for i in range(50):
                s, wid = await pool.get_state()
                pool.send_action(i % 3, wid)
            return s

    s = run(main())
    assert s.obs.shape == (6,)
    kids, threads = leftovers()
    assert [c for c in kids if "forkserver" not in c[1]] == [] and threads == []


def test_script_without_a_main_guard_fails_at_once_naming_the_guard(tmp_path):
    "A script that starts process workers at module level: each spawned child imports it and dies before its env starts; the error says why, with no restarts."
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent("""
        import asyncio
        from rlnb.envs.pool import AsyncEnvWorker

        async def main():
            w = AsyncEnvWorker("CartPole-v1", mode="process", restart=True, max_restarts=3)
            try: await w.get_state()
            finally: await w.aclose()

        asyncio.run(main())
    """))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert proc.returncode != 0 and "EnvWorkerError" in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert "if __name__ == '__main__':" in last and str(script) in last and "gave up after" not in last, last
    assert took < 60, took  # one child's failed import, not max_restarts of them


HANGING_SCRIPT = textwrap.dedent("""
    import asyncio, time
    import gymnasium as gym, numpy as np
    from rlnb.envs.pool import AsyncEnvWorker, get_worker_pool

    class Hangs(gym.Env):  # its step hangs in the child
        observation_space, action_space = gym.spaces.Box(-1, 1, (2,), np.float32), gym.spaces.Discrete(2)
        def reset(self, seed=None, options=None): return np.zeros(2, np.float32), {}
        def step(self, a): time.sleep(600)

    async def main():
        workers = [AsyncEnvWorker(Hangs, mode='process', rank=0, world_size=2),
                   AsyncEnvWorker('CartPole-v1', mode='process', rank=1, world_size=2)]
        pool = get_worker_pool(workers)
        await pool.get_state(); await pool.get_state()
        pool.send_action(0, 0)  # worker 0's env hangs from now on
        print(' '.join(str(w.pid) for w in workers), flush=True)
        await pool.get_state()  # worker 1's first step
        await asyncio.sleep(600)  # the trainer waits for the hung env (until the test kills it)

    if __name__ == '__main__':
        asyncio.run(main())
""")


def test_children_and_resource_tracker_end_soon_after_the_trainer_is_sigkilled(tmp_path):
    "A SIGKILLed trainer runs no cleanup: each env child watches its parent and ends within seconds, a hung one too; then the resource tracker ends."
    path = tmp_path / "hangs.py"
    path.write_text(HANGING_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    kids = []
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready, "the script printed nothing within 120 s"
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2, proc.stderr.read()
        kids = psutil.Process(proc.pid).children(recursive=True)  # the env children and multiprocessing's resource tracker
        assert {k.pid for k in kids} >= set(pids)
        proc.kill()
        proc.communicate(timeout=30)
        assert _gone([k.pid for k in kids], 5.0), f"{[(k.pid, k.cmdline()) for k in kids if k.is_running()]} outlived the SIGKILLed trainer by 5 s"
    finally:  # a failure here must not leave processes to the tests that count leftovers
        if proc.poll() is None: proc.kill(); proc.communicate()
        for k in kids:
            try: k.kill()
            except psutil.Error: pass
