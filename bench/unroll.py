"""Tracer cost for pixel on-policy rollouts: BatchedUnroll(keep_final=True), as IMPALA and PPO trace Atari frames.

    python bench/unroll.py [--reps 5] [--unrolls 20]

Streams Pong-shaped observations (uint8 [E, 4, 84, 84], ~1% of steps ending an episode) into the tracer, under
next-step autoreset (the reached observation is the next one: EnvPool) and same-step autoreset (it differs: gymnasium's
sync workers), for (E envs, T steps) = (16, 64) and (64, 16). Reports microseconds per env step traced (median of the
repetitions) and its ratio to the same run's floor: writing the observations into a preallocated [T+1, E, ...] buffer.
Prints one JSON document.
"""
import argparse, json, statistics, time

import numpy as np

from rlnb.replay.tracing import BatchedUnroll

from _harness import provenance


def run(E, T, same_step, unrolls, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.integers(0, 255, (8, E, 4, 84, 84), dtype=np.uint8)
    tr, a, r, z = BatchedUnroll(T, E, keep_final=True), np.zeros(E, np.int32), np.zeros(E), np.zeros(E, bool)
    warm, steps = 2 * T, (unrolls + 2) * T
    for i in range(steps + 1):
        if i == warm: t0 = time.perf_counter()
        done = rng.random(E) < 0.01
        final = frames[(i + 3) % 8] if same_step else frames[(i + 1) % 8]  # the tracer reads the rows of the envs that ended
        tr.add(frames[i % 8], a, r, done, z, logp=np.zeros(E, np.float32), version=0, valid=np.ones(E, bool), s_next_final=final)
        while tr: tr.pop()
    return (time.perf_counter() - t0) / ((steps + 1 - warm) * E)


def floor(E, T, unrolls, seed=0):
    frames = np.random.default_rng(seed).integers(0, 255, (8, E, 4, 84, 84), dtype=np.uint8)
    buf, steps = np.empty((T + 1, E, 4, 84, 84), np.uint8), unrolls * T
    t0 = time.perf_counter()
    for i in range(steps): buf[i % T] = frames[i % 8]
    return (time.perf_counter() - t0) / (steps * E)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--unrolls', type=int, default=20)
    a = ap.parse_args()
    out = dict(provenance(), reps=a.reps, unrolls=a.unrolls, cases=[])
    for E, T in ((16, 64), (64, 16)):
        for same_step in (False, True):
            us = [run(E, T, same_step, a.unrolls, seed) * 1e6 for seed in range(a.reps)]
            fl = [floor(E, T, a.unrolls, seed) * 1e6 for seed in range(a.reps)]
            out['cases'].append(dict(envs=E, T=T, autoreset='same-step' if same_step else 'next-step',
                                     us_per_env_step=round(statistics.median(us), 2), floor_us_per_env_step=round(statistics.median(fl), 2),
                                     over_floor=round(statistics.median(us) / statistics.median(fl), 2)))
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
