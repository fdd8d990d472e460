"""Time to solve CartPole-v1: rlnb's Ape-X DQN and PPO against stable-baselines3 and sbx (DQN, PPO), same run.

    pip install -e ".[bench]"
    python bench/apex_cartpole.py [--seeds 0,1,2] [--max-steps 100000] [--algos rlnb,rlnb_ppo,sb3_ppo,sb3_dqn,sbx_ppo,sbx_dqn]
    python bench/apex_cartpole.py --algos rlnb_ppo,sb3_ppo,sbx_ppo --seeds 0,1,2,3,4,5,6,7,8,9   # PPO against PPO
    python bench/apex_cartpole.py --algos rlnb,rlnb_base,sb3_ppo --base-tree /tmp/rlnb-before   # before/after a change
    python bench/apex_cartpole.py --algos rlnb,rlnb_base,rlnb_ppo,rlnb_ppo_base --seeds 0,1,2,3,4,5,6,7,8,9 --base-tree /tmp/rlnb-before

`rlnb` is rlnb's Ape-X DQN with its defaults; `rlnb_ppo` is rlnb's PPO with its defaults (rl-zoo3's CartPole-v1
hyperparameters) and, like the zoo's `lin_` entries, the learning rate and clip range decaying linearly over --max-steps;
`rlnb_pqn` is rlnb's PQN with its CartPole preset (its defaults, rewards scaled by 0.1).
`rlnb_base` (and `rlnb_ppo_base`) is rlnb's Ape-X (PPO) as checked out in --base-tree (e.g. `git worktree add /tmp/rlnb-before REV`), imported ahead of the
installed one through PYTHONPATH, interleaved with the rest; the output then has `rlnb_vs_base` (`rlnb_ppo_vs_base`) as well.

Every (algorithm, seed) runs in a fresh subprocess. Each evaluates every 5,000 env steps on 10 episodes
(greedy / deterministic) and stops at the first evaluation with mean return >= 475. `train_s` is the
wall-clock to that point minus the time spent evaluating; `env_steps` is the step count at that
evaluation. Peers use rl-zoo3's tuned CartPole-v1 hyperparameters. Children see no GPU unless CUDA_VISIBLE_DEVICES is
set (e.g. CUDA_VISIBLE_DEVICES=0): a 4-input MLP gains nothing from an accelerator, and on an H100 machine (16 cores) every
library solved faster with it hidden (bench/results/apex_cartpole_h100.json: rlnb median 2.9 s hidden / 7.5 s visible, sb3
PPO 10.8 s / 22.1 s). JAX compile time counts (nothing is
cached between runs); library imports do not (every algorithm imports its library before its clock starts). XLA_FLAGS splits the CPU into host devices only with --devices > 1. Prints one JSON object with the
per-seed figures, medians over seeds, and `rlnb_vs_best_peer` = rlnb's median train_s / best peer's (likewise
`rlnb_ppo_vs_best_peer`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _harness import provenance, sb3_learn_to_target

EVAL_EVERY, EVAL_EPISODES, TARGET = 5_000, 10, 475.0

# rl-zoo3 hyperparams/{dqn,ppo}.yml, CartPole-v1 entries
ZOO = {
    "dqn": dict(learning_rate=2.3e-3, batch_size=64, buffer_size=100_000, learning_starts=1000, gamma=0.99,
                target_update_interval=10, train_freq=256, gradient_steps=128, exploration_fraction=0.16,
                exploration_final_eps=0.04, policy_kwargs=dict(net_arch=[256, 256])),
    "ppo": dict(n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
                learning_rate="lin_0.001", clip_range="lin_0.2"),
}
ZOO_TIMESTEPS = {"dqn": 50_000, "ppo": 100_000}
ZOO_N_ENVS = {"dqn": 1, "ppo": 8}


def run_rlnb(name, seed, max_steps, devices):
    import jax
    from rlnb.algos.apex_dqn import ApeXDQN  # imported before the clock starts, as the peers' libraries are
    from rlnb.algos.ppo import PPO
    from rlnb.algos.pqn import PQN
    kw = (dict(schedule_steps=max_steps) if name.startswith("rlnb_ppo") else
          dict(reward_scale=0.1) if name.startswith("rlnb_pqn") else {})
    cls = PPO if name.startswith("rlnb_ppo") else PQN if name.startswith("rlnb_pqn") else ApeXDQN
    t0 = time.perf_counter()
    agent = cls("CartPole-v1", seed=seed, devices=jax.local_devices()[:devices], **kw)
    res = agent.train(max_steps, eval_interval=EVAL_EVERY, num_eval_episodes=EVAL_EPISODES, target_return=TARGET)
    wall = time.perf_counter() - t0
    agent.close()
    solved = res["eval"]["mean"] >= TARGET
    import rlnb
    return dict(solved=solved, train_s=wall - agent.eval_seconds, env_steps=res["env_steps"], wall_s=wall,
                final_eval=res["eval"]["mean"], updates=res["updates"], rlnb=os.path.dirname(rlnb.__file__))


def run_peer(name, seed, max_steps):
    lib, algo = name.split("_")
    if lib == "sb3":
        from stable_baselines3 import DQN, PPO
    else:
        from sbx import DQN, PPO
    from stable_baselines3.common.env_util import make_vec_env

    kw = dict(ZOO[algo])
    for k in ("learning_rate", "clip_range"):
        if isinstance(kw.get(k), str) and kw[k].startswith("lin_"):
            v0 = float(kw[k][4:])
            kw[k] = lambda frac, v0=v0: frac * v0
    eval_env = make_vec_env("CartPole-v1", n_envs=1, seed=seed + 10_000)
    env = make_vec_env("CartPole-v1", n_envs=ZOO_N_ENVS[algo], seed=seed)
    make = lambda: (DQN if algo == "dqn" else PPO)("MlpPolicy", env, seed=seed, verbose=0, **kw)
    return sb3_learn_to_target(make, eval_env, max_steps, TARGET, EVAL_EVERY, EVAL_EPISODES)


def child(args):
    name, seed = args.child.split(":")
    out = run_rlnb(name, int(seed), args.max_steps, args.devices) if name.startswith("rlnb") else run_peer(name, int(seed), args.max_steps)
    print("RESULT " + json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-steps", type=int, default=100_000)
    ap.add_argument("--algos", default="rlnb,sb3_ppo,sb3_dqn,sbx_ppo,sbx_dqn")
    ap.add_argument("--devices", type=int, default=1, help="learner devices for rlnb (host devices on a CPU)")
    ap.add_argument("--base-tree", default=None, help="an rlnb checkout that algorithm rlnb_base runs from")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    if any(a.endswith("_base") for a in args.algos.split(",")) and not args.base_tree: ap.error("rlnb_base and rlnb_ppo_base need --base-tree")
    # Split the CPU into host devices only when rlnb's learner is asked to use several: the flag applies to every
    # child (sbx runs on JAX too) and, measured here, makes a one-device update about 2.5x slower even when only one
    # of the forced devices is used.
    flags = os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}" if args.devices > 1 else "")
    env = {**os.environ, "XLA_FLAGS": flags, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    results = {}
    seeds = [int(s) for s in args.seeds.split(",")]
    for seed in seeds:  # interleave algorithms so machine noise hits all alike
        for name in args.algos.split(","):
            cmd = [sys.executable, __file__, "--child", f"{name}:{seed}", "--max-steps", str(args.max_steps),
                   "--devices", str(args.devices)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                               env={**env, "PYTHONPATH": args.base_tree} if name.endswith("_base") else env)
            line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
            r = json.loads(line[-1][7:]) if line else dict(error=p.stderr[-2000:])
            results.setdefault(name, []).append(dict(seed=seed, **r))
            print(json.dumps(dict(algo=name, seed=seed, **r)), file=sys.stderr, flush=True)
    summary = {}
    for name, runs in results.items():
        ok = [r for r in runs if r.get("solved")]
        summary[name] = dict(solved=f"{len(ok)}/{len(runs)}",
                             median_train_s=statistics.median([r["train_s"] if r.get("solved") else float("inf") for r in runs]),
                             median_env_steps=statistics.median([r["env_steps"] if r.get("solved") else float("inf") for r in runs]))
    peers = [v["median_train_s"] for k, v in summary.items() if not k.startswith("rlnb")]
    out = dict(provenance=provenance(), target=TARGET, eval_every=EVAL_EVERY, eval_episodes=EVAL_EPISODES, max_steps=args.max_steps,
               rlnb_devices=args.devices, xla_flags=flags, summary=summary, runs=results)
    for mine in ("rlnb", "rlnb_ppo", "rlnb_pqn"):
        if mine in summary and peers: out[f"{mine}_vs_best_peer"] = summary[mine]["median_train_s"] / min(peers)
    if "rlnb_base" in summary and peers: out["rlnb_base_vs_best_peer"] = summary["rlnb_base"]["median_train_s"] / min(peers)
    for mine in ("rlnb", "rlnb_ppo"):
        if mine in summary and f"{mine}_base" in summary:
            out[f"{mine}_vs_base"] = summary[mine]["median_train_s"] / summary[f"{mine}_base"]["median_train_s"]
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
