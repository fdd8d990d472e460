"""Import time of rlnb against an earlier commit of it, and against its dependencies alone, in the same run.

    python bench/import_time.py [--before 4a1f09c^] [--reps 7]

Each repetition imports the same modules in a fresh interpreter from this checkout and from a temporary git worktree of
`--before` (alternating, so machine noise hits both), then `jax`, `flax.linen` and `optax` alone. Prints one JSON
object: medians in seconds, the after/before ratio, and which heavy modules each side loads.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from _harness import provenance

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEAVY = ("rlax", "distrax", "tensorflow_probability", "flax.nnx")


def timed(code: str, cwd) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=cwd, check=True)
    return time.perf_counter() - t


def loads(code: str, cwd) -> list:
    probe = f"{code}; import sys; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()
    return out.split(",") if out else []


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="4a1f09c^", help="git revision to compare with (default: the commit before rlax left the runtime)")
    ap.add_argument("--modules", default="rlnb.agent.agent,rlnb.algos.apex_dqn,rlnb.algos.impala", help="modules to import (present at both revisions)")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    code = "import " + ", ".join(a.modules.split(","))
    with tempfile.TemporaryDirectory() as d:
        wt = pathlib.Path(d) / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(wt), a.before], cwd=ROOT, check=True)
        try:
            times = {"before": [], "after": [], "deps_alone": []}
            for _ in range(a.reps):
                times["before"].append(timed(code, wt))
                times["after"].append(timed(code, ROOT))
                times["deps_alone"].append(timed("import jax, flax.linen, optax", ROOT))
            out = {f"{k}_s": round(statistics.median(v), 3) for k, v in times.items()}
            out.update(after_over_before=round(out["after_s"] / out["before_s"], 3),
                       rlnb_own_before_s=round(out["before_s"] - out["deps_alone_s"], 3), rlnb_own_after_s=round(out["after_s"] - out["deps_alone_s"], 3),
                       before_loads=loads(code, wt), after_loads=loads(code, ROOT), modules=a.modules, before=a.before, reps=a.reps)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT, check=False)
    print(json.dumps(dict(provenance=provenance(), **out)))


if __name__ == "__main__":
    main()
