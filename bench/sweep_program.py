"""A hyperparameter sweep in one program against one program per setting (issues 56 and 57).

A sweep of `--lrs` learning rates x `--seeds` seeds of PPO on CartPole-v1, every run `--steps` env steps (no target, so
every run does the same work), as one `MultiRunAgent` call in this process, two ways, interleaved in random order:
  * `one_program`: today's grouping: the learning rate is steerable, so every setting's runs share one run axis and one
    compiled learner program, each run's learning rate an input of it (`rlnb.steer`, `run_values`);
  * `per_setting`: one run axis per setting (the grouping before steering: `MultiRunAgent._axis_groups` by the whole
    setting), each compiling its own programs; the axes train side by side in the same loop.
Both are deterministic, so both give every run the same result (checked: each run's final evaluation agrees within a
float tolerance's effect). Prints JSON: per round the wall times and the ratio one_program / per_setting; medians.

    python bench/sweep_program.py --lrs 1e-3 5e-4 3e-4 1e-4 --seeds 4 --steps 20000 --rounds 3
"""
import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import provenance  # noqa: E402

from rlnb.agent.runs import MultiRunAgent  # noqa: E402

_ONE_PROGRAM = MultiRunAgent._axis_groups


def _per_setting(self):
    "One run axis per setting (the whole setting is the key)."
    groups = {}
    for i, r in enumerate(self.runs): groups.setdefault(repr(sorted(r['setting'].items())), []).append(i)
    return list(groups.values())


def one(mode, args):
    MultiRunAgent._axis_groups = _ONE_PROGRAM if mode == 'one_program' else _per_setting
    t = time.perf_counter()
    ag = MultiRunAgent('CartPole-v1', algo='ppo', seeds=args.seeds, sweep={'learning_rate': args.lrs}, deterministic=True,
                       run_axis=True, work_dir=tempfile.mkdtemp(), tag=mode)
    res = ag.train(args.steps, eval_interval=args.steps, save_interval=None, num_eval_episodes=5, progress=False,
                   verbose=False, tensorboard=False)
    ag.close()
    dt = time.perf_counter() - t
    return dt, [r['final_eval'] for r in res['runs']]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lrs", type=float, nargs="+", default=[1e-3, 5e-4, 3e-4, 1e-4])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rounds = []
    for _ in range(args.rounds):
        modes = ['one_program', 'per_setting']
        random.shuffle(modes)
        r = {}
        for m in modes: r[m], r[m + '_evals'] = one(m, args)
        r['ratio'] = r['one_program'] / r['per_setting']
        rounds.append(r)
        print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items() if not k.endswith('_evals')}),
              file=sys.stderr)
    med = {k: statistics.median(r[k] for r in rounds) for k in ('one_program', 'per_setting', 'ratio')}
    print(json.dumps(dict(provenance=provenance(sys.argv), runs=len(args.lrs) * args.seeds, lrs=args.lrs, seeds=args.seeds,
                          steps=args.steps, rounds=rounds, median=med), indent=1))


if __name__ == "__main__":
    main()
