"""Bad input, case by case: each gets the exception class a Python user expects (or exit code 2 from the command line), a
message that names what is wrong and what to change, and leaves nothing running (no child process, no rlnb thread)."""
import asyncio
import contextlib
import io
import threading

import gymnasium as gym
import numpy as np
import psutil
import pytest

from rlnb.agent.agent import DistributedAgent, load_policy, read_checkpoint, write_checkpoint
from rlnb.cli import main
from rlnb.core import ConfigError, EnvWorkerError, RLNBError, SpaceMismatchError, TransitionBatch
from rlnb.envs.core import MissingDependencyError
from rlnb.envs.pool import AsyncEnvWorker, AsyncWorkerPool, SyncEnvWorker, get_worker_pool
from rlnb.replay.buffers import PrioritizedReplayBuffer, ReplayBuffer
from rlnb.runtime.runtime import RuntimeConfig, get_algo
from rlnb.replay.tracing import BatchedNStep, BatchedUnroll

SMALL = dict(num_learners=1, num_actors=1, envs_per_actor=2, hidden=(16,), buffer_warmup=64, buffer_capacity=1_000)


def cli(*args):
    "Run `rlnb ARGS` in this process: (exit code, stderr)."
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try: code = main(list(args))
        except SystemExit as e: code = e.code
    return code, err.getvalue()


def agent(*args, **kw):
    "Build an agent, run `fn` on it, close it (the case's error comes from `fn`)."
    def run(fn):
        a = DistributedAgent(*args, **{**SMALL, **kw})
        try: return fn(a)
        finally: a.close()
    return run


def batch(n_s=3, n_a=3, obs=4):
    return TransitionBatch(S=np.zeros((n_s, obs), np.float32), A=np.zeros(n_a, np.int64), logP=np.zeros(3, np.float32), Rn=np.zeros(3, np.float32),
                           In=np.ones(3, np.float32), S_next=np.zeros((n_s, obs), np.float32))


def _send(worker, action):
    try: worker.send_action(action)
    finally: worker.cleanup()


def _pool_step(action):
    async def go():
        async with AsyncWorkerPool([AsyncEnvWorker('CartPole-v1', mode='thread')]) as pool:
            await pool.get_state()
            pool.send_action(action, 0)
    asyncio.run(go())


@contextlib.contextmanager
def _without(module, *also):
    "As if `module` were not installed: importing it fails (and the modules in `also` that import it are imported afresh); restored after."
    import sys
    names = [k for k in sys.modules if k.split('.')[0] == module or any(k == m or k.startswith(m + '.') for m in also)]
    saved = {k: sys.modules.pop(k) for k in names}
    sys.modules[module] = None
    try: yield
    finally:
        for k in [k for k in sys.modules if k.split('.')[0] == module or any(k == m or k.startswith(m + '.') for m in also)]: del sys.modules[k]
        sys.modules.update(saved)


def _missing(module, fn, *also):
    "Run `fn()` as if `module` were not installed."
    with _without(module, *also): return fn()


def _file(tmp, data=b'not a checkpoint'):
    p = tmp / 'file.bin'
    p.write_bytes(data)
    return p


def _truncated(tmp):
    p = write_checkpoint(tmp / 'ck.msgpack', dict(a=np.arange(100)))
    p.write_bytes(p.read_bytes()[:-10])
    return p


def _sequence_replay(capacity):
    from rlnb.algos.sequence_replay import SequenceReplay, zero_sequences
    return SequenceReplay(capacity, zero_sequences(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), 24, 64, 1))


def _other_algo_checkpoint(tmp):
    ppo = DistributedAgent('CartPole-v1', algo='ppo', work_dir=tmp / 'ppo', num_learners=1, num_actors=1, envs_per_actor=2, batch_size=8, unroll_length=4)
    try: ppo.save()
    finally: ppo.close()
    return tmp / 'ppo'

