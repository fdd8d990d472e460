"""Steering (issue 57's first part) for every algorithm: steered hyperparameters are inputs of the learner's program.

- Steering every steerable field to the config's own values changes nothing but float rounding: the same counters, and
  params within a float tolerance of the unsteered run (a value traced as a float32 input instead of a Python constant
  can round a few last bits differently, e.g. `1 - clip_eps`).
- A learning rate of 0 steered before training freezes the params the optimizer steps, bit for bit; every other
  steerable field, steered to another value, changes the trained state (the step reads it).
- Values set live in a background deterministic run, replayed at the updates its `steering.jsonl` records, repeat it bit for bit.
Deterministic runs on one learner device, a few hundred updates' worth of env steps each.
"""
import asyncio

import numpy as np
import pytest
import jax

from rlnb.agent.agent import DistributedAgent
from rlnb.agent.rows import read_steering

SMALL = dict(num_learners=1, num_actors=1, envs_per_actor=4, hidden=(16, 16), deterministic=True, seed=0)
CASES = {  # algo: (env, extra config, env steps, the params its optimizer steps from the learner state)
    'apex-dqn': ('CartPole-v1', dict(buffer_warmup=256), 1_500, lambda s: s.params.online),
    'r2d2': ('CartPole-v1', dict(buffer_warmup=64, sequence_length=8, burn_in=0, overlap=4, batch_size=8), 1_500,
             lambda s: s.params.online),
    'impala': ('CartPole-v1', dict(unroll_length=16, batch_size=4), 1_500, lambda s: s.params),
    'ppo': ('CartPole-v1', dict(unroll_length=32, batch_size=32, num_epochs=2), 1_500, lambda s: s.params),
    'pqn': ('CartPole-v1', dict(unroll_length=32, batch_size=64, num_epochs=2), 1_500, lambda s: s.params),
    'sac': ('Pendulum-v1', dict(buffer_warmup=256), 700, lambda s: s.params.actor_params),
    'td3': ('Pendulum-v1', dict(buffer_warmup=256), 700, lambda s: s.params.actor_params.online),
}


def _train(algo, tmp_path, name, steer=None):
    env, extra, steps, _ = CASES[algo]
    ag = DistributedAgent(env, algo=algo, work_dir=tmp_path / name, **SMALL, **extra)
    try:
        if steer is not None: ag.set(**(ag.steerable if steer == 'same' else steer))
        ag.train(steps, eval_interval=None, save_interval=None, num_eval_episodes=1, progress=False, verbose=False)
        return ag.algo.updates, jax.tree.map(np.asarray, ag.algo.learner.state)
    finally:
        ag.close()


@pytest.mark.parametrize('algo', sorted(CASES))
def test_steering_to_the_configs_values_changes_nothing_but_rounding(algo, tmp_path):
    updates, plain = _train(algo, tmp_path, 'plain')
    updates_s, steered = _train(algo, tmp_path, 'steered', 'same')
    assert updates == updates_s > 0
    for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(steered), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


FIELDS = [('ppo', 'clip_eps'), ('ppo', 'entropy_coef'), ('ppo', 'value_coef'), ('impala', 'entropy_coef'),
          ('impala', 'value_coef'), ('sac', 'tau'), ('sac', 'target_entropy'), ('td3', 'tau'), ('td3', 'target_noise'),
          ('td3', 'target_noise_clip'), ('apex-dqn', 'epsilon'), ('r2d2', 'epsilon'),  # the last two read on the host
          ('apex-dqn', 'replay_ratio')]  # the pacing's, steerable in every replay algorithm (`test_the_replay_ratio...`)


def test_every_steerable_field_but_the_learning_rate_is_listed_here():
    from rlnb.runtime.registry import get_algo
    listed = {(a, f) for a, f in FIELDS if f != 'replay_ratio'}
    assert {(a, f) for a in CASES for f in get_algo(a).steerable if f != 'learning_rate'} == listed


