"""MuJoCo envs (the `mujoco` extra) run through the runtime's env-worker pools in every actor mode, with SAC and TD3.

HalfCheetah-v5 and Hopper-v5: replay fills through the actors (sync, thread and process workers), a few updates run,
and the agent closes with no child process left. Hopper terminates early (falls), HalfCheetah only truncates, so both
episode ends go through the pools.
"""
import os

import numpy as np
import psutil
import pytest

pytestmark = pytest.mark.slow  # the slow tier: MuJoCo envs through every actor mode, processes included

pytest.importorskip("mujoco", reason="needs the mujoco extra: pip install 'rlnb[mujoco]'")


@pytest.mark.parametrize("mode", ["sync", "thread", "process"])
@pytest.mark.parametrize("env_id,algo", [("HalfCheetah-v5", "sac"), ("Hopper-v5", "td3")])
def test_mujoco_through_the_pools(env_id, algo, mode):
    import jax
    from rlnb.runtime.runtime import Runtime, get_algo
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    agent = Runtime(env_id, algorithm=get_algo(algo), actor_mode=mode, num_actors=2, envs_per_actor=2, batch_size=32, buffer_warmup=200,
                           hidden=(32, 32), devices=jax.local_devices()[:1])
    try:
        assert agent.observation_space.shape == {"HalfCheetah-v5": (17,), "Hopper-v5": (11,)}[env_id]
        res = agent.train(400, eval_interval=None, final_eval=False)
        assert res["env_steps"] >= 400 and agent.updates > 0
        assert np.isfinite(agent.metrics()["critic_loss"])
        if env_id == "Hopper-v5": assert agent.episodes > 0  # a random Hopper falls within 400 steps
        A = agent.buffer.storage["A"][:len(agent.buffer)]
        assert A.shape[1:] == agent.action_space.shape and np.abs(A).max() <= 1.0
    finally:
        agent.close()
    left = {c.pid for c in psutil.Process().children(recursive=True)  # multiprocessing's resource tracker lives as long as this process, by design
            if c.is_running() and c.status() != psutil.STATUS_ZOMBIE and 'resource_tracker' not in ' '.join(c.cmdline())} - before
    assert not left, left
