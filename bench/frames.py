"""Frame replay (rlnb.replay.frames) against cpprb's ReplayBuffer with next_of/stack_compress, measured in the same run.

    python bench/frames.py            # full run: 84x84 frames, stack 4, 50k transitions, 1 GB checkpoint round trip
    python bench/frames.py --quick    # smaller, for a smoke test

Memory: bytes per transition of FrameReplayBuffer / PrioritizedFrameReplayBuffer (`nbytes / capacity`) against the naive
storage of S and S_next stacked (2 x 84 x 84 x 4 bytes), and against rlnb's PrioritizedReplayBuffer with an 84x84x4 space
(which stores S and S_next); for both libraries also the resident memory a filled buffer adds to its process (subprocesses).

Sampling: both buffers hold the same stream of random frames (episodes of 400-2000 steps, as Atari games run with frame
skip 4) and are timed in alternating blocks of calls, so load from other processes hits both alike; the figure is batches
per second, the median over the blocks, and the ratio is rlnb / cpprb. Cases:
  * `uniform`: rlnb n_step=1 (channels-last, contiguous) against cpprb's sample as it returns it;
  * `uniform_contiguous`: the same, with cpprb's obs and next_obs made C-contiguous (cpprb returns a transposed view of a
    stack-first array; a learner that feeds (B, 84, 84, 4) to a device needs the contiguous layout rlnb returns);
  * `uniform_stack_first`: rlnb with stack_axis=0, whose contiguous (B, 4, 84, 84) batches have the memory layout of cpprb's;
  * `uniform_nstep3`: rlnb with n_step=3 (returns at sample time) against cpprb n_step=1 (cpprb's Nstep drops next_obs
    when next_of is used, so there is no like-for-like n-step case);
  * `prioritized`: PrioritizedFrameReplayBuffer (n_step=1) against cpprb's PrioritizedReplayBuffer, sample only.
Checkpoint: a ~1 GB buffer goes through state_dict -> save_state (files) -> load_state (memory maps) -> load_state_dict in
a fresh process; tracemalloc's peak and the process's peak RSS are reported against the storage size.
Prints one JSON document (and writes it to bench/results/frames.json unless --no-write or --quick).
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time

import numpy as np

from _harness import RESULTS, provenance

HERE = os.path.dirname(os.path.abspath(__file__))
STACK, SHAPE = 4, (84, 84)


def _rss(field='VmRSS'):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field): return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def _episodes(n, rng):
    "Episode lengths (400-2000 steps) covering n steps."
    out = []
    while sum(out) < n: out.append(int(rng.integers(400, 2001)))
    return out


def fill_rlnb(buf, frames, lengths):
    "Steps of the episodes in one stream, with the final observation after each (next-step autoreset order)."
    i = 0
    for L in lengths:
        for j in range(L):
            if i >= len(frames) - 1: return
            end = j == L - 1
            buf.add(frames[i:i + 1], [int(i % 6)], [1.0], [end and L % 2 == 0], [end and L % 2 == 1]); i += 1
        buf.add(frames[i:i + 1], [0], [0.0], [False], [False]); i += 1  # the final observation


def fill_cpprb(rb, frames, lengths):
    "The same steps as cpprb transitions: stacked obs and next_obs (first frame repeated at a reset), on_episode_end at ends."
    i = 0
    for L in lengths:
        if i >= len(frames) - 1: return
        stack = np.repeat(frames[i][..., None], STACK, -1)
        for j in range(L):
            if i >= len(frames) - 1: return
            nxt = np.concatenate([stack[..., 1:], frames[i + 1][..., None]], -1)
            rb.add(obs=stack, act=i % 6, rew=1.0, next_obs=nxt, done=float(j == L - 1 and L % 2 == 0))
            stack = nxt; i += 1
        rb.on_episode_end(); i += 1


def make_pair(case, capacity, frames, lengths):
    import cpprb
    from rlnb.replay.frames import FrameReplayBuffer, PrioritizedFrameReplayBuffer
    env = {"obs": {"shape": (*SHAPE, STACK), "dtype": np.uint8}, "act": {}, "rew": {}, "done": {}}
    if case == 'prioritized':
        ours = PrioritizedFrameReplayBuffer(capacity + 16, 1, SHAPE, STACK, n_step=1, alpha=0.6, beta=0.4)
        theirs = cpprb.PrioritizedReplayBuffer(capacity, env, next_of="obs", stack_compress="obs", alpha=0.6)
    else:
        ours = FrameReplayBuffer(capacity + 16, 1, SHAPE, STACK, n_step=3 if case == 'uniform_nstep3' else 1,
                                 stack_axis=0 if case == 'uniform_stack_first' else -1)
        theirs = cpprb.ReplayBuffer(capacity, env, next_of="obs", stack_compress="obs")
    fill_rlnb(ours, frames, lengths); fill_cpprb(theirs, frames, lengths)
    return ours, theirs


def time_sampling(capacity, reps, calls, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.integers(0, 256, (capacity, *SHAPE), dtype=np.uint8)
    lengths = _episodes(capacity, rng)
    out = {}
    for case in ('uniform', 'uniform_contiguous', 'uniform_stack_first', 'uniform_nstep3', 'prioritized'):
        ours, theirs = make_pair(case if case != 'uniform_contiguous' else 'uniform', capacity, frames, lengths)
        def cp(B):
            s = theirs.sample(B)
            if case == 'uniform_contiguous': s['obs'], s['next_obs'] = np.ascontiguousarray(s['obs']), np.ascontiguousarray(s['next_obs'])
            return s
        res = {}
        for B in (32, 128):
            for _ in range(3): ours.sample(B); cp(B)  # warm up
            r, c = [], []
            for _ in range(reps):  # alternating blocks
                t0 = time.perf_counter()
                for _ in range(calls): ours.sample(B)
                r.append(calls / (time.perf_counter() - t0))
                t0 = time.perf_counter()
                for _ in range(calls): cp(B)
                c.append(calls / (time.perf_counter() - t0))
            res[f'batch_{B}'] = dict(rlnb_batches_per_s=round(statistics.median(r), 1), cpprb_batches_per_s=round(statistics.median(c), 1),
                                     ratio_rlnb_over_cpprb=round(statistics.median(r) / statistics.median(c), 3))
        res['rlnb_len'], res['cpprb_len'] = len(ours), int(theirs.get_stored_size())
        out[case] = res
        print(json.dumps({case: res}), file=sys.stderr, flush=True)
        del ours, theirs
    return out


def child_memory(lib, capacity):
    "Resident memory a filled buffer adds to this process, per transition."
    rng = np.random.default_rng(1)
    frames = rng.integers(0, 256, (capacity, *SHAPE), dtype=np.uint8)
    lengths = _episodes(capacity, rng)
    if lib == 'rlnb': from rlnb.replay.frames import FrameReplayBuffer
    else: import cpprb
    before = _rss()
    if lib == 'rlnb':
        buf = FrameReplayBuffer(capacity, 1, SHAPE, STACK, n_step=3); fill_rlnb(buf, frames, lengths)
    else:
        buf = cpprb.ReplayBuffer(capacity, {"obs": {"shape": (*SHAPE, STACK), "dtype": np.uint8}, "act": {}, "rew": {}, "done": {}},
                                 next_of="obs", stack_compress="obs")
        fill_cpprb(buf, frames, lengths)
    return dict(rss_bytes_per_transition=round((_rss() - before) / capacity, 1))


def child_checkpoint(capacity, streams, directory, phase):
    "phase 'save': fill a buffer, write it; phase 'load': restore it into a fresh buffer. Peak memory against storage size."
    import tracemalloc
    from rlnb.replay.frames import FrameReplayBuffer, save_state, load_state
    buf = FrameReplayBuffer(capacity, streams, SHAPE, STACK, n_step=3)
    path = os.path.join(directory, 'buf')
    if phase == 'save':
        rows = capacity // streams
        frame = np.arange(streams * 84 * 84, dtype=np.uint64).astype(np.uint8).reshape(streams, *SHAPE)
        for i in range(rows):
            buf.add(frame, np.zeros(streams, np.int64), np.ones(streams, np.float32), np.zeros(streams, bool), np.zeros(streams, bool))
    base_rss = _rss()
    tracemalloc.start()
    t0 = time.perf_counter()
    if phase == 'save': save_state(buf.state_dict(), path)
    else: buf.load_state_dict(load_state(path))
    seconds = time.perf_counter() - t0
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    status = {k: _rss(k) for k in ('VmHWM', 'VmRSS', 'RssAnon', 'RssFile')}
    return dict(phase=phase, seconds=round(seconds, 2), storage_bytes=buf.nbytes, tracemalloc_peak_bytes=peak,
                rss_before=base_rss, **{k.lower(): v for k, v in status.items()}, len=len(buf))


def run_child(*args):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', *map(str, args)], capture_output=True, text=True, timeout=3600)
    lines = [l for l in p.stdout.splitlines() if l.startswith('RESULT ')]
    if not lines: raise RuntimeError(p.stderr[-3000:])
    return json.loads(lines[-1][7:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--no-write', action='store_true')
    ap.add_argument('--child', nargs='+')
    a = ap.parse_args()
    if a.child:
        kind, *rest = a.child
        r = child_memory(rest[0], int(rest[1])) if kind == 'memory' else child_checkpoint(int(rest[0]), int(rest[1]), rest[2], rest[3])
        print('RESULT ' + json.dumps(r)); return
    import cpprb
    from rlnb.replay.frames import FrameReplayBuffer, PrioritizedFrameReplayBuffer
    from rlnb.replay.buffers import PrioritizedReplayBuffer
    import gymnasium as gym
    capacity, reps, calls = (5_000, 3, 20) if a.quick else (50_000, 9, 60)
    naive = 2 * 84 * 84 * STACK
    per = lambda b: b.nbytes / b.capacity
    naive_rlnb = PrioritizedReplayBuffer(1000, observation_space=gym.spaces.Box(0, 255, (*SHAPE, STACK), np.uint8), action_space=gym.spaces.Discrete(6))
    memory = dict(naive_S_plus_S_next_bytes=naive,
                  rlnb_PrioritizedReplayBuffer_bytes=round(per(naive_rlnb), 1),
                  FrameReplayBuffer_bytes=round(per(FrameReplayBuffer(100_000, 8, SHAPE, STACK, n_step=3)), 1),
                  PrioritizedFrameReplayBuffer_bytes=round(per(PrioritizedFrameReplayBuffer(100_000, 8, SHAPE, STACK, n_step=3)), 1))
    memory['FrameReplayBuffer_ratio_to_naive'] = round(memory['FrameReplayBuffer_bytes'] / naive, 4)
    memory['PrioritizedFrameReplayBuffer_ratio_to_naive'] = round(memory['PrioritizedFrameReplayBuffer_bytes'] / naive, 4)
    mem_cap = 5_000 if a.quick else 20_000
    memory['filled_rss'] = dict(capacity=mem_cap, rlnb=run_child('memory', 'rlnb', mem_cap), cpprb=run_child('memory', 'cpprb', mem_cap))
    sampling = time_sampling(capacity, reps, calls)
    ck_cap, streams = (20_000, 8) if a.quick else (150_000, 16)
    with tempfile.TemporaryDirectory(dir=HERE if not a.quick else None) as d:
        save = run_child('checkpoint', ck_cap, streams, d, 'save')
        load = run_child('checkpoint', ck_cap, streams, d, 'load')
        files = sum(os.path.getsize(os.path.join(d, 'buf', f)) for f in os.listdir(os.path.join(d, 'buf')))
    checkpoint = dict(capacity=ck_cap, num_streams=streams, storage_bytes=save['storage_bytes'], files_bytes=files, save=save, load=load,
                      note='tracemalloc_peak: numpy allocations during the phase. save: VmHWM (peak RSS) against rss_before, the RSS of '
                           'the filled buffer; load: a fresh process whose buffer is allocated but untouched (rss_before), so VmHWM - '
                           'rss_before is the storage being written plus what the copy holds besides (one 64 MB block map at most)')
    from importlib.metadata import version
    out = dict(provenance=provenance(), benchmark='frames', quick=a.quick, cpprb_version=version('cpprb'), numpy=np.__version__, python=platform.python_version(),
               cpus=os.cpu_count(), machine=platform.machine(),
               capacity=capacity, reps=reps, calls_per_block=calls, memory=memory, sampling=sampling, checkpoint=checkpoint)
    text = json.dumps(out, indent=1)
    print(text)
    if not a.no_write and not a.quick:
        with open(os.path.join(RESULTS, 'frames.json'), 'w') as f: f.write(text + '\n')


if __name__ == '__main__':
    main()