@pytest.mark.parametrize('algo,field', FIELDS)
def test_a_steered_field_reaches_the_update(algo, field, tmp_path):
    "Steering a field to another value changes the trained state: the learner step reads the steered value, not the config's."
    env, extra, steps, _ = CASES[algo]
    _, plain = _train(algo, tmp_path, 'plain')
    ag = DistributedAgent(env, algo=algo, work_dir=tmp_path / 'probe', **SMALL, **extra)
    value = ag.steerable[field]
    ag.close()
    # PPO's clipping acts only once a ratio leaves the range: a narrow one makes sure it does
    new = 1e-3 if field == 'clip_eps' else value / 2 if value else 0.05
    _, steered = _train(algo, tmp_path, 'steered', {field: new})
    assert not all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(steered)))


@pytest.mark.parametrize('algo', sorted(CASES))
def test_a_learning_rate_of_zero_freezes_the_params(algo, tmp_path):
    env, extra, _, stepped = CASES[algo]
    ag = DistributedAgent(env, algo=algo, work_dir=tmp_path / 'init', **SMALL, **extra)
    first = jax.tree.map(np.asarray, stepped(ag.algo.learner.state))
    ag.close()
    updates, state = _train(algo, tmp_path, 'frozen', {'learning_rate': 0.0})
    assert updates > 0
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(stepped(state)), strict=True):
        assert np.array_equal(a, b)


def test_a_steered_deterministic_run_replays_its_steering_log_bit_for_bit(tmp_path):
    ("Values set live during a background deterministic run, replayed at the updates and env steps its log records, give "
     "the same run: the learner's fields, taken at a dispatch, and the host's (exploration, replay ratio), at a tick.")
    kw = dict(SMALL, buffer_warmup=256)
    train = dict(eval_interval=None, save_interval=None, num_eval_episodes=1, progress=False, verbose=False)

    async def live():
        ag = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'live', **kw)
        task = ag.start(6_000, **train)
        while ag.algo.updates < 64: await asyncio.sleep(0.001)
        ag.set(learning_rate=1e-4, epsilon=0.2, replay_ratio=1.0)
        u = ag.algo.updates
        while ag.algo.updates < u + 200: await asyncio.sleep(0.001)
        ag.set(learning_rate=3e-3)
        assert not task.done()  # both changes landed while it trained
        await task
        out = ag.algo.updates, jax.tree.map(np.asarray, ag.algo.learner.state)
        await ag.aclose()
        return out

    updates, state = asyncio.run(live())
    log = read_steering(tmp_path / 'live')
    f32 = lambda x: float(np.float32(x))
    # the learner's part logged when set, the host's when the next tick took it
    assert [r['values'] for r in log] == [{'learning_rate': f32(1e-4)}, {'epsilon': f32(0.2), 'replay_ratio': 1.0},
                                          {'learning_rate': f32(3e-3)}]
    assert 64 <= log[0]['updates'] <= log[1]['updates'] < log[2]['updates'] < updates
    assert log[0]['env_steps'] <= log[1]['env_steps']

    replay = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'replay', **kw)
    for r in log: replay.set(at_update=r['updates'], at_env_step=r['env_steps'], **r['values'])
    replay.train(6_000, **train)
    assert replay.algo.updates == updates
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(replay.algo.learner.state), strict=True))
    # the replay logs each change when taken (the live run logged the learner's when set)
    key = lambda r: (r['updates'], sorted(r['values'].items()))
    relog = read_steering(tmp_path / 'replay')
    assert sorted(map(key, relog)) == sorted(map(key, log))
    host = lambda lg: [r['env_steps'] for r in lg if 'epsilon' in r['values']]
    assert host(relog) == host(log)  # the host's change at the same tick
    replay.close()

    plain = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'plain', **kw)
    plain.train(6_000, **train)
    assert not all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(plain.algo.learner.state)))
    plain.close()


