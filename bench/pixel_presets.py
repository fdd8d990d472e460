"""Pixel presets: how fast a game's shipped preset lets its actors run beside its learner, and the random scores that the
MinAtar learning targets are measured against.

    python bench/pixel_presets.py throughput [--game ALE/Pong-v5] [--algos apex-dqn,impala,ppo] [--seconds 60] [--reps 3]
    python bench/pixel_presets.py random [--games Breakout,SpaceInvaders,Asterix,Freeway,Seaquest] [--episodes 200]

`throughput` takes, per algorithm, the preset that `rlnb train ALGO --env GAME` takes (`resolve_preset('auto', ...)`) and
measures in each repetition, back to back on the first local device:
- `no_learner_steps_per_s`: the preset's envs (its actor mode: EnvPool where `actor_mode='auto'` finds it, and all its
  envs in one batch) stepped in this process by the preset's jitted behaviour policy (`Runtime.act`, the actors' own
  noise), with no learner, no tracing and no replay: what the actors could do alone;
- `preset_steps_per_s`: `DistributedAgent(GAME, algo=ALGO, preset=...)`'s runtime training (`Runtime.train` in chunks, no evaluations) over
  `--seconds` after its programs are compiled and `--warmup-steps` env steps have run; Ape-X's `buffer_warmup` is
  lowered to `--buffer-warmup` so that the window sees the learner at the preset's replay ratio (its pacing is unchanged);
  `--set ALGO:FIELD=VALUE` changes a field of the preset in this bench (e.g. a higher replay ratio on an accelerator);
- `ratio`: preset / no-learner, per repetition; the median over `--reps` is reported. The issue's target is >= 0.5.
On-policy algorithms learn from every env step at least once, so their ratio is bounded by the learner's samples/s.

`random` plays `--episodes` episodes of each MinAtar game (`MinAtar/GAME-v1`, rlnb's observations) with uniform random
actions over 8 envs, seed 0: mean and standard deviation of the returns.

Prints one JSON object (with `provenance`). Timings need a quiet machine; `--quick` runs a few seconds per case to check
that the script works.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time

from _harness import provenance

import numpy as np
import jax
import gymnasium as gym

from rlnb.agent.agent import DistributedAgent
from rlnb.envs.pixels import pixel_env
from rlnb.agent.presets import resolve_preset
from rlnb.runtime.spec import actor_envs, make_vector_env


def no_learner_rate(agent, seconds: float) -> float:
    "Env steps/s of the preset's envs stepped by its behaviour policy in this process: no learner, no tracing, no replay."
    rt, cfg = agent.algo, agent.config
    env, _ = actor_envs(agent.env_id, None, cfg.actor_mode)
    venv = make_vector_env(env, cfg.num_envs)
    act, rng, params = jax.jit(rt.spec.act), np.random.default_rng(0), rt.params
    try:
        obs, _ = venv.reset(seed=0)
        step = lambda obs: venv.step(rt.spec.env_action(np.asarray(act(params, obs, rt.spec.noise(rng, cfg.num_envs))[0])))[0]
        for _ in range(3): obs = step(obs)  # compile, envs up
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds: obs = step(obs); n += cfg.num_envs
        return n / (time.perf_counter() - t0)
    finally: venv.close()


def preset_rate(agent, seconds: float, warm: int) -> float:
    "Env steps/s of the agent's runtime training (`Runtime.train`, no evaluations) over `seconds`, after its compile and `warm` env steps."
    rt, cfg = agent.algo, agent.config
    chunk = cfg.num_envs * getattr(cfg, 'unroll_length', 64)
    rt.compile()
    rt.train(warm, eval_interval=None, final_eval=False)
    s0, t0 = rt.env_steps, time.perf_counter()
    while time.perf_counter() - t0 < seconds: rt.train(rt.env_steps + chunk, eval_interval=None, final_eval=False)
    return (rt.env_steps - s0) / (time.perf_counter() - t0)


def throughput(args) -> dict:
    out = {}
    for algo in args.algos.split(','):
        pre = resolve_preset('auto', algo, args.game)
        over = dict(buffer_warmup=args.buffer_warmup) if algo == 'apex-dqn' else {}
        over.update(args.set.get(algo, {}))
        alone, paced = [], []
        for rep in range(args.reps):
            with tempfile.TemporaryDirectory() as d:
                agent = DistributedAgent(args.game, algo=algo, preset=pre, devices=jax.local_devices()[:1], work_dir=d, seed=rep, **over)
                try:
                    alone.append(no_learner_rate(agent, args.seconds))
                    paced.append(preset_rate(agent, args.seconds, args.warmup_steps))
                finally: agent.close()
            print(json.dumps(dict(algo=algo, rep=rep, no_learner=alone[-1], preset=paced[-1])), file=sys.stderr, flush=True)
        med = statistics.median
        out[algo] = dict(preset=pre.name if pre else None, actor_mode=agent.config.actor_mode, num_envs=agent.config.num_envs,
                         no_learner_steps_per_s=med(alone), preset_steps_per_s=med(paced),
                         ratio=med([p / a for p, a in zip(paced, alone)]), overrides=over)
    return dict(game=args.game, seconds=args.seconds, reps=args.reps, warmup_steps=args.warmup_steps, results=out)


def random_scores(args) -> dict:
    out = {}
    for game in args.games.split(','):
        env_id = f"MinAtar/{game}-v1"
        pixel_env(env_id)  # registers MinAtar's ids
        venv = gym.vector.SyncVectorEnv([lambda: gym.make(env_id)] * 8)
        venv.reset(seed=0)
        rng, ret, rets = np.random.default_rng(0), np.zeros(8), []
        while len(rets) < args.episodes:
            _, r, term, trunc, _ = venv.step(rng.integers(0, venv.single_action_space.n, 8)); ret += r
            for i in np.flatnonzero(term | trunc): rets.append(float(ret[i])); ret[i] = 0
        venv.close()
        out[env_id] = dict(mean=float(np.mean(rets)), std=float(np.std(rets)), episodes=len(rets))
    return dict(random_policy=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest='what', required=True)
    t = sub.add_parser('throughput')
    t.add_argument('--game', default='ALE/Pong-v5')
    t.add_argument('--algos', default='apex-dqn,impala,ppo')
    t.add_argument('--seconds', type=float, default=60)
    t.add_argument('--reps', type=int, default=3)
    t.add_argument('--warmup-steps', type=int, default=3_000, help='env steps before the timed window (default 3000)')
    t.add_argument('--buffer-warmup', type=int, default=1_000, help="Ape-X's buffer_warmup in this bench (default 1000), so the window sees the learner")
    t.add_argument('--set', action='append', default=[], metavar='ALGO:FIELD=VALUE',
                   help="change one config field of ALGO's preset in this bench, e.g. apex-dqn:replay_ratio=0.002 (repeatable)")
    t.add_argument('--quick', action='store_true', help='a few seconds per case, one repetition: checks the script, measures nothing')
    r = sub.add_parser('random')
    r.add_argument('--games', default='Breakout,SpaceInvaders,Asterix,Freeway,Seaquest')
    r.add_argument('--episodes', type=int, default=200)
    args = ap.parse_args()
    if args.what == 'throughput':
        sets = {}
        for item in args.set:
            algo, kv = item.split(':', 1); k, v = kv.split('=', 1)
            sets.setdefault(algo, {})[k] = json.loads(v)
        args.set = sets
        if args.quick: args.seconds, args.reps, args.warmup_steps, args.buffer_warmup = 3, 1, 200, 100
        res = throughput(args)
    else: res = random_scores(args)
    print(json.dumps(dict(provenance=provenance(), **res), indent=1))


if __name__ == '__main__':
    main()