class _ObsTurnsNone(gym.Env):
    "Its observation turns into None at step 5 of each episode (issue 60)."
    observation_space, action_space = gym.spaces.Box(-1, 1, (3,), np.float32), gym.spaces.Discrete(2)
    def reset(self, seed=None, options=None):
        super().reset(seed=seed); self.t = 0
        return np.zeros(3, np.float32), {}
    def step(self, a):
        self.t += 1
        return (None if self.t == 5 else np.zeros(3, np.float32)), 1.0, self.t >= 20, False, {}


def _train(t, env, **kw):
    return agent(env, work_dir=t, **kw)(lambda a: a.train(300, eval_interval=None, save_interval=None))


# (id, function of a temp dir, exception class or 2 for the command line's exit code, regex the message must match)
CASES = [
    # command line
    ('cli-out-is-a-file', lambda t: cli('train', 'apex-dqn', '--out', str(_file(t))), 2, r"is an existing file; pass a directory"),
    ('cli-unknown-env', lambda t: cli('train', 'apex-dqn', '--env', 'CartPol-v1'), 2, r"Did you mean CartPole-v1"),
    ('cli-steps-zero', lambda t: cli('train', 'apex-dqn', '--steps', '0'), 2, r"--steps must be a positive integer, got 0"),
    ('cli-bad-float', lambda t: cli('train', 'apex-dqn', '--learning-rate', 'fast'), 2, r"--learning-rate: invalid float value: 'fast'"),
    ('cli-batch-vs-devices', lambda t: cli('train', 'apex-dqn', '--batch-size', '60', '--out', str(t / 'r')), 2, r"batch_size=60 must be a multiple of the 8 learner devices"),
    ('cli-sac-on-discrete', lambda t: cli('train', 'sac', '--env', 'CartPole-v1', '--out', str(t / 'r')), 2, r"Box"),
    ('cli-resume-missing', lambda t: cli('train', 'apex-dqn', '--resume', str(t / 'nothing')), 2, r"--resume: no checkpoint or run directory"),
    ('cli-eval-missing', lambda t: cli('eval', str(t / 'nothing')), 2, r"no checkpoint or run directory"),
    ('cli-nonfinite-choice', lambda t: cli('train', 'apex-dqn', '--nonfinite', 'skip', '--out', str(t / 'r')), 2, r"nonfinite='skip': must be 'raise' or 'drop'"),
    ('cli-max-restarts', lambda t: cli('train', 'apex-dqn', '--max-restarts', '-1', '--out', str(t / 'r')), 2, r"max_restarts=-1: must be an int >= 0"),
    ('cli-unknown-algo', lambda t: cli('train', 'dreamer'), 2, r"invalid choice: 'dreamer'"),
    ('cli-frame-replay-word', lambda t: cli('train', 'apex-dqn', '--frame-replay', 'maybe'), 2, r"--frame-replay: expected true, false or none, got 'maybe'"),
    ('cli-env-needs-box2d', lambda t: _missing('Box2D', lambda: cli('train', 'ppo', '--env', 'LunarLander-v3', '--out', str(t / 'r')), 'gymnasium.envs.box2d'), 2,
     r'^(?!.*Did you mean).*env id .LunarLander-v3. needs Box2D, which is not installed here: pip install "rlnb\[box2d\]"'),  # a registered id: not called unknown
    ('cli-env-needs-mujoco', lambda t: _missing('mujoco', lambda: cli('train', 'sac', '--env', 'HalfCheetah-v5', '--out', str(t / 'r')), 'gymnasium.envs.mujoco'), 2,
     r'env id .HalfCheetah-v5. needs MuJoCo, which is not installed here: pip install "rlnb\[mujoco\]"'),
    ('cli-env-needs-atari', lambda t: _missing('ale_py', lambda: cli('train', 'apex-dqn', '--env', 'ALE/Pong-v5', '--out', str(t / 'r'))), 2,
     r'env id .ALE/Pong-v5. needs ale-py .* pip install "rlnb\[atari\]"'),
    ('cli-unknown-env-not-itself', lambda t: cli('train', 'ppo', '--env', 'LunarLander-v9'), 2, r"Did you mean LunarLander-v3(?!.*LunarLander-v9,)"),
    ('cli-frame-replay-vector', lambda t: cli('train', 'apex-dqn', '--frame-replay', 'true', '--out', str(t / 'r')), 2, r"frame_replay=True needs observations of stacked frames"),
    ('cli-hidden-zero', lambda t: cli('train', 'ppo', '--hidden', '0', '--out', str(t / 'r')), 2, r"PPOConfig.hidden=\(0,\): must be layer widths, each an int >= 1"),
    ('cli-hidden-negative', lambda t: cli('train', 'impala', '--hidden', '64', '-3', '--out', str(t / 'r')), 2, r"hidden=\(64, -3\): must be layer widths.*--hidden 64 64"),
    ('cli-buffer-too-big', lambda t: cli('train', 'apex-dqn', '--buffer-capacity', '10000000000', '--out', str(t / 'r')), 2,
     r"capacity=10,000,000,000 transitions need about [\d.]+ GiB of host memory.*at most [\d,]+"),
    ('cli-sac-buffer-too-big', lambda t: cli('train', 'sac', '--env', 'Pendulum-v1', '--buffer-capacity', '10000000000', '--out', str(t / 'r')), 2,
     r"ReplayBuffer: capacity=10,000,000,000 transitions need about [\d.]+ GiB"),
    # agent
    ('agent-unknown-option', lambda t: DistributedAgent('CartPole-v1', hiden=(32,)), ConfigError, r"unknown option\(s\) hiden for apex-dqn; ApeXConfig has .*hidden"),
    ('agent-too-many-learners', lambda t: DistributedAgent('CartPole-v1', num_learners=99), ConfigError, r"num_learners=99.*pass 1\.\.8"),
    ('agent-unknown-algo', lambda t: DistributedAgent('CartPole-v1', algo='dreamer'), ConfigError, r"algo='dreamer' is not available; choose one of apex-dqn"),
    ('agent-keep-checkpoints', lambda t: DistributedAgent('CartPole-v1', keep_checkpoints=0), ConfigError, r"keep_checkpoints must be an int >= 1"),
    ('agent-env-instance', lambda t: DistributedAgent(gym.make('CartPole-v1')), ConfigError, r"pass an env id or a zero-argument env factory"),
    ('agent-train-zero-steps', lambda t: agent('CartPole-v1', work_dir=t)(lambda a: a.train(0)), ConfigError, r"num_train_steps must be a positive int"),
    ('agent-eval-interval', lambda t: agent('CartPole-v1', work_dir=t)(lambda a: a.train(100, eval_interval=-5)), ConfigError, r"eval_interval must be a positive int \(env steps\) or None, got -5"),
    ('agent-work-dir-is-file', lambda t: agent('CartPole-v1', work_dir=_file(t))(lambda a: a.train(100, progress=False)), ConfigError, r"is an existing file"),
    ('agent-load-missing', lambda t: agent('CartPole-v1')(lambda a: a.load(t / 'nothing')), ConfigError, r"no checkpoint or run directory at"),
    ('agent-load-other-algo', lambda t: agent('CartPole-v1')(lambda a: a.load(_other_algo_checkpoint(t))), ConfigError, r"the checkpoint is a ppo run; this agent runs apex-dqn"),
    # algorithms and their configs
    ('apex-on-box-actions', lambda t: DistributedAgent('Pendulum-v1', **SMALL), ConfigError, r"Discrete"),
    ('sac-on-discrete', lambda t: DistributedAgent('CartPole-v1', algo='sac', num_learners=1), ConfigError, r"Box"),
    ('ppo-gamma', lambda t: get_algo('ppo').Config(gamma=1.5), ConfigError, r"PPOConfig.gamma=1.5: must be in \(0, 1\]"),
    ('impala-unroll', lambda t: get_algo('impala').Config(unroll_length=0), ConfigError, r"IMPALAConfig.unroll_length=0: must be an int >= 1"),
    ('td3-policy-delay', lambda t: get_algo('td3').Config(policy_delay=0), ConfigError, r"TD3Config.policy_delay=0: must be an int >= 1"),
    ('config-hidden-zero-width', lambda t: get_algo('sac').Config(hidden=(256, 0)), ConfigError, r"SACConfig.hidden=\(256, 0\): must be layer widths"),
    ('config-priority-beta', lambda t: get_algo('apex-dqn').Config(priority_beta=1.5), ConfigError, r"priority_beta=1.5: must be in \[0, 1\]"),
    ('config-seed-negative', lambda t: get_algo('r2d2').Config(seed=-1), ConfigError, r"R2D2Config.seed=-1: must be an int >= 0"),
    ('sequence-replay-too-big', lambda t: _sequence_replay(10**10), ConfigError, r"SequenceReplay: capacity=10,000,000,000 sequences need about [\d.]+ GiB"),
    ('runtime-actor-mode', lambda t: RuntimeConfig(actor_mode='fork'), ConfigError, r"actor_mode='fork': must be 'sync', 'thread' or 'process'"),
    ('runtime-step-timeout', lambda t: RuntimeConfig(step_timeout=-1), ConfigError, r"step_timeout=-1: must be a number of seconds > 0, or None"),
    ('agent-act-wrong-shape', lambda t: agent('CartPole-v1')(lambda a: a.act(np.zeros((5, 3), np.float32))), SpaceMismatchError, r"obs: expected shape \(batch, 4\).*got \(5, 3\)"),
    ('agent-act-wrong-structure', lambda t: agent('CartPole-v1')(lambda a: a.act({'x': np.zeros(4)})), SpaceMismatchError, r"expected a tuple|expected shape|got dict"),
    # envs and workers
    ('worker-fork', lambda t: AsyncEnvWorker('CartPole-v1', start_method='fork'), ConfigError, r"fork is unsafe once JAX runs"),
    ('worker-unknown-env', lambda t: SyncEnvWorker('CartPol-v1'), ConfigError, r"unknown gymnasium env id 'CartPol-v1'.*Did you mean CartPole-v1"),
    ('agent-env-needs-box2d', lambda t: _missing('Box2D', lambda: DistributedAgent('LunarLander-v3'), 'gymnasium.envs.box2d'), MissingDependencyError, r'pip install "rlnb\[box2d\]"'),
    ('agent-env-needs-atari', lambda t: _missing('minatar', lambda: DistributedAgent('MinAtar/Breakout-v1')), MissingDependencyError, r'MinAtar/Breakout-v1.*needs MinAtar.*pip install "rlnb\[atari\]"'),
    ('agent-eval-env-unknown', lambda t: DistributedAgent('CartPole-v1', eval_env='CartPol-v1', **SMALL), ConfigError, r"unknown gymnasium env id 'CartPol-v1'.*Did you mean CartPole-v1"),
    ('worker-env-needs-mujoco', lambda t: _missing('mujoco', lambda: SyncEnvWorker('Hopper-v5'), 'gymnasium.envs.mujoco'), MissingDependencyError, r'Hopper-v5.*pip install "rlnb\[mujoco\]"'),
    ('agent-unknown-env', lambda t: DistributedAgent('NoSuchEnv-v0'), ConfigError, r"unknown gymnasium env id 'NoSuchEnv-v0'.*pprint_registry"),
    ('worker-action-out-of-space', lambda t: _send(SyncEnvWorker('CartPole-v1'), 5), SpaceMismatchError, r"5"),
    ('pool-action-out-of-space', lambda t: _pool_step(7), SpaceMismatchError, r"7"),
    ('pool-empty', lambda t: get_worker_pool([]), ConfigError, r"a worker pool needs at least one worker"),
    ('worker-max-restarts', lambda t: SyncEnvWorker('CartPole-v1', restart=True, max_restarts=-2), ConfigError, r"max_restarts must be an int >= 0"),
    # tracers, buffers, batches
    ('batch-rows-disagree', lambda t: batch(n_a=2), SpaceMismatchError, r"A has shape \(2,\)"),
    ('tracer-n', lambda t: BatchedNStep(0, 0.9, 2), ConfigError, r"n must be an int >= 1"),
    ('unroll-T', lambda t: BatchedUnroll(0, 2), ConfigError, r"T must be an int >= 1"),
    ('buffer-capacity', lambda t: ReplayBuffer(0), ConfigError, r"capacity must be an int >= 1"),
    ('buffer-one-space', lambda t: ReplayBuffer(10, observation_space=gym.spaces.Box(-1, 1, (4,))), ConfigError, r"give both observation_space and action_space"),
    ('buffer-wrong-obs-shape', lambda t: ReplayBuffer(10, observation_space=gym.spaces.Box(-1, 1, (3,)), action_space=gym.spaces.Discrete(2)).add(batch()), SpaceMismatchError, r"S"),
    ('per-alpha', lambda t: PrioritizedReplayBuffer(10, alpha=-1), ConfigError, r"alpha must be >= 0"),
    ('buffer-sample-empty', lambda t: ReplayBuffer(10).sample(4), RLNBError, r"sample"),
    # checkpoints
    ('checkpoint-not-rlnb', lambda t: read_checkpoint(_file(t)), RLNBError, r"is not an rlnb checkpoint"),
    ('checkpoint-truncated', lambda t: read_checkpoint(_truncated(t)), RLNBError, r"is damaged.*Load an earlier checkpoint"),
    ('policy-missing', lambda t: load_policy(t / 'nothing'), ConfigError, r"no checkpoint or run directory"),
    ('policy-not-agent', lambda t: load_policy(write_checkpoint(t / 'x.msgpack', dict(a=1))), ConfigError, r"is not a DistributedAgent checkpoint"),
    # issue 60: an env factory that returns no env; an observation that turns into None mid-episode
    ('agent-env-factory-returns-none', lambda t: DistributedAgent(lambda: None, work_dir=t, **SMALL), ConfigError, r"env factory (<lambda>.*)?<lambda> returned None: it must return a new gymnasium Env"),
    ('worker-env-factory-returns-none', lambda t: SyncEnvWorker(lambda: None), ConfigError, r"\[env-worker-0/sync\] env failed during start: ConfigError: the env factory (<lambda>.*)?<lambda> returned None"),
    ('agent-obs-turns-none', lambda t: _train(t, _ObsTurnsNone, max_restarts=0), EnvWorkerError, r"env-worker-0/sync\] env failed during step: ValueError: the env's copy 0 \(of 2\) returned a wrong observation in step 5 of its episode 0: None, where its observation space is Box\(-1.0, 1.0, \(3,\), float32\)"),
]


def _running():
    kids = {p.pid for p in psutil.Process().children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE and 'resource_tracker' not in ' '.join(p.cmdline())}
    threads = {t.name for t in threading.enumerate() if t.name.startswith('rlnb')}
    return kids, threads


def test_the_table_has_at_least_30_cases():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, tmp_path):
    name, fn, expected, pattern = case
    before = _running()
    if expected == 2:
        code, err = fn(tmp_path)
        assert code == 2, (code, err)
        lines = [l for l in err.strip().splitlines() if l.startswith('rlnb') and 'error' in l]
        assert len(lines) == 1 and pytest.importorskip('re').search(pattern, lines[0]), err  # one line that says it
    else:
        with pytest.raises(expected, match=pattern):
            fn(tmp_path)
    deadline = __import__('time').monotonic() + 10
    while _running() != before and __import__('time').monotonic() < deadline:  # a closed worker's process may take a moment to exit
        __import__('time').sleep(0.05)
    assert _running() == before, f"{name} left something running: {_running()} (before: {before})"
