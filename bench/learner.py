"""Learner throughput: rlnb's data_parallel DQN update against the bare jitted update, same network, same run.

    python bench/learner.py [--reps 5] [--updates 200] [--devices 1,2,4,8] [--batches 256,1024]

Prints one JSON object. On a CPU-only machine the script asks XLA for 8 host devices (the shape of a
TPU v2-8) before importing jax; on a GPU machine it uses the GPUs it finds. Figures are medians over
`--reps` repetitions of `--updates` updates each; `overhead_1dev` is 1 - (rlnb on 1 device / bare).
"""
import argparse
import json
import os
import statistics
import time

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


def rate(fn, state, batch, updates, reps):
    state, m = fn(state, batch)  # compile
    jax.block_until_ready((state, m))
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(updates):
            state, m = fn(state, batch)
        jax.block_until_ready((state, m))
        out.append(updates / (time.perf_counter() - t0))
    return statistics.median(out)


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
    res = {"platform": all_devices[0].platform, "device_kind": all_devices[0].device_kind,
           "n_local_devices": len(all_devices), "reps": args.reps, "updates_per_rep": args.updates, "results": []}
    bare_step = jax.jit(make_step(net, opt, reduce=lambda g: g))
    for bs in map(int, args.batches.split(",")):
        batch = make_batch(rng, bs)
        bare = rate(bare_step, jax.device_put(state0, all_devices[0]), jax.device_put(batch, all_devices[0]),
                    args.updates, args.reps)
        row = {"batch": bs, "bare_updates_per_s": round(bare, 1)}
        for k in map(int, args.devices.split(",")):
            if k > len(all_devices):
                continue
            mesh = make_mesh(all_devices[:k])
            dp = data_parallel(make_step(net, opt), mesh)
            r = rate(dp, replicate(state0, mesh), shard_batch(batch, mesh), args.updates, args.reps)
            row[f"rlnb_{k}dev_updates_per_s"] = round(r, 1)
            row[f"rlnb_{k}dev_vs_bare"] = round(r / bare, 3)
        if f"rlnb_1dev_vs_bare" in row:
            row["overhead_1dev"] = round(1 - row["rlnb_1dev_vs_bare"], 3)
        fused_k = 16
        mesh = make_mesh(all_devices[:1])
        fused = data_parallel(make_step(net, opt), mesh, num_fused=fused_k)
        stacked = tuple(np.stack([b] * fused_k) for b in batch)
        r = rate(fused, replicate(state0, mesh), shard_batch(stacked, mesh, batch_axis=1),
                 max(1, args.updates // fused_k), args.reps) * fused_k
        row[f"rlnb_1dev_fused{fused_k}_updates_per_s"] = round(r, 1)
        row[f"rlnb_1dev_fused{fused_k}_vs_bare"] = round(r / bare, 3)
        res["results"].append(row)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
