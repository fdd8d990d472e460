"""Learner throughput against the bare jitted update of the same network and batch, same run.

    python bench/learner.py [--reps 5] [--updates 200] [--devices 1,2,4,8] [--batches 256,1024]
                            [--fed apex-dqn,sac,td3,impala,ppo] [--fed-batches 256,1024] [--fed-updates N] [--fed-k K] [--fed-env ENV]

Prints one JSON object. On a CPU-only machine the script asks XLA for 8 host devices (the shape of a
TPU v4-8 or v5e-8) before importing jax; on a GPU machine it uses the GPUs it finds. Figures are medians over
`--reps` repetitions of `--updates` updates each, every repetition timing every case once in a fresh random order;
`*_vs_bare` ratios are paired (each repetition against the bare update of the same repetition, then the median).

Two parts:
- `results`: the wrapper alone. rlnb's `data_parallel` DQN update (a 256x256 MLP) on a batch already on the devices,
  against `jax.jit` of the same step; `overhead_1dev` = 1 - (rlnb on 1 device / bare). `rlnb_1dev_fused16` runs 16
  updates per dispatch in a `lax.scan` (as `updates_per_dispatch=16` does), `rlnb_1dev_fused16_unrolled` the same scan
  unrolled into straight-line code (no device loop: on a GPU, fewer launches per update for a small network).
- `fed` (with `--fed ALGOS`, `--fed-batches`, default `--batches`): the learner as training runs it, fed from its
  pacing. Each algorithm's runtime (one learner device, forced there with `learner_device='devices'` and named in
  `learner_on`; `batch_size` = the batch; one update per dispatch, or K with `--fed-k K`) runs its real dispatch
  (`Learner.dispatch`: take from the pacing, prepare, place, update, book the previous dispatch's metrics
  and priorities, publish) `--fed-updates` times, against `jax.jit(learner_step)` of the same runtime on one placed
  batch. With `--fed-k K` the replay algorithms (Ape-X, SAC, TD3) fuse K updates per dispatch (`updates_per_dispatch=K`;
  Ape-X's default is 32; IMPALA and PPO stay at 1), and `bare` is `jax.jit` of a `lax.scan` of K `learner_step`s on
  one placed K-batch: every rate counts updates, not dispatches. Ape-X, SAC and TD3 sample their replay (filled with
  4 x K x batch random-action transitions, at least 2,000); IMPALA and PPO take unrolls of CartPole (T = 8, batch / 8 columns; PPO one epoch of one minibatch)
  (`--fed-env ENV`: every algorithm on ENV instead, e.g. `ALE/Pong-v5`, where the update is the Atari CNN's)
  that are put back into the queue as it empties. Cases: `fed` (the concurrent learner, which takes the next input
  ahead from replay; from an on-policy queue it takes where the dispatch runs, so there `fed` is `fed_serial`), `fed_serial` (the same runtime taking each input where its dispatch runs, as the deterministic schedule does)
  and `bare`. `overhead_fed` = 1 - fed / bare. `per_dispatch` counts, over 20 extra dispatches, what the host does per
  dispatch: update calls, batch leaves passed to the update as host arrays (each an implicit, synchronous copy to the
  device at the call), inputs placed ahead (`put`), reads of device arrays on the host (`np.asarray`), and how many of
  those reads found their copy already started (`to_host_async`) — on a GPU every other read is a round trip.
"""
import argparse
import json
import os
import statistics
import sys
import time

from _harness import provenance  # before XLA_FLAGS is set below: the command records the user's

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
import numpy as np
import optax
import flax.linen as nn

from rlnb.parallel import data_parallel, make_mesh, pmean, replicate, shard_batch


class MLP(nn.Module):
    n_actions: int = 2

    @nn.compact
    def __call__(self, s):
        for width in (256, 256):
            s = nn.relu(nn.Dense(width)(s))
        return nn.Dense(self.n_actions)(s)


def make_step(net, opt, gamma=0.99, reduce=pmean):
    "Double-DQN update on (params, target_params, opt_state)."
    def step(state, batch):
        params, target, opt_state = state
        s, a, r, d, s2 = batch
        def loss(p):
            q = net.apply(p, s)
            a2 = jnp.argmax(net.apply(p, s2), axis=-1)
            q2 = jnp.take_along_axis(net.apply(target, s2), a2[:, None], -1)[:, 0]
            td = r + gamma * (1.0 - d) * jax.lax.stop_gradient(q2) - jnp.take_along_axis(q, a[:, None], -1)[:, 0]
            return jnp.mean(optax.huber_loss(td)), td
        (l, td), g = jax.value_and_grad(loss, has_aux=True)(params)
        g = reduce(g)
        updates, opt_state = opt.update(g, opt_state, params)
        return (optax.apply_updates(params, updates), target, opt_state), {"loss": l, "td_error": td}
    return step


