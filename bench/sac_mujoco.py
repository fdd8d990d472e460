"""HalfCheetah-v5 for 50k env steps: rlnb SAC against sbx SAC, same run. A figure (return curve PNG) and env steps/s, not a test.

    pip install -e ".[bench,mujoco]"
    python bench/sac_mujoco.py [--steps 50000] [--seed 0] [--png bench/results/sac_mujoco.png]

Both use rl-zoo3's HalfCheetah SAC entry (SB3's SAC defaults: 256x256 networks, batch 256, learning rate 3e-4,
one update per env step, 10,000 uniform random steps first) on one env. Each evaluates every 5,000 env steps on 5
episodes (deterministic actions). `env_steps_per_s` is env steps over train wall-clock (compile included, evaluation
excluded). rlnb's learner runs on one device. Prints one JSON object with both curves; writes the PNG.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _harness import RESULTS, provenance, report, run_matrix  # noqa: E402

ENV, EVAL_EVERY, EVAL_EPISODES, WARMUP = "HalfCheetah-v5", 5_000, 5, 10_000


def run_rlnb(seed, steps):
    from rlnb.sac import SAC
    t0 = time.perf_counter()
    agent = SAC(ENV, seed=seed, learning_rate=3e-4, buffer_warmup=WARMUP)
    agent.train(steps, eval_interval=EVAL_EVERY, num_eval_episodes=EVAL_EPISODES)
    wall = time.perf_counter() - t0
    agent.close()
    train_s = wall - agent.eval_seconds
    return dict(curve=agent.eval_history, train_s=train_s, env_steps_per_s=agent.env_steps / train_s, updates=agent.updates)


def run_sbx(seed, steps):
    from sbx import SAC
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    eval_env = make_vec_env(ENV, n_envs=1, seed=seed + 10_000)
    state = dict(eval_s=0.0, next=EVAL_EVERY, curve=[])

    class Eval(BaseCallback):
        def _on_step(self):
            if self.num_timesteps < state["next"]: return True
            state["next"] += EVAL_EVERY
            t = time.perf_counter()
            mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=EVAL_EPISODES, deterministic=True)
            state["eval_s"] += time.perf_counter() - t
            state["curve"].append((int(self.num_timesteps), float(mean)))
            return True

    env = make_vec_env(ENV, n_envs=1, seed=seed)
    t0 = time.perf_counter()
    model = SAC("MlpPolicy", env, seed=seed, verbose=0, learning_starts=WARMUP)
    model.learn(total_timesteps=steps, callback=Eval())
    train_s = time.perf_counter() - t0 - state["eval_s"]
    return dict(curve=state["curve"], train_s=train_s, env_steps_per_s=steps / train_s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default=os.path.join(RESULTS, "sac_mujoco.png"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, seed = args.child.split(":")
        return report((run_rlnb if name == "rlnb_sac" else run_sbx)(int(seed), args.steps))
    runs = run_matrix(__file__, ["rlnb_sac", "sbx_sac"], [args.seed], ["--steps", args.steps], {"XLA_FLAGS": "", "CUDA_VISIBLE_DEVICES": ""},
                      timeout=3600)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (r,) in runs.items():
        if "curve" in r:
            x, y = zip(*r["curve"])
            ax.plot(x, y, marker="o", label=f"{name} ({r['env_steps_per_s']:.0f} env steps/s)")
    ax.set(xlabel="env steps", ylabel=f"evaluation return ({EVAL_EPISODES} episodes)", title=f"{ENV}, seed {args.seed}")
    ax.legend(); fig.tight_layout(); fig.savefig(args.png, dpi=100)
    print(json.dumps(dict(provenance=provenance(), env=ENV, steps=args.steps, seed=args.seed, png=args.png, runs=runs)))


if __name__ == "__main__":
    main()
