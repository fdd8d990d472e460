"""IMPALA's training throughput (env steps/s, learning included) by actor count and actor mode, against raw gymnasium stepping, same run.

    python bench/impala_throughput.py [--actors 1,2,4] [--modes sync,thread,process] [--envs-per-actor 8]
        [--steps 20000] [--reps 5] [--env CartPole-v1] [--set unroll_length=10] [--out bench/results/impala_throughput.json]

For each (num_actors N, actor_mode) one IMPALA agent (`envs_per_actor` E fixed, learner on one device, every other
field `IMPALAConfig`'s default unless `--set` changes it) is built and compiled (`agent.compile()`), then warmed up by
training `--steps` env steps. All agents live in this one process for the whole run. Each repetition then times, in a
fresh random order, every agent training `--steps` more env steps (`train(env_steps + steps, eval_interval=None,
final_eval=False)`: no evaluation in the clock; the start and stop of the actor and learner tasks are in it) and the
raw baselines for the same N*E envs with random actions drawn in advance, no policy, no learning:

- `raw/make_vec`: one `gymnasium.make_vec(env, N*E)` (the numpy-vectorized CartPole where gymnasium has one: the form
  rlnb's actors hold);
- `raw/per_actor`: N vector envs of E copies each (what the N actors hold), stepped one after another in a loop.

Rate = env steps / wall-clock (IMPALA's env steps are its counter's increase, so the slight overshoot of the last
unroll counts). Figures are medians over repetitions; `ratio_vs_raw_make_vec` is paired (IMPALA's rate over the raw
rate *in the same repetition*, median over repetitions), as in bench/envs.py. `fastest_mode[N]` names the actor mode
with the highest median rate at N actors. Prints one JSON object and writes it to --out.
"""
import argparse
import ast
import json
import os
import platform
import random
import statistics
import sys
import time

import numpy as np
import gymnasium as gym

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import RESULTS, provenance  # noqa: E402


def vec_mode(env_id):
    return "vector_entry_point" if gym.spec(env_id).vector_entry_point is not None else "sync"


def raw_rate(venvs, steps, rng):
    """Step every vector env in `venvs` (one after another) until `steps` env steps in all; returns env steps/s."""
    n = sum(v.num_envs for v in venvs)
    batches = max(1, steps // n)
    acts = [np.stack([v.action_space.sample() for _ in range(batches)]) for v in venvs]
    t0 = time.perf_counter()
    for i in range(batches):
        for v, a in zip(venvs, acts):
            v.step(a[i])
    return batches * n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--actors", default="1,2,4")
    ap.add_argument("--modes", default="sync,thread,process")
    ap.add_argument("--envs-per-actor", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20_000, help="env steps per timed run")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--set", action="append", default=[], help="IMPALAConfig field=value (Python literal)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(RESULTS, "impala_throughput.json"), help="'' to write nothing")
    args = ap.parse_args()

    import jax
    from rlnb.algos.impala import IMPALA

    overrides = {}
    for item in args.set:
        k, v = item.split("=", 1)
        try:
            overrides[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            overrides[k] = v
    E, K = args.envs_per_actor, args.steps
    counts = [int(x) for x in args.actors.split(",")]
    modes = args.modes.split(",")
    agents, compile_s = {}, {}
    for n in counts:
        for mode in modes:
            t0 = time.perf_counter()
            ag = IMPALA(args.env, seed=args.seed, devices=jax.local_devices()[:1], num_actors=n, envs_per_actor=E,
                        actor_mode=mode, **overrides)
            ag.compile()
            compile_s[f"{mode}/{n}"] = round(time.perf_counter() - t0, 2)
            ag.train(K, eval_interval=None, final_eval=False)  # warm-up: first steps, first updates
            agents[(n, mode)] = ag
    raws = {}
    for n in counts:
        vm = vec_mode(args.env)
        one = gym.make_vec(args.env, n * E, vectorization_mode=vm)
        one.reset(seed=args.seed)
        per = [gym.make_vec(args.env, E, vectorization_mode=vm) for _ in range(n)]
        for i, v in enumerate(per):
            v.reset(seed=args.seed + 1000 * i)
        raws[n] = dict(make_vec=[one], per_actor=per)
        raw_rate([one], K // 4, None)  # warm-up

    rates = {}  # name -> [rate per rep]
    rng = random.Random(args.seed)
    for rep in range(args.reps):
        jobs = [("impala", n, m) for n in counts for m in modes] + [("raw", n, k) for n in counts for k in ("make_vec", "per_actor")]
        rng.shuffle(jobs)
        for kind, n, what in jobs:
            if kind == "impala":
                ag = agents[(n, what)]
                s0, t0 = ag.env_steps, time.perf_counter()
                ag.train(s0 + K, eval_interval=None, final_eval=False)
                rate = (ag.env_steps - s0) / (time.perf_counter() - t0)
                name = f"impala/{what}/{n}"
            else:
                rate = raw_rate(raws[n][what], K, None)
                name = f"raw/{what}/{n}"
            rates.setdefault(name, []).append(rate)
        print(json.dumps(dict(rep=rep, **{k: round(v[-1]) for k, v in sorted(rates.items())})), file=sys.stderr, flush=True)

    for ag in agents.values():
        ag.close()
    for d in raws.values():
        for vs in d.values():
            for v in vs:
                v.close()

    table, fastest = [], {}
    for n in counts:
        raw_mv = rates[f"raw/make_vec/{n}"]
        raw_pa = rates[f"raw/per_actor/{n}"]
        best = None
        for m in modes:
            r = rates[f"impala/{m}/{n}"]
            row = dict(num_actors=n, envs_per_actor=E, num_envs=n * E, actor_mode=m,
                       env_steps_per_s=round(statistics.median(r)), min=round(min(r)), max=round(max(r)),
                       raw_make_vec_steps_per_s=round(statistics.median(raw_mv)),
                       raw_per_actor_steps_per_s=round(statistics.median(raw_pa)),
                       ratio_vs_raw_make_vec=round(statistics.median([a / b for a, b in zip(r, raw_mv)]), 4),
                       ratio_vs_raw_per_actor=round(statistics.median([a / b for a, b in zip(r, raw_pa)]), 4),
                       compile_s=compile_s[f"{m}/{n}"])
            table.append(row)
            if best is None or row["env_steps_per_s"] > best["env_steps_per_s"]:
                best = row
        fastest[n] = best["actor_mode"]
    cfg = next(iter(agents.values())).config
    out = dict(provenance=provenance(), env=args.env, steps_per_run=K, reps=args.reps, cpu_count=os.cpu_count(), machine=platform.processor() or platform.machine(),
               jax_backend=jax.default_backend(), overrides=overrides,
               config={k: getattr(cfg, k) for k in cfg.__dataclass_fields__ if k not in ("num_actors", "actor_mode")},
               table=table, fastest_mode=fastest, rates={k: [round(x) for x in v] for k, v in sorted(rates.items())})
    text = json.dumps(out, default=str)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(json.dumps(out, default=str, indent=1) + "\n")


if __name__ == "__main__":
    main()
