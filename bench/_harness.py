"""What the time-to-solve benches share: every (algorithm, seed) in a fresh subprocess, interleaved, one JSON line back.

A bench script calls `run_matrix` from its parent process and `report` from its child (`--child NAME:SEED`); the child
prints one `RESULT {json}` line that the parent collects. `summarize` gives per-algorithm medians, with unsolved runs
counted as infinitely slow.
"""
import json
import os
import statistics
import subprocess
import sys


def report(result: dict):
    "Child side: hand the result to the parent."
    print("RESULT " + json.dumps(result, default=float), flush=True)


def run_matrix(script: str, names: list, seeds: list, args: list, env: dict | None = None, timeout: float = 1800,
               env_for=None) -> dict:
    "Run `script --child NAME:SEED *args` for every seed, and within a seed every name (interleaved); returns {name: [runs]}."
    results = {}
    for seed in seeds:
        for name in names:
            cmd = [sys.executable, script, "--child", f"{name}:{seed}", *map(str, args)]
            e = {**os.environ, **(env or {}), **(env_for(name) if env_for else {})}
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
                line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
                r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-2000:])
            except subprocess.TimeoutExpired:
                r = dict(error=f"timed out after {timeout} s")
            results.setdefault(name, []).append(dict(seed=seed, **r))
            print(json.dumps(dict(algo=name, seed=seed, **r)), file=sys.stderr, flush=True)
    return results


def summarize(results: dict) -> dict:
    "Per algorithm: solved count and the medians of train_s and env_steps (an unsolved run counts as inf)."
    out = {}
    for name, runs in results.items():
        ok = [r for r in runs if r.get("solved")]
        med = lambda k: statistics.median([r[k] if r.get("solved") else float("inf") for r in runs])
        out[name] = dict(solved=f"{len(ok)}/{len(runs)}", median_train_s=med("train_s"), median_env_steps=med("env_steps"))
    return out
