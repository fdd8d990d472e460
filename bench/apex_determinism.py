"""What deterministic mode costs: Ape-X DQN env steps/s and updates/s with `deterministic=True` against the default
concurrent schedule, same config, same machine, same run.

    python bench/apex_determinism.py [--reps 3] [--steps 20000] [--devices 1]

Each (mode, rep) runs in a fresh subprocess: build the agent, one warm-up `atrain` (compiles), then a timed `atrain`
of `--steps` env steps without evaluation. Prints one JSON object with per-rep figures, medians, and
`det_vs_default` = median deterministic env steps/s / median default env steps/s.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _harness import provenance


def child(mode, steps, devices, seed):
    import jax
    from rlnb.algos.apex_dqn import ApeXDQN
    agent = ApeXDQN("CartPole-v1", seed=seed, deterministic=mode == "deterministic", devices=jax.local_devices()[:devices])
    agent.train(3_000, eval_interval=None, final_eval=False)
    s0, u0, t0 = agent.env_steps, agent.updates, time.perf_counter()
    agent.train(s0 + steps, eval_interval=None, final_eval=False)  # train(n): until the run has n env steps in all
    dt = time.perf_counter() - t0
    agent.close()
    return dict(env_steps_per_s=(agent.env_steps - s0) / dt, updates_per_s=(agent.updates - u0) / dt, seconds=dt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        mode, seed = args.child.split(":")
        print("RESULT " + json.dumps(child(mode, args.steps, args.devices, int(seed))))
        return
    flags = os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}" if args.devices > 1 else "")
    env = {**os.environ, "XLA_FLAGS": flags}
    runs = {}
    for rep in range(args.reps):  # interleaved, so machine noise hits both alike
        for mode in ("default", "deterministic"):
            cmd = [sys.executable, __file__, "--child", f"{mode}:{rep}", "--steps", str(args.steps), "--devices", str(args.devices)]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-2000:])
            runs.setdefault(mode, []).append(r)
            print(json.dumps(dict(mode=mode, rep=rep, **r)), file=sys.stderr, flush=True)
    med = {m: {k: statistics.median(r[k] for r in rs) for k in ("env_steps_per_s", "updates_per_s")} for m, rs in runs.items()}
    print(json.dumps(dict(provenance=provenance(), steps=args.steps, devices=args.devices, xla_flags=flags, medians=med, runs=runs,
                          det_vs_default=med["deterministic"]["env_steps_per_s"] / med["default"]["env_steps_per_s"])))


if __name__ == "__main__":
    main()
