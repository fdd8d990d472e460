"""Action masks (issue 59, item 1): PPO, IMPALA, PQN, Ape-X and R2D2 never take an action the observation's mask rules out.

The env, `Pick`, allows a random subset of its actions each step (the `action_mask` entry of its Dict observation) and
shows which allowed action pays 1 (the others pay 0). An action the mask rules out ends the episode with -10, and is
recorded in `INVALID`: the actors step in the test's process (`actor_mode='sync'`), so every action an env is given
passes through it, in training and in evaluation. The same env with its mask left out of the observation
(`masked=False`) shows that the check can fail: an agent that does not see the mask takes such actions.
"""
import tempfile

import gymnasium as gym
import numpy as np
import pytest

from rlnb.agent.agent import DistributedAgent
from rlnb.base import ConfigError

N, T = 5, 20  # actions; steps per episode (the optimum return)
INVALID = []  # every action an env was given that its mask ruled out, in this process


class Pick(gym.Env):
    def __init__(self, masked=True):
        self.masked = masked
        spaces = {'observation': gym.spaces.Box(0, 1, (N,), np.float32)}
        if masked: spaces['action_mask'] = gym.spaces.MultiBinary(N)
        self.observation_space, self.action_space = gym.spaces.Dict(spaces), gym.spaces.Discrete(N)

    def _obs(self):
        m = self.np_random.random(N) < 0.4
        m[self.np_random.integers(N)] = True
        self.mask, self.good = m, int(self.np_random.choice(np.flatnonzero(m)))
        o = np.zeros(N, np.float32)
        o[self.good] = 1
        return {'observation': o, **({'action_mask': m.astype(np.int8)} if self.masked else {})}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, a):
        self.t += 1
        if not self.mask[int(a)]:
            INVALID.append(int(a))
            return self._obs(), -10.0, True, False, {}
        r = float(int(a) == self.good)
        return self._obs(), r, False, self.t >= T, {}


# PQN: what pays here is the immediate reward, and a short horizon keeps its q-values apart in 8,000 steps
ALGOS = {'ppo': {}, 'impala': {}, 'pqn': dict(gamma=0.5), 'apex-dqn': dict(num_actors=1, envs_per_actor=4, buffer_warmup=200),
         'r2d2': dict(num_actors=1, envs_per_actor=4, buffer_warmup=64)}


@pytest.mark.parametrize('algo', sorted(ALGOS))
def test_no_action_the_mask_rules_out(algo):
    "In training, in evaluation and from a loaded policy: no masked action, and the agent learns which allowed one pays."
    from rlnb.agent.checkpoints import load_policy
    INVALID.clear()
    work = tempfile.mkdtemp()
    ag = DistributedAgent(lambda: Pick(), algo=algo, seed=0, work_dir=work, deterministic=True, actor_mode='sync', **ALGOS[algo])
    try:
        ag.train(8_000, eval_interval=4_000, num_eval_episodes=5, progress=False, verbose=False)
        assert INVALID == [], f'{len(INVALID)} masked actions reached the env'
        assert ag.evals[-1]['mean'] >= 0.9 * T, ag.evals  # it learned the paying action too
    finally:
        ag.close()
    policy, env = load_policy(work, env=lambda: Pick()), Pick()
    obs, _ = env.reset(seed=7)
    for _ in range(200):  # `act` on single observations, as a deployed policy
        a = int(policy.act(obs))
        assert env.mask[a], (a, env.mask)
        obs, *_ = env.step(a)
    assert INVALID == []


def test_without_the_mask_an_agent_takes_masked_actions():
    "The control: the same env with its mask left out of the observation, so the check above can fail."
    INVALID.clear()
    ag = DistributedAgent(lambda: Pick(masked=False), algo='ppo', seed=0, work_dir=tempfile.mkdtemp(), deterministic=True, actor_mode='sync')
    try: ag.train(2_000, eval_interval=None, progress=False, verbose=False)
    finally: ag.close()
    assert len(INVALID) > 50, len(INVALID)


@pytest.mark.parametrize('algo', ['sac', 'td3'])
def test_a_mask_with_continuous_actions_is_refused(algo):
    class BoxPick(Pick):
        def __init__(self):
            super().__init__()
            self.action_space = gym.spaces.Box(-1, 1, (N,), np.float32)
    with pytest.raises(ConfigError, match='Box observation space'):
        DistributedAgent(lambda: BoxPick(), algo=algo, work_dir=tempfile.mkdtemp())


def test_rlnb_train_on_taxi_takes_its_preset_and_its_mask(tmp_path):
    "`rlnb train ppo --env Taxi-v4`: the preset for the id, and the env's `info['action_mask']` in the observations the agent acts on."
    import json
    import os
    import shutil
    import subprocess
    import sys
    from conftest import ROOT
    rlnb = shutil.which("rlnb", path=os.path.dirname(sys.executable)) or "rlnb"
    proc = subprocess.run([rlnb, "train", "ppo", "--env", "Taxi-v4", "--steps", "2048", "--eval-interval", "2048", "--eval-episodes", "2",
                           "--out", str(tmp_path), "--no-progress", "--deterministic"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "rlnb: preset ppo-Taxi-v4" in proc.stderr, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    from rlnb.agent.checkpoints import load_policy
    policy = load_policy(out["run_dir"])
    assert isinstance(policy.observation_space, gym.spaces.Dict) and "action_mask" in policy.observation_space.spaces
    env = gym.make("Taxi-v4")
    obs, info = env.reset(seed=3)
    for _ in range(50):  # the saved policy acts on the observation with the env's mask joined, and picks an allowed action
        a = int(policy.act({"observation": obs, "action_mask": info["action_mask"]}))
        assert info["action_mask"][a], (a, info["action_mask"])
        obs, _, term, trunc, info = env.step(a)
        if term or trunc: obs, info = env.reset()


def test_masks_hold_on_the_run_axis():
    "Two seeds of PPO on one run axis (one policy call for both runs' envs): still no masked action, and both runs learn."
    INVALID.clear()
    ag = DistributedAgent(lambda: Pick(), algo='ppo', seeds=[0, 1], work_dir=tempfile.mkdtemp(), deterministic=True, actor_mode='sync')
    try: r = ag.train(4_000, eval_interval=2_000, num_eval_episodes=3, progress=False, verbose=False)
    finally: ag.close()
    assert INVALID == [], f'{len(INVALID)} masked actions reached the env'
    assert all(run['final_eval'] >= 0.9 * T for run in r['runs']), r['runs']
