"""Pixels: Ape-X on Atari Pong and its CNN learner, against raw stepping of the same preprocessed envs, in one run.

    python bench/atari.py [--seconds 15] [--reps 3] [--game ALE/Pong-v5] [--envpool] [--no-learner] [--no-onpolicy]

Prints one JSON object:
- `raw_steps_per_s`: one preprocessed env (`rlnb.envs.pixels.make_atari`, training options) stepped with random actions in
  this process: the ceiling of one core;
- `apex_steps_per_s[replay][k]`: env steps/s of Ape-X with k process actors (4 envs each), learner nearly idle (one
  update per 1,000 transitions, so the actors' own rate shows), and its ratio to k x raw; `replay` is `frames` (the
  default for ALE ids: a FrameTracer and PrioritizedFrameReplayBuffer, new rows at the largest priority) or `stacked`
  (`frame_replay=False`: n-step transitions of whole stacked observations, TD priorities computed at insertion);
- `replay_bytes_per_transition[replay]`: the live agent's replay storage (`buffer.nbytes / capacity`);
- `updates_per_s[B]`: learner updates/s of Ape-X's fused update (8 per dispatch) with the NatureCNN at batch B on
  the first device (a GPU when one is visible, else the CPU);
- `bytes_per_transition`: rlnb's PrioritizedReplayBuffer (S and S_next stacked) against FrameReplayBuffer.
With `--envpool` (the `envpool` extra), `envpool` holds, measured in the same repetitions:
- `raw_steps_per_s[n]`: EnvPool's own Atari batch of n envs (`rlnb.envs.envpool.EnvPoolVectorEnv`, `make_atari`'s semantics,
  one C++ thread per core) stepped with random actions in this process: the ceiling of EnvPool on these cores;
- `gym_raw_steps_per_s`: `raw_steps_per_s` above (one `make_atari` env, one core), repeated here beside it;
- `apex_steps_per_s[k]`: Ape-X with `actor_mode='envpool'`, k actors of `--envpool-envs` envs, **learner running** at
  `--replay-ratio` updates per transition; `apex_process_steps_per_s[k]` the process actors (4 envs each) at the same
  replay ratio, in the same repetition; each with its ratio to raw EnvPool stepping of all its envs;
- `ppo_steps_per_s`, `impala_steps_per_s`: PPO and IMPALA (default configs but the envs) through EnvPool, learner running
  (`--no-onpolicy` skips them: on a CPU their NatureCNN learner makes each take minutes per repetition);
- `policy_obs_per_s`: observations/s of Ape-X's policy program alone (NatureCNN, epsilon noise) on batches of
  `--envpool-envs` stacked frames, no env;
- `envpool_policy_steps_per_s`: EnvPool's batch of `--envpool-envs` envs stepped with the actions of that policy program
  and nothing else of rlnb (no tracer, replay or learner): what one actor can reach on these cores; `apex_vs_envpool_policy`
  is Ape-X's one-actor rate over it, the share that rlnb's own per-step work leaves.
Medians over `--reps`; the cases of each repetition run back to back.
"""
import argparse
import json
import os
import statistics
import sys
import time

from _harness import provenance

import numpy as np
import jax

from rlnb.algos.apex_dqn import ApeXDQN
from rlnb.algos.impala import IMPALA
from rlnb.algos.ppo import PPO
from rlnb.core import TransitionBatch
from rlnb.replay.frames import FrameReplayBuffer
from rlnb.envs.pixels import make_atari
from rlnb.replay.buffers import PrioritizedReplayBuffer


def raw_rate(game, seconds):
    env = make_atari(game)
    env.reset(seed=0)
    rng, n, t0 = np.random.default_rng(0), 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, term, trunc, _ = env.step(int(rng.integers(env.action_space.n))); n += 1
        if term or trunc: env.reset()
    rate = n / (time.perf_counter() - t0)
    env.close()
    return rate


