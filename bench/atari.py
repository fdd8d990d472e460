"""Pixels: Ape-X on Atari Pong and its CNN learner, against raw stepping of the same preprocessed envs, in one run.

    python bench/atari.py [--seconds 15] [--reps 3] [--game ALE/Pong-v5]

Prints one JSON object:
- `raw_steps_per_s`: one preprocessed env (`rlnb.pixels.make_atari`, training options) stepped with random actions in
  this process: the ceiling of one core;
- `apex_steps_per_s[replay][k]`: env steps/s of Ape-X with k process actors (4 envs each), learner nearly idle (one
  update per 1,000 transitions, so the actors' own rate shows), and its ratio to k x raw; `replay` is `frames` (the
  default for ALE ids: a FrameTracer and PrioritizedFrameReplayBuffer, new rows at the largest priority) or `stacked`
  (`frame_replay=False`: n-step transitions of whole stacked observations, TD priorities computed at insertion);
- `replay_bytes_per_transition[replay]`: the live agent's replay storage (`buffer.nbytes / capacity`);
- `updates_per_s[B]`: learner updates/s of Ape-X's fused update (8 per dispatch) with the NatureCNN at batch B on
  the first device (a GPU when one is visible, else the CPU);
- `bytes_per_transition`: rlnb's PrioritizedReplayBuffer (S and S_next stacked) against FrameReplayBuffer.
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

from rlnb.apex_dqn import ApeXDQN
from rlnb.core import TransitionBatch
from rlnb.frames import FrameReplayBuffer
from rlnb.pixels import make_atari
from rlnb.replay import PrioritizedReplayBuffer


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
    args = ap.parse_args()
    raw, upd, nbytes = [], {32: [], 128: []}, {}
    apex = {(fr, k): [] for fr in (True, False) for k in (1, 2)}
    name = lambda fr: 'frames' if fr else 'stacked'
    for rep in range(args.reps):
        raw.append(raw_rate(args.game, args.seconds))
        for fr, k in apex: apex[fr, k].append(apex_rate(args.game, k, args.seconds, fr, nbytes))
        for b in ([] if args.no_learner else upd): upd[b].append(learner_rate(args.game, b))
        print(json.dumps(dict(rep=rep, raw=raw[-1], apex={f"{name(fr)}-{k}": v[-1] for (fr, k), v in apex.items()},
                              updates={b: v[-1] for b, v in upd.items() if v})), file=sys.stderr, flush=True)
    med = statistics.median
    out = dict(provenance=provenance(), game=args.game, device=str(jax.local_devices()[0]), cores=os.cpu_count(), reps=args.reps,
               raw_steps_per_s=med(raw),
               apex_steps_per_s={name(fr): {k: dict(median=med(v), vs_raw_x_actors=med([a / (k * r) for a, r in zip(v, raw)]))
                                            for (f, k), v in apex.items() if f == fr} for fr in (True, False)},
               frames_over_stacked={k: med([a / b for a, b in zip(apex[True, k], apex[False, k])]) for k in (1, 2)},
               replay_bytes_per_transition={name(fr): v for fr, v in nbytes.items()},
               updates_per_s={b: med(v) for b, v in upd.items() if v},
               bytes_per_transition=bytes_per_transition())
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
