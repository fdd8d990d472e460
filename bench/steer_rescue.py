"""The steering chapter's session (`nbs/agent/77_steering.ipynb`, issue 57) over seeds: a run started with a learning
rate too small, forked at its plateau, one branch steered to the preset's rate and one left as it was.

Per seed: Ape-X DQN on MinAtar/Breakout-v1 with its preset but `learning_rate=--slow` trains `--fork-at` env steps; then
`fork()` (the unsteered branch) and `set(learning_rate=--rate)` (the steered one), and both train to `--steps` side by
side on one event loop. Evaluations of 20 greedy episodes every 5,000 env steps. Prints JSON: per seed each branch's
evaluations, its final one and the env steps where it first reached the preset's target; the medians over seeds.

    python bench/steer_rescue.py --seeds 7 8 9
"""
import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import provenance  # noqa: E402

from rlnb.agent.agent import DistributedAgent  # noqa: E402

PRESET, ENV, TARGET = 'apex-dqn-MinAtar-Breakout-v1', 'MinAtar/Breakout-v1', 5.0


async def session(seed: int, args) -> dict:
    base = Path(tempfile.mkdtemp())
    quiet = dict(eval_interval=5_000, num_eval_episodes=20, save_interval=None, progress=False, verbose=False)
    steered = DistributedAgent(ENV, preset=PRESET, tag='steered', seed=seed, learning_rate=args.slow,
                               work_dir=base / 'steered')
    await steered.atrain(args.fork_at, **quiet)
    plateau = steered.evals[-1]['mean']
    unsteered = steered.fork(base / 'unsteered', tag='unsteered')
    steered.set(learning_rate=args.rate)
    await asyncio.gather(steered.atrain(args.steps, **quiet), unsteered.atrain(args.steps, **quiet))
    out = dict(at_fork=plateau)
    for ag in (steered, unsteered):
        evals = [(e['env_steps'], round(e['mean'], 2)) for e in ag.evals]
        out[ag.tag] = dict(final=evals[-1][1], reached=next((s for s, m in evals if m >= TARGET), None), evals=evals)
        await ag.aclose()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9])
    ap.add_argument("--slow", type=float, default=1e-5, help="the learning rate the run starts with")
    ap.add_argument("--rate", type=float, default=1e-3, help="the learning rate it is steered to (the preset's)")
    ap.add_argument("--fork-at", type=int, default=40_000, help="env steps before the fork")
    ap.add_argument("--steps", type=int, default=100_000, help="env steps both branches train to")
    args = ap.parse_args()
    runs = {}
    for seed in args.seeds:
        runs[seed] = asyncio.run(session(seed, args))
        print(json.dumps({seed: {k: v if not isinstance(v, dict) else v['final'] for k, v in runs[seed].items()}}), file=sys.stderr)
    median = {k: statistics.median(r[k]['final'] for r in runs.values()) for k in ('steered', 'unsteered')}
    print(json.dumps(dict(provenance=provenance(sys.argv), preset=PRESET, slow=args.slow, rate=args.rate,
                          fork_at=args.fork_at, steps=args.steps, median_final=median, runs=runs), indent=1))


if __name__ == "__main__":
    main()
