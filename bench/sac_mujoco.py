"""MuJoCo beside stable-baselines3 (issue 33, item 4): rlnb's SAC and TD3 against SB3's (and sbx's) on HalfCheetah-v5 and Hopper-v5, same run.

    pip install -e ".[bench,mujoco]"
    python bench/sac_mujoco.py                                    # issue 33: SAC and TD3, both envs, 100k env steps, seeds 0,1,2 (hours, quiet machine)
    python bench/sac_mujoco.py --algos rlnb_sac,sb3_sac --envs Hopper-v5 --seeds 0
    python bench/sac_mujoco.py --seeds 0 --max-steps 2000 --warmup 500 --out -   # a smoke run
    python bench/sac_mujoco.py --algos rlnbtorch_sac --envs HalfCheetah-v5 --out -   # rlnb's SAC with torch's initialisation

Every algorithm uses rl-zoo3's MuJoCo entries for these envs on one env, the same numbers on both sides:
- SAC (`sac.yml`, HalfCheetah/Hopper): SB3's defaults with 10,000 uniform random steps first: networks 256x256, batch
  256, Adam 3e-4 for every part, gamma 0.99, tau 0.005, one update per env step, the temperature learned from 1.0
  towards -|A| entropy.
- TD3 (`td3.yml`): SB3's defaults with 10,000 random steps and Gaussian exploration noise of std 0.1: networks
  400x300, batch 256, Adam 1e-3, gamma 0.99, tau 0.005, one critic update per env step, the actor and targets every
  second, target smoothing noise 0.2 clipped at 0.5.

`rlnbtorch_sac` and `rlnbtorch_td3` are rlnb's SAC and TD3 with `network_init='torch'`: every layer starts as torch's
`nn.Linear` (the SB3 side's), weights and biases uniform in +-1/sqrt(fan_in), where rlnb's default draws weights
LeCun-normal (three times the variance) and starts biases at zero. Nothing else differs.

The protocol is `bench/apex_cartpole.py`'s, with a fixed budget in place of a target: every (algorithm, env, seed) runs
in a fresh subprocess, interleaved by seed; each evaluates every 10,000 env steps on 5 episodes (deterministic actions,
the curve) and at the end on 10 episodes (`final_eval`, the figure issue 33 compares). `train_s` is the wall-clock
of the run minus its evaluations, compile included, imports not; rlnb's learner runs on one device, children see no
GPU unless CUDA_VISIBLE_DEVICES is set. The sbx rows need `sbx-rl` (the `bench` extra).

Each finished run is appended to --log (default bench/results/mujoco_runs.jsonl) with its commit and date, and a run
the log holds for the same algorithm, env, seed and budget is reused: the same command, run again in a later session,
goes on where the last one stopped (the whole matrix is hours of a quiet machine). `--log -` runs everything afresh.

Prints one JSON object (and writes it to --out, default bench/results/mujoco.json): per run the curve, final_eval and
train_s; per env and algorithm the medians over seeds; and the ratios issue 33 asks for, per env: rlnb's median final
evaluation over SB3's (target >= 0.9 for SAC) and rlnb's median train_s over SB3's (target <= 0.5), for SAC and TD3.
"""
import json
import os
import statistics
import sys
import time

from _harness import RESULTS, matrix_parser, provenance, report, run_matrix

ENVS = ("HalfCheetah-v5", "Hopper-v5")
ALGOS = ("rlnb_sac", "rlnb_td3", "sb3_sac", "sb3_td3", "sbx_sac", "sbx_td3", "rlnbtorch_sac", "rlnbtorch_td3")
EVAL_EVERY, CURVE_EPISODES, FINAL_EPISODES, STEPS, WARMUP = 10_000, 5, 10, 100_000, 10_000


# rl-zoo3's settings for rlnb's side: the ones both algorithms share, then each one's own (sac_step.py uses them too)
RLNB_COMMON = dict(batch_size=256, gamma=0.99, tau=0.005, replay_ratio=1.0)
RLNB_SETTINGS = dict(sac=dict(learning_rate=3e-4, hidden=(256, 256)),
                     td3=dict(learning_rate=1e-3, hidden=(400, 300), exploration_noise=0.1, target_noise=0.2, target_noise_clip=0.5, policy_delay=2))


def run_rlnb(algo, env_id, seed, steps, warmup, torch_init=False):
    from rlnb.algos.sac import SAC
    from rlnb.algos.td3 import TD3
    import jax
    t0 = time.perf_counter()
    agent = (SAC if algo == "sac" else TD3)(env_id, network_init="torch" if torch_init else "lecun", seed=seed, devices=jax.local_devices()[:1], buffer_capacity=max(steps, 1_000),
                                            buffer_warmup=warmup, **RLNB_COMMON, **RLNB_SETTINGS[algo])
    try:
        agent.train(steps, eval_interval=EVAL_EVERY, num_eval_episodes=CURVE_EPISODES, final_eval=False)
        final = agent.evaluate(FINAL_EPISODES)  # counted in agent.eval_seconds, as the curve's evaluations are
        wall, eval_s = time.perf_counter() - t0, agent.eval_seconds
    finally:
        agent.close()
    return dict(curve=[(int(s), float(m)) for s, m in agent.eval_history], final_eval=float(final["mean"]), train_s=wall - eval_s,
                wall_s=wall, env_steps=int(agent.env_steps), updates=int(agent.updates))


