"""Does rlnb's IMPALA learn? CartPole-v1, Acrobot-v1 and Pendulum-v1 with one set of hyperparameters, per seed.

    python bench/impala_learning.py [--envs CartPole-v1,Acrobot-v1,Pendulum-v1] [--seeds CartPole-v1=0,1,2,3,4]
        [--steps Acrobot-v1=300000] [--set learning_rate=3e-3 --set hidden=(128,128)]
        [--env-set Pendulum-v1:gamma=0.95] [--devices 1] [--jobs 1] [--out bench/results/impala_learning.json]

Every (env, seed) runs in a fresh subprocess. Each builds `IMPALA(env, seed=seed, devices=jax.local_devices()[:devices],
**overrides)` with `IMPALAConfig`'s defaults unless `--set` (all envs) or `--env-set ENV:field=value` (one env) overrides a
field (values are Python literals), then trains to its env-step budget with a greedy/deterministic evaluation of
10 episodes every `eval_every` env steps:

| env | seeds | budget (env steps) | eval every | target | stops at the target |
| --- | --- | --- | --- | --- | --- |
| CartPole-v1 | 0-4 | 200,000 | 10,000 | mean >= 475 | yes |
| Acrobot-v1 | 0-2 | 300,000 | 10,000 | mean >= -100 | no: runs the whole budget, so final/best show whether it stays |
| Pendulum-v1 | 0-2 | 500,000 | 25,000 | none | - |

Per run: `solved` (an evaluation reached the target), `steps_to_solve` (env steps at the first such evaluation),
`wall_s` (wall-clock from building the agent to the end of training, JAX compile included, library imports not),
`train_s_to_solve` (wall-clock to the first evaluation at the target, minus the time spent evaluating before it),
`final_eval`, `best_eval`, the whole `eval_history`, updates, env steps/s and the mean policy lag.
XLA_FLAGS splits the CPU into host devices only with --devices > 1 (forcing 8 host devices slows a one-device learner).
`--stop-at-target` makes Acrobot stop at its target too (tuning sweeps). `--jobs 2` runs two children at once (for tuning sweeps on a 2-core machine; wall-clocks then include contention).
Prints one JSON object (per-env tables and a summary) and writes it to --out.
"""
import argparse
import ast
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

from _harness import RESULTS, provenance

ENVS = {  # env: (seeds, budget, eval_every, target, stop at target)
    "CartPole-v1": ([0, 1, 2, 3, 4], 200_000, 10_000, 475.0, True),
    "Acrobot-v1": ([0, 1, 2], 300_000, 10_000, -100.0, False),
    "Pendulum-v1": ([0, 1, 2], 500_000, 25_000, None, False),
}
EVAL_EPISODES = 10


def parse_sets(items):
    out = {}
    for item in items:
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k.strip()] = v  # a bare string, e.g. actor_mode=thread
    return out


def run_child(env_id, seed, steps, eval_every, target, stop, overrides, devices):
    import jax
    from rlnb.algos.impala import IMPALA
    t0 = time.perf_counter()
    ag = IMPALA(env_id, seed=seed, devices=jax.local_devices()[:devices], **overrides)
    marks = []  # (env_steps, mean, wall since t0, eval seconds so far) at each evaluation

    def cb(rt):
        while len(marks) < len(rt.eval_history):
            s, m = rt.eval_history[len(marks)]
            marks.append((s, m, time.perf_counter() - t0, rt.eval_seconds))

    res = ag.train(steps, eval_interval=eval_every, num_eval_episodes=EVAL_EPISODES,
                   target_return=target if stop else None, callback=cb)
    wall = time.perf_counter() - t0
    cb(ag)
    hist = [(int(s), float(m)) for s, m in ag.eval_history]
    hit = next((mk for mk in marks if target is not None and mk[1] >= target), None)
    cfg = ag.config
    out = dict(solved=hit is not None if target is not None else None,
               steps_to_solve=None if hit is None else int(hit[0]),
               train_s_to_solve=None if hit is None else round(hit[2] - hit[3], 2),
               wall_s=round(wall, 2), train_s=round(wall - ag.eval_seconds, 2),
               final_eval=hist[-1][1] if hist else None, best_eval=max(m for _, m in hist) if hist else None,
               env_steps=int(res["env_steps"]), updates=int(res["updates"]),
               env_steps_per_s=round(float(res.get("env_steps_per_s", float("nan"))), 1),
               avg_lag_mean=res.get("avg_lag_mean"), eval_history=hist,
               config={k: getattr(cfg, k) for k in cfg.__dataclass_fields__})
    ag.close()
    return out


