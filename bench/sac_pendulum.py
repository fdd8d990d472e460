"""Time to solve Pendulum-v1 (first evaluation with mean >= -200): rlnb's SAC and TD3 against stable-baselines3 and sbx SAC/TD3.

    pip install -e ".[bench]"
    python bench/sac_pendulum.py [--seeds 0,1,2,3,4] [--max-steps 20000] [--algos rlnb_sac,rlnb_td3,sb3_sac,sb3_td3,sbx_sac,sbx_td3]

Every (algorithm, seed) runs in a fresh subprocess, interleaved by seed. Each evaluates every 2,000 env steps on 10
episodes (deterministic actions) and stops at the first evaluation with mean >= -200. `train_s` is the wall-clock from
building the agent (rlnb's compiles and the peers' model construction included) to that evaluation, minus the time
spent evaluating; library imports come before the clock. Peers use rl-zoo3's tuned Pendulum-v1 hyperparameters (SAC:
learning rate 1e-3, the rest SB3's defaults; TD3: gamma 0.98, 10,000 learning starts, Gaussian noise 0.1, learning
rate 1e-3, net_arch [400, 300]), one env. `rlnb_sac` / `rlnb_td3` are rlnb's defaults; `rlnb_sac64` / `rlnb_td3_64`
the same with 64x64 networks. rlnb's learner runs on one device (no XLA_FLAGS split). Prints one JSON object: per-seed
runs, medians, and `rlnb_best_vs_best_peer` = the best rlnb median train_s / the best peer median.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _harness import provenance, report, run_matrix, summarize  # noqa: E402

ENV, EVAL_EVERY, EVAL_EPISODES, TARGET = "Pendulum-v1", 2_000, 10, -200.0
ZOO = {  # rl-zoo3 2.9 hyperparams/{sac,td3}.yml, Pendulum-v1
    "sac": dict(learning_rate=1e-3),
    "td3": dict(gamma=0.98, buffer_size=200_000, learning_starts=10_000, learning_rate=1e-3, train_freq=1, gradient_steps=1,
                policy_kwargs=dict(net_arch=[400, 300])),
}
RLNB = {"rlnb_sac": ("sac", {}), "rlnb_td3": ("td3", {}), "rlnb_sac64": ("sac", dict(hidden=(64, 64))),
        "rlnb_td3_64": ("td3", dict(hidden=(64, 64)))}


def run_rlnb(name, seed, max_steps):
    from rlnb.runtime.runtime import Runtime, get_algo
    algo, kw = RLNB[name]
    spec = get_algo(algo)  # imported before the clock starts, as the peers' libraries are
    t0 = time.perf_counter()
    agent = Runtime(ENV, algorithm=spec, seed=seed, **kw)
    res = agent.train(max_steps, eval_interval=EVAL_EVERY, num_eval_episodes=EVAL_EPISODES, target_return=TARGET)
    wall = time.perf_counter() - t0
    agent.close()
    return dict(solved=res["eval"]["mean"] >= TARGET, train_s=wall - agent.eval_seconds, env_steps=res["env_steps"], wall_s=wall,
                final_eval=res["eval"]["mean"], updates=res["updates"])


def run_peer(name, seed, max_steps):
    import numpy as np
    lib, algo = name.split("_")
    if lib == "sb3":
        from stable_baselines3 import SAC, TD3
    else:
        from sbx import SAC, TD3
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.noise import NormalActionNoise

    kw = dict(ZOO[algo])
    if algo == "td3": kw["action_noise"] = NormalActionNoise(np.zeros(1), 0.1 * np.ones(1))
    eval_env = make_vec_env(ENV, n_envs=1, seed=seed + 10_000)
    state = dict(eval_s=0.0, solved=False, steps=None, last=None, next=EVAL_EVERY)

    class Stop(BaseCallback):
        def _on_step(self):
            if self.num_timesteps < state["next"]: return True
            state["next"] += EVAL_EVERY
            t = time.perf_counter()
            mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=EVAL_EPISODES, deterministic=True)
            state["eval_s"] += time.perf_counter() - t
            state["last"], state["steps"], state["solved"] = float(mean), int(self.num_timesteps), bool(mean >= TARGET)
            return not state["solved"]

    env = make_vec_env(ENV, n_envs=1, seed=seed)
    t0 = time.perf_counter()
    model = (SAC if algo == "sac" else TD3)("MlpPolicy", env, seed=seed, verbose=0, **kw)
    model.learn(total_timesteps=max_steps, callback=Stop())
    wall = time.perf_counter() - t0
    return dict(solved=state["solved"], train_s=wall - state["eval_s"], env_steps=state["steps"], wall_s=wall, final_eval=state["last"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--max-steps", type=int, default=20_000)
    ap.add_argument("--algos", default="rlnb_sac,rlnb_td3,rlnb_sac64,rlnb_td3_64,sb3_sac,sb3_td3,sbx_sac,sbx_td3")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, seed = args.child.split(":")
        run = run_rlnb if name.startswith("rlnb") else run_peer
        return report(run(name, int(seed), args.max_steps))
    env = {"XLA_FLAGS": os.environ.get("XLA_FLAGS", ""), "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    results = run_matrix(__file__, args.algos.split(","), [int(s) for s in args.seeds.split(",")], ["--max-steps", args.max_steps], env)
    summary = summarize(results)
    best = lambda pred: min([v["median_train_s"] for k, v in summary.items() if pred(k)], default=float("nan"))
    out = dict(provenance=provenance(), env=ENV, target=TARGET, eval_every=EVAL_EVERY, eval_episodes=EVAL_EPISODES, max_steps=args.max_steps, summary=summary,
               rlnb_best_vs_best_peer=best(lambda k: k.startswith("rlnb")) / best(lambda k: not k.startswith("rlnb")), runs=results)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
