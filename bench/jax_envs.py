"""rlnb's PPO on gymnax's CartPole (rollouts stepped on the learner's devices) against PureJaxRL's PPO, same run.

    pip install -e ".[jaxenvs]"            # gymnax (PureJaxRL's ppo.py is vendored in bench/peers/, with its licence; it needs distrax)
    python bench/jax_envs.py --seeds 0,1,2,3,4,5,6,7,8,9 > bench/results/jax_envs.json
    python bench/jax_envs.py --quick       # a check of the script: 1 seed, a short budget, a small steady-state run

Two measurements, every run in a fresh subprocess, interleaved by seed (`_harness.run_matrix`):

1. **Time to solve** (the bench/apex_cartpole.py protocol): evaluate every ~5,000 env steps on 10 greedy episodes and
   stop at the first evaluation with mean return >= 475. `train_s` is the wall-clock to that point minus the time spent
   evaluating; JAX compiles count (nothing is cached between runs), imports do not: on both sides the libraries,
   gymnax included (about 2 s here: it imports seaborn and scipy), are imported before the clock starts.
   - `rlnb_ppo`: rlnb's PPO (the runtime `DistributedAgent` drives) on `gymnax:CartPole-v1` with its defaults (rl-zoo3's CartPole-v1 settings:
     8 envs, 32 steps, 20 epochs, minibatch 256) and, like the zoo's `lin_` entries, learning rate and clip decaying
     linearly over --max-steps. It evaluates every 5,120 env steps (the first rollout boundary past each 5,000).
   - `pjrl_own`: PureJaxRL's ppo.py with its own CartPole config (4 envs, 128 steps, 4 epochs, 4 minibatches, lr 2.5e-4
     annealed over its 5e5 steps), 10 updates (5,120 env steps) per program call between evaluations.
   - `pjrl_zoo`: the same code with rl-zoo3's settings (as rlnb_ppo; the clip range stays constant: PureJaxRL has no clip
     schedule), 20 updates (5,120 env steps) per call.
   PureJaxRL's greedy evaluation is written here (the argmax of its policy's logits on 10 fresh envs, seed + 10,000).
2. **Steady state** at 2,048 envs (`rlnb_steady`, `pjrl_steady`): both with PureJaxRL's own update shape (128 steps,
   4 epochs, 4 minibatches of 65,536 steps), env steps per second of training after one warm-up update (compiles
   excluded), over --steady-updates updates.

Children see whatever accelerator the environment gives them (unlike bench/apex_cartpole.py, which hides GPUs): on a GPU
host both libraries run there; each result records `platform`. Prints one JSON object: provenance, per-run figures,
medians, and the ratios the issue asks for (`rlnb_vs_pjrl_own`, `rlnb_vs_pjrl_zoo`: median time to solve, lower is
better; `steady_rlnb_vs_pjrl`: env steps/s, higher is better).
"""
import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import provenance, report, run_matrix, summarize  # noqa: E402

EVAL_EVERY, EVAL_EPISODES, TARGET = 5_000, 10, 475.0

PJRL_OWN = {"LR": 2.5e-4, "NUM_ENVS": 4, "NUM_STEPS": 128, "TOTAL_TIMESTEPS": 5e5, "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 4,
            "GAMMA": 0.99, "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2, "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5,
            "ACTIVATION": "tanh", "ENV_NAME": "CartPole-v1", "ANNEAL_LR": True, "DEBUG": False}  # ppo.py's __main__ config
PJRL_ZOO = dict(PJRL_OWN, LR=1e-3, NUM_ENVS=8, NUM_STEPS=32, UPDATE_EPOCHS=20, NUM_MINIBATCHES=1, GAMMA=0.98, GAE_LAMBDA=0.8,
                ENT_COEF=0.0)  # rl-zoo3 hyperparams/ppo.yml CartPole-v1 (n_steps 32, batch 256, lin_1e-3); TOTAL_TIMESTEPS set to --max-steps
STEADY = dict(NUM_ENVS=2048, NUM_STEPS=128, UPDATE_EPOCHS=4, NUM_MINIBATCHES=4)


def _platform():
    import jax
    return jax.devices()[0].platform


