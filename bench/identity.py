"""Nothing changed for users: a deterministic run of each algorithm, at a given commit and in the working tree, must
write the same final checkpoint bit for bit (params, target params, optimizer state, replay, counters, RNG, history).

    python bench/identity.py --ref 84fef79 [--algos apex-dqn,impala,ppo,sac,td3,apex-pixels] [--devices 1] [--steps N]

For each (tree, algorithm) a fresh child process imports rlnb from that tree (the reference commit is checked out with
`git worktree` into a temporary directory), trains a `DistributedAgent(..., deterministic=True, seed=0)` for a fixed
number of env steps with evaluations and checkpoints along the way, and reads back its final checkpoint file. The parent
compares the two trees leaf by leaf: arrays by dtype, shape and bytes, other leaves by value, leaving out the leaves
that hold wall-clock time (`WALL_CLOCK`: when it was saved, seconds spent evaluating, the metrics rows with their
rates). Config entries are compared after renaming the reference's keys with `RENAMED` (a field renamed on purpose is not a change of behaviour),
and learner-state leaves after renaming the reference's paths with `LEAF_RENAMED` (parts of a learner state given names: same arrays); a
reference path that the working tree has too is compared as it is (a reference made after the rename).
Prints one JSON object: per algorithm, `identical` and the first differing leaves, if any.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
try: from _harness import provenance  # noqa: E402
except ImportError: provenance = lambda argv: dict(command=" ".join(argv))

# algorithm name -> (algo, env, env steps, config overrides); small runs that still pass the warm-up and update often
CASES = {
    "apex-dqn": ("apex-dqn", "CartPole-v1", 4_000, {}),
    "impala": ("impala", "CartPole-v1", 6_000, {}),
    "ppo": ("ppo", "CartPole-v1", 6_000, {}),
    "sac": ("sac", "Pendulum-v1", 1_500, {}),
    "td3": ("td3", "Pendulum-v1", 1_500, {}),
    "apex-pixels": ("apex-dqn", "MinAtar/Breakout-v1", 3_000, {}),  # frame replay (FrameTracer, streamed checkpoint)
    "r2d2": ("r2d2", "rlnb/CartPoleNoVel-v1", 4_000, {}),  # sequence replay, a recurrent core
    "ppo-gymnax": ("ppo", "gymnax:CartPole-v1", 8_192, {}),  # envs stepped on the device (`rlnb.jax_envs.core`)
}
RENAMED = {"gae_lambda": "lambda_"}  # config key at the reference -> its name now (issue 29 item 6: one lambda, as rlnb.runtime.spec.RENAMED)
LEAF_RENAMED = {  # algo -> {path under state/learner/ at the reference (a prefix where it ends in /): its path now}
    "apex-dqn": {"params/": "params/online/", "target/": "params/target/"},  # issue 29 item 7: named learner states
    "sac": {"params/": "params/actor_params/", "critic/": "params/critic_params/online/", "target/": "params/critic_params/target/",
            "log_alpha": "params/log_alpha", "opt_state/actor/": "opt_states/actor_opt_state/",
            "opt_state/critic/": "opt_states/critic_opt_state/", "opt_state/alpha/": "opt_states/alpha_opt_state/"},
    "td3": {"params/": "params/actor_params/online/", "target_params/": "params/actor_params/target/", "critic/": "params/critic_params/online/",
            "target/": "params/critic_params/target/", "opt_state/0/": "opt_states/actor_opt_state/", "opt_state/1/": "opt_states/critic_opt_state/"},
}
ADDED = {"actor_device", "learner_device", "schedule_steps", "normalize_advantages", "reward_scale"}  # config keys new since the reference, whose default is what the reference did (IMPALA's three: off by default)
WALL_CLOCK = {"saved_at", "state/counters/eval_seconds", "agent/history"}  # seconds and the metrics rows' rates: not the run's state


def child(name, steps, devices, out):
    "Train one case in this process (rlnb imported from PYTHONPATH) and save its final checkpoint's leaves to `out` (.npz)."
    import jax
    import rlnb
    from rlnb.agent import DistributedAgent, find_checkpoint, read_checkpoint  # the same import before and after rlnb had sections
    algo, env, default_steps, over = CASES[name]
    with tempfile.TemporaryDirectory() as work:
        agent = DistributedAgent(env, algo=algo, seed=0, deterministic=True, devices=jax.local_devices()[:devices],
                                 work_dir=work, **over)
        agent.train(steps or default_steps, eval_interval=2_000, save_interval=2_000, num_eval_episodes=2,
                    progress=False, verbose=False, tensorboard=False)
        agent.close()
        tree = read_checkpoint(find_checkpoint(work))
        leaves = {}
        def walk(x, path):
            if isinstance(x, dict):
                for k, v in x.items(): walk(v, path + (str(k),))
            elif hasattr(x, "state_dict") and callable(x.state_dict):  # a streamed frame replay: its arrays
                walk(x.state_dict(), path)
            else:
                leaves["/".join(path)] = np.asarray(x)
        walk(tree, ())
        np.savez(out, **leaves)
    return rlnb.__file__


def compare(a, b, algo=None):
    "Leaves that differ between two .npz files of `algo` (after `RENAMED`, and `LEAF_RENAMED` for reference leaves missing now), at most 10."
    A, B = np.load(a, allow_pickle=False), np.load(b, allow_pickle=False)
    def ren(k):
        parts = k.split("/")
        k = "/".join(RENAMED.get(p, p) if i and parts[i - 1] == "config" else p for i, p in enumerate(parts))
        learner = "state/learner/"
        if not k.startswith(learner) or k in B.files: return k  # a reference that already has today's layout (e.g. --ref main) is compared as is
        rest, table = k[len(learner):], LEAF_RENAMED.get(algo, {})
        old = max((p for p in table if rest == p or (p.endswith("/") and rest.startswith(p))), key=len, default=None)
        return k if old is None else learner + table[old] + rest[len(old):]
    kb = set(B.files) - WALL_CLOCK
    ka = {(k if k in kb else ren(k)): k for k in A.files if k not in WALL_CLOCK}  # a path that exists now is not renamed (a reference after the rename)
    new = {k for k in kb - set(ka) if "/config/" in f"/{k}" and k.rsplit("/", 1)[1] in ADDED}
    diffs = [f"only at ref: {k}" for k in sorted(set(ka) - kb)] + [f"only now: {k}" for k in sorted(kb - set(ka) - new)]
    for k in sorted(set(ka) & kb):
        x, y = A[ka[k]], B[k]
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            diffs.append(f"{k}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}" + (
                f", max |diff| {np.max(np.abs(x.astype(float) - y.astype(float))):.3g}" if x.shape == y.shape and x.dtype.kind in "fiu" else ""))
    return len(ka), diffs


def run_child(tree, name, steps, devices, out):
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1",
           "XLA_FLAGS": os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={max(devices, 1)}")}
    cmd = [sys.executable, str(ROOT / "bench" / "identity.py"), "--child", name, "--steps", str(steps), "--devices", str(devices), "--out", out]
    p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0: raise RuntimeError(f"{name} at {tree} failed:\n{p.stderr[-3000:]}")
    imported = [l for l in p.stdout.splitlines() if l.startswith("IMPORTED ")][-1][9:]
    if not imported.startswith(str(tree)): raise RuntimeError(f"{name}: rlnb came from {imported}, not from {tree}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", default="HEAD", help="the commit to compare the working tree against")
    ap.add_argument("--algos", default=",".join(CASES))
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="env steps per run; 0: each case's own")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("IMPORTED " + child(args.child, args.steps, args.devices, args.out))
        return
    ref = subprocess.run(["git", "rev-parse", args.ref], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        reftree = Path(tmp) / "ref"
        subprocess.run(["git", "worktree", "add", "--detach", str(reftree), ref], cwd=ROOT, check=True, capture_output=True)
        try:
            for name in args.algos.split(","):
                a, b = str(Path(tmp) / f"{name}-ref.npz"), str(Path(tmp) / f"{name}-now.npz")
                try:
                    run_child(reftree, name, args.steps, args.devices, a)
                    run_child(ROOT, name, args.steps, args.devices, b)
                    n, diffs = compare(a, b, CASES[name][0])
                    results[name] = dict(identical=not diffs, leaves=n, diffs=diffs[:10])
                except RuntimeError as e:
                    results[name] = dict(identical=False, error=str(e)[-1500:])
                print(json.dumps({name: results[name]}), file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(reftree)], cwd=ROOT, capture_output=True)
    print(json.dumps(dict(provenance=provenance(sys.argv), ref=ref, devices=args.devices, results=results,
                          all_identical=all(r["identical"] for r in results.values())), indent=1))


if __name__ == "__main__":
    main()
