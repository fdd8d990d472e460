"""Env steps per second through rlnb's worker pools against raw gymnasium, measured in the same run.

    python bench/envs.py [--reps 21] [--counts 1,8,256] [--envs CartPole-v1,Acrobot-v1] [--seconds 0.1]

Prints one JSON object. For each env and env count N:
- raw gymnasium: a single env in a Python loop (N=1), `SyncVectorEnv(N)`, `AsyncVectorEnv(N)` (N <= 8: one
  process per env on a 2-core machine is pointless beyond that), and gymnasium's numpy-vectorized env where it
  exists (CartPole);
- the pool in each mode: `sync` (one `SyncEnvWorker`), `thread` (one thread worker), `process` (min(N, max(2, cores - 1))
  process workers splitting the N envs: 2 on a 2-core machine), each worker holding the fastest env form gymnasium offers for its share (the
  numpy-vectorized env where there is one, else `SyncVectorEnv`, or the plain env for one copy).
Random actions are drawn in advance, as one array per run, for raw loops and pools alike. A pool is driven the way a
training loop drives it: await a state, send that worker its next action (no other per-step bookkeeping in the loop;
with one worker, the actions are taken in order by a `for` loop, as the raw loops take them).

Measurement: many short runs (`--seconds` each, default 0.1 s), interleaved: each repetition runs every mode once,
in a fresh random order, so that changes in machine load hit all modes alike. `ratio` (done when >= 0.9) is paired:
for each repetition, the rate of the best pool mode over the rate of the best raw mode *in that repetition* (best =
highest median rate), then the median over `--reps` repetitions. On a shared 2-core machine the load drifts between
seconds; ratios of neighbouring short runs are much steadier than ratios of separately taken medians, which are
reported too (`ratio_of_medians`), with the same ratio from the fastest runs (`ratio_best_of_runs`) and by this
process's CPU time for the single-process modes (`cpu_time_ratio_sync_pool`: sync pool against the best single-process
raw mode, paired, median; CPU time leaves out the time this process waits for a core while other programs run).
`overhead_us_per_worker_step` is the pool's cost per worker step (median over repetitions, paired): time per batch
step through the sync pool minus time per batch step of the same env stepped raw.

The interface's own cost: `floor/await` and `floor/state` (see `FloorPool`) step the sync pool's env form with the
least any pool with this interface does (a call per action, an awaited coroutine per state; `state` also builds the
`EnvState` every state is). They are no pool mode and never the best pool; `floor_ratio` is their paired median
against the best raw mode, and `sync_pool_vs_floor_state` the sync pool's against `floor/state`. Where `floor_ratio`
of `state` is below 0.9 and the best raw mode is the form the floor steps (one env; CartPole's numpy-vectorized env),
no pool that steps that env in the caller reaches the target there. Parallel modes are not bounded by it: with several
process workers a pool can beat the single-process raw loop (Acrobot at 256 envs), but one env leaves nothing to spread.

What the raw loops leave out: the bare loops only call `step` (and `reset` after an episode ends for one env); a
training loop must also skip the steps gymnasium's vector envs spend on next-step autoresets and keep per-env
episode step counters, which the pool does for every state (plus `final_obs`, episode indices and the action check).
`raw/<kind>+bookkeeping` is the bare loop plus that minimum (a done mask carried to the next step, step counters;
for one env the final observation and the counters), and `ratio_vs_raw_with_bookkeeping` compares the sync pool
with it. It is reported for orientation only: the target compares against the bare loops.
"""
import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import gymnasium as gym

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import provenance  # noqa: E402
from rlnb.envs.pool import AsyncEnvWorker, AsyncWorkerPool, EnvState, SyncEnvWorker, SyncWorkerPool  # noqa: E402


def has_numpy_vector(env_id):
    return gym.spec(env_id).vector_entry_point is not None


def env_maker(env_id, n):
    "Zero-arg factory for the fastest form of `n` copies of `env_id`, and its name."
    if n == 1:
        return (lambda: gym.make(env_id)), "single"
    if has_numpy_vector(env_id):
        return (lambda: gym.make_vec(env_id, n, vectorization_mode="vector_entry_point")), "numpy_vector"
    return (lambda: gym.make_vec(env_id, n, vectorization_mode="sync")), "sync_vector"


def actions_for(env_id, n, steps, seed):
    "Random actions drawn in advance: a list of ints for one env, else an array (steps, n)."
    space = gym.make(env_id).action_space
    a = np.random.default_rng(seed).integers(0, space.n, (steps, n))
    return a[:, 0].tolist() if n == 1 else a


