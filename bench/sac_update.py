"""SAC's gradient step alone at rl-zoo3's MuJoCo settings (256x256 networks, batch 256, HalfCheetah-v5's shapes): rlnb's
bare jitted learner step against SB3's `train()` per gradient step, same run, alternating.

    pip install -e ".[bench,mujoco]"
    python bench/sac_update.py [N]          # N updates per timing (default 300), 5 timings each

Both sides run the same math per update, so this ratio is where `sac_mujoco.py`'s wall-clock ratio would sit if neither
side spent anything around the update; what each spends per env step around it (acting, the env, replay) moves the
whole runs' ratio away from it. Prints one JSON object: median milliseconds per update of each, and the paired ratio."""
import time, statistics, json, sys
import jax

def rlnb_case(n):
    from rlnb.algos.sac import SAC
    rt = SAC('HalfCheetah-v5', devices=jax.local_devices()[:1], updates_per_dispatch=1, batch_size=256, learning_rate=3e-4, hidden=(256, 256),
             buffer_warmup=2_000, buffer_capacity=10_000, envs_per_actor=8)
    rt.compile(); rt.init_replay_buffer('random'); rt.pacing.inserted_after_warmup = 10 ** 12
    bare = jax.jit(rt.spec.learner_step)
    b = jax.device_put(rt.learner.dispatch_input(rt.pacing.take()), jax.local_devices()[0])
    state = jax.device_put(jax.device_get(rt.learner.state), jax.local_devices()[0])
    state, m = bare(state, b); jax.block_until_ready(state)
    def run():
        nonlocal state
        t = time.perf_counter()
        for _ in range(n): state, m = bare(state, b)
        jax.block_until_ready(state)
        return (time.perf_counter() - t) / n * 1e3
    return rt, run

def sb3_case(n):
    from stable_baselines3 import SAC as S
    from stable_baselines3.common.env_util import make_vec_env
    model = S('MlpPolicy', make_vec_env('HalfCheetah-v5', n_envs=1, seed=0), seed=0, verbose=0, learning_starts=2_000)
    model.learn(2_000)
    model.train(gradient_steps=20, batch_size=256)
    def run():
        t = time.perf_counter(); model.train(gradient_steps=n, batch_size=256)
        return (time.perf_counter() - t) / n * 1e3
    return model, run

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
rt, r = rlnb_case(n); _, s = sb3_case(n)
ms = dict(rlnb_bare=[], sb3_train=[])
for _ in range(5):
    ms['rlnb_bare'].append(r()); ms['sb3_train'].append(s())
out = {k: round(statistics.median(v), 2) for k, v in ms.items()}
out['ratio'] = round(statistics.median(a / b for a, b in zip(ms['rlnb_bare'], ms['sb3_train'])), 3)
import torch; out['torch_threads'] = torch.get_num_threads()
from _harness import provenance
print(json.dumps(dict(provenance=provenance(sys.argv), ms_per_update=out, runs=ms)))
rt.close()
