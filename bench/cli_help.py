"""Wall time of the `rlnb` help pages and of `rlnb presets` (issue 60, trap 8: help without JAX).

    python bench/cli_help.py [--reps 5]

Each repetition runs every command once in a fresh interpreter on this checkout (`python -c "from rlnb.cli import
main; ..."`, as the `rlnb` script does), commands interleaved so machine noise hits all of them. Prints one JSON object:
the median wall seconds of each command, every repetition, whether each command loaded JAX (none should), and the
provenance. Targets on a quiet machine: `rlnb --help` and `rlnb train ppo --help` under 1 s, `rlnb presets` under 2 s.
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

from _harness import provenance

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAIN = "import sys; from rlnb.cli import main; sys.exit(main(sys.argv[1:]))"
COMMANDS = {"rlnb --help": ["--help"], "rlnb train ppo --help": ["train", "ppo", "--help"],
            "rlnb presets": ["presets"]}


def timed(args: list) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", MAIN, *args], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t


def loads_jax(args: list) -> bool:
    "Whether `rlnb ARGS` imports JAX (its output thrown away; help's SystemExit caught)."
    code = ("import sys, contextlib, io\nfrom rlnb.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try: main({args!r})\n"
            "    except SystemExit: pass\nprint('jax' in sys.modules)")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip() == "True"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    runs = {name: [] for name in COMMANDS}
    for _ in range(a.reps):
        for name, args in COMMANDS.items(): runs[name].append(round(timed(args), 3))
    print(json.dumps(dict(median_s={k: statistics.median(v) for k, v in runs.items()}, runs_s=runs,
                          loads_jax={name: loads_jax(args) for name, args in
                                     {**COMMANDS, "rlnb train ppo --env LunarLander-v3 --help":
                                      ["train", "ppo", "--env", "LunarLander-v3", "--help"]}.items()},
                          provenance=provenance())))


if __name__ == "__main__":
    main()
