"""What steering costs: a run whose steerable fields are inputs of the learner program against the same run with them as
constants (issue 57).

For each algorithm, two deterministic agents of the same seed train `--steps` env steps per round, one with every
steerable field steered to its config value (`agent.set(**agent.steerable)`: the learner runs the program that takes them
as inputs) and one not (the config's program), interleaved in random order, after a warm-up round that compiles both.
Prints JSON: per algorithm the seconds per round of each and the ratio steered / plain; medians over the rounds.

    python bench/steer_overhead.py --algos ppo apex-dqn --steps 20000 --rounds 5
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

from rlnb.agent.agent import DistributedAgent  # noqa: E402

ENVS = {'sac': 'Pendulum-v1', 'td3': 'Pendulum-v1'}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algos", nargs="+", default=["ppo", "apex-dqn"])
    ap.add_argument("--steps", type=int, default=20_000, help="env steps per round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    out = {}
    for algo in args.algos:
        env = ENVS.get(algo, 'CartPole-v1')
        agents = {k: DistributedAgent(env, algo=algo, seed=0, deterministic=True, work_dir=tempfile.mkdtemp(), tag=k)
                  for k in ('plain', 'steered')}
        agents['steered'].set(**agents['steered'].steerable)
        quiet = dict(eval_interval=None, save_interval=None, num_eval_episodes=1, progress=False, verbose=False,
                     tensorboard=False)
        goal = {k: 0 for k in agents}
        def one(k):
            goal[k] += args.steps
            t = time.perf_counter()
            agents[k].train(goal[k], **quiet)
            return time.perf_counter() - t
        for k in agents: one(k)  # warm-up: compiles
        rounds = []
        for _ in range(args.rounds):
            order = list(agents)
            random.shuffle(order)
            r = {k: one(k) for k in order}
            r['ratio'] = r['steered'] / r['plain']
            rounds.append(r)
        out[algo] = dict(env=env, rounds=rounds,
                         median={k: statistics.median(r[k] for r in rounds) for k in ('plain', 'steered', 'ratio')},
                         steered_fields=sorted(agents['steered'].steerable))
        for a in agents.values(): a.close()
        print(json.dumps({algo: out[algo]['median']}), file=sys.stderr)
    print(json.dumps(dict(provenance=provenance(sys.argv), steps=args.steps, results=out), indent=1))


if __name__ == "__main__":
    main()
