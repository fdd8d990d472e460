"""Env steps per second through Ray env workers against process env workers, the same number of each, in the same run.

    python bench/ray_actors.py [--reps 5] [--seconds 1.0] [--actors 1,2,4] [--num-envs 1,8] [--envs CartPole-v1,Acrobot-v1] [--out FILE]

Prints one JSON object (and writes it to `--out`). For each env, each count of envs per worker (1: a plain env; more: a
gymnasium vector env in each worker, as the runtime's `envs_per_actor`) and each number of workers, it builds that many
`AsyncEnvWorker(mode='process')` and as many `AsyncEnvWorker(mode='ray')` workers, then drives each set through an
`AsyncWorkerPool` the way an actor loop does (await a state, send that worker its next action; random actions drawn in
advance) for `--seconds`, `--reps` times, the two modes interleaved in a fresh random order each repetition so that the
machine's load hits both alike. Reported: median env steps/s of each mode, `ratio` = ray/process paired per repetition
(median), and `us_per_call` = median wall time per worker call (1 / worker calls per second; with one worker this is
the round trip of one step). Worker start-up is left out (workers are made and warmed up before the clock runs).

Ray runs as a local instance started here (`ray.init(num_cpus=os.cpu_count())`), so every Ray call crosses a local
socket to the actor's process and the state comes back through Ray's object store; process workers use a pipe and
shared memory. Both use the same `EnvCore` in the worker.
"""
import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time

import numpy as np

from _harness import provenance


async def drive(pool, actions, seconds):
    "Step `pool` for `seconds`; returns (env steps, worker calls, elapsed s)."
    n = len(pool.workers)
    per = pool.workers[0].num_envs
    k = [0] * n
    for i in range(n):
        pool.send_action(actions[i][0], i)
    steps = calls = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        _, i = await pool.get_state()
        steps += per
        calls += 1
        if time.perf_counter() >= end:
            break
        k[i] = (k[i] + 1) % len(actions[i])
        pool.send_action(actions[i][k[i]], i)
    elapsed = time.perf_counter() - t0
    for w in pool.workers:  # take every worker's last state (awaiting the steps still in flight): the next run starts with all idle
        await w.get_state()
    return steps, calls, elapsed


async def measure(env, actors, num_envs, reps, seconds, seed=0):
    from rlnb.envs.pool import AsyncEnvWorker, AsyncWorkerPool
    ne = None if num_envs == 1 else num_envs
    pools = {}
    for mode in ("process", "ray"):
        ws = AsyncEnvWorker.from_environment(env, actors, mode=mode, seed=seed, num_envs=ne)
        pools[mode] = AsyncWorkerPool(ws)
    try:
        for pool in pools.values():
            for w in pool.workers:
                await w.get_state(timeout=120)
        space = pools["process"].workers[0].action_space
        space.seed(seed)
        actions = [[space.sample() for _ in range(256)] for _ in range(actors)]
        for pool in pools.values():  # warm-up: the first calls pay for imports and caches on the worker's side
            await drive(pool, actions, 0.2)
        runs = {m: [] for m in pools}
        ratios = []
        for _ in range(reps):
            order = list(pools)
            random.shuffle(order)
            rate = {}
            for m in order:
                steps, calls, el = await drive(pools[m], actions, seconds)
                rate[m] = steps / el
                runs[m].append(dict(steps_per_s=steps / el, us_per_call=1e6 * el / calls))
            ratios.append(rate["ray"] / rate["process"])
    finally:
        for pool in pools.values():
            await pool.aclose()
    med = lambda m, k: statistics.median(r[k] for r in runs[m])
    return dict(env=env, envs_per_worker=num_envs, workers=actors,
                process_steps_per_s=round(med("process", "steps_per_s")), ray_steps_per_s=round(med("ray", "steps_per_s")),
                ratio=round(statistics.median(ratios), 3),
                process_us_per_call=round(med("process", "us_per_call"), 1), ray_us_per_call=round(med("ray", "us_per_call"), 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--actors", default="1,2,4")
    ap.add_argument("--num-envs", default="1,8")
    ap.add_argument("--envs", default="CartPole-v1,Acrobot-v1")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import ray
    t = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    init_s = time.perf_counter() - t
    results = []
    try:
        for env in args.envs.split(","):
            for ne in map(int, args.num_envs.split(",")):
                for n in map(int, args.actors.split(",")):
                    r = asyncio.run(measure(env, n, ne, args.reps, args.seconds))
                    print(json.dumps(r), file=sys.stderr, flush=True)
                    results.append(r)
    finally:
        ray.shutdown()
    import gymnasium
    out = dict(provenance=provenance(), bench="ray_actors", ray=ray.__version__, gymnasium=gymnasium.__version__,
               python=platform.python_version(), reps=args.reps, seconds=args.seconds, ray_init_s=round(init_s, 1), results=results)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
