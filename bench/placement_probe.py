"""Placement and publishing on a GPU, CartPole: what the actors' device and `publish_ready` change, GPU visible against
hidden in one call (3 seeds each, bench/accelerator.py's CartPole protocol and children).

    python3 bench/placement_probe.py          # on a lent GPU, after accelerator.py's install line; writes $OUT/probe.json

Conditions: Ape-X with actors on the host and publish_ready, the same with actors on the learner's device, PPO with
actors on the host, publish_ready and no lag bound (the next rollout overlaps the update: lag 1), and both algorithms'
preset config with the GPU hidden. Prints one JSON line per condition (median train seconds and env steps per second).
"""
import json, os, subprocess, sys, time, statistics
conds = [('apex-dqn', 'visible', {'actor_device': 'host', 'publish_ready': True}),
         ('apex-dqn', 'hidden', {}),
         ('ppo', 'visible', {'actor_device': 'host', 'publish_ready': True, 'max_policy_lag': None}),
         ('ppo', 'hidden', {}),
         ('apex-dqn', 'visible', {'actor_device': 'learner', 'publish_ready': True})]
out = []
for algo, where, over in conds:
    spec = dict(kind='cartpole', algo=algo, seeds=[0, 1, 2], overrides=over, max_steps=100_000, eval_every=5_000)
    env = {**os.environ, **({'CUDA_VISIBLE_DEVICES': '', 'JAX_PLATFORMS': 'cpu'} if where == 'hidden' else {})}
    t = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'accelerator.py'), '--child', json.dumps(spec)], capture_output=True, text=True, env=env, timeout=75)
        line = [l for l in p.stdout.splitlines() if l.startswith('RESULT ')]
        r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-1500:])
    except subprocess.TimeoutExpired: r = dict(error='timeout 75 s')
    runs = r.get('runs', [])
    r.update(algo=algo, where=where, overrides=over, child_s=round(time.perf_counter() - t, 1),
             median_train_s=statistics.median([x['train_s'] for x in runs]) if runs else None,
             median_steps_per_s=statistics.median([x['env_steps'] / x['train_s'] for x in runs]) if runs else None)
    out.append(r)
    print(json.dumps({k: r.get(k) for k in ('algo', 'where', 'overrides', 'median_train_s', 'median_steps_per_s', 'child_s', 'error')}), flush=True)
    json.dump(out, open(os.path.join(os.environ.get('OUT', '.'), 'probe.json'), 'w'), indent=1)