def time_raw_single(env, acts):
    step, reset = env.step, env.reset
    t0, c0 = time.perf_counter(), time.process_time()
    for a in acts:
        _, _, term, trunc, _ = step(a)
        if term or trunc:
            reset()
    return time.perf_counter() - t0, time.process_time() - c0


def time_raw_vector(env, acts):
    step = env.step
    t0, c0 = time.perf_counter(), time.process_time()
    for a in acts:
        step(a)
    return time.perf_counter() - t0, time.process_time() - c0


def time_raw_single_kept(env, acts):
    "The single-env loop plus what a training loop keeps: the final observation and episode/step counters."
    step, reset = env.step, env.reset
    ep = t = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for a in acts:
        obs, r, term, trunc, info = step(a)
        if term or trunc:
            final = obs
            obs, _ = reset()
            ep += 1; t = 0
        else:
            t += 1
    return time.perf_counter() - t0, time.process_time() - c0


def time_raw_vector_kept(env, acts):
    "The vector loop plus what a training loop needs: which rows are next-step autoresets, per-env step counters."
    step, n = env.step, env.num_envs
    prev_done, t, ones = np.zeros(n, bool), np.zeros(n, np.int64), np.ones(n, np.int64)
    t0, c0 = time.perf_counter(), time.process_time()
    for a in acts:
        obs, r, term, trunc, info = step(a)
        first = prev_done  # these rows are autoreset steps, not transitions
        t = t + ones
        t[first] = 0
        prev_done = term | trunc
    return time.perf_counter() - t0, time.process_time() - c0


async def time_pool(pool, acts_per_worker):
    "Step every worker through its pre-drawn actions; returns seconds from the first action to the last state."
    n_w = len(pool.workers)
    for _ in range(n_w):  # take the pending states (first run: the initial ones)
        await pool.get_state()
    get, send = pool.get_state, pool.send_action
    if n_w == 1:  # one worker: the loop a training loop over one worker is, actions taken in order like the raw loops do
        acts = acts_per_worker[0]
        t0, c0 = time.perf_counter(), time.process_time()
        for a in acts:
            send(a, 0)
            await get()
        dt = time.perf_counter() - t0, time.process_time() - c0
        pool.send_action(acts[0], 0)  # leave a state to take, like at the start
        return dt
    nxt = [iter(a).__next__ for a in acts_per_worker]  # each worker's next action
    t0, c0 = time.perf_counter(), time.process_time()
    for w in range(n_w):
        send(nxt[w](), w)
    live = n_w
    while live:  # whichever worker reports gets its next action, until every worker has used up its actions
        _, w = await get()
        try:
            send(nxt[w](), w)
        except StopIteration:
            live -= 1
    dt = time.perf_counter() - t0, time.process_time() - c0
    for w in range(n_w):  # leave each worker with a state to take, like at the start
        pool.send_action(acts_per_worker[w][0], w)
    return dt


class FloorPool:
    """The least any pool with rlnb's interface does per step, as a bound no real pool can beat.

    `send_action` steps the env and keeps what it returned; `await get_state()` hands that back from a coroutine.
    With `state=True` each step also becomes an `EnvState` (unpacked, reward as a float, one 10-field named tuple),
    as every state a pool reports is. No action check, no counters, no autoreset bookkeeping, no worker: the
    difference between this and raw gymnasium is what the interface itself costs (one awaited coroutine, one call,
    one named state per step), whatever the code behind it."""

    def __init__(self, env, state):
        self.workers = [env]  # `time_pool` reads how many workers there are
        self._step, self._reset, self._single = env.step, env.reset, not isinstance(env, gym.vector.VectorEnv)
        self._last = None
        env.reset(seed=0)
        if state:  # one call per step either way, as in a pool
            self.send_action = self._send_state

    def send_action(self, action, worker_id):
        r = self._last = self._step(action)
        if self._single and (r[2] or r[3]):
            self._reset()

    def _send_state(self, action, worker_id):
        obs, r, term, trunc, info = self._step(action)
        if not self._single:
            self._last = tuple.__new__(EnvState, (obs, r, term, trunc, info, 0, 0, False, obs, False))
            return
        if term or trunc:
            obs = self._reset()[0]
        self._last = tuple.__new__(EnvState, (obs, float(r), bool(term), bool(trunc), info, 0, 0, False, obs, False))

    async def get_state(self, timeout=None):
        return self._last, 0

    def cleanup(self):
        self.workers[0].close()