def make_batch(rng, n):
    return (rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, 2, n).astype(np.int32),
            rng.normal(size=n).astype(np.float32), (rng.random(n) < 0.05).astype(np.float32),
            rng.normal(size=(n, 4)).astype(np.float32))


def timed(fn, state, batch, updates):
    "Seconds for `updates` calls, the last result awaited; returns (seconds, state)."
    t0 = time.perf_counter()
    for _ in range(updates):
        state, m = fn(state, batch)
    jax.block_until_ready((state, m))
    return time.perf_counter() - t0, state


def interleaved(cases, reps, seed=0):
    """cases: name -> (fn, state, batch, updates per rep, updates counted per call). Every repetition times every case
    once, in a fresh random order, so that clock and load changes hit all cases alike. Returns name -> list of rates."""
    states = {}
    for name, (fn, state, batch, _, _) in cases.items():  # compile and warm up
        state, m = fn(state, batch)
        jax.block_until_ready((state, m))
        states[name] = state
    rates, order, rng = {name: [] for name in cases}, list(cases), np.random.default_rng(seed)
    for _ in range(reps):
        rng.shuffle(order)
        for name in order:
            fn, _, batch, updates, per_call = cases[name]
            dt, states[name] = timed(fn, states[name], batch, updates)
            rates[name].append(updates * per_call / dt)
    return rates


# ---- the learner fed from its pacing (--fed) ----
FED_ENV = {"apex-dqn": "CartPole-v1", "impala": "CartPole-v1", "ppo": "CartPole-v1", "sac": "Pendulum-v1", "td3": "Pendulum-v1"}
T_UNROLL = 8


