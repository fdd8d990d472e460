"""`rlnb train ALGO --env CartPole-v1` solves CartPole-v1 (evaluation mean >= 475 over 10 episodes) for the on-policy algorithms (PQN included), and `rlnb train sac --env Pendulum-v1` solves Pendulum-v1 (>= -200).

One seed each, through the command a user types, with the learner on 8 host devices: IMPALA within 200k env steps, PPO
(its defaults are rl-zoo3's, with the zoo's linear schedules over 100k steps) within 100k. The per-seed tables are
`bench/impala_learning.py`'s and `bench/ppo_learning.py`'s; PQN with its preset (150k env steps at most) is
`bench/presets.py pqn-CartPole-v1`'s.
"""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, xla_flags

RLNB = os.path.join(os.path.dirname(sys.executable), "rlnb")

CASES = {
    "impala": dict(flags=["--seed", "1", "--eval-interval", "10000"], budget=200_000, columns={"pg_loss", "v_loss", "entropy", "lag_mean"}),
    "ppo": dict(flags=["--seed", "0", "--eval-interval", "5000", "--steps", "100000", "--schedule-steps", "100000"], budget=100_000,
                columns={"pg_loss", "v_loss", "entropy", "approx_kl", "clip_frac", "explained_variance"}),
    "pqn": dict(flags=["--seed", "0", "--eval-interval", "5000"], budget=150_000, columns={"loss", "q", "target", "epsilon"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("algo", sorted(CASES))
def test_cli_solves_cartpole(algo, tmp_path):
    case = CASES[algo]
    env = {**os.environ, "XLA_FLAGS": xla_flags(8)}
    proc = subprocess.run([RLNB, "train", algo, "--env", "CartPole-v1", *case["flags"], "--out", str(tmp_path), "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["algo"] == algo and out["devices"] == 8
    assert out["eval_return"] >= 475 and out["env_steps"] <= case["budget"] + 10_000, out
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    assert case["columns"] <= set(rows[0].split(",")), rows[0]
    assert (tmp_path / "checkpoints").is_dir() and (tmp_path / "curve.png").stat().st_size > 0


@pytest.mark.slow
def test_cli_sac_solves_pendulum(tmp_path):
    "SAC from the command line with the shipped preset (20k env steps, an evaluation every 2k, the target -200), learner on one device (bench/sac_pendulum.py has five seeds)."
    env = {**os.environ, "XLA_FLAGS": xla_flags(8)}
    proc = subprocess.run([RLNB, "train", "sac", "--env", "Pendulum-v1", "--seed", "0", "--devices", "1", "--out", str(tmp_path), "--no-progress"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["algo"] == "sac" and out["devices"] == 1
    assert out["eval_return"] >= -200 and out["env_steps"] <= 20_000, out
    assert {"critic_loss", "actor_loss", "alpha", "entropy"} <= set((tmp_path / "metrics.csv").read_text().splitlines()[0].split(","))
