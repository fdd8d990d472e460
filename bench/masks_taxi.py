"""Taxi with and without its action mask: what the mask buys PPO and Ape-X (issue 59).

    python bench/masks_taxi.py [--algos ppo,apex-dqn] [--seeds 0 1 2] [--out bench/results/masks_taxi.json]

Each run trains `DistributedAgent` with the shipped preset's config and budget (`ppo-Taxi-v4`, `apex-dqn-Taxi-v4`),
deterministic, evaluating 100 greedy episodes every `eval_interval` env steps. `masked`: built from the id, so the
observations carry `info['action_mask']` (`rlnb.envs.masks`); `unmasked`: the same env from a factory,
`gym.make('Taxi-v4')`, whose observation is the state index alone. It reports per run the evaluations, whether the
mean return reached the preset's target (7) and at how many env steps, and per (algo, kind) how many seeds reached it.
Learning results, not timings.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

import gymnasium as gym

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
from _harness import provenance  # noqa: E402
from rlnb.agent.agent import DistributedAgent  # noqa: E402
from rlnb.agent.presets import get_preset  # noqa: E402


def run(algo: str, masked: bool, seed: int) -> dict:
    p = get_preset(f"{algo}-Taxi-v4")
    env = "Taxi-v4" if masked else (lambda: gym.make("Taxi-v4"))
    ag = DistributedAgent(env, algo=algo, seed=seed, work_dir=tempfile.mkdtemp(), deterministic=True, preset="none", **p.config)
    try:
        ag.train(p.train["steps"], eval_interval=p.train["eval_interval"], num_eval_episodes=p.train["num_eval_episodes"],
                 progress=False, verbose=False, save_interval=None)
        evals = [(e["env_steps"], round(e["mean"], 2)) for e in ag.evals]
    finally:
        ag.close()
    target = p.train["target_return"]
    first = next((s for s, m in evals if m >= target), None)
    return dict(algo=algo, kind="masked" if masked else "unmasked", seed=seed, evals=evals, final_eval=evals[-1][1],
                env_steps_to_target=first)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algos", default="ppo,apex-dqn")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out")
    args = ap.parse_args()
    runs = []
    for algo in args.algos.split(","):
        for masked in (True, False):
            for seed in args.seeds:
                runs.append(run(algo, masked, seed))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    summary = {f"{a}/{k}": dict(reached=f"{sum(r['env_steps_to_target'] is not None for r in rs)}/{len(rs)}",
                               final_eval=[r["final_eval"] for r in rs], env_steps_to_target=[r["env_steps_to_target"] for r in rs])
               for a in args.algos.split(",") for k in ("masked", "unmasked")
               for rs in [[r for r in runs if r["algo"] == a and r["kind"] == k]]}
    out = dict(provenance=provenance(sys.argv), summary=summary, runs=runs)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out: Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