def test_the_replay_ratio_and_exploration_change_from_the_next_tick(tmp_path):
    ("A replay ratio of 0 stops the learner (the actors run on); a new ratio holds for the transitions inserted from then "
     "on, and a resumed run keeps it with what was owed; a new epsilon is the base of the actors' ladder; actor_slack "
     "has a floor of one dispatch of updates.")
    kw = dict(SMALL, buffer_warmup=256)
    train = dict(eval_interval=None, save_interval=None, num_eval_episodes=1, progress=False, verbose=False)
    ag = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'a', **kw)
    try:
        K = ag.config.updates_per_dispatch
        ag.train(1_000, **train)
        p = ag.algo.pacing
        ag.set(replay_ratio=0.0, epsilon=0.0)
        assert p.ratio == ag.config.replay_ratio  # taken at the next tick, not before
        u = ag.algo.updates
        ag.train(2_000, **train)  # to 2,000 env steps in all
        assert p.ratio == 0.0 and 0 <= ag.algo.updates - u < K  # at most what was owed when it changed
        assert np.all(ag.algo.spec.eps == 0.0)
        u, ins = ag.algo.updates, p.inserted_after_warmup
        ag.set(replay_ratio=0.5)
        ag.train(4_000, **train)
        du, di = ag.algo.updates - u, p.inserted_after_warmup - ins
        assert di >= 1_500 and abs(du - 0.5 * di) < K + 1, (du, di)
        assert ag.steerable['replay_ratio'] == 0.5 and ag.steerable['epsilon'] == 0.0
        behind, out = p.behind(), ag.save()
        with pytest.raises(Exception, match='actor_slack must be a finite number >= '):
            ag.set(actor_slack=K - 1)
        ag.set(actor_slack=K + 3.4)
        ag.train(4_100, **train)
        assert p.actor_slack == K + 3
    finally:
        ag.close()
    resumed = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'b', init_model_path=out, **kw)
    try:
        q = resumed.algo.pacing
        assert q.ratio == 0.5 and q.behind() == behind and np.all(resumed.algo.spec.eps == 0.0)
    finally:
        resumed.close()


def test_a_scheduled_learning_rate_decays_to_zero_and_a_resume_keeps_the_schedule(tmp_path):
    "A `ScheduledValue` set between calls moves with the updates from the one it was taken at; the log and checkpoints keep it."
    from rlnb.steer import ScheduledValue, linear_schedule
    kw = dict(SMALL, buffer_warmup=256)
    train = dict(eval_interval=None, save_interval=None, num_eval_episodes=1, progress=False, verbose=False)
    ag = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'a', **kw)
    try:
        ag.train(1_000, **train)
        u0 = ag.algo.updates
        taken = ag.set(learning_rate=linear_schedule(1e-3, 0.0, 200))
        assert taken == {'learning_rate': {'linear': [1e-3, 0.0, 200.0]}}  # its start is the update it is taken at
        mid = ag.steerable['learning_rate']
        ag.train(2_000, **train)
        assert ag.algo.updates > u0 + 200 and mid == float(np.float32(1e-3)) and ag.steerable['learning_rate'] == 0.0
        frozen = jax.tree.map(np.asarray, ag.algo.learner.state.params.online)
        ag.train(2_500, **train)
        assert all(np.array_equal(a, np.asarray(b)) for a, b in zip(jax.tree.leaves(frozen), jax.tree.leaves(ag.algo.learner.state.params.online)))
        assert [r['values'] for r in read_steering(tmp_path / 'a')] == [{'learning_rate': {'linear': [1e-3, 0.0, 200.0], 'start': u0}}]
        out = ag.save()
    finally:
        ag.close()
    resumed = DistributedAgent('CartPole-v1', algo='apex-dqn', work_dir=tmp_path / 'b', init_model_path=out, **kw)
    try:
        assert resumed.algo.learner.steered['learning_rate'] == ScheduledValue('linear', (1e-3, 0.0, 200.0), u0)
        assert resumed.steerable['learning_rate'] == 0.0
    finally:
        resumed.close()