def run_rlnb(seed, max_steps, devices):
    import jax
    import gymnax  # noqa: F401  rlnb imports it on the first gymnax id; PureJaxRL's side imports it before its clock too
    from rlnb.algos.ppo import PPO  # imported before the clock starts, as PureJaxRL's libraries are
    import rlnb.jax_envs.core  # noqa: F401
    t0 = time.perf_counter()
    rt = PPO("gymnax:CartPole-v1", seed=seed, devices=jax.local_devices()[:devices], schedule_steps=max_steps)
    rt.compile()  # what train compiles first anyway: timed apart, for the compile vs steady-state split
    compile_s = time.perf_counter() - t0
    res = rt.train(max_steps, eval_interval=EVAL_EVERY, num_eval_episodes=EVAL_EPISODES, target_return=TARGET)
    wall = time.perf_counter() - t0
    rt.close()
    return dict(solved=res["eval"]["mean"] >= TARGET, train_s=wall - rt.eval_seconds, env_steps=res["env_steps"], wall_s=wall,
                compile_s=compile_s, final_eval=res["eval"]["mean"], updates=res["updates"], platform=_platform())


def _pjrl(config):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
    import purejaxrl_ppo
    return purejaxrl_ppo.make_train(config)


def _pjrl_eval(network_apply, env_name, n):
    "PureJaxRL has no evaluation: the argmax of its policy on `n` fresh envs until each ended once (one jitted loop)."
    import jax
    import jax.numpy as jnp
    import gymnax
    env, ep = gymnax.make(env_name)

    @jax.jit
    def run(params, key):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, n), ep)
        def cond(c): return (c[0] <= ep.max_steps_in_episode) & ~c[4].all()
        def body(c):
            t, key, obs, state, done, G = c
            key, k = jax.random.split(key)
            pi, _ = network_apply(params, obs)
            a = jnp.argmax(pi.logits, axis=-1)
            obs, state, r, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(jax.random.split(k, n), state, a, ep)
            return t + 1, key, obs, state, done | term | trunc, G + jnp.where(done, 0.0, r)
        return jax.lax.while_loop(cond, body, (0, key, obs, state, jnp.zeros(n, bool), jnp.zeros(n)))[5]
    return run


def run_pjrl(name, seed, max_steps):
    import jax
    import numpy as np
    config = dict(PJRL_OWN) if name == "pjrl_own" else dict(PJRL_ZOO, TOTAL_TIMESTEPS=max_steps)
    per_update = config["NUM_ENVS"] * config["NUM_STEPS"]
    config["SCAN_UPDATES"] = math.ceil(EVAL_EVERY / per_update)
    init, chunk = _pjrl(config)
    t0, eval_s, steps, mean, chunk_s = time.perf_counter(), 0.0, 0, float("nan"), []
    state = jax.jit(init)(jax.random.PRNGKey(seed))
    chunk = jax.jit(chunk)
    evaluate = None
    while steps < max_steps:
        t = time.perf_counter()
        state = jax.block_until_ready(chunk(state)["runner_state"])
        chunk_s.append(time.perf_counter() - t)
        steps += config["SCAN_UPDATES"] * per_update
        t = time.perf_counter()
        train_state = state[0]
        evaluate = evaluate or _pjrl_eval(train_state.apply_fn, config["ENV_NAME"], EVAL_EPISODES)
        mean = float(np.mean(np.asarray(evaluate(train_state.params, jax.random.PRNGKey(seed + 10_000)))))
        eval_s += time.perf_counter() - t
        if mean >= TARGET: break
    wall = time.perf_counter() - t0
    return dict(solved=mean >= TARGET, train_s=wall - eval_s, env_steps=steps, wall_s=wall, final_eval=mean,
                first_chunk_s=chunk_s[0], later_chunk_s=float(np.median(chunk_s[1:])) if len(chunk_s) > 1 else None, platform=_platform())


