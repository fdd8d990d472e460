"""Measure presets the way a user runs them: `rlnb train ALGO --env ENV --preset NAME --seed S`, one process per run.

    python bench/presets.py apex-dqn-MountainCar-v0 --seeds 0 1 2 --write
    python bench/presets.py --all --seeds 0 1 2 --jobs 2 --write

Each run stops at the first evaluation that reaches the preset's `target_return` (or at its `steps`). It prints one JSON
line per run on stderr and a JSON summary per preset on stdout; `--write` replaces the `[result]` table of each preset
file with the summary, so `rlnb presets` shows what the preset reached, on which seeds and on what machine (once bench/results.py
has written the results table's 5-seed [result], these tuning figures go to [result.tuning] instead).
Learning results, not timings: `wall_s` is recorded for orientation only (runs share the machine's cores).
"""
import argparse
import concurrent.futures as cf
import csv
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rlnb.agent.presets import get_preset, presets  # noqa: E402


def one(preset, seed: int, extra: list) -> dict:
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-c", "import sys; from rlnb.cli import main; sys.exit(main(sys.argv[1:]))", "train", preset.algo, "--env", preset.env, "--preset", str(preset.path),
               "--seed", str(seed), "--out", d, "--no-progress", "--save-interval", "1000000000", *extra]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0: return dict(preset=preset.name, seed=seed, error=p.stderr[-1500:])
        r = json.loads(p.stdout.strip().splitlines()[-1])
        rows = list(csv.DictReader(pathlib.Path(r["metrics"]).read_text().splitlines()))
        hist = [(int(row["env_steps"]), float(row["eval_return"])) for row in rows if row["eval_return"]]
        # TD3's share of actions at the bounds (a saturated actor), as last logged at or before each evaluation
        bounds, last = [], None
        for row in rows:
            if row.get("actions_at_bounds"): last = round(float(row["actions_at_bounds"]), 3)
            if row["eval_return"] and last is not None: bounds.append((int(row["env_steps"]), last))
    target = float(preset.train["target_return"])
    return dict(preset=preset.name, seed=seed, reached=r["eval_return"] >= target, env_steps=r["env_steps"],
                final_eval=round(r["eval_return"], 1), wall_s=r["wall_s"], evals=hist, **(dict(actions_at_bounds=bounds) if bounds else {}))


def summary(preset, runs: list, seeds: list) -> dict:
    ok = [r for r in runs if "error" not in r]
    steps = sorted(r["env_steps"] if r["reached"] else float("inf") for r in ok)
    med = statistics.median(steps) if steps else float("inf")
    out = dict(seeds=seeds, solved=f"{sum(r['reached'] for r in ok)}/{len(seeds)}",
               env_steps=[r["env_steps"] for r in ok], reached=[r["reached"] for r in ok], final_eval=[r["final_eval"] for r in ok],
               wall_s=[r["wall_s"] for r in ok])
    if med != float("inf"): out["median_env_steps_to_target"] = int(med)
    errors = [r for r in runs if "error" in r]
    if errors: out["errors"] = [f"seed {r['seed']}: {r['error'][-300:]}" for r in errors]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    out.update(machine=f"{platform.machine()}, {os.cpu_count()} CPU cores, learner on {os.environ.get('JAX_PLATFORMS') or 'the default JAX backend'}",
               date=datetime.date.today().isoformat(), commit=commit,
               command=f"python bench/presets.py {preset.name} --seeds {' '.join(map(str, seeds))}")
    return out


def toml_value(v) -> str:
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, (int, float)): return repr(v)
    if isinstance(v, str): return json.dumps(v)
    if isinstance(v, list): return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def write_result(preset, res: dict):
    "Replace the file's [result] table (the last table of a preset file) with `res`; where [result] holds the results table's runs (bench/results.py), keep it and write `res` as [result.tuning]."
    text = preset.path.read_text()
    head = text.split("\n[result]")[0].rstrip("\n")
    table = lambda d: "\n".join(f"{k} = {toml_value(v)}" for k, v in d.items())
    if "protocol" in preset.result:
        kept = {k: v for k, v in preset.result.items() if k != "tuning"}
        preset.path.write_text(f"{head}\n\n[result]  # written by bench/results.py: the results table's runs (seeds no test or tuning uses)\n{table(kept)}\n\n"
                               f"[result.tuning]  # written by bench/presets.py: what the preset reached on the seeds it was tuned on (the tests use them too)\n{table(res)}\n")
    else: preset.path.write_text(f"{head}\n\n[result]  # written by bench/presets.py: what this preset reached\n{table(res)}\n")
    get_preset(preset.path)  # still a valid preset


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="preset names or .toml paths")
    ap.add_argument("--all", action="store_true", help="every shipped preset")
    ap.add_argument("--algo", default=None, help="with --all: only this algorithm's")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2: this machine's cores)")
    ap.add_argument("--write", action="store_true", help="write each summary into its preset file's [result] table")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ap.epilog = "After --: more flags for rlnb train (a tuning trial; its results are printed, never written)."
    a, extra = ap.parse_args(argv[:cut]), argv[cut + 1:]
    chosen = presets(a.algo) if a.all else [get_preset(n) for n in a.names]
    if not chosen: ap.error("name presets or pass --all")
    jobs = [(p, s) for s in a.seeds for p in chosen]
    runs = {p.name: [] for p in chosen}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for r in ex.map(lambda job: one(*job, extra), jobs):
            runs[r["preset"]].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    for p in chosen:
        res = summary(p, sorted(runs[p.name], key=lambda r: r["seed"]), a.seeds)
        if extra: res["flags"] = " ".join(extra)
        print(json.dumps(dict(preset=p.name, **res)), flush=True)
        if a.write and not extra and "errors" not in res: write_result(p, res)


if __name__ == "__main__":
    main()
