"""Soak: train Ape-X for N minutes with process actors, stopping every minute to write a checkpoint and evaluate, then
starting again; sample memory, file descriptors, threads, child processes and throughput every few seconds.

    python bench/soak.py                  # 30 minutes (the target run)
    python bench/soak.py --minutes 10     # shorter

Prints one JSON object: the RSS slope (MB/min, this process plus its children) fitted over the samples after the replay
buffer is full, fds/threads/children at the start and the end, env steps/s over the first and the last `--window` minutes
(training time only: stops, saves and evaluations excluded), and whether the targets hold (RSS slope <= 1 MB/min, the
last window >= 0.9x the first). Run it on a quiet machine: other work on the cores moves the throughput figures.
"""
import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time

import numpy as np
import psutil

from _harness import provenance


def uss_mb(p) -> float:
    "Unique resident memory of process `p` in MB (RSS where the OS does not report USS)."
    try:
        m = p.memory_full_info()
        return getattr(m, "uss", m.rss) / 2**20
    except psutil.Error:
        return 0.0


async def soak(args) -> dict:
    from rlnb.agent.agent import DistributedAgent, list_checkpoints
    work = tempfile.mkdtemp(prefix="rlnb-soak-")
    agent = DistributedAgent("CartPole-v1", tag="soak", seed=0, work_dir=work, actor_mode="process", num_actors=args.actors, num_learners=args.learners,
                             envs_per_actor=args.envs, buffer_capacity=args.capacity, keep_checkpoints=2)
    me, samples, evals, t_start = psutil.Process(), [], [], time.monotonic()
    train_clock = 0.0  # seconds spent training (between start and stop)

    def sample(phase):
        samples.append(dict(t=time.monotonic() - t_start, train_s=train_clock + (time.monotonic() - seg0 if phase == "train" else 0.0),
                            env_steps=agent.algo.env_steps, replay=len(agent.algo.buffer), main_mb=uss_mb(me),
                            children_mb=sum(uss_mb(c) for c in me.children(recursive=True)), fds=me.num_fds(),
                            threads=threading.active_count(), children=len(me.children(recursive=True))))

    deadline = t_start + 60 * args.minutes
    seg0 = t_start
    try:
        while time.monotonic() < deadline:
            seg0 = time.monotonic()
            agent.start(10**10, eval_interval=None, save_interval=None, log_interval=0)
            next_sample, seg_end = seg0, min(seg0 + args.interval, deadline)
            while time.monotonic() < seg_end:
                if time.monotonic() >= next_sample:
                    sample("train")
                    next_sample += args.sample_every
                await asyncio.sleep(0.05)
            await agent.stop()  # writes a checkpoint
            train_clock += time.monotonic() - seg0
            ev = await agent.aeval(args.eval_episodes)
            evals.append(dict(t=time.monotonic() - t_start, env_steps=agent.algo.env_steps, mean=ev["mean"]))
            sample("idle")
        checkpoints = len(list_checkpoints(work))
    finally:
        await agent.aclose()
    return dict(samples=samples, evals=evals, checkpoints=checkpoints, restarts=agent.algo.actor_restarts, work_dir=work, capacity=args.capacity)


def summarize(run: dict, window_min: float) -> dict:
    s = run["samples"]
    t = np.array([x["t"] for x in s]) / 60
    full = np.array([x["replay"] for x in s]) >= run["capacity"]  # the buffer has reached its capacity
    after = full.nonzero()[0]
    for x in s: x["rss_mb"] = x["main_mb"] + x["children_mb"]
    fit = lambda k: round(float(np.polyfit(t[after], [s[i][k] for i in after], 1)[0]), 3) if len(after) >= 3 else float("nan")
    slope = fit("rss_mb")
    tr = [x for x in s if x["train_s"] > 0]
    def rate(lo, hi):
        pts = [x for x in tr if lo <= x["train_s"] <= hi]
        return (pts[-1]["env_steps"] - pts[0]["env_steps"]) / (pts[-1]["train_s"] - pts[0]["train_s"]) if len(pts) >= 2 else float("nan")
    end, w = tr[-1]["train_s"], 60 * window_min
    first, last = rate(0, w), rate(end - w, end)
    pick = lambda k: dict(start=s[0][k], buffer_full=s[after[0]][k] if len(after) else None, end=s[-1][k])
    return dict(minutes=round(s[-1]["t"] / 60, 1), env_steps=s[-1]["env_steps"], buffer_full_at_min=round(float(t[after[0]]), 2) if len(after) else None,
                rss_mb=pick("rss_mb"), rss_slope_mb_per_min=slope, main_slope_mb_per_min=fit("main_mb"), children_slope_mb_per_min=fit("children_mb"), fds=pick("fds"), threads=pick("threads"), children=pick("children"),
                env_steps_per_s_first=round(first), env_steps_per_s_last=round(last), last_over_first=round(last / first, 3),
                window_min=window_min, evals=len(run["evals"]), last_eval=run["evals"][-1]["mean"] if run["evals"] else None,
                checkpoints_kept=run["checkpoints"], actor_restarts=run["restarts"],
                targets=dict(rss_slope_le_1=slope <= 1.0, last_ge_0p9_first=last >= 0.9 * first))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--interval", type=float, default=60, help="seconds of training between checkpoint + evaluation stops")
    p.add_argument("--sample-every", type=float, default=5)
    p.add_argument("--window", type=float, default=5, help="minutes of training time compared at the start and the end")
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--learners", type=int, default=None, help="learner devices (default: every local device)")
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--capacity", type=int, default=100_000)
    p.add_argument("--eval-episodes", type=int, default=5)
    p.add_argument("--samples", default=None, help="also write every sample to this JSON file")
    args = p.parse_args()
    args.window = min(args.window, args.minutes / 3)
    run = asyncio.run(soak(args))
    if args.samples:
        with open(args.samples, "w") as f: json.dump(run, f)
    print(json.dumps(dict(provenance=provenance(), **summarize(run, args.window))))


if __name__ == "__main__":
    sys.exit(main())
