"""Unroll ticks against whole ticks: IMPALA's or PPO's env steps/s through several EnvPool actors, same run.

    python bench/unroll_ticks.py [--algo impala] [--env CartPole-v1] [--actors 4] [--envs 8] [--seeds 0,1,2]
                                 [--warm 5000] [--steps 30000]

Per seed, one runtime with unroll ticks forced on (each actor acts again as soon as its own envs are back,
`rlnb.runtime.acting._unroll_tick`; the runtime turns them on only where the actors act on an accelerator) and one with whole ticks,
one after the other: `--warm` env steps of training (compiles included), then env steps/s over `--steps` more. Unroll
length 16; PPO minibatches of a quarter of the rollout. Prints one JSON document: medians per mode and the median of the
per-seed ratios (unroll / whole).
"""
import argparse, json, statistics, time

import jax

from rlnb.runtime.registry import get_algo
from rlnb.runtime.runtime import Runtime

from _harness import provenance


def rate(algo, env, actors, envs, seed, unroll_ticks, warm, steps):
    kw = dict(batch_size=actors * envs * 16 // 4) if algo == 'ppo' else {}
    a = Runtime(env, algorithm=get_algo(algo), actor_mode='envpool', num_actors=actors, envs_per_actor=envs, unroll_length=16, seed=seed,
                       devices=jax.local_devices()[:1], **kw)
    try:
        a._in_flight = a._nothing_in_flight(ready=unroll_ticks)
        a.train(warm, eval_interval=None, final_eval=False)
        t, s0 = time.perf_counter(), a.env_steps
        a.train(s0 + steps, eval_interval=None, final_eval=False)
        return (a.env_steps - s0) / (time.perf_counter() - t)
    finally: a.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--algo', default='impala', choices=('impala', 'ppo'))
    ap.add_argument('--env', default='CartPole-v1')
    ap.add_argument('--actors', type=int, default=4)
    ap.add_argument('--envs', type=int, default=8)
    ap.add_argument('--seeds', default='0,1,2')
    ap.add_argument('--warm', type=int, default=5_000)
    ap.add_argument('--steps', type=int, default=30_000)
    a = ap.parse_args()
    runs = {True: [], False: []}
    for seed in map(int, a.seeds.split(',')):
        for mode in (True, False): runs[mode].append(rate(a.algo, a.env, a.actors, a.envs, seed, mode, a.warm, a.steps))
    out = dict(provenance(), algo=a.algo, env=a.env, actors=a.actors, envs_per_actor=a.envs, device=str(jax.local_devices()[0]),
               unroll_ticks_steps_per_s=[round(x) for x in runs[True]], whole_ticks_steps_per_s=[round(x) for x in runs[False]],
               unroll_median=round(statistics.median(runs[True])), whole_median=round(statistics.median(runs[False])),
               unroll_over_whole=round(statistics.median(x / y for x, y in zip(runs[True], runs[False])), 3))
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