def fed_runtime(algo, batch, device, k=1, env=None):
    "A runtime of `algo` on one learner device whose pacing holds data for `batch`-item updates (`k` per dispatch for replay algorithms), compiled; returns (runtime, refill). `env`: FED_ENV's, unless given."
    from rlnb.runtime.registry import get_algo
    from rlnb.runtime.runtime import Runtime
    spec, env = get_algo(algo), env or FED_ENV[algo]
    if algo in ("impala", "ppo"):
        cols = max(1, batch // T_UNROLL)
        kw = dict(num_actors=1, envs_per_actor=cols, unroll_length=T_UNROLL, queue_size=4)
        kw.update(dict(batch_size=batch, num_epochs=1) if algo == "ppo" else dict(batch_size=cols))
    else:
        warm = max(4 * batch * k, 2_000)
        kw = dict(num_actors=1, envs_per_actor=64, batch_size=batch, buffer_warmup=warm, buffer_capacity=max(2 * warm, 10_000),
                  updates_per_dispatch=k)
    kw.setdefault("updates_per_dispatch", 1)
    rt = Runtime(env, algorithm=spec, devices=[device], learner_device="devices", **kw)  # on `device` even where 'auto' would keep a CartPole-sized learner on the host CPU
    rt.compile()
    if rt.buffer is not None:
        rt.init_replay_buffer("random")
        rt.pacing.inserted_after_warmup = 10 ** 12  # the replay ratio never holds the learner back
        return rt, lambda: None
    async def first_unrolls():
        states = await rt.actors.first_states()
        while not rt.pacing.learner_may_run():
            await rt.actors.tick(states)
            if rt.tracer: await rt.pacing.insert(rt.tracer.flush())
    from rlnb.core import run_sync
    run_sync(first_unrolls())
    data = rt.pacing.take()
    def refill():  # unrolls go back into the queue as the learner empties it (two dispatches' worth: one may be taken ahead)
        while rt.pacing.queued() < 2: rt.pacing.put(data)
    refill()
    return rt, refill


async def fed_dispatches(rt, refill, n):
    "`n` of the runtime's own learner dispatches, the last awaited; returns seconds."
    t0 = time.perf_counter()
    for _ in range(n):
        refill()
        await rt.learner.dispatch()
    await rt.learner.finish()
    jax.block_until_ready(rt.learner.state)
    return time.perf_counter() - t0


def count_per_dispatch(rt, refill, n=20):
    "What the host does per dispatch, over `n` dispatches (see the module docstring)."
    import asyncio
    Arr = type(jax.numpy.zeros(()))
    c = dict(update_calls=0, host_leaves_to_update=0, inputs_placed=0, host_reads=0, host_reads_copy_started=0, host_copies_started=0)  # host_reads: np.asarray through __array__ (a CPU array is read through the buffer protocol and not counted)
    started = set()
    upd, put = rt.learner.update, getattr(rt.learner.update, "put", None)
    orig_array, orig_copy = Arr.__array__, Arr.copy_to_host_async
    def counted_update(state, batch):
        c["update_calls"] += 1
        c["host_leaves_to_update"] += sum(not isinstance(l, jax.Array) for l in jax.tree.leaves(batch))
        return upd(state, batch)
    def counted_put(batch):
        c["inputs_placed"] += 1
        return put(batch)
    def counted_array(self, *a, **k):
        c["host_reads"] += 1
        c["host_reads_copy_started"] += id(self) in started
        return orig_array(self, *a, **k)
    def counted_copy(self):
        c["host_copies_started"] += 1; started.add(id(self))
        return orig_copy(self)
    for k, v in vars(upd).items(): setattr(counted_update, k, v)
    if put is not None: counted_update.put = counted_put
    rt.learner.update, Arr.__array__, Arr.copy_to_host_async = counted_update, counted_array, counted_copy
    try: asyncio.run(fed_dispatches(rt, refill, n))
    finally: rt.learner.update, Arr.__array__, Arr.copy_to_host_async = upd, orig_array, orig_copy
    return {k: round(v / n, 2) for k, v in c.items()}


def fed_section(algos, batches, reps, updates, seed=0, k=1, env=None):
    "Per (algorithm, batch): the fed learner against the bare jitted update of the same runtime's step on a placed batch."
    import asyncio
    dev, rows = jax.local_devices()[0], []
    for algo in algos:
        for bs in batches:
            rt, refill = fed_runtime(algo, bs, dev, k, env)
            K = rt.config.updates_per_dispatch  # updates per dispatch, in both the fed and the bare cases
            try:
                sample = rt.pacing.take() if rt.buffer is not None else rt.pacing._queue[0]
                bare = jax.jit(rt.spec.learner_step if K == 1 else lambda st, b: jax.lax.scan(rt.spec.learner_step, st, b))
                b = jax.device_put(rt.learner.dispatch_input(sample), dev)
                bare_state = jax.device_put(jax.device_get(rt.learner.state), dev)
                out = bare(bare_state, b); jax.block_until_ready(out); bare_state = out[0]
                asyncio.run(fed_dispatches(rt, refill, 3))  # warm: the first dispatches' host paths
                ahead = hasattr(rt.learner, "feed_ahead")  # False on an rlnb from before the learner was fed ahead: `fed` is then its one order
                placed = getattr(rt.learner, "place_ahead", None)  # what the runtime chose for this input (None: no such choice)
                variants = {"fed": (True, placed)}
                if ahead: variants.update(fed_serial=(False, placed), fed_placed=(True, True))  # the input always copied ahead, to compare
                def use(name):
                    if ahead: rt.learner.feed_ahead, rt.learner.place_ahead = variants[name]
                for name in variants:  # warm each variant (placing ahead may build its program's variant for device inputs)
                    use(name); asyncio.run(fed_dispatches(rt, refill, 3))
                rates, rng = {name: [] for name in ("bare", *variants)}, np.random.default_rng(seed)
                order = list(rates)
                for _ in range(reps):
                    rng.shuffle(order)
                    for name in order:
                        if name == "bare":
                            t0 = time.perf_counter()
                            for _ in range(updates): bare_state, m = bare(bare_state, b)
                            jax.block_until_ready((bare_state, m))
                            dt = time.perf_counter() - t0
                        else:
                            use(name)
                            dt = asyncio.run(fed_dispatches(rt, refill, updates))
                        rates[name].append(updates * K / dt)
                use("fed")
                row = dict(algo=algo, env=env or FED_ENV[algo], batch=bs, items_per_update=bs, updates_per_dispatch=K, learner_on=[str(d) for d in rt.learner.mesh.devices.flat],
                           fed_ahead=ahead, input_placed_ahead=placed,
                           input_bytes=int(sum(np.asarray(x).nbytes for x in jax.tree.leaves(rt.learner.dispatch_input(sample)))))
                for name, r in rates.items(): row[f"{name}_updates_per_s"] = round(statistics.median(r), 1)
                for name in rates:
                    if name != "bare": row[f"{name}_vs_bare"] = round(statistics.median(x / y for x, y in zip(rates[name], rates["bare"])), 3)
                row["overhead_fed"] = round(1 - row["fed_vs_bare"], 3)
                row["per_dispatch"] = count_per_dispatch(rt, refill)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            finally:
                rt.close()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--devices", default="1,2,4,8")
    ap.add_argument("--batches", default="256,1024")
    ap.add_argument("--fed", default="", help="algorithms whose learner runs fed from its pacing (apex-dqn,sac,td3,impala,ppo); empty: none")
    ap.add_argument("--fed-batches", default=None, help="batches of the fed part; default --batches")
    ap.add_argument("--fed-updates", type=int, default=None, help="dispatches per repetition of the fed part; default --updates")
    ap.add_argument("--fed-k", type=int, default=1, help="updates fused per dispatch in the fed part, for Ape-X, SAC and TD3 (Ape-X's default is 32)")
    ap.add_argument("--fed-env", default=None, help="one env for every fed algorithm (e.g. ALE/Pong-v5: frames, the Atari CNN); default: CartPole-v1, Pendulum-v1 for SAC/TD3")
    ap.add_argument("--wrapper", default="on", choices=("on", "off"), help="the wrapper-alone part (results)")
    args = ap.parse_args()
    net, opt = MLP(), optax.adam(1e-3)
    rng = np.random.default_rng(0)
    params = net.init(jax.random.key(0), jnp.zeros((1, 4)))
    state0 = (params, params, opt.init(params))
    all_devices = jax.local_devices()
    res = {"provenance": provenance(), "platform": all_devices[0].platform, "device_kind": all_devices[0].device_kind,
           "n_local_devices": len(all_devices), "reps": args.reps, "updates_per_rep": args.updates, "results": []}
    bare_step = jax.jit(make_step(net, opt, reduce=lambda g: g))
    fused_k = 16
    for bs in (map(int, args.batches.split(",")) if args.wrapper == "on" else ()):
        batch = make_batch(rng, bs)
        cases = {"bare": (bare_step, jax.device_put(state0, all_devices[0]), jax.device_put(batch, all_devices[0]), args.updates, 1)}
        for k in map(int, args.devices.split(",")):
            if k <= len(all_devices):
                mesh = make_mesh(all_devices[:k])
                cases[f"rlnb_{k}dev"] = (data_parallel(make_step(net, opt), mesh), replicate(state0, mesh),
                                         shard_batch(batch, mesh), args.updates, 1)
        mesh = make_mesh(all_devices[:1])
        stacked = tuple(np.stack([b] * fused_k) for b in batch)
        cases[f"rlnb_1dev_fused{fused_k}"] = (data_parallel(make_step(net, opt), mesh, num_fused=fused_k), replicate(state0, mesh),
                                            shard_batch(stacked, mesh, batch_axis=1), max(1, args.updates // fused_k), fused_k)
        step = make_step(net, opt)
        unrolled = data_parallel(lambda st, b: jax.lax.scan(step, st, b, unroll=True), mesh, batch_axis=1)  # the K updates as straight-line code, no loop
        cases[f"rlnb_1dev_fused{fused_k}_unrolled"] = (unrolled, replicate(state0, mesh), shard_batch(stacked, mesh, batch_axis=1),
                                                     max(1, args.updates // fused_k), fused_k)
        rates = interleaved(cases, args.reps)
        row = {"batch": bs, "bare_updates_per_s": round(statistics.median(rates["bare"]), 1)}
        for name in cases:
            if name == "bare":
                continue
            row[f"{name}_updates_per_s"] = round(statistics.median(rates[name]), 1)
            # paired: each repetition's rate over the bare update's rate in the same repetition, median
            row[f"{name}_vs_bare"] = round(statistics.median(r / b for r, b in zip(rates[name], rates["bare"])), 3)
        if "rlnb_1dev_vs_bare" in row:
            row["overhead_1dev"] = round(1 - row["rlnb_1dev_vs_bare"], 3)
        res["results"].append(row)
    if args.fed:
        import rlnb
        res["fed_rlnb"] = os.path.dirname(rlnb.__file__)
        res["fed"] = fed_section(args.fed.split(","), [int(b) for b in (args.fed_batches or args.batches).split(",")], args.reps,
                                 args.fed_updates or args.updates, k=args.fed_k, env=args.fed_env)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
