"""Replay-buffer throughput and memory: rlnb against cpprb, measured in the same run.

    python bench/replay.py            # full run (CartPole obs at capacity 1e6, 84x84x4 frames at capacity 50k)
    python bench/replay.py --quick    # smaller capacities and fewer repetitions, for a smoke test

Every (observation kind, buffer kind, library) cell runs in a fresh subprocess so peak memory is its own,
and the rlnb and cpprb processes alternate over several rounds. Both store the same transition content:
S, A, logP, Rn, In, S_next, A_next, logP_next, version. Throughputs are transitions per second
(batch 256): `add` in steady state (buffer already full, overwriting), `sample` for uniform replay,
`sample+update` (sample, then new priorities for the sampled batch) for prioritized replay.
Each figure is the median over all timed repetitions; ratios are rlnb / cpprb. Memory is the peak
resident size of the process minus its size just before the buffer was created, against the raw bytes
of the stored arrays (capacity x bytes of one transition's nine fields).
Prints one JSON document.
"""
import argparse, json, os, platform, statistics, subprocess, sys, time

import numpy as np

BATCH = 256
ALPHA, BETA = 0.6, 0.4


def _rss(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field): return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def _data(obs_shape, obs_dtype, n, rng):
    obs = (rng.integers(0, 255, (n, *obs_shape)) if obs_dtype == np.uint8 else rng.normal(size=(n, *obs_shape))).astype(obs_dtype)
    nxt = np.roll(obs, 1, axis=0)
    return dict(S=obs, A=rng.integers(0, 2, n).astype(np.int64), logP=rng.normal(size=n).astype(np.float32),
                Rn=rng.normal(size=n).astype(np.float32), In=np.full(n, 0.99, np.float32), S_next=nxt,
                A_next=rng.integers(0, 2, n).astype(np.int64), logP_next=rng.normal(size=n).astype(np.float32),
                version=np.zeros(n, np.int64))


def _raw_bytes(d, capacity):
    return capacity * sum(v[0].nbytes for v in d.values())


