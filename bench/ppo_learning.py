"""PPO learning figures: does rlnb's PPO reach the issue's targets, and how does its Gaussian policy compare with SB3's PPO?

    python bench/ppo_learning.py --task cartpole --seeds 0,1,2,3,4,5,6,7,8,9   # >= 475 within 100k env steps
    python bench/ppo_learning.py --task acrobot --seeds 0,1,2,3,4               # >= -100 within 1M env steps
    python bench/ppo_learning.py --task pendulum --seeds 0,1,2 [--peers sb3]   # rl-zoo3's budget (100k), rlnb against SB3 PPO

Every run is a fresh subprocess; rlnb runs on one CPU device. A run evaluates every --eval-every env steps on 10 episodes
(greedy / mean action) and stops at the first evaluation that reaches the task's target (Pendulum has none: it runs the
whole budget and reports the last evaluation). Prints one JSON object with per-seed figures and a summary.

rlnb's hyperparameters per task are rl-zoo3's PPO entries (hyperparams/ppo.yml) translated to PPOConfig: n_envs ->
envs_per_actor, n_steps -> unroll_length, batch_size, n_epochs -> num_epochs, gae_lambda -> lambda_, gamma, ent_coef, lin_ schedules ->
schedule_steps, normalize -> normalize_obs (rlnb does not normalize rewards). SB3 runs the zoo entry itself (for Pendulum:
gSDE with sde_sample_freq 4, which rlnb does not have).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _harness import provenance

TASKS = {
    "cartpole": dict(env="CartPole-v1", budget=100_000, target=475.0, eval_every=5_000,
                     rlnb=dict(schedule_steps=100_000)),
    "acrobot": dict(env="Acrobot-v1", budget=1_000_000, target=-100.0, eval_every=20_000,
                    rlnb=dict(envs_per_actor=16, unroll_length=256, batch_size=64, num_epochs=4, gamma=0.99, lambda_=0.94,
                              normalize_obs=True)),
    "pendulum": dict(env="Pendulum-v1", budget=100_000, target=None, eval_every=20_000,
                     rlnb=dict(envs_per_actor=4, unroll_length=1024, batch_size=64, num_epochs=10, gamma=0.9, lambda_=0.95),
                     sb3=dict(n_steps=1024, gae_lambda=0.95, gamma=0.9, n_epochs=10, ent_coef=0.0, learning_rate=1e-3,
                              clip_range=0.2, use_sde=True, sde_sample_freq=4), sb3_envs=4),
}


def run_rlnb(task, seed, overrides):
    import jax
    from rlnb.algos.ppo import PPO
    t = TASKS[task]
    t0 = time.perf_counter()
    agent = PPO(t["env"], seed=seed, devices=jax.local_devices()[:1], **{**t["rlnb"], **overrides})
    res = agent.train(t["budget"], eval_interval=t["eval_every"], num_eval_episodes=10, target_return=t["target"])
    wall = time.perf_counter() - t0
    agent.close()
    ok = t["target"] is None or res["eval"]["mean"] >= t["target"]
    return dict(solved=ok, env_steps=res["env_steps"], eval=res["eval"]["mean"], train_s=wall - agent.eval_seconds,
                history=agent.eval_history)


def run_sb3(task, seed):
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    t = TASKS[task]
    env = make_vec_env(t["env"], n_envs=t["sb3_envs"], seed=seed)
    t0 = time.perf_counter()
    model = PPO("MlpPolicy", env, seed=seed, verbose=0, **t["sb3"])
    model.learn(total_timesteps=t["budget"])
    wall = time.perf_counter() - t0
    mean, _ = evaluate_policy(model, make_vec_env(t["env"], n_envs=1, seed=seed + 10_000), n_eval_episodes=10, deterministic=True)
    return dict(solved=True, env_steps=int(model.num_timesteps), eval=float(mean), train_s=wall)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", choices=sorted(TASKS), default="cartpole")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--peers", default="", help="comma-separated peers to run beside rlnb (pendulum: sb3)")
    ap.add_argument("--set", default="{}", help="JSON of PPOConfig overrides for rlnb")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        who, seed = args.child.split(":")
        out = run_rlnb(args.task, int(seed), json.loads(args.set)) if who == "rlnb" else run_sb3(args.task, int(seed))
        print("RESULT " + json.dumps(out))
        return
    env = {**os.environ, "XLA_FLAGS": "", "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    runs = {}
    for seed in [int(s) for s in args.seeds.split(",")]:
        for who in ["rlnb"] + [p for p in args.peers.split(",") if p]:
            cmd = [sys.executable, __file__, "--task", args.task, "--set", args.set, "--child", f"{who}:{seed}"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, env=env)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-2000:])
            runs.setdefault(who, []).append(dict(seed=seed, **r))
            print(json.dumps(dict(who=who, seed=seed, **{k: v for k, v in r.items() if k != "history"})), file=sys.stderr, flush=True)
    summary = {}
    for who, rs in runs.items():
        ok = [r for r in rs if r.get("solved")]
        summary[who] = dict(solved=f"{len(ok)}/{len(rs)}",
                            median_env_steps=statistics.median([r.get("env_steps", float("inf")) if r.get("solved") else float("inf") for r in rs]),
                            median_eval=statistics.median([r.get("eval", float("-inf")) for r in rs]),
                            median_train_s=statistics.median([r.get("train_s", float("inf")) for r in rs]))
    print(json.dumps(dict(provenance=provenance(), task=args.task, **{k: v for k, v in TASKS[args.task].items() if k != "sb3"}, overrides=json.loads(args.set),
                          summary=summary, runs=runs), default=str))


if __name__ == "__main__":
    main()
