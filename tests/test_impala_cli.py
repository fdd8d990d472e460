"""`rlnb train impala --env CartPole-v1` solves CartPole-v1 (evaluation mean >= 475 over 10 episodes) within 200k env steps.

One seed here, through the command a user types, with the learner on 8 host devices; the per-seed table over five seeds
is `bench/impala_learning.py`'s.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

RLNB = os.path.join(os.path.dirname(sys.executable), "rlnb")


@pytest.mark.slow
def test_impala_cli_solves_cartpole(tmp_path):
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    proc = subprocess.run([RLNB, "train", "impala", "--env", "CartPole-v1", "--seed", "1", "--eval-interval", "10000",
                           "--out", str(tmp_path), "--no-progress"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["algo"] == "impala" and out["devices"] == 8
    assert out["eval_return"] >= 475 and out["env_steps"] <= 200_000 + 10_000, out
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    assert {"pg_loss", "v_loss", "entropy", "lag_mean"} <= set(rows[0].split(",")), rows[0]
    assert (tmp_path / "checkpoints").is_dir() and (tmp_path / "curve.png").stat().st_size > 0