def steady_rlnb(seed, updates, devices):
    import jax
    from rlnb.algos.ppo import PPO
    c = dict(PJRL_OWN, **STEADY)
    n, T = c["NUM_ENVS"], c["NUM_STEPS"]
    rt = PPO(
        "gymnax:CartPole-v1", devices=jax.local_devices()[:devices], seed=seed, num_actors=1, envs_per_actor=n, unroll_length=T,
        num_epochs=c["UPDATE_EPOCHS"], batch_size=n * T // c["NUM_MINIBATCHES"], gamma=c["GAMMA"], lambda_=c["GAE_LAMBDA"],
        entropy_coef=c["ENT_COEF"], learning_rate=c["LR"], clip_eps=c["CLIP_EPS"], max_grad_norm=c["MAX_GRAD_NORM"])
    try:
        t0 = time.perf_counter()
        rt.train(n * T, eval_interval=None, final_eval=False)  # compiles and one update
        jax.block_until_ready(rt.learner_state)
        warm_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        rt.train(n * T * (1 + updates), eval_interval=None, final_eval=False)
        jax.block_until_ready(rt.learner_state)  # train returns once the last update is dispatched: the clock stops when it is done
        dt = time.perf_counter() - t0
    finally:
        rt.close()
    return dict(env_steps_per_s=n * T * updates / dt, updates=updates, seconds=dt, warmup_s=warm_s, platform=_platform())


def steady_pjrl(seed, updates):
    import jax
    config = dict(PJRL_OWN, **STEADY, SCAN_UPDATES=1)  # one update per call, as rlnb dispatches them
    init, chunk = _pjrl(config)
    state = jax.jit(init)(jax.random.PRNGKey(seed))
    chunk = jax.jit(chunk)
    t0 = time.perf_counter()
    state = jax.block_until_ready(chunk(state)["runner_state"])
    warm_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(updates): state = chunk(state)["runner_state"]
    jax.block_until_ready(state)
    dt = time.perf_counter() - t0
    n = config["NUM_ENVS"] * config["NUM_STEPS"]
    return dict(env_steps_per_s=n * updates / dt, updates=updates, seconds=dt, warmup_s=warm_s, platform=_platform())


def child(args):
    name, seed = args.child.split(":")
    seed = int(seed)
    if name == "rlnb_ppo": out = run_rlnb(seed, args.max_steps, args.devices)
    elif name in ("pjrl_own", "pjrl_zoo"): out = run_pjrl(name, seed, args.max_steps)
    elif name == "rlnb_steady": out = steady_rlnb(seed, args.steady_updates, args.devices)
    elif name == "pjrl_steady": out = steady_pjrl(seed, args.steady_updates)
    else: raise SystemExit(f"unknown run {name}")
    report(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    ap.add_argument("--max-steps", type=int, default=100_000)
    ap.add_argument("--algos", default="rlnb_ppo,pjrl_own,pjrl_zoo")
    ap.add_argument("--steady-seeds", default="0,1,2", help="seeds of the steady-state runs ('' skips them)")
    ap.add_argument("--steady-updates", type=int, default=20, help="timed updates of the steady-state runs (each 2,048 x 128 env steps)")
    ap.add_argument("--devices", type=int, default=1, help="learner devices for rlnb")
    ap.add_argument("--quick", action="store_true", help="check the script: seed 0, 10k steps, 2 steady updates at 2,048 envs")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick: args.seeds, args.max_steps, args.steady_seeds, args.steady_updates = "0", 10_000, "0", 2
    if args.child: return child(args)
    flags = os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}" if args.devices > 1 else "")
    common = ["--max-steps", args.max_steps, "--devices", args.devices, "--steady-updates", args.steady_updates]
    script = os.path.abspath(__file__)
    runs = run_matrix(script, args.algos.split(","), [int(s) for s in args.seeds.split(",")], common, env={"XLA_FLAGS": flags}) if args.algos else {}
    summary = summarize(runs)
    out = dict(provenance=provenance(), target=TARGET, eval_every=EVAL_EVERY, eval_episodes=EVAL_EPISODES, max_steps=args.max_steps,
               rlnb_devices=args.devices, xla_flags=flags, summary=summary, runs=runs)
    for peer in ("pjrl_own", "pjrl_zoo"):
        if "rlnb_ppo" in summary and peer in summary:
            out[f"rlnb_vs_{peer}"] = summary["rlnb_ppo"]["median_train_s"] / summary[peer]["median_train_s"]
    if args.steady_seeds:
        steady = run_matrix(script, ["rlnb_steady", "pjrl_steady"], [int(s) for s in args.steady_seeds.split(",")], common, env={"XLA_FLAGS": flags})
        import statistics
        med = {k: statistics.median(r.get("env_steps_per_s", float("nan")) for r in v) for k, v in steady.items()}
        out.update(steady=dict(num_envs=STEADY["NUM_ENVS"], median_env_steps_per_s=med, runs=steady),
                   steady_rlnb_vs_pjrl=med["rlnb_steady"] / med["pjrl_steady"])
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
