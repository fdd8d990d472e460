"""Many seeds in one program against the same seeds as separate processes (issue 56).

One round runs, interleaved in random order:
  * `one_call`:  `rlnb train ALGO --env ENV --seeds 0-(K-1)` — every seed a run of one `MultiRunAgent`, one process;
  * `processes`: `rlnb train ALGO --env ENV --seed s` for each seed, `--parallel` processes at a time (2: the 2 cores of CI).
Both take the preset's budget and target (`rlnb presets`), so each run stops at the first evaluation reaching the target.
Prints JSON: per round the wall times, the ratio one_call / processes and the runs solved; medians over the rounds.
One call trains its seeds on a run axis where the algorithm allows (`rlnb.runtime.run_axis`: PPO), else side by side.

    python bench/many_runs.py --algo ppo --seeds 16 --rounds 3

`--scaling 1 4 16 64` instead times one call for each K seeds (K = 1, 4, ...) at a fixed budget of `--steps` env steps
per run (no target, so every run does the same work), `--rounds` times each, interleaved; JSON with the medians, seconds
per run, and a plot (`--plot PATH`).

    python bench/many_runs.py --scaling 1 4 16 64 --steps 20000 --rounds 3 --plot bench/results/many_runs_scaling.png
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import provenance  # noqa: E402

RLNB = [os.path.join(os.path.dirname(sys.executable), "rlnb")]


def one_call(algo, env, seeds, out, extra):
    t = time.perf_counter()
    p = subprocess.run(RLNB + ["train", algo, "--env", env, "--seeds", f"0-{seeds - 1}", "--out", out, "--no-progress", *extra],
                       capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode: sys.exit(f"one call failed ({p.returncode}):\n{p.stderr[-3000:]}")
    res = json.loads(open(os.path.join(out, "results.json")).read())
    return dict(wall_s=round(dt, 2), solved=sum(r["reached"] for r in res["runs"]), final_eval=[round(r["final_eval"], 1) for r in res["runs"]],
                env_steps=[r["env_steps"] for r in res["runs"]])


def processes(algo, env, seeds, out, parallel, extra):
    t = time.perf_counter()
    todo, running, done = list(range(seeds)), [], []
    while todo or running:
        while todo and len(running) < parallel:
            s = todo.pop(0)
            d = os.path.join(out, f"s{s}")
            running.append((s, d, subprocess.Popen(RLNB + ["train", algo, "--env", env, "--seed", str(s), "--out", d, "--no-progress", *extra],
                                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        time.sleep(0.05)
        for item in [r for r in running if r[2].poll() is not None]:
            running.remove(item)
            s, d, p = item
            _, err = p.communicate()
            if p.returncode: sys.exit(f"seed {s} failed ({p.returncode}):\n{err[-3000:]}")
            done.append(json.loads(open(os.path.join(d, "result.json")).read()))
    dt = time.perf_counter() - t
    return dict(wall_s=round(dt, 2), final_eval=[round(r["eval_return"], 1) for r in sorted(done, key=lambda r: r["seed"])],
                env_steps=[r["env_steps"] for r in sorted(done, key=lambda r: r["seed"])])


def scaling(args):
    "Wall time of one call for each K, at the same env steps per run."
    extra = ["--devices", "1", "--num-train-steps", str(args.steps), "--target-return", "none"]
    times = {k: [] for k in args.scaling}
    for i in range(args.rounds):
        ks = list(args.scaling)
        random.Random(i).shuffle(ks)
        for k in ks:
            with tempfile.TemporaryDirectory() as d:
                r = one_call(args.algo, args.env, k, os.path.join(d, "many"), extra)
            times[k].append(r["wall_s"])
            print(json.dumps(dict(round=i, K=k, wall_s=r["wall_s"])), file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    out = dict(provenance(), algo=args.algo, env=args.env, steps_per_run=args.steps, wall_s=times,
               median_wall_s=med, median_s_per_run={k: round(v / k, 2) for k, v in med.items()})
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ks = sorted(med)
        ax.plot(ks, [med[k] for k in ks], "o-", label="one call (wall s)")
        ax.plot(ks, [med[1] * k for k in ks], "--", color="gray", label="K x one run")
        ax.set(xscale="log", yscale="log", xlabel="runs K (seeds)", ylabel="wall seconds",
               title=f"{args.algo} on {args.env}, {args.steps:,} env steps per run")
        ax.legend(); fig.tight_layout(); fig.savefig(args.plot, dpi=100)
    print(json.dumps(out, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algo", default="ppo")
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--seeds", type=int, default=16)
    ap.add_argument("--parallel", type=int, default=2, help="separate processes at a time")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target", type=float, default=475.0, help="target return (runs stop at the first evaluation reaching it)")
    ap.add_argument("--scaling", type=int, nargs="+", help="time one call for each of these K instead")
    ap.add_argument("--steps", type=int, default=20_000, help="env steps per run (--scaling)")
    ap.add_argument("--plot", help="where --scaling writes its plot")
    args = ap.parse_args()
    if args.scaling: return scaling(args)
    extra = ["--devices", "1", "--target-return", str(args.target)]
    rounds = []
    for i in range(args.rounds):
        order = ["one_call", "processes"]
        random.Random(i).shuffle(order)
        r = {}
        for kind in order:
            with tempfile.TemporaryDirectory() as d:
                r[kind] = (one_call(args.algo, args.env, args.seeds, os.path.join(d, "many"), extra) if kind == "one_call"
                           else processes(args.algo, args.env, args.seeds, d, args.parallel, extra))
        r["solved_processes"] = sum(v >= args.target for v in r["processes"]["final_eval"])
        r["ratio"] = round(r["one_call"]["wall_s"] / r["processes"]["wall_s"], 3)
        rounds.append(r)
        print(json.dumps(dict(round=i, **r)), file=sys.stderr, flush=True)
    print(json.dumps(dict(provenance(), algo=args.algo, env=args.env, seeds=args.seeds, parallel=args.parallel, rounds=rounds,
                          median_one_call_s=statistics.median(r["one_call"]["wall_s"] for r in rounds),
                          median_processes_s=statistics.median(r["processes"]["wall_s"] for r in rounds),
                          median_ratio=statistics.median(r["ratio"] for r in rounds)), indent=1))


if __name__ == "__main__":
    main()
