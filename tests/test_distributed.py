"""The learner over several processes (`jax.distributed`): 2 processes x 4 CPU devices against 1 process x 8.

Each process of a multi-process run builds the same agent, and the learner's mesh spans every process's devices;
each process feeds its own rows of the batch. So one learner step over 2 x 4 devices, each process passing its half
of a batch, must give what 1 process with 8 devices gives on the whole batch. The processes talk through JAX's CPU
collectives (gloo) and a coordinator on localhost.
"""
import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import ROOT, other_xla_flags

pytestmark = pytest.mark.slow  # the slow tier: learners over several processes

WORKER = textwrap.dedent(r'''
    import os, sys, json
    pid, nproc, port, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    os.environ['XLA_FLAGS'] = os.environ.get('RLNB_TEST_XLA_FLAGS', '') + f' --xla_force_host_platform_device_count={8 // nproc}'
    import jax
    if nproc > 1:
        jax.config.update('jax_cpu_collectives_implementation', 'gloo')
        jax.distributed.initialize(f'localhost:{port}', num_processes=nproc, process_id=pid, initialization_timeout=60)
    import numpy as np
    from rlnb.core import TransitionBatch
    from rlnb.parallel import host_local
    from rlnb.algos.apex_dqn import ApeXDQN
    B = 64
    agent = ApeXDQN('CartPole-v1', num_actors=1, envs_per_actor=1, batch_size=B // nproc, hidden=(32,), seed=0, updates_per_dispatch=1, deterministic=True)
    assert agent.learner.mesh.size == 8 and len(jax.devices()) == 8, (agent.learner.mesh.size, jax.devices())
    rows = slice(pid * B // nproc, (pid + 1) * B // nproc)
    td = []
    for k in range(3):
        rng = np.random.default_rng(k)
        full = TransitionBatch(S=rng.normal(size=(B, 4)).astype(np.float32), A=rng.integers(0, 2, B), logP=np.zeros(B, np.float32),
                               Rn=rng.normal(size=B).astype(np.float32), In=np.full(B, 0.97, np.float32),
                               S_next=rng.normal(size=(B, 4)).astype(np.float32), W=rng.uniform(0.5, 1, B).astype(np.float32))
        m = agent.learn(full[rows])
        td.append(host_local(m['td_error']).tolist())
    state = [np.asarray(x).tolist() for x in jax.tree.leaves(host_local(agent.learner_state))]
    json.dump(dict(pid=pid, td=td, state=state, loss=float(host_local(m['loss']))), open(f'{out}.{pid}.json', 'w'))
    agent.close()
    if nproc > 1: jax.distributed.shutdown()
''')


LEARN = textwrap.dedent(r'''
    import os, sys, json
    pid, nproc, port, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    os.environ['XLA_FLAGS'] = os.environ.get('RLNB_TEST_XLA_FLAGS', '') + ' --xla_force_host_platform_device_count=1'
    import jax
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    jax.distributed.initialize(f'localhost:{port}', num_processes=nproc, process_id=pid, initialization_timeout=60)
    from rlnb.algos.apex_dqn import ApeXDQN
    agent = ApeXDQN('CartPole-v1', seed=0, deterministic=True, batch_size=32)
    assert agent.learner.mesh.size == 2 and agent.learner.mesh.devices.flat[1].process_index == 1
    r = agent.train(6_000, eval_interval=None, num_eval_episodes=10)
    first = [float(x) for x in agent.buffer.storage['S'][:5, 0]]  # this process's own replay
    json.dump(dict(eval=r['eval']['mean'], updates=agent.updates, first=first), open(f'{out}.{pid}.json', 'w'))
    agent.close()
    jax.distributed.shutdown()
''')