def run_peer(lib, algo, env_id, seed, steps, warmup):
    import numpy as np
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.noise import NormalActionNoise
    if lib == "sbx":
        from sbx import SAC, TD3
    else:
        from stable_baselines3 import SAC, TD3
    eval_env = make_vec_env(env_id, n_envs=1, seed=seed + 10_000)
    state = dict(eval_s=0.0, next=EVAL_EVERY, curve=[])

    class Curve(BaseCallback):
        def _on_step(self):
            if self.num_timesteps < state["next"]: return True
            state["next"] += EVAL_EVERY
            t = time.perf_counter()
            mean, _ = evaluate_policy(self.model, eval_env, n_eval_episodes=CURVE_EPISODES, deterministic=True)
            state["eval_s"] += time.perf_counter() - t
            state["curve"].append((int(self.num_timesteps), float(mean)))
            return True

    t0 = time.perf_counter()
    env = make_vec_env(env_id, n_envs=1, seed=seed)
    if algo == "sac":
        model = SAC("MlpPolicy", env, seed=seed, verbose=0, learning_starts=warmup)
    else:
        n = env.action_space.shape[-1]
        model = TD3("MlpPolicy", env, seed=seed, verbose=0, learning_starts=warmup, action_noise=NormalActionNoise(np.zeros(n), 0.1 * np.ones(n)))
    model.learn(total_timesteps=steps, callback=Curve())
    t = time.perf_counter()
    final, _ = evaluate_policy(model, eval_env, n_eval_episodes=FINAL_EPISODES, deterministic=True)
    wall = time.perf_counter() - t0
    return dict(curve=state["curve"], final_eval=float(final), train_s=wall - state["eval_s"] - (time.perf_counter() - t), wall_s=wall, env_steps=steps)


def child(args):
    spec, seed = args.child.rsplit(":", 1)
    name, env_id = spec.split("@")
    lib, algo = name.split("_")
    steps, warmup = args.max_steps or STEPS, args.warmup
    report(run_rlnb(algo, env_id, int(seed), steps, warmup, torch_init=lib == "rlnbtorch") if lib.startswith("rlnb")
           else run_peer(lib, algo, env_id, int(seed), steps, warmup))


def summarize(runs: dict) -> dict:
    "Per env and algorithm: the medians over seeds of final_eval and train_s; per env the rlnb/SB3 ratios of both."
    med = statistics.median
    out = {}
    for key, rs in runs.items():
        name, env_id = key.split("@")
        ok = [r for r in rs if "final_eval" in r]
        out.setdefault(env_id, {})[name] = dict(runs=f"{len(ok)}/{len(rs)}", final_evals=[r.get("final_eval") for r in rs],
                                                median_final_eval=med([r["final_eval"] for r in ok]) if ok else None,
                                                median_train_s=med([r["train_s"] for r in ok]) if ok else None)
    for env_id, by in out.items():
        for algo in ("sac", "td3"):
            for lib in ("rlnb", "rlnbtorch"):
                a, b = by.get(f"{lib}_{algo}"), by.get(f"sb3_{algo}")
                if a and b and a["median_final_eval"] is not None and b["median_final_eval"] is not None:
                    by[f"{algo}_final_eval_{lib}_over_sb3"] = a["median_final_eval"] / b["median_final_eval"] if b["median_final_eval"] > 0 else None
                    by[f"{algo}_train_s_{lib}_over_sb3"] = a["median_train_s"] / b["median_train_s"]
    return out


def main():
    ap, check = matrix_parser(__doc__, "0,1,2", ALGOS, "rlnb_sac,rlnb_td3,sb3_sac,sb3_td3", f"env steps of every run (default {STEPS:,})")
    ap.add_argument("--envs", default=",".join(ENVS))
    ap.add_argument("--warmup", type=int, default=WARMUP, help=f"uniform random env steps before the first update (default {WARMUP:,}, rl-zoo3's)")
    ap.add_argument("--out", default=os.path.join(RESULTS, "mujoco.json"), help="where the JSON goes ('-': only print)")
    ap.add_argument("--log", default=os.path.join(RESULTS, "mujoco_runs.jsonl"),
                    help="JSON lines of finished runs: a run it holds (same algo, seed and budget) is reused, not rerun ('-': none)")
    args = ap.parse_args()
    if args.child:
        return child(args)
    names = check(args)
    envs = args.envs.split(",")
    child_args = ["--warmup", args.warmup] + (["--max-steps", args.max_steps] if args.max_steps else [])
    runs = run_matrix(__file__, [f"{n}@{e}" for e in envs for n in names], [int(s) for s in args.seeds.split(",")], child_args,
                      env={"XLA_FLAGS": os.environ.get("XLA_FLAGS", ""), "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}, timeout=4 * 3600,
                      log=None if args.log == "-" else args.log)
    out = dict(provenance=provenance(sys.argv), envs=envs, steps=args.max_steps or STEPS, warmup=args.warmup, eval_every=EVAL_EVERY,
               curve_episodes=CURVE_EPISODES, final_episodes=FINAL_EPISODES, summary=summarize(runs), runs=runs)
    text = json.dumps(out, default=str)
    print(text)
    if args.out != "-":
        with open(args.out, "w") as f: f.write(text + "\n")


if __name__ == "__main__":
    main()