def apex_rate(game, actors, seconds, frame_replay, nbytes):
    agent = ApeXDQN(game, num_actors=actors, envs_per_actor=4, actor_mode='process', buffer_capacity=20_000, buffer_warmup=500,
                    batch_size=32, replay_ratio=0.001, updates_per_dispatch=1, actor_slack=50, devices=jax.local_devices()[:1],
                    frame_replay=None if frame_replay else False)
    nbytes[frame_replay] = agent.buffer.nbytes / agent.buffer.capacity
    try:
        agent.compile()
        agent.train(600, eval_interval=None, final_eval=False)  # actors up, replay warm
        s0, t0 = agent.env_steps, time.perf_counter()
        while time.perf_counter() - t0 < seconds: agent.train(agent.env_steps + 100 * actors, eval_interval=None, final_eval=False)
        return (agent.env_steps - s0) / (time.perf_counter() - t0)
    finally: agent.close()


def envpool_raw_rate(game, num_envs, seconds):
    from rlnb.envs.envpool import EnvPoolEnv
    env = EnvPoolEnv.resolve(game).make_vec(num_envs)
    env.reset(seed=0)
    rng, n, t0 = np.random.default_rng(0), 0, time.perf_counter()
    k = env.single_action_space.n
    while time.perf_counter() - t0 < seconds:
        env.step(rng.integers(0, k, num_envs)); n += num_envs
    rate = n / (time.perf_counter() - t0)
    env.close()
    return rate


def envpool_policy_rate(game, num_envs, seconds):
    "EnvPool's batch of `num_envs` stepped with the actions of Ape-X's own policy program (NatureCNN, epsilon noise), nothing else: an actor's ceiling."
    from rlnb.envs.envpool import EnvPoolEnv
    agent = ApeXDQN(game, num_actors=1, envs_per_actor=num_envs, actor_mode='envpool', buffer_capacity=2_000, devices=jax.local_devices()[:1])
    env = EnvPoolEnv.resolve(game).make_vec(num_envs)
    try:
        params, rng = agent.get_state(), np.random.default_rng(0)
        obs, _ = env.reset(seed=0)
        step = lambda obs: env.step(np.asarray(agent.actors.act_fn(params, obs, agent.spec.noise(rng, num_envs), None)[0]))[0]
        for _ in range(5): obs = step(obs)  # compile
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds: obs = step(obs); n += num_envs
        return n / (time.perf_counter() - t0)
    finally: env.close(); agent.close()


def policy_rate(game, num_envs, seconds):
    "Observations/s of Ape-X's policy program alone on a batch of `num_envs` stacked frames (no env)."
    agent = ApeXDQN(game, num_actors=1, envs_per_actor=num_envs, actor_mode='envpool', buffer_capacity=2_000, devices=jax.local_devices()[:1])
    try:
        params, rng = agent.get_state(), np.random.default_rng(0)
        obs = np.random.default_rng(0).integers(0, 256, (num_envs, *agent.observation_space.shape), dtype=np.uint8)
        act = lambda: np.asarray(agent.actors.act_fn(params, obs, agent.spec.noise(rng, num_envs), None)[0])
        for _ in range(5): act()  # compile
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds: act(); n += num_envs
        return n / (time.perf_counter() - t0)
    finally: agent.close()


def rate_of(agent, seconds, warm, chunk):
    "Env steps/s of `agent.train` over `seconds`, after `warm` env steps (actors up, replay warm, programs compiled)."
    try:
        agent.compile()
        agent.train(warm, eval_interval=None, final_eval=False)
        s0, t0 = agent.env_steps, time.perf_counter()
        while time.perf_counter() - t0 < seconds: agent.train(agent.env_steps + chunk, eval_interval=None, final_eval=False)
        return (agent.env_steps - s0) / (time.perf_counter() - t0)
    finally: agent.close()


def apex_learner_rate(game, mode, actors, envs, seconds, replay_ratio):
    "Ape-X env steps/s with `mode` actors and the learner running at `replay_ratio` (frame replay)."
    agent = ApeXDQN(game, num_actors=actors, envs_per_actor=envs, actor_mode=mode, buffer_capacity=20_000, buffer_warmup=500,
                    batch_size=32, replay_ratio=replay_ratio, updates_per_dispatch=1, actor_slack=50, devices=jax.local_devices()[:1])
    return rate_of(agent, seconds, 600, 100 * actors)