RESUME = textwrap.dedent(r'''
    import os, sys, json
    pid, nproc, port, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    os.environ['XLA_FLAGS'] = os.environ.get('RLNB_TEST_XLA_FLAGS', '') + ' --xla_force_host_platform_device_count=1'
    import jax
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    jax.distributed.initialize(f'localhost:{port}', num_processes=nproc, process_id=pid, initialization_timeout=60)
    from rlnb.agent.agent import DistributedAgent
    run = os.path.join(os.path.dirname(out), 'run')
    kw = dict(eval_interval=None, log_interval=0, progress=False, verbose=False, tensorboard=False, num_eval_episodes=2)
    a = DistributedAgent('CartPole-v1', algo='apex-dqn', deterministic=True, batch_size=32, buffer_warmup=200, work_dir=run)
    a.train(1_000, **kw)
    first = dict(updates=a.algo.updates, replay=len(a.algo.buffer), ckpt=str(a.last_checkpoint), work_dir=str(a.work_dir))
    a.close()
    b = DistributedAgent('CartPole-v1', algo='apex-dqn', deterministic=True, batch_size=32, buffer_warmup=200, work_dir=run)
    b.train(1_600, init_model_path=run, **kw)  # each process resumes from its own part of the run
    json.dump(dict(first=first, updates=b.algo.updates, env_steps=b.algo.env_steps, ckpt=str(b.last_checkpoint)), open(f'{out}.{pid}.json', 'w'))
    b.close()
    jax.distributed.shutdown()
''')


def free_port():
    with socket.socket() as s:
        s.bind(('localhost', 0)); return s.getsockname()[1]


def run(nproc, tmp_path, code=WORKER, timeout=300):
    script = tmp_path / 'worker.py'; script.write_text(code)
    out, port = str(tmp_path / f'out{nproc}'), free_port()
    env = {k: v for k, v in os.environ.items() if k != 'XLA_FLAGS'}
    env['RLNB_TEST_XLA_FLAGS'] = other_xla_flags()  # each worker adds its own device count
    procs = [subprocess.Popen([sys.executable, str(script), str(p), str(nproc), str(port), out], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for p in range(nproc)]
    try:
        logs = [p.communicate(timeout=timeout)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None: p.kill(); p.wait()
    for p, log in zip(procs, logs): assert p.returncode == 0, log[-3000:]
    return [json.load(open(f'{out}.{p}.json')) for p in range(nproc)]


def test_learner_over_two_processes_equals_one(tmp_path):
    one, = run(1, tmp_path)
    two = run(2, tmp_path)
    for r in two:  # the replicated learner state is the same in both processes, and the same as on one process
        assert len(r['state']) == len(one['state'])
        for a, b in zip(r['state'], one['state'], strict=True): np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        assert abs(r['loss'] - one['loss']) <= 1e-5 * max(1, abs(one['loss']))
    for k in range(3):  # each process gets the TD errors of its own rows, for its own replay's priorities
        np.testing.assert_allclose(np.concatenate([two[0]['td'][k], two[1]['td'][k]]), one['td'][k], rtol=1e-5, atol=1e-6)
        assert len(two[0]['td'][k]) == 32
    moved = [not np.allclose(a, b) for a, b in zip(one['state'], run(1, tmp_path)[0]['state'])]
    assert not any(moved)  # the reference is itself deterministic


@pytest.mark.slow
def test_apex_learns_over_two_processes(tmp_path):
    "Each process runs its own actors and replay, the learner spans both; the deterministic schedule keeps their learner steps in lockstep."
    r0, r1 = run(2, tmp_path, LEARN, timeout=600)
    assert r0['eval'] >= 100 and r1['eval'] >= 100, (r0, r1)  # a random policy scores about 22; the margin on two instruction sets: bench/notes/learning_checks.md
    assert r0['updates'] == r1['updates'] > 0
    assert r0['first'] != r1['first']  # the two processes explored different episodes


def test_checkpoints_over_two_processes(tmp_path):
    "Each process writes its own part of the run directory (its replay and actors differ), and resumes from it."
    r0, r1 = run(2, tmp_path, RESUME, timeout=600)
    for pid, r in enumerate((r0, r1)):
        assert r['first']['work_dir'].endswith(f'process-{pid}') and f'process-{pid}' in r['first']['ckpt']
        assert r['updates'] > r['first']['updates'] > 0 and r['env_steps'] >= 1_600
    assert r0['first']['updates'] == r1['first']['updates'] and r0['updates'] == r1['updates']  # still in lockstep after the resume
    assert sorted(p.name for p in (tmp_path / 'run').iterdir()) == ['process-0', 'process-1']
