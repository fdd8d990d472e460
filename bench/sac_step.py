"""Where SAC's (or TD3's) time per env step goes at rl-zoo3's MuJoCo settings (one env, one update per env step, the settings of
`sac_mujoco.py`): the whole runtime's wall-clock and CPU time per env step, against the bare jitted update alone, in one
process.

    pip install -e ".[mujoco]"
    python bench/sac_step.py                                  # HalfCheetah-v5, 3 timings of 4,000 env steps each
    python bench/sac_step.py --env Hopper-v5 --steps 2000 --reps 5
    python bench/sac_step.py --algo td3 > bench/results/td3_step.json   # TD3 (400x300 networks, actor every second update)
    python bench/sac_step.py --config '{"publish_ready": true}'  # the same with other runtime settings

`sac_mujoco.py` takes 12 minutes a run; this takes about 2 and isolates the cost that decides its time ratio. The run
trains with `eval_interval=None` (no evaluation pauses), first through the 10,000 uniform random steps and 1,000 updates
more (compile and first touches), then `--reps` timings of `--steps` env steps each. Per timing: wall-clock and process
CPU time (every thread: XLA's compute threads, the event loop, the env) per env step. The bare update is `learner_step`
jitted alone on one fixed batch, 300 updates per timing (`sac_update.py`'s), timed before and after the run.

Prints one JSON object: medians of `step_ms` (wall per env step), `step_cpu_ms`, `bare_ms` (wall per bare update),
`bare_cpu_ms` (its CPU time), and the derived `step_over_bare` (how much slower a whole env step is than the update it
contains) and `cpu_around_update_ms` (`step_cpu_ms - bare_cpu_ms`: what the actor, the env, replay and the learner's
feed cost per env step, in CPU time). On a machine with few cores, wall per step is about the CPU per step over the
cores, so cutting `cpu_around_update_ms` is what makes the run faster.
"""
import argparse
import json
import statistics
import sys
import time

import jax

from _harness import provenance
from sac_mujoco import RLNB_COMMON, RLNB_SETTINGS


def bare_update(rt, n=300, reps=3):
    "Median wall and CPU milliseconds of the jitted `learner_step` on one fixed batch, one device."
    step = jax.jit(rt.spec.learner_step)
    dev = jax.local_devices()[0]
    b = jax.device_put(rt.learner.dispatch_input(rt.pacing.take()), dev)
    state = jax.device_put(jax.device_get(rt.learner.state), dev)
    state, _ = step(state, b)
    jax.block_until_ready(state)
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(n): state, _ = step(state, b)
        jax.block_until_ready(state)
        wall.append((time.perf_counter() - t) / n * 1e3); cpu.append((time.process_time() - c) / n * 1e3)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--algo", default="sac", choices=sorted(RLNB_SETTINGS), help="sac (default) or td3, with sac_mujoco.py's settings")
    ap.add_argument("--env", default="HalfCheetah-v5")
    ap.add_argument("--steps", type=int, default=4_000, help="env steps per timing (default 4,000)")
    ap.add_argument("--reps", type=int, default=3, help="timings (default 3)")
    ap.add_argument("--warmup", type=int, default=10_000, help="uniform random env steps before the first update (default 10,000)")
    ap.add_argument("--config", default="{}", help="JSON of config fields to set beside the rl-zoo3 ones")
    args = ap.parse_args()
    from rlnb.algos.sac import SAC
    from rlnb.algos.td3 import TD3
    kw = dict(seed=0, devices=jax.local_devices()[:1], buffer_capacity=100_000, buffer_warmup=args.warmup, **RLNB_COMMON, **RLNB_SETTINGS[args.algo])
    kw.update(json.loads(args.config))
    rt = (SAC if args.algo == "sac" else TD3)(args.env, **kw)
    try:
        n = args.warmup + 1_000
        rt.train(n, eval_interval=None, final_eval=False)
        bw, bc = bare_update(rt)
        wall, cpu = [], []
        for i in range(args.reps):
            t, c = time.perf_counter(), time.process_time()
            n += args.steps
            rt.train(n, eval_interval=None, final_eval=False)
            wall.append((time.perf_counter() - t) / args.steps * 1e3); cpu.append((time.process_time() - c) / args.steps * 1e3)
            print(f"timing {i + 1}/{args.reps}: {wall[-1]:.2f} ms wall, {cpu[-1]:.2f} ms CPU per env step", file=sys.stderr)
        bw2, bc2 = bare_update(rt)
    finally:
        rt.close()
    med = lambda x: round(statistics.median(x), 3)
    out = dict(step_ms=med(wall), step_cpu_ms=med(cpu), bare_ms=med(bw + bw2), bare_cpu_ms=med(bc + bc2))
    out.update(step_over_bare=round(out["step_ms"] / out["bare_ms"], 3), cpu_around_update_ms=round(out["step_cpu_ms"] - out["bare_cpu_ms"], 3))
    print(json.dumps(dict(provenance=provenance(sys.argv), algo=args.algo, env=args.env, config=kw | dict(devices=1), steps=args.steps, summary=out,
                          runs=dict(step_ms=wall, step_cpu_ms=cpu, bare_ms=bw + bw2, bare_cpu_ms=bc + bc2))))


if __name__ == "__main__":
    main()