def onpolicy_rate(cls, game, actors, envs, seconds):
    # PPO: 4 minibatches per rollout of 32 steps; IMPALA: one unroll of every env per update
    kw = dict(batch_size=actors * envs * 32 // 4) if cls is PPO else dict(batch_size=actors * envs)
    agent = cls(game, num_actors=actors, envs_per_actor=envs, actor_mode='envpool', devices=jax.local_devices()[:1], **kw)
    return rate_of(agent, seconds, 2 * agent.config.num_envs * agent.config.unroll_length, agent.config.num_envs * agent.config.unroll_length)


def learner_rate(game, batch, dispatches=6):
    agent = ApeXDQN(game, num_actors=1, envs_per_actor=1, batch_size=batch, updates_per_dispatch=8, buffer_capacity=2_000,
                    devices=jax.local_devices()[:1])
    try:
        K, rng = 8, np.random.default_rng(0)
        n = K * batch
        S = rng.integers(0, 256, (n, 84, 84, 4), dtype=np.uint8)
        b = TransitionBatch(S=S, A=rng.integers(0, agent.action_space.n, n), logP=np.zeros(n, np.float32), Rn=rng.normal(size=n).astype(np.float32),
                            In=np.full(n, 0.97, np.float32), S_next=np.roll(S, 1, axis=0), W=np.ones(n, np.float32))
        jax.block_until_ready(agent.learn(b))  # compile
        t0 = time.perf_counter()
        for _ in range(dispatches): m = agent.learn(b)
        jax.block_until_ready((m, agent.learner_state))
        return dispatches * K / (time.perf_counter() - t0)
    finally: agent.close()


def bytes_per_transition(capacity=2_000, streams=8):
    rng = np.random.default_rng(0)
    S = rng.integers(0, 256, (capacity, 84, 84, 4), dtype=np.uint8)
    naive = PrioritizedReplayBuffer(capacity)
    naive.add(TransitionBatch(S=S, A=np.zeros(capacity, np.int64), logP=np.zeros(capacity, np.float32), Rn=np.zeros(capacity, np.float32),
                              In=np.ones(capacity, np.float32), S_next=S))
    frames = FrameReplayBuffer(capacity, num_streams=streams, frame_shape=(84, 84), stack=4, n_step=3)
    for t in range(capacity // streams):
        frames.add(S[t * streams:(t + 1) * streams, ..., -1], np.zeros(streams, np.int64), np.zeros(streams, np.float32),
                   np.zeros(streams, bool), np.zeros(streams, bool))
    return dict(replay_stacked=naive.nbytes / capacity, frame_replay=frames.nbytes / capacity,
                ratio=frames.nbytes / naive.nbytes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seconds', type=float, default=15)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--game', default='ALE/Pong-v5')
    ap.add_argument('--no-learner', action='store_true', help='skip the learner updates/s (minutes per repetition on a CPU)')
    ap.add_argument('--envpool', action='store_true', help="add the EnvPool rows (the envpool extra)")
    ap.add_argument('--envpool-only', action='store_true', help="only the EnvPool rows (and the raw gymnasium stepping beside them)")
    ap.add_argument('--envpool-envs', type=int, default=8, help='envs per EnvPool actor (default 8)')
    ap.add_argument('--replay-ratio', type=float, default=0.001, help="Ape-X's updates per transition in the EnvPool and matching process rows (default 0.001, as the process rows above: the CPU learner does about 3 updates/s)")
    ap.add_argument('--actors', default='1,2', help='actor counts of the EnvPool and matching process rows (default 1,2)')
    ap.add_argument('--no-onpolicy', action='store_true', help='skip the PPO and IMPALA EnvPool rows (on a CPU their NatureCNN learner makes each take minutes per repetition)')
    args = ap.parse_args()
    if args.envpool_only: args.envpool = True
    ks, E = [int(k) for k in args.actors.split(',')], args.envpool_envs
    ep = dict(raw={n: [] for n in sorted({E, *(k * E for k in ks)})}, apex={k: [] for k in ks}, process={k: [] for k in ks}, ppo=[], impala=[],
              policy=[], envpool_policy=[])
    raw, upd, nbytes = [], {32: [], 128: []}, {}
    apex = {(fr, k): [] for fr in (True, False) for k in (1, 2)}
    name = lambda fr: 'frames' if fr else 'stacked'
    if args.envpool_only: apex, upd = {}, {}
    for rep in range(args.reps):
        raw.append(raw_rate(args.game, args.seconds))
        for fr, k in apex: apex[fr, k].append(apex_rate(args.game, k, args.seconds, fr, nbytes))
        for b in ([] if args.no_learner else upd): upd[b].append(learner_rate(args.game, b))
        if args.envpool:
            for n in ep['raw']: ep['raw'][n].append(envpool_raw_rate(args.game, n, args.seconds))
            ep['policy'].append(policy_rate(args.game, E, args.seconds))
            ep['envpool_policy'].append(envpool_policy_rate(args.game, E, args.seconds))
            for k in ks:
                ep['apex'][k].append(apex_learner_rate(args.game, 'envpool', k, E, args.seconds, args.replay_ratio))
                ep['process'][k].append(apex_learner_rate(args.game, 'process', k, 4, args.seconds, args.replay_ratio))
            if not args.no_onpolicy:
                ep['ppo'].append(onpolicy_rate(PPO, args.game, ks[-1], E, args.seconds))
                ep['impala'].append(onpolicy_rate(IMPALA, args.game, ks[-1], E, args.seconds))
        print(json.dumps(dict(rep=rep, raw=raw[-1], apex={f"{name(fr)}-{k}": v[-1] for (fr, k), v in apex.items()},
                              updates={b: v[-1] for b, v in upd.items() if v},
                              envpool={key: ({n: v[-1] for n, v in x.items() if v} if isinstance(x, dict) else x[-1:]) for key, x in ep.items()} if args.envpool else None)),
              file=sys.stderr, flush=True)
    med = statistics.median
    out = dict(provenance=provenance(), game=args.game, device=str(jax.local_devices()[0]), cores=os.cpu_count(), reps=args.reps,
               raw_steps_per_s=med(raw))
    if not args.envpool_only:
        out.update(apex_steps_per_s={name(fr): {k: dict(median=med(v), vs_raw_x_actors=med([a / (k * r) for a, r in zip(v, raw)]))
                                                for (f, k), v in apex.items() if f == fr} for fr in (True, False)},
                   frames_over_stacked={k: med([a / b for a, b in zip(apex[True, k], apex[False, k])]) for k in (1, 2)},
                   replay_bytes_per_transition={name(fr): v for fr, v in nbytes.items()},
                   updates_per_s={b: med(v) for b, v in upd.items() if v},
                   bytes_per_transition=bytes_per_transition())
    if args.envpool:
        rawE = ep['raw']
        vs = lambda v, n: med([a / r for a, r in zip(v, rawE[n])])
        out['envpool'] = dict(
            envs_per_actor=E, replay_ratio=args.replay_ratio, gym_raw_steps_per_s=med(raw),
            raw_steps_per_s={n: med(v) for n, v in rawE.items()},
            apex_steps_per_s={k: dict(median=med(v), vs_envpool_raw=vs(v, k * E)) for k, v in ep['apex'].items()},
            apex_process_steps_per_s={k: dict(median=med(v), vs_envpool_raw=vs(v, k * E), vs_gym_raw_x_actors=med([a / (k * r) for a, r in zip(v, raw)]))
                                      for k, v in ep['process'].items()},
            envpool_over_process={k: med([a / b for a, b in zip(ep['apex'][k], ep['process'][k])]) for k in ks},
            ppo_steps_per_s=dict(actors=ks[-1], median=med(ep['ppo']), vs_envpool_raw=vs(ep['ppo'], ks[-1] * E)) if ep['ppo'] else None,
            impala_steps_per_s=dict(actors=ks[-1], median=med(ep['impala']), vs_envpool_raw=vs(ep['impala'], ks[-1] * E)) if ep['impala'] else None,
            policy_obs_per_s=med(ep['policy']),
            envpool_policy_steps_per_s=dict(median=med(ep['envpool_policy']), vs_envpool_raw=vs(ep['envpool_policy'], E)),
            apex_vs_envpool_policy=med([a / b for a, b in zip(ep['apex'][ks[0]], ep['envpool_policy'])]) if ks[0] == 1 else None)
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
