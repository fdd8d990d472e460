"""A checkpoint write killed half-way (SIGKILL) leaves the previous checkpoint the latest, loadable one."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # the slow tier: a process killed mid-write

CHILD = textwrap.dedent("""
    import os, sys, time
    from rlnb.agent.agent import DistributedAgent
    agent = DistributedAgent('CartPole-v1', seed=0, work_dir=sys.argv[1], num_learners=1, num_actors=2, envs_per_actor=4,
                             hidden=(32, 32), buffer_warmup=256, buffer_capacity=20_000)
    res = agent.train(800, eval_interval=None, save_interval=400, num_eval_episodes=1, progress=False, verbose=False, compile=False)
    print('trained', res['checkpoint'], flush=True)
    def stuck_fsync(fd):  # the bytes are in the temporary file; the process dies before the rename
        print('writing', flush=True)
        time.sleep(600)
    os.fsync = stuck_fsync
    agent.algo.actors.env_steps += 1  # a new file name, as the next save would have
    agent.save()
    print('saved?!', flush=True)
""")


def test_kill_during_checkpoint_write_keeps_the_last_good_one(tmp_path):
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(run)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines, t0 = [], time.monotonic()
        while not lines or lines[-1] != "writing":
            assert time.monotonic() - t0 < 300 and p.poll() is None, (lines, p.stderr.read()[-3000:] if p.poll() is not None else "")
            lines.append(p.stdout.readline().strip())
        good = lines[0].split()[1]
        tmp_files = list((run / "checkpoints").glob(".ckpt-*.tmp-*"))
        assert len(tmp_files) == 1 and tmp_files[0].stat().st_size > 0  # the killed write is under way
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None: p.kill()
    from rlnb.agent.agent import DistributedAgent, find_checkpoint, read_checkpoint
    assert str(find_checkpoint(run)) == good, (find_checkpoint(run), good)  # the half-written file is not a checkpoint
    tree = read_checkpoint(good)
    assert tree["env_steps"] >= 800
    agent = DistributedAgent.from_checkpoint(run, num_learners=1)  # and it loads, and training continues from it
    try:
        assert agent.algo.env_steps == tree["env_steps"] and len(agent.algo.buffer) > 0
        agent.save()  # the next save cleans the left-over temporary file
        assert not list((run / "checkpoints").glob(".ckpt-*.tmp-*"))
    finally:
        agent.close()