def child(lib, kind, obs, capacity, reps, calls):
    obs_shape, obs_dtype = ((4,), np.float32) if obs == 'cartpole' else ((84, 84, 4), np.uint8)
    rng = np.random.default_rng(0)
    d = _data(obs_shape, obs_dtype, BATCH, rng)
    td = [rng.uniform(0.01, 2.0, BATCH) for _ in range(16)]
    if lib == 'rlnb':
        import gymnasium as gym
        from rlnb.core import TransitionBatch
        from rlnb.replay import ReplayBuffer, PrioritizedReplayBuffer
        spaces = dict(observation_space=gym.spaces.Box(0, 255, obs_shape, obs_dtype), action_space=gym.spaces.Discrete(2))
        batch = TransitionBatch(**d)
        base = _rss('VmRSS:')
        buf = ReplayBuffer(capacity, seed=0, **spaces) if kind == 'uniform' else \
            PrioritizedReplayBuffer(capacity, alpha=ALPHA, beta=BETA, seed=0, **spaces)
        add = lambda: buf.add(batch)
        if kind == 'uniform': step = lambda i: buf.sample(BATCH)
        else:
            def step(i):
                b = buf.sample(BATCH)
                buf.update(b.idx, td[i % 16])
    else:
        import cpprb
        env_dict = {k: {'shape': v.shape[1:] or 1, 'dtype': v.dtype} for k, v in d.items()}
        kw = {k: (v if v.ndim > 1 else v[:, None]) for k, v in d.items()}
        base = _rss('VmRSS:')
        buf = cpprb.ReplayBuffer(capacity, env_dict) if kind == 'uniform' else \
            cpprb.PrioritizedReplayBuffer(capacity, env_dict, alpha=ALPHA, eps=1e-6)
        add = lambda: buf.add(**kw)
        if kind == 'uniform': step = lambda i: buf.sample(BATCH)
        else:
            def step(i):
                b = buf.sample(BATCH, beta=BETA)
                buf.update_priorities(b['indexes'], td[i % 16])
    for _ in range(-(-capacity // BATCH)): add()  # fill once (first touch of every page)
    add_tps, step_tps = [], []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(calls['add']): add()
        add_tps.append(calls['add'] * BATCH / (time.perf_counter() - t))
        t = time.perf_counter()
        for i in range(calls['sample']): step(i)
        step_tps.append(calls['sample'] * BATCH / (time.perf_counter() - t))
    print(json.dumps(dict(add_tps=add_tps, step_tps=step_tps, peak_delta=_rss('VmHWM:') - base,
                          raw_bytes=_raw_bytes(d, capacity))))


def run_child(lib, kind, obs, capacity, reps, calls):
    cmd = [sys.executable, __file__, '--child', lib, kind, obs, str(capacity), str(reps), json.dumps(calls)]
    env = {**os.environ, 'JAX_PLATFORMS': 'cpu', 'XLA_FLAGS': ''}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode: raise RuntimeError(f"{lib} {kind} {obs} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(quick=False):
    import cpprb
    cases = {'cartpole': (100_000 if quick else 1_000_000, dict(add=400, sample=400)),
             'frames_84x84x4': (5_000 if quick else 50_000, dict(add=20, sample=20))}
    rounds, reps = (1, 3) if quick else (3, 5)
    results = {}
    for obs, (capacity, calls) in cases.items():
        for kind in ('uniform', 'prioritized'):
            pooled = {lib: dict(add_tps=[], step_tps=[], peak=[], raw=None) for lib in ('rlnb', 'cpprb')}
            for _ in range(rounds):
                for lib in ('rlnb', 'cpprb'):
                    r = run_child(lib, kind, 'cartpole' if obs == 'cartpole' else 'frames', capacity, reps, calls)
                    p = pooled[lib]
                    p['add_tps'] += r['add_tps']; p['step_tps'] += r['step_tps']; p['peak'].append(r['peak_delta']); p['raw'] = r['raw_bytes']
            cell = {'capacity': capacity, 'batch': BATCH, 'raw_bytes': pooled['rlnb']['raw']}
            step_name = 'sample_tps' if kind == 'uniform' else 'sample_update_tps'
            for lib, p in pooled.items():
                cell[lib] = {'add_tps': round(statistics.median(p['add_tps'])), step_name: round(statistics.median(p['step_tps'])),
                             'peak_mem_bytes': int(statistics.median(p['peak'])),
                             'mem_vs_raw': round(statistics.median(p['peak']) / p['raw'], 3)}
            cell['ratio_rlnb_over_cpprb'] = {
                'add': round(cell['rlnb']['add_tps'] / cell['cpprb']['add_tps'], 2),
                step_name.removesuffix('_tps'): round(cell['rlnb'][step_name] / cell['cpprb'][step_name], 2)}
            results[f'{obs}/{kind}'] = cell
            print(f"{obs}/{kind}: {json.dumps(cell['ratio_rlnb_over_cpprb'])}", file=sys.stderr)
    print(json.dumps(dict(benchmark='replay', quick=quick, cpprb_version=getattr(cpprb, '__version__', 'unknown'),
                          numpy=np.__version__, python=platform.python_version(), cpus=os.cpu_count(),
                          rounds=rounds, reps_per_round=reps,
                          note='frames at capacity 50k (not 1e6): 1e6 frames with S_next would need ~56 GB; this host has 23 GB',
                          results=results), indent=1))


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--child':
        _, _, lib, kind, obs, cap, reps, calls = sys.argv
        child(lib, kind, obs, int(cap), int(reps), json.loads(calls))
    else:
        ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        ap.add_argument('--quick', action='store_true', help='small capacities, one round')
        main(ap.parse_args().quick)