def child_main(args):
    env_id, seed, steps, ev, target, stop = json.loads(args.child)
    out = run_child(env_id, seed, steps, ev, target, stop, {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.overrides).items()}, args.devices)
    print("RESULT " + json.dumps(out, default=str))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", default=",".join(ENVS))
    ap.add_argument("--seeds", action="append", default=[], help="ENV=s0,s1,... or s0,s1 (all envs)")
    ap.add_argument("--steps", action="append", default=[], help="ENV=N or N (all envs): env-step budget")
    ap.add_argument("--eval-every", action="append", default=[], help="ENV=N or N (all envs)")
    ap.add_argument("--set", action="append", default=[], help="IMPALAConfig field=value for every env (Python literal)")
    ap.add_argument("--env-set", action="append", default=[], help="ENV:field=value for one env")
    ap.add_argument("--stop-at-target", action="store_true", help="every env with a target stops at it (tuning sweeps)")
    ap.add_argument("--devices", type=int, default=1, help="learner devices (host devices on a CPU)")
    ap.add_argument("--jobs", type=int, default=1, help="children at once (2 at most on a 2-core machine)")
    ap.add_argument("--out", default=os.path.join(RESULTS, "impala_learning.json"), help="'' to write nothing")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--overrides", default="{}", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child_main(args)

    def per_env(items, cast):
        d = {}
        for it in items:
            if "=" in it:
                k, v = it.split("=", 1)
                d[k] = cast(v)
            else:
                d.update({e: cast(it) for e in ENVS})
        return d

    seeds = per_env(args.seeds, lambda v: [int(s) for s in v.split(",")])
    steps = per_env(args.steps, int)
    evs = per_env(args.eval_every, int)
    common = parse_sets(args.set)
    env_sets = {}
    for it in args.env_set:
        e, kv = it.split(":", 1)
        env_sets.setdefault(e, []).append(kv)
    flags = os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}" if args.devices > 1 else "")
    cenv = {**os.environ, "XLA_FLAGS": flags, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}

    jobs = []
    for env_id in args.envs.split(","):
        s0, b0, e0, target, stop = ENVS[env_id]
        stop = stop or (args.stop_at_target and target is not None)
        ov = {**common, **parse_sets(env_sets.get(env_id, []))}
        for seed in seeds.get(env_id, s0):
            jobs.append((env_id, seed, steps.get(env_id, b0), evs.get(env_id, e0), target, stop, ov))

    def launch(job):
        env_id, seed, n, ev, target, stop, ov = job
        cmd = [sys.executable, __file__, "--child", json.dumps([env_id, seed, n, ev, target, stop]),
               "--overrides", json.dumps(ov), "--devices", str(args.devices)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=cenv, timeout=3600)
        line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
        r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-3000:])
        short = {k: v for k, v in r.items() if k not in ("eval_history", "config")}
        print(json.dumps(dict(env=env_id, seed=seed, overrides=ov, **short)), file=sys.stderr, flush=True)
        return env_id, dict(seed=seed, **r)

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for env_id, r in pool.map(launch, jobs):
            results.setdefault(env_id, []).append(r)

    summary = {}
    for env_id, runs in results.items():
        target = ENVS[env_id][3]
        ok = [r for r in runs if r.get("solved")]
        finals = [r["final_eval"] for r in runs if r.get("final_eval") is not None]
        bests = [r["best_eval"] for r in runs if r.get("best_eval") is not None]
        s = dict(runs=len(runs), target=target, budget=steps.get(env_id, ENVS[env_id][1]),
                 overrides={**common, **parse_sets(env_sets.get(env_id, []))},
                 median_final_eval=statistics.median(finals) if finals else None,
                 median_best_eval=statistics.median(bests) if bests else None,
                 median_env_steps_per_s=statistics.median([r["env_steps_per_s"] for r in runs if "env_steps_per_s" in r] or [0]))
        if target is not None:
            s.update(solved=f"{len(ok)}/{len(runs)}",
                     median_steps_to_solve=statistics.median([r["steps_to_solve"] if r.get("solved") else float("inf") for r in runs]),
                     median_train_s_to_solve=statistics.median([r["train_s_to_solve"] if r.get("solved") else float("inf") for r in runs]))
        s["table"] = [dict(seed=r["seed"], solved=r.get("solved"), steps_to_solve=r.get("steps_to_solve"),
                           wall_s=r.get("wall_s"), final_eval=r.get("final_eval"), best_eval=r.get("best_eval"),
                           error=r.get("error")) for r in runs]
        for row in s["table"]:
            if row["error"] is None:
                del row["error"]
        summary[env_id] = s
    out = dict(provenance=provenance(), devices=args.devices, xla_flags=flags, eval_episodes=EVAL_EPISODES, jobs=args.jobs,
               cpu_count=os.cpu_count(), summary=summary, runs=results)
    text = json.dumps(out, default=str)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(json.dumps(out, default=str, indent=1) + "\n")


if __name__ == "__main__":
    main()
