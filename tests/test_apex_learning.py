"""Ape-X DQN solves CartPole-v1 (evaluation mean return >= 475 over 10 episodes) on this 2-core machine.

Seed 0 on the 8-device learner mesh runs in the notebook (nbs/algos/50_apex_dqn.ipynb) and through the CLI
(tests/test_cli.py); here seed 0 on a single device, in a fresh process so that its XLA device count is its own.
More seeds, on either mesh, are `bench/apex_cartpole.py`'s (10 seeds, all solved).
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, xla_flags

SCRIPT = """
import json, sys, jax
from rlnb.algos.apex_dqn import ApeXDQN
seed, ndev = int(sys.argv[1]), int(sys.argv[2])
agent = ApeXDQN('CartPole-v1', seed=seed, devices=jax.local_devices()[:ndev])
res = agent.train(100_000, eval_interval=5_000, num_eval_episodes=10, target_return=475)
agent.close()
print(json.dumps(dict(eval=res['eval']['mean'], env_steps=res['env_steps'], devices=agent.learner.mesh.size, history=agent.eval_history)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed,devices", [(0, 1)])
def test_apex_solves_cartpole(seed, devices):
    env = {**os.environ, "XLA_FLAGS": xla_flags(8)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(seed), str(devices)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["devices"] == devices
    assert out["eval"] >= 475, out
