"""Tracer throughput: one BatchedNStep for a vector of envs against one NStep per env (the per-env Python loop it replaces).

    python bench/tracing.py

Feeds the same random stream (CartPole-sized observations, ~2% of steps ending an episode, half of them by
truncation) to both and reports env steps traced per second, medians over several repetitions, and the ratio.
Prints one JSON document.
"""
import json, statistics, sys, time

import numpy as np

from rlnb.replay.tracing import BatchedNStep, NStep

from _harness import provenance


def stream(num_envs, steps, seed=0):
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(steps, num_envs, 4)).astype(np.float32)
    act = rng.integers(0, 2, (steps, num_envs))
    rew = rng.normal(size=(steps, num_envs))
    end = rng.random((steps, num_envs))
    return obs, act, rew, end < 0.01, (end >= 0.01) & (end < 0.02)


def run_batched(n, num_envs, data):
    obs, act, rew, term, trunc = data
    tr, out = BatchedNStep(n, 0.99, num_envs), 0
    t = time.perf_counter()
    for k in range(len(obs)):
        tr.add(obs[k], act[k], rew[k], term[k], trunc[k], s_next_final=obs[k])
        if tr: out += len(tr.flush())
    return len(obs) * num_envs / (time.perf_counter() - t), out


def run_single(n, num_envs, data):
    obs, act, rew, term, trunc = data
    trs, out = [NStep(n, 0.99) for _ in range(num_envs)], 0
    t = time.perf_counter()
    for k in range(len(obs)):
        for e, tr in enumerate(trs):
            tr.add(obs[k, e], act[k, e], rew[k, e], terminated=term[k, e], truncated=trunc[k, e], s_next=obs[k, e])
            if tr: out += len(tr.flush())
    return len(obs) * num_envs / (time.perf_counter() - t), out


def main(reps=5):
    results = {}
    for num_envs in (8, 64):
        steps = 4000 // num_envs * 8
        data = stream(num_envs, steps)
        b, s = [], []
        for _ in range(reps):
            tps, nb = run_batched(3, num_envs, data); b.append(tps)
            tps, ns = run_single(3, num_envs, data); s.append(tps)
            assert nb == ns, (nb, ns)  # same transitions out
        results[f'num_envs={num_envs}'] = dict(batched_steps_per_s=round(statistics.median(b)),
                                               per_env_loop_steps_per_s=round(statistics.median(s)),
                                               ratio=round(statistics.median(b) / statistics.median(s), 1))
        print(num_envs, results[f'num_envs={num_envs}'], file=sys.stderr)
    print(json.dumps(dict(provenance=provenance(), benchmark='tracing', n=3, reps=reps, results=results), indent=1))


if __name__ == '__main__':
    main()
