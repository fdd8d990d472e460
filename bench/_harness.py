"""What the time-to-solve benches share: every (algorithm, seed) in a fresh subprocess, interleaved, one JSON line back.

A bench script calls `run_matrix` from its parent process and `report` from its child (`--child NAME:SEED`); the child
prints one `RESULT {json}` line that the parent collects. `summarize` gives per-algorithm medians, with unsolved runs
counted as infinitely slow. `provenance` is what every bench script puts at the top of the JSON it prints: the
command, the commit, the machine and the date (results go to bench/results/, see bench/README.md).
"""
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
_ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "JAX_PLATFORMS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_ENV = {k: os.environ[k] for k in _ENV_KEYS if os.environ.get(k)}  # as the user set them, before a script sets its own


def _out(cmd: list) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> str:
    "CPU model and cores, GPUs (nvidia-smi), Python; $RLNB_BENCH_MACHINE (e.g. nvidia-h100-x1) names the machine first."
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    except OSError:
        pass
    gpus = _out(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).splitlines()
    parts = [os.environ.get("RLNB_BENCH_MACHINE", ""), f"{os.cpu_count()} CPU cores ({cpu})",
             f"GPU: {len(gpus)} x {gpus[0]}" if gpus else "no GPU", f"Python {platform.python_version()}"]
    return ", ".join(p for p in parts if p)


def provenance(argv: list | None = None) -> dict:
    "Where a result comes from: command (with the environment variables that change it), commit, machine, UTC date."
    argv = sys.argv if argv is None else argv
    env = [f"{k}={shlex.quote(v)}" for k, v in _ENV.items()]
    script = os.path.relpath(os.path.abspath(argv[0]), ROOT)
    return dict(command=" ".join([*env, "python", script, *map(shlex.quote, map(str, argv[1:]))]),
                commit=_out(["git", "rev-parse", "HEAD"]) or None,
                dirty=bool(_out(["git", "status", "--porcelain", "--untracked-files=no", "--", "rlnb", "bench"])),
                machine=machine(), date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def report(result: dict):
    "Child side: hand the result to the parent."
    print("RESULT " + json.dumps(result, default=float), flush=True)


def run_matrix(script: str, names: list, seeds: list, args: list, env: dict | None = None, timeout: float = 1800,
               env_for=None, log: str | None = None) -> dict:
    """Run `script --child NAME:SEED *args` for every seed, and within a seed every name (interleaved); returns {name: [runs]}.

    With `log` (a JSON-lines file), each finished run is appended to it, and a run the log already holds for the same
    name, seed and child arguments is taken from it instead of run again: a matrix of hours can span several sessions
    (`--log` of the long scripts). Each logged run keeps the commit and date it ran at."""
    key_args = [str(a) for a in args]
    done = {}
    if log and os.path.exists(log):
        with open(log) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    if r.get("args") == key_args and "error" not in r: done[(r["algo"], r["seed"])] = r
    results = {}
    for seed in seeds:
        for name in names:
            if (name, seed) in done:
                r = {k: v for k, v in done[(name, seed)].items() if k not in ("algo", "seed", "args")}
                results.setdefault(name, []).append(dict(seed=seed, **r))
                print(f"{name}:{seed} from {log} ({(r.get('commit') or '?')[:7]}, {r.get('date', '?')})", file=sys.stderr, flush=True)
                continue
            cmd = [sys.executable, script, "--child", f"{name}:{seed}", *key_args]
            e = {**os.environ, **(env or {}), **(env_for(name) if env_for else {})}
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
                line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
                r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-2000:])
            except subprocess.TimeoutExpired:
                r = dict(error=f"timed out after {timeout} s")
            results.setdefault(name, []).append(dict(seed=seed, **r))
            print(json.dumps(dict(algo=name, seed=seed, **r)), file=sys.stderr, flush=True)
            if log:
                with open(log, "a") as f:
                    f.write(json.dumps(dict(algo=name, seed=seed, args=key_args, commit=_out(["git", "rev-parse", "HEAD"]) or None,
                                        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), **r)) + "\n")
    return results


def summarize(results: dict) -> dict:
    "Per algorithm: solved count and the medians of train_s and env_steps (an unsolved run counts as inf)."
    out = {}
    for name, runs in results.items():
        ok = [r for r in runs if r.get("solved")]
        med = lambda k: statistics.median([r[k] if r.get("solved") else float("inf") for r in runs])
        out[name] = dict(solved=f"{len(ok)}/{len(runs)}", median_train_s=med("train_s"), median_env_steps=med("env_steps"))
    return out


def sb3_learn_to_target(make_model, eval_env, max_steps: int, target: float, every: int, episodes: int, before_eval=None) -> dict:
    """Build a stable-baselines3 model with `make_model()` and train it until a deterministic evaluation of `episodes` episodes on `eval_env`, every `every`
    env steps, reaches `target` (or `max_steps`): the peers' side of the time-to-target protocol. `before_eval()` runs
    before each evaluation (e.g. to copy observation statistics). The clock starts before the model is built, as rlnb's
    starts before its agent; `train_s` leaves the evaluations out."""
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.evaluation import evaluate_policy
    state = dict(eval_s=0.0, solved=False, steps=None, last=None, next=every)

    class Stop(BaseCallback):
        def _on_step(self):
            if self.num_timesteps < state["next"]:
                return True
            state["next"] += every
            t = time.perf_counter()
            if before_eval is not None:
                before_eval()
            mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=episodes, deterministic=True)
            state["eval_s"] += time.perf_counter() - t
            state["last"], state["steps"] = float(mean), int(self.num_timesteps)
            state["solved"] = bool(mean >= target)
            return not state["solved"]

    t0 = time.perf_counter()
    make_model().learn(total_timesteps=max_steps, callback=Stop())
    wall = time.perf_counter() - t0
    return dict(solved=state["solved"], train_s=wall - state["eval_s"], env_steps=state["steps"], wall_s=wall, final_eval=state["last"])


def matrix_parser(doc: str, seeds: str, algos: list, default_algos: str, budget_help: str):
    """The command line every time-to-target script shares: --seeds, --max-steps, --algos, --devices and the hidden
    --child; returns (parser, check) where check(args) returns the chosen names or exits naming the unknown ones."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--seeds", default=seeds)
    ap.add_argument("--max-steps", type=int, default=None, help=budget_help)
    ap.add_argument("--algos", default=default_algos)
    ap.add_argument("--devices", type=int, default=1, help="learner devices for rlnb (host devices on a CPU)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)

    def check(args) -> list:
        names = args.algos.split(",")
        unknown = set(names) - set(algos)
        if unknown: ap.error(f"unknown algos {sorted(unknown)}: pick from {', '.join(algos)}")
        return names
    return ap, check
