"""The learner step of K runs as one vmapped call against K calls of the single-run step (issue 56, the run axis).

For each K, K learner states of PPO on CartPole-v1 (the preset's config, one host device) and K rollouts of random
observations and rewards: `loop` calls the single run's jitted step once per run, `vmapped` calls
`jax.jit(jax.vmap(step))` once on the stacked states and rollouts. Prints JSON: seconds per update of every run for
each, their ratio (interleaved repeats, medians), and whether run i of the vmapped call equals the single step bit for
bit (max abs difference of the params otherwise).

    python bench/runs_learner.py --ks 1 4 16 64 --repeats 20
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import provenance  # noqa: E402

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algo", default="ppo")
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 4, 16, 64])
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    from rlnb.agent.agent import DistributedAgent
    agent = DistributedAgent(args.env, algo=args.algo, preset="auto", devices=1, learner_device="host")
    rt = agent.algo
    spec, learner = rt.spec, rt.learner
    base_state = jax.device_get(learner.state)
    rng = np.random.default_rng(0)

    def rollout():
        b = learner.zero_input(rt.pacing.dispatch_size(), fused=False)
        return {k: (v + rng.normal(size=v.shape).astype(v.dtype) if k in ("S", "S_final", "R") else v) for k, v in b.items()}

    def state_like(i):  # a run of its own: params perturbed by its index
        return jax.tree.map(lambda x: x + np.asarray(0.01 * i, x.dtype) if np.issubdtype(x.dtype, np.floating) else x, base_state)

    one = jax.jit(spec.learner_step)
    many = jax.jit(jax.vmap(spec.learner_step))
    out = []
    for K in args.ks:
        states = [jax.device_put(state_like(i)) for i in range(K)]
        batches = [jax.device_put(rollout()) for _ in range(K)]
        stacked_s = jax.tree.map(lambda *x: jnp.stack(x), *states)
        stacked_b = jax.tree.map(lambda *x: jnp.stack(x), *batches)
        singles = [one(s, b) for s, b in zip(states, batches)]
        fused = many(stacked_s, stacked_b)
        jax.block_until_ready((singles, fused))
        diffs = [max(float(jnp.max(jnp.abs(a - b[i]))) for a, b in zip(jax.tree.leaves(singles[i][0].params), jax.tree.leaves(fused[0].params)))
                 for i in range(K)]
        t_loop, t_vmap = [], []
        for _ in range(args.repeats):
            t = time.perf_counter(); jax.block_until_ready([one(s, b) for s, b in zip(states, batches)]); t_loop.append(time.perf_counter() - t)
            t = time.perf_counter(); jax.block_until_ready(many(stacked_s, stacked_b)); t_vmap.append(time.perf_counter() - t)
        lo, vm = statistics.median(t_loop), statistics.median(t_vmap)
        out.append(dict(K=K, loop_s_per_update_of_all=round(lo, 5), vmapped_s=round(vm, 5), ratio_vmapped_over_loop=round(vm / lo, 3),
                        bit_identical=all(d == 0 for d in diffs), max_abs_param_diff=max(diffs)))
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    agent.close()
    print(json.dumps(dict(provenance(), algo=args.algo, env=args.env, rollout=rt.pacing.dispatch_size(), results=out), indent=1))


if __name__ == "__main__":
    main()
