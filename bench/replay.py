"""Replay-buffer throughput and memory: rlnb against cpprb, measured in the same run.

    python bench/replay.py            # full run (CartPole obs at capacity 1e6, 84x84x4 frames at capacity 50k)
    python bench/replay.py --quick    # smaller capacities and fewer repetitions, for a smoke test

Throughput: for each (observation kind, buffer kind) one subprocess holds an rlnb and a cpprb buffer and
times them in alternating blocks (so load from other processes hits both alike). Memory: each library's
buffer is filled in a subprocess of its own. Both store the same transition content:
S, A, logP, Rn, In, S_next, A_next, logP_next, version. Throughputs are transitions per second
(batch 256): `add` in steady state (buffer already full, overwriting), `sample` for uniform replay,
`sample+update` (sample, then new priorities for the sampled batch) for prioritized replay.
Each figure is the median over the timed blocks; ratios are rlnb / cpprb. Memory is the peak
resident size of the process minus its size just before the buffer was created, against the raw bytes
of the stored arrays (capacity x bytes of one transition's nine fields).
Prints one JSON document.
"""
import argparse, json, os, platform, statistics, subprocess, sys, time

import numpy as np

from _harness import provenance

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


def _make(lib, kind, obs_shape, obs_dtype, capacity, d):
    "A buffer of `lib` and its add and step (sample, or sample + priority update) functions."
    td = [np.random.default_rng(i).uniform(0.01, 2.0, BATCH) for i in range(16)]
    if lib == 'rlnb':
        import gymnasium as gym
        from rlnb.core import TransitionBatch
        from rlnb.replay.buffers import ReplayBuffer, PrioritizedReplayBuffer
        spaces = dict(observation_space=gym.spaces.Box(0, 255, obs_shape, obs_dtype), action_space=gym.spaces.Discrete(2))
        batch = TransitionBatch(**d)
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
        buf = cpprb.ReplayBuffer(capacity, env_dict) if kind == 'uniform' else \
            cpprb.PrioritizedReplayBuffer(capacity, env_dict, alpha=ALPHA, eps=1e-6)
        add = lambda: buf.add(**kw)
        if kind == 'uniform': step = lambda i: buf.sample(BATCH)
        else:
            def step(i):
                b = buf.sample(BATCH, beta=BETA)
                buf.update_priorities(b['indexes'], td[i % 16])
    return buf, add, step


def _obs(obs): return ((4,), np.float32) if obs == 'cartpole' else ((84, 84, 4), np.uint8)


def child_speed(kind, obs, capacity, reps, calls):
    "Both libraries in one process, timed in alternating blocks so load changes hit both alike."
    obs_shape, obs_dtype = _obs(obs)
    d = _data(obs_shape, obs_dtype, BATCH, np.random.default_rng(0))
    libs = {lib: _make(lib, kind, obs_shape, obs_dtype, capacity, d) for lib in ('rlnb', 'cpprb')}
    for _, add, _ in libs.values():
        for _ in range(-(-capacity // BATCH)): add()  # fill once: every page touched, steady state from here
    out = {lib: dict(add_tps=[], step_tps=[]) for lib in libs}
    for r in range(reps):
        for lib in (('rlnb', 'cpprb') if r % 2 == 0 else ('cpprb', 'rlnb')):
            _, add, step = libs[lib]
            t = time.perf_counter()
            for _ in range(calls['add']): add()
            out[lib]['add_tps'].append(calls['add'] * BATCH / (time.perf_counter() - t))
            t = time.perf_counter()
            for i in range(calls['sample']): step(i)
            out[lib]['step_tps'].append(calls['sample'] * BATCH / (time.perf_counter() - t))
    print(json.dumps(out))


def child_memory(lib, kind, obs, capacity):
    "Peak resident memory of one buffer filled to capacity (and sampled), in a process of its own."
    obs_shape, obs_dtype = _obs(obs)
    d = _data(obs_shape, obs_dtype, BATCH, np.random.default_rng(0))
    if lib == 'rlnb': import rlnb.replay.buffers  # imports first, so the baseline includes them
    else: import cpprb
    base = _rss('VmRSS:')
    buf, add, step = _make(lib, kind, obs_shape, obs_dtype, capacity, d)
    for _ in range(-(-capacity // BATCH) + 1): add()
    for i in range(4): step(i)
    print(json.dumps(dict(peak_delta=_rss('VmHWM:') - base, raw_bytes=_raw_bytes(d, capacity))))


def _run(args):
    cmd = [sys.executable, __file__, '--child', json.dumps(args)]
    env = {**os.environ, 'JAX_PLATFORMS': 'cpu', 'XLA_FLAGS': ''}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode: raise RuntimeError(f"{args} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(quick=False):
    import cpprb
    from importlib.metadata import version
    cases = {'cartpole': (100_000 if quick else 1_000_000, dict(add=400, sample=400)),
             'frames_84x84x4': (5_000 if quick else 50_000, dict(add=10, sample=10))}
    reps = 4 if quick else 16
    results = {}
    for obs, (capacity, calls) in cases.items():
        o = 'cartpole' if obs == 'cartpole' else 'frames'
        for kind in ('uniform', 'prioritized'):
            speed = _run(['speed', kind, o, capacity, reps, calls])
            mem = {lib: _run(['memory', lib, kind, o, capacity]) for lib in ('rlnb', 'cpprb')}
            raw = mem['rlnb']['raw_bytes']
            step_name = 'sample_tps' if kind == 'uniform' else 'sample_update_tps'
            cell = {'capacity': capacity, 'batch': BATCH, 'raw_bytes': raw}
            for lib in ('rlnb', 'cpprb'):
                cell[lib] = {'add_tps': round(statistics.median(speed[lib]['add_tps'])),
                             step_name: round(statistics.median(speed[lib]['step_tps'])),
                             'peak_mem_bytes': mem[lib]['peak_delta'], 'mem_vs_raw': round(mem[lib]['peak_delta'] / raw, 3)}
            cell['ratio_rlnb_over_cpprb'] = {
                'add': round(cell['rlnb']['add_tps'] / cell['cpprb']['add_tps'], 2),
                step_name.removesuffix('_tps'): round(cell['rlnb'][step_name] / cell['cpprb'][step_name], 2)}
            results[f'{obs}/{kind}'] = cell
            print(f"{obs}/{kind}: {json.dumps(cell['ratio_rlnb_over_cpprb'])} mem {cell['rlnb']['mem_vs_raw']}", file=sys.stderr)
    print(json.dumps(dict(provenance=provenance(), benchmark='replay', quick=quick, cpprb_version=version('cpprb'), numpy=np.__version__,
                          python=platform.python_version(), cpus=os.cpu_count(), reps=reps, cases={k: {'capacity': c, 'calls_per_block': n} for k, (c, n) in cases.items()},
                          note='frames at capacity 50k (not 1e6): 1e6 frames with S_next would need ~56 GB; this host has 23 GB',
                          results=results), indent=1))


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--child':
        what, *args = json.loads(sys.argv[2])
        (child_speed if what == 'speed' else child_memory)(*args)
    else:
        ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        ap.add_argument('--quick', action='store_true', help='small capacities, one round')
        main(ap.parse_args().quick)
