"""The results table: every shipped preset over 5 seeds that no test and no tuning run uses, resumably.

    python bench/results.py --all --jobs 2                  # run what is missing, then write each finished preset's [result]
    python bench/results.py --all --table                   # no runs: rebuild the [result] tables and the markdown from the log
    python bench/results.py ppo-CartPole-v1 --seeds 100 101 --steps 20000 --log /tmp/try.jsonl   # a trial: never written

Each run is `rlnb train ALGO --env ENV --preset NAME --seed S` in its own process (bench/presets.py's `one`), stopping at
the first evaluation that reaches the preset's `target_return`, else at its `steps`. Every finished run is appended as one
JSON line to the log (default bench/results/presets_table.jsonl), with the preset's digest (its [config] and [train]),
the commit and the machine; a later call skips every (preset, seed, digest) the log holds, so the table can be built
over several sessions, and a preset whose settings change is run again. So is a seed that ran before a change of the code
listed in CHANGES (one that alters what the presets it touches reach); until it has, its preset's row is marked
"(run before COMMIT)". `--same-commit` also asks for this commit's runs.

Per preset, from the seeds in the log: solved k/n; env steps to the target per seed; the final evaluation per
seed (the evaluation the run ended on: the first that reached the target, or the one at the budget); the interquartile
mean (IQM) of the final evaluations with a 95% percentile-bootstrap interval over seeds (Agarwal et al. 2021's
stratified bootstrap, which for one task resamples its seeds); the machine, the commits and the command. With `--write`
(the default for the shipped seeds) they replace the preset file's [result]; the figures it held before, from the seeds
the preset was tuned on (0-2, which the tests use too), move to [result.tuning], and a `status` saying why it had no
runs goes. Until every seed has run, the [result] covers the seeds that have, with `planned_seeds` naming all of them
(the table shows "3 of 5 so far"). The markdown table goes to
bench/results/presets_table.md and between the markers of nbs/results.ipynb (the results page of the site).
Learning results, not timings: `wall_s` is for orientation only (runs share the machine's cores).
"""
import argparse
import concurrent.futures as cf
import datetime
import functools
import hashlib
import json
import os
import pathlib
import platform
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from presets import one, toml_value  # noqa: E402
from rlnb.agent.presets import FAMILIES, get_preset, presets, results_table  # noqa: E402
from rlnb.agent.seeds import RESAMPLES, bootstrap_ci, iqm  # noqa: E402  (the statistic of MultiRunAgent's summary)

SEEDS = [100, 101, 102, 103, 104]  # no test and no tuning run uses these (tests and bench/presets.py use 0-9)
LOG = ROOT / "bench" / "results" / "presets_table.jsonl"
TABLE_MD = ROOT / "bench" / "results" / "presets_table.md"
INDEX = ROOT / "nbs" / "results.ipynb"
BEGIN, END = "<!-- results table: written by bench/results.py -->", "<!-- end of the results table -->"
# Changes of the code that alter what some presets reach: (commit, what it changed, the presets it touches). A run made
# before one, on a preset it touches, no longer counts as done: the next call runs that seed again, and until then the
# preset's [result] names the seeds (outdated_seeds) and the change (outdated_by), which the table shows.
CHANGES = [("6c33726", "the CNN encoders' init", lambda p: p.env.startswith(("MinAtar/", "ALE/")))]


def digest(preset, steps=None) -> str:
    "What the runs depend on in the preset file: its algorithm, env, [config] and [train] (with a --steps override)."
    train = dict(preset.train, **({} if steps is None else dict(steps=steps)))
    blob = json.dumps(dict(algo=preset.algo, env=preset.env, config=preset.config, train=train), sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def git(*args) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT).stdout.strip()


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor() or platform.machine()) if pathlib.Path("/proc/cpuinfo").exists() else platform.machine()
    flags = os.environ.get("XLA_FLAGS", "")
    return (f"{cpu}, {os.cpu_count()} CPU cores, learner on {os.environ.get('JAX_PLATFORMS') or 'the default JAX backend'}"
            + (f", XLA_FLAGS={flags}" if flags else ""))


@functools.cache
def predates(commit: str, change: str) -> bool:
    "Whether the code at `commit` (as the log writes it, maybe with '+dirty') lacks commit `change`."
    rc = subprocess.run(["git", "merge-base", "--is-ancestor", change, commit.split("+")[0]], cwd=ROOT, capture_output=True).returncode
    if rc not in (0, 1):
        sys.exit(f"results.py: commit {commit} (in the log) or {change} (in CHANGES) is not in this clone's history; "
                 "fetch the whole history (git fetch --unshallow) and run again")
    return rc == 1


def outdated(preset, run) -> str | None:
    "The first change in CHANGES that `run` of `preset` predates, as 'commit (what it changed)'; None where there is none."
    return next((f"{c} ({what})" for c, what, touches in CHANGES if touches(preset) and predates(run["commit"], c)), None)