def split_actions(acts, sizes):
    "Per-worker slices of the (steps, N) action array (lists of ints for one-env workers)."
    if isinstance(acts, list):
        return [acts]
    out, lo = [], 0
    for n in sizes:
        part = acts[:, lo:lo + n]
        out.append(part[:, 0].tolist() if n == 1 else list(part))
        lo += n
    return out


def calibrate_steps(seconds, rate_guess, n):
    return max(10, int(seconds * rate_guess / n))


def bench_env(env_id, n, reps, seconds, loop):
    runs = {}  # name -> (callable returning seconds, env steps per run)
    cleanup = []
    make, kind = env_maker(env_id, n)

    # a quick probe fixes the number of steps so that one run of the fastest form lasts about `seconds`
    probe = make()
    probe.reset(seed=0)
    k = max(50, 4000 // n)
    pacts = actions_for(env_id, n, k, 1)
    timer = time_raw_single if n == 1 else time_raw_vector
    timer(probe, pacts[:10])  # the first steps run gymnasium's env checker
    rate = (k * n) / min(timer(probe, pacts)[0] for _ in range(3))  # fastest of three: load only ever slows a probe
    probe.close()
    steps = calibrate_steps(seconds, rate, n)
    acts = actions_for(env_id, n, steps, 0)

    def add_raw(name, env, single, kept=False):
        env.reset(seed=0)
        cleanup.append(env.close)
        f = (time_raw_single_kept if kept else time_raw_single) if single else (time_raw_vector_kept if kept else time_raw_vector)
        runs[("kept/" if kept else "raw/") + name] = (lambda: f(env, acts), steps * n)

    if n == 1:
        add_raw("single", gym.make(env_id), True)
    else:
        add_raw("sync_vector", gym.make_vec(env_id, n, vectorization_mode="sync"), False)
        if n <= 8:
            add_raw("async_vector", gym.make_vec(env_id, n, vectorization_mode="async"), False)
        if has_numpy_vector(env_id):
            add_raw("numpy_vector", gym.make_vec(env_id, n, vectorization_mode="vector_entry_point"), False)
    add_raw(kind, make(), n == 1, kept=True)  # the sync pool's own env form, stepped raw with a training loop's bookkeeping

    def add_pool(name, pool, sizes):
        cleanup.append(pool.cleanup)
        per_worker = split_actions(acts, sizes)
        runs["pool/" + name] = (lambda: loop.run_until_complete(time_pool(pool, per_worker)), steps * n)

    add_pool("sync", SyncWorkerPool([SyncEnvWorker(make, seed=0)]), [n])
    for name, state in (("await", False), ("state", True)):  # the interface's own cost (see FloorPool); not a pool mode
        floor = FloorPool(make(), state)
        cleanup.append(floor.cleanup)
        runs["floor/" + name] = (lambda floor=floor, a=split_actions(acts, [n]): loop.run_until_complete(time_pool(floor, a)), steps * n)
    add_pool("thread", AsyncWorkerPool([AsyncEnvWorker(make, mode="thread", seed=0)]), [n])
    n_proc = min(n, max(2, (os.cpu_count() or 2) - 1))  # a core for the event loop, the rest for the children
    sizes = [n // n_proc + (i < n % n_proc) for i in range(n_proc)]
    proc_workers = [AsyncEnvWorker(env_maker(env_id, k)[0], mode="process", rank=i, world_size=n_proc, seed=0)
                    for i, k in enumerate(sizes)]
    add_pool(f"process_x{n_proc}", AsyncWorkerPool(proc_workers), sizes)

    for name, (f, _) in runs.items():  # warm-up (also waits for the processes to come up)
        f()
    times = {name: [] for name in runs}
    order = list(runs)
    shuffle = np.random.default_rng(n).shuffle
    for _ in range(reps):  # short runs, all modes per repetition in a fresh random order: load changes hit every mode alike
        shuffle(order)
        for name in order:
            times[name].append(runs[name][0]())
    for c in cleanup:
        c()
    loop.run_until_complete(asyncio.sleep(0))

    rates = {name: runs[name][1] / statistics.median(t[0] for t in ts) for name, ts in times.items()}
    # CPU time of this process: for raw loops and the sync pool all the work happens here, so their CPU-time rates
    # compare the same work while other programs compete for the cores (wall-clock rates then drift with the load)
    cpu_rates = {name: runs[name][1] / statistics.median(t[1] for t in ts) for name, ts in times.items()
                 if name in ("pool/sync", "raw/single", "raw/sync_vector", "raw/numpy_vector")}
    raw = {k[4:]: round(v) for k, v in rates.items() if k.startswith("raw/")}
    pool = {k[5:]: round(v) for k, v in rates.items() if k.startswith("pool/")}
    floor = {k[6:]: round(v) for k, v in rates.items() if k.startswith("floor/")}
    best_raw, best_pool = max(raw, key=raw.get), max(pool, key=pool.get)
    steps_of = lambda name: runs[name][1]
    # paired: in each repetition, best pool mode against best raw mode measured within the same second
    paired = [(steps_of("pool/" + best_pool) / p[0]) / (steps_of("raw/" + best_raw) / r[0])
              for p, r in zip(times["pool/" + best_pool], times["raw/" + best_raw])]
    # the interface's floor against the best raw mode (the same env form where that is a single env's loop or the
    # numpy-vectorized env; otherwise a different form, e.g. AsyncVectorEnv), and the sync pool against that floor
    floor_vs_raw = {k: round(statistics.median((steps_of("floor/" + k) / f[0]) / (steps_of("raw/" + best_raw) / r[0])
                                               for f, r in zip(times["floor/" + k], times["raw/" + best_raw])), 3)
                    for k in floor}
    sync_vs_floor = round(statistics.median(f[0] / p[0] for p, f in zip(times["pool/sync"], times["floor/state"])), 3)
    best_cpu_raw = max((k for k in cpu_rates if k.startswith("raw/")), key=cpu_rates.get)  # same env steps, so paired times compare
    fastest = {name: runs[name][1] / min(t[0] for t in ts) for name, ts in times.items()}  # best-of runs, less sensitive to load
    ratio_best_of = max(v for k, v in fastest.items() if k.startswith("pool/")) / max(v for k, v in fastest.items() if k.startswith("raw/"))
    same_kind_raw = "single" if n == 1 else kind
    overhead = statistics.median((p[0] - r[0]) / steps for p, r in zip(times["pool/sync"], times["raw/" + same_kind_raw])) * 1e6
    kept = "kept/" + kind
    ratio_kept = statistics.median(r[0] / p[0] for p, r in zip(times["pool/sync"], times[kept]))
    return dict(env_steps_per_s=dict(raw=raw, pool=pool), worker_env=kind, steps_per_run=steps * n,
                best_raw=best_raw, best_pool=best_pool, ratio=round(statistics.median(paired), 3),
                ratio_of_medians=round(pool[best_pool] / raw[best_raw], 3),
                ratio_best_of_runs=round(ratio_best_of, 3),
                floor_env_steps_per_s=floor, floor_ratio=floor_vs_raw, sync_pool_vs_floor_state=sync_vs_floor,
                cpu_time_env_steps_per_s={k: round(v) for k, v in cpu_rates.items()},
                cpu_time_ratio_sync_pool=round(statistics.median(r[1] / p[1] for p, r in zip(times["pool/sync"], times[best_cpu_raw])), 3),
                overhead_us_per_worker_step=round(overhead, 2),
                overhead_vs=f"pool/sync vs raw/{same_kind_raw}",
                raw_with_bookkeeping_env_steps_per_s=round(rates[kept]),
                ratio_vs_raw_with_bookkeeping=round(ratio_kept, 3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", default="CartPole-v1,Acrobot-v1")
    ap.add_argument("--counts", default="1,8,256")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--seconds", type=float, default=0.1, help="target length of one run of the fastest raw form")
    args = ap.parse_args()
    loop = asyncio.new_event_loop()
    results = {}
    for env_id in args.envs.split(","):
        results[env_id] = {}
        for n in map(int, args.counts.split(",")):
            results[env_id][str(n)] = bench_env(env_id, n, args.reps, args.seconds, loop)
            print(f"{env_id} N={n}: {json.dumps(results[env_id][str(n)])}", file=sys.stderr, flush=True)
    ratios = [r["ratio"] for per_env in results.values() for r in per_env.values()]
    out = dict(provenance=provenance(), benchmark="rlnb.envs.pool pools vs raw gymnasium", unit="env steps per second (median)", reps=args.reps,
               seconds_per_run=args.seconds, ratio="median over repetitions of best pool / best raw rate in the same repetition",
               python=platform.python_version(), gymnasium=gym.__version__, cpus=os.cpu_count(),
               results=results, min_ratio=min(ratios), done_when="min_ratio >= 0.9", done=min(ratios) >= 0.9)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
