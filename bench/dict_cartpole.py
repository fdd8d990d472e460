"""CartPole with a Dict observation against the flat one: env steps to solve, per algorithm (issue 59).

    python bench/dict_cartpole.py [--algos ppo,apex-dqn,r2d2] [--seeds 0 1 2 3 4] [--out bench/results/dict_cartpole.json]

`rlnb/CartPoleDict-v1` is CartPole-v1 whose observation is a Dict of `position` (cart position, pole angle) and
`velocity` (their rates): the same four numbers, which the networks read joined (`rlnb.coax.observations`). Each run
trains `DistributedAgent` deterministically with the config of the algorithm's CartPole preset (`ppo-CartPole-v1`,
`apex-dqn-CartPole-v1`; R2D2 with its `r2d2-rlnb-CartPoleNoVel-v1` config, on the full observation) and stops at the
first evaluation (10 episodes every 5,000 env steps) whose mean reaches 475, or at the preset's budget. It reports the
env steps to that evaluation per run, and per algorithm the median over seeds of each kind and their ratio, dict / flat.
Learning results, not timings.
"""
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "bench"))
from _harness import provenance  # noqa: E402
from rlnb.agent.agent import DistributedAgent  # noqa: E402
from rlnb.agent.presets import get_preset  # noqa: E402

PRESETS = {"ppo": "ppo-CartPole-v1", "apex-dqn": "apex-dqn-CartPole-v1", "r2d2": "r2d2-rlnb-CartPoleNoVel-v1"}
ENVS = {"flat": "CartPole-v1", "dict": "rlnb/CartPoleDict-v1"}


def run(algo: str, kind: str, seed: int) -> dict:
    p = get_preset(PRESETS[algo])
    ag = DistributedAgent(ENVS[kind], algo=algo, seed=seed, work_dir=tempfile.mkdtemp(), deterministic=True, preset="none",
                          **p.config)
    try:
        r = ag.train(p.train["steps"], eval_interval=5000, num_eval_episodes=10, target_return=475, progress=False,
                     verbose=False, save_interval=None)
        evals = [(e["env_steps"], round(e["mean"], 1)) for e in ag.evals]
    finally:
        ag.close()
    solved = bool(evals) and evals[-1][1] >= 475
    return dict(algo=algo, kind=kind, seed=seed, solved=solved, env_steps=evals[-1][0] if evals else None,
                final_eval=evals[-1][1] if evals else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--algos", default="ppo,apex-dqn,r2d2")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--out")
    args = ap.parse_args()
    runs, summary = [], {}
    for algo in args.algos.split(","):
        for seed in args.seeds:  # interleaved: flat and dict of one seed run one after the other
            for kind in ENVS:
                runs.append(run(algo, kind, seed))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        mine = {k: [r for r in runs if r["algo"] == algo and r["kind"] == k] for k in ENVS}
        steps = {k: statistics.median(r["env_steps"] if r["solved"] else float("inf") for r in rs) for k, rs in mine.items()}
        summary[algo] = dict(solved={k: f"{sum(r['solved'] for r in rs)}/{len(rs)}" for k, rs in mine.items()},
                             median_env_steps=steps, ratio_dict_over_flat=round(steps["dict"] / steps["flat"], 2))
    out = dict(provenance=provenance(sys.argv), summary=summary, runs=runs)
    text = json.dumps(out, indent=1, default=str)
    print(text)
    if args.out: Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
