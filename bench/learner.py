"""Learner throughput: rlnb's data_parallel DQN update against the bare jitted update, same network, same run.

    python bench/learner.py [--reps 5] [--updates 200] [--devices 1,2,4,8] [--batches 256,1024]

Prints one JSON object. On a CPU-only machine the script asks XLA for 8 host devices (the shape of a
TPU v4-8 or v5e-8) before importing jax; on a GPU machine it uses the GPUs it finds. Figures are medians over
`--reps` repetitions of `--updates` updates each, every repetition timing every case once in a fresh random order;
`*_vs_bare` ratios are paired (each repetition against the bare update of the same repetition, then the median), and
`overhead_1dev` is 1 - (rlnb on 1 device / bare).
"""
import argparse
import json
import os
import statistics
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--devices", default="1,2,4,8")
    ap.add_argument("--batches", default="256,1024")
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
    for bs in map(int, args.batches.split(",")):
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
    print(json.dumps(res))


if __name__ == "__main__":
    main()
