"""Recovery time of a process actor killed with SIGKILL while Ape-X trains: kill an env process every few seconds (actors
in turn) and time, for each kill, (a) the worker's own recovery (failure seen -> the fresh env's first state), (b) kill ->
restart counted by the runtime, (c) kill -> training stepping again (`--resume-steps` more env steps).

    python bench/recovery.py --kills 10

Prints JSON: every kill's three times, their medians and maxima, and whether the 5 s target holds for (c).
"""
import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time

from _harness import provenance


async def run(args) -> dict:
    from rlnb.agent.agent import DistributedAgent
    agent = DistributedAgent("CartPole-v1", tag="recovery", seed=0, work_dir=tempfile.mkdtemp(prefix="rlnb-recovery-"), actor_mode="process",
                             num_actors=args.actors, envs_per_actor=args.envs, num_learners=1, max_restarts=args.kills)
    kills = []

    async def until(cond, timeout=120.0):
        t0 = time.monotonic()
        while not cond():
            if time.monotonic() - t0 > timeout: raise TimeoutError("no recovery within 120 s")
            await asyncio.sleep(0.002)

    try:
        agent.start(10**10, eval_interval=None, save_interval=None, log_interval=0)
        await until(lambda: agent.metrics["env_steps"] > 5_000)
        for k in range(args.kills):
            await asyncio.sleep(args.every)
            w = agent.algo.env.workers[k % args.actors]
            restarts = agent.algo.actor_restarts
            t0 = time.monotonic()
            os.kill(w.pid, signal.SIGKILL)
            await until(lambda: agent.algo.actor_restarts > restarts)
            counted = time.monotonic() - t0
            steps = agent.algo.env_steps
            await until(lambda: agent.algo.env_steps >= steps + args.resume_steps)
            kills.append(dict(actor=k % args.actors, worker_recovery_s=agent.algo.restart_log[-1]["recovery_s"], kill_to_restart_s=counted,
                              kill_to_training_s=time.monotonic() - t0))
        await agent.stop()
    finally:
        await agent.aclose()
    return kills


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--every", type=float, default=3.0, help="seconds of training between kills")
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--resume-steps", type=int, default=100, help="env steps after the restart that count as training again")
    args = p.parse_args()
    kills = asyncio.run(run(args))
    keys = ("worker_recovery_s", "kill_to_restart_s", "kill_to_training_s")
    out = dict(provenance=provenance(), kills=kills, median={k: round(statistics.median(x[k] for x in kills), 3) for k in keys},
               max={k: round(max(x[k] for x in kills), 3) for k in keys}, cpu_count=os.cpu_count())
    out["target_le_5s"] = out["max"]["kill_to_training_s"] <= 5.0
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