def read_log(path) -> list:
    path = pathlib.Path(path)
    if not path.exists(): return []
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def summary(preset, runs: list, seeds: list, command: str, planned: list | None = None) -> dict:
    "The [result] table of one preset from its runs (one per seed of `seeds`); `planned`: every seed it will have, where only some have run; runs made before a change in CHANGES are named."
    runs = sorted(runs, key=lambda r: r["seed"])
    old = {r["seed"]: why for r in runs if (why := outdated(preset, r))}
    stale = dict(outdated_by="; ".join(sorted(set(old.values()))), outdated_seeds=sorted(old)) if old else {}
    finals = [r["final_eval"] for r in runs]
    steps = sorted(r["env_steps"] if r["reached"] else float("inf") for r in runs)
    med = steps[len(steps) // 2] if len(steps) % 2 else (steps[len(steps) // 2 - 1] + steps[len(steps) // 2]) / 2
    lo, hi = bootstrap_ci(finals)
    who = "no test or tuning run uses" if set(seeds) <= set(SEEDS) else "chosen on the command line (a trial)"
    out = dict(protocol=f"{len(seeds)} seed{'s' * (len(seeds) != 1)} {who}; each run stops at the first evaluation reaching target_return, "
                        f"else at steps; final_eval is the evaluation it ended on",
               seeds=seeds, **(dict(planned_seeds=planned) if planned else {}), **stale, solved=f"{sum(r['reached'] for r in runs)}/{len(seeds)}",
               env_steps=[r["env_steps"] for r in runs], reached=[r["reached"] for r in runs], final_eval=finals,
               iqm_final_eval=round(iqm(finals), 1), iqm_ci95=[round(lo, 1), round(hi, 1)],
               interval=f"IQM of final_eval, 95% percentile bootstrap over seeds ({RESAMPLES:,} resamples; Agarwal et al. 2021)",
               wall_s=[r["wall_s"] for r in runs])
    if med != float("inf"): out["median_env_steps_to_target"] = int(med)
    out.update(machine="; ".join(sorted({r["machine"] for r in runs})), date=max(r["date"] for r in runs),
               commit=", ".join(sorted({r["commit"] for r in runs})), command=command)
    return out


def write_result(preset, res: dict):
    "Replace the preset file's [result] with `res`; the figures it held from the tuning seeds (no `protocol` key) move to [result.tuning]."
    text = preset.path.read_text()
    old = dict(preset.result)
    old.pop("status", None)  # why it had no runs: gone once it has some
    tuning = old.pop("tuning", None) or ({k: v for k, v in old.items()} if old and "protocol" not in old else None)
    head = text.split("\n[result]")[0].rstrip("\n")
    body = "\n".join(f"{k} = {toml_value(v)}" for k, v in res.items())
    out = f"{head}\n\n[result]  # written by bench/results.py: the results table's runs (seeds no test or tuning uses)\n{body}\n"
    if tuning:
        out += ("\n[result.tuning]  # written by bench/presets.py: what the preset reached on the seeds it was tuned on (the tests use them too)\n"
                + "\n".join(f"{k} = {toml_value(v)}" for k, v in tuning.items()) + "\n")
    preset.path.write_text(out)
    get_preset(preset.path)  # still a valid preset


def per_seed(found) -> str:
    "The per-seed figures of the presets the results table has run: env steps to the target (or '-' where not reached) and final evaluation ('…' for a seed still to run)."
    rows = [p for p in found if "protocol" in p.result]
    if not rows: return ""
    seeds = sorted({s for p in rows for s in p.result.get("planned_seeds") or p.result["seeds"]})
    lines = ["| preset | " + " | ".join(f"seed {s}" for s in seeds) + " | commit | command |", "|---|" + "---:|" * len(seeds) + "---|---|"]
    for p in rows:
        r = p.result
        ran = {s: (f"{n:,} / {f:g}" if ok else f"- / {f:g}") for s, n, ok, f in zip(r["seeds"], r["env_steps"], r["reached"], r["final_eval"])}
        cells = [ran.get(s, "…") for s in seeds]
        lines.append(f"| `{p.name}` | " + " | ".join(cells) + f" | {r['commit']} | `{r['command']}` |")
    return ("\n\nPer seed: env steps to the target (- where the budget ran out first) / final evaluation.\n\n" + "\n".join(lines))


def write_markdown(md: str, index: bool):
    TABLE_MD.write_text(md + per_seed(presets()) + "\n")
    if not index: return
    import nbformat
    nb = nbformat.read(INDEX, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "markdown" and BEGIN in c.source and END in c.source]
    if len(cells) != 1: sys.exit(f"{INDEX} must hold one markdown cell with the markers {BEGIN} ... {END}")
    c = cells[0]
    c.source = c.source.split(BEGIN)[0] + f"{BEGIN}\n{md}\n{END}" + c.source.split(END, 1)[1]
    nbformat.write(nb, INDEX)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="preset names or .toml paths")
    ap.add_argument("--all", action="store_true", help="every shipped preset")
    ap.add_argument("--algo", default=None, help="with --all: only this algorithm's")
    ap.add_argument("--atari", action="store_true", help="with --all: the ALE games' presets too (10M env steps each)")
    ap.add_argument("--seeds", type=int, nargs="+", default=SEEDS, help=f"default: {' '.join(map(str, SEEDS))}")
    ap.add_argument("--steps", type=int, default=None, help="override every preset's env-step budget (a trial: its results are never written)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2: this machine's cores)")
    ap.add_argument("--log", default=str(LOG), help=f"the JSONL log of finished runs (default {LOG.relative_to(ROOT)})")
    ap.add_argument("--same-commit", action="store_true", help="count only the log's runs made at this commit")
    ap.add_argument("--table", action="store_true", help="run nothing: build the summaries from the log")
    ap.add_argument("--no-write", action="store_true", help="print the summaries; leave the preset files, the markdown and the index alone")
    a = ap.parse_args()
    chosen = presets(a.algo) if a.all or not a.names else [get_preset(n) for n in a.names]
    if a.all or not a.names:  # a family preset has no env of its own; the full Atari games' 10M-step budgets are for an accelerator
        chosen = [p for p in chosen if p.env not in FAMILIES and (a.atari or not p.env.startswith("ALE/"))]
    trial = a.steps is not None or a.seeds != SEEDS or pathlib.Path(a.log).resolve() != LOG
    if (a.steps is not None or a.seeds != SEEDS) and pathlib.Path(a.log).resolve() == LOG:
        ap.error("a trial (--steps, or seeds other than the table's) needs --log FILE, so that its runs stay out of the table's log")
    commit = git("rev-parse", "--short", "HEAD")
    # uncommitted changes of the package; the preset files are left out: what runs read from them is in the digest, and
    # the [result] tables this script writes while other runs go on change no run
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "rlnb", ":(exclude)rlnb/hyperparams"))
    log = pathlib.Path(a.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    keys = {p.name: digest(p, a.steps) for p in chosen}
    by_name = {p.name: p for p in chosen}
    done = lambda: {(r["preset"], r["seed"]) for r in read_log(log) if r.get("digest") == keys.get(r["preset"])
                    and (not a.same_commit or r["commit"] == commit) and not outdated(by_name[r["preset"]], r)}
    finished = done()
    todo = [(p, s) for s in a.seeds for p in chosen if (p.name, s) not in finished]
    if not a.table and todo:
        print(f"{len(todo)} runs to do ({len(a.seeds) * len(chosen) - len(todo)} in {log} already); each line appended as it ends",
              file=sys.stderr, flush=True)
        extra = [] if a.steps is None else ["--steps", str(a.steps)]
        m = machine()

        def job(p, s):
            r = one(p, s, extra)
            if "error" in r: return r
            r.update(algo=p.algo, env=p.env, digest=keys[p.name], steps=a.steps or p.train["steps"], target_return=p.train["target_return"],
                     commit=commit + ("+dirty" if dirty else ""), machine=m, date=datetime.date.today().isoformat(),
                     command=f"rlnb train {p.algo} --env {p.env} --preset {p.name} --seed {s}" + (f" --steps {a.steps}" if a.steps else ""))
            with open(log, "a") as f: f.write(json.dumps(r) + "\n")  # one write per line, from one thread at a time (the GIL holds a write call)
            return r

        with cf.ThreadPoolExecutor(a.jobs) as ex:
            for r in ex.map(lambda ps: job(*ps), todo):
                print(json.dumps({k: v for k, v in r.items() if k != "evals"}), file=sys.stderr, flush=True)
    runs = [r for r in read_log(log) if r.get("digest") == keys.get(r["preset"]) and r["seed"] in a.seeds
            and (not a.same_commit or r["commit"] == commit)]
    names = " ".join(p.name for p in chosen) if not (a.all or not a.names) else "--all" + (f" --algo {a.algo}" if a.algo else "")
    command = f"python bench/results.py {names}" + ("" if a.seeds == SEEDS else f" --seeds {' '.join(map(str, a.seeds))}")
    results = {}
    for p in chosen:
        mine = {r["seed"]: r for r in runs if r["preset"] == p.name}  # the newest run of each seed
        if not mine: continue
        partial = len(mine) < len(a.seeds)
        if partial: print(json.dumps(dict(preset=p.name, done=f"{len(mine)}/{len(a.seeds)} seeds")), flush=True)
        results[p.name] = res = summary(p, list(mine.values()), sorted(mine), command, planned=a.seeds if partial else None)
        print(json.dumps(dict(preset=p.name, **res)), flush=True)
        if not (trial or a.no_write): write_result(p, res)
    if trial or a.no_write:
        import dataclasses
        shown = [dataclasses.replace(p, result=results[p.name], train=dict(p.train, **({} if a.steps is None else dict(steps=a.steps))))
                 for p in chosen if p.name in results]
        if shown: print(results_table(shown, markdown=True))
        return
    md = results_table(presets(), markdown=True)  # every shipped preset, with what its file holds now
    write_markdown(md, index=True)
    print(md)


if __name__ == "__main__":
    main()
