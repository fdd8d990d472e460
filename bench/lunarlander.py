"""Time to solve LunarLander-v3: rlnb's Ape-X DQN and PPO (their shipped presets) against stable-baselines3 and sbx DQN and PPO (rl-zoo3's hyperparameters), same run.

    pip install -e ".[bench,box2d]"
    python bench/lunarlander.py --seeds 0,1,2,3,4                       # issue 33: every algorithm, 5 seeds, quiet machine
    python bench/lunarlander.py --algos rlnb_apex,sb3_dqn --seeds 0,1,2,3,4   # Ape-X against SB3 DQN only
    python bench/lunarlander.py --seeds 0 --max-steps 1000 --eval-every 500 --out -   # a smoke run (nothing solves)

The protocol is `bench/apex_cartpole.py`'s: every (algorithm, seed) runs in a fresh subprocess, interleaved by seed
(`_harness.run_matrix`); each evaluates every 10,000 env steps on 10 episodes (greedy / deterministic) and stops at the
first evaluation with mean return >= 200 (LunarLander's `reward_threshold`) or at its budget. `train_s` is the
wall-clock to that point minus the time spent evaluating; `env_steps` the step count at that evaluation. JAX compile
time counts (nothing is cached between runs); library imports do not (each child imports its library before its clock
starts). Children see no GPU unless CUDA_VISIBLE_DEVICES is set.

- `rlnb_apex`: `ApeXDQN` with the preset `apex-dqn-LunarLander-v3`'s `[config]`; budget 300,000 env steps (issue 33's).
- `rlnb_ppo`: `PPO` with the preset `ppo-LunarLander-v3`'s `[config]` (rl-zoo3's PPO numbers); budget 1,000,000.
- `sb3_dqn`, `sbx_dqn`: rl-zoo3's `dqn.yml` LunarLander entry (1 env, lr 6.3e-4, batch 128, buffer 50k, no warm-up,
  gamma 0.99, target sync every 250 env steps, 4 gradient steps per 4 env steps, epsilon 1 -> 0.1 over 12,000 env steps,
  net [256, 256]); budget 300,000. The zoo's budget is 100,000 env steps and its `exploration_fraction` (0.12) is a
  fraction of it: the fraction is rescaled so that epsilon decays over the same 12,000 env steps whatever the budget.
- `sb3_ppo`, `sbx_ppo`: rl-zoo3's `ppo.yml` LunarLander entry (16 envs, n_steps 1024, batch 64, 4 epochs, gamma
  0.999, GAE lambda 0.98, entropy 0.01); budget 1,000,000 (the zoo's).
- The sbx rows need `sbx-rl` (in the `bench` extra); where it is not installed they are skipped with a message.

Each finished run is appended to --log (default bench/results/lunarlander_runs.jsonl) with its commit and date, and a
run the log holds for the same algorithm, seed and budget is reused, so a stopped run goes on where it stopped (`--log -`
runs everything afresh). --max-steps sets one budget for every algorithm. Prints one JSON object (provenance, per-seed figures, medians, and the
ratios issue 33 asks for: `rlnb_apex_vs_sb3_dqn` = Ape-X's median train_s / SB3 DQN's, and `best_rlnb_vs_best_peer`)
and writes it to --out (default bench/results/lunarlander.json; `-` only prints).
"""
import importlib.util
import json
import os
import sys
import time

from _harness import RESULTS, matrix_parser, provenance, report, run_matrix, sb3_learn_to_target, summarize

ENV, EVAL_EVERY, EVAL_EPISODES, TARGET = "LunarLander-v3", 10_000, 10, 200.0
ALGOS = ("rlnb_apex", "rlnb_ppo", "sb3_dqn", "sb3_ppo", "sbx_dqn", "sbx_ppo")
BUDGET = dict(rlnb_apex=300_000, sb3_dqn=300_000, sbx_dqn=300_000, rlnb_ppo=1_000_000, sb3_ppo=1_000_000, sbx_ppo=1_000_000)
PRESET = dict(rlnb_apex="apex-dqn-LunarLander-v3", rlnb_ppo="ppo-LunarLander-v3")

# rl-zoo3 hyperparams/dqn.yml and ppo.yml, LunarLander entries (n_timesteps: the zoo's budget)
ZOO = {
    "dqn": dict(learning_rate=6.3e-4, batch_size=128, buffer_size=50_000, learning_starts=0, gamma=0.99,
                target_update_interval=250, train_freq=4, gradient_steps=-1, exploration_fraction=0.12,
                exploration_final_eps=0.1, policy_kwargs=dict(net_arch=[256, 256])),
    "ppo": dict(n_steps=1024, batch_size=64, gae_lambda=0.98, gamma=0.999, n_epochs=4, ent_coef=0.01),
}
ZOO_TIMESTEPS = {"dqn": 100_000, "ppo": 1_000_000}
ZOO_N_ENVS = {"dqn": 1, "ppo": 16}


def run_rlnb(name, seed, max_steps, devices, every):
    import jax
    from rlnb.algos.apex_dqn import ApeXDQN  # imported before the clock starts, as the peers' libraries are
    from rlnb.algos.ppo import PPO
    from rlnb.agent.presets import get_preset
    preset = get_preset(PRESET[name])
    t0 = time.perf_counter()
    agent = (ApeXDQN if name == "rlnb_apex" else PPO)(ENV, seed=seed, devices=jax.local_devices()[:devices], **preset.config)
    res = agent.train(max_steps, eval_interval=every, num_eval_episodes=EVAL_EPISODES, target_return=TARGET)
    wall = time.perf_counter() - t0
    agent.close()
    return dict(solved=res["eval"]["mean"] >= TARGET, train_s=wall - agent.eval_seconds, env_steps=res["env_steps"], wall_s=wall,
                final_eval=res["eval"]["mean"], updates=res["updates"], preset=preset.name)


def run_peer(name, seed, max_steps, every):
    lib, algo = name.split("_")
    if lib == "sb3":
        from stable_baselines3 import DQN, PPO
    else:
        from sbx import DQN, PPO
    from stable_baselines3.common.env_util import make_vec_env

    kw = dict(ZOO[algo])
    if algo == "dqn":  # epsilon decays over the zoo's 12,000 env steps, whatever the budget
        kw["exploration_fraction"] = min(1.0, kw["exploration_fraction"] * ZOO_TIMESTEPS[algo] / max_steps)
    eval_env = make_vec_env(ENV, n_envs=1, seed=seed + 10_000)
    env = make_vec_env(ENV, n_envs=ZOO_N_ENVS[algo], seed=seed)
    make = lambda: (DQN if algo == "dqn" else PPO)("MlpPolicy", env, seed=seed, verbose=0, **kw)
    return sb3_learn_to_target(make, eval_env, max_steps, TARGET, every, EVAL_EPISODES)


def child(args):
    name, seed = args.child.split(":")
    steps = args.max_steps or BUDGET[name]
    report(run_rlnb(name, int(seed), steps, args.devices, args.eval_every) if name.startswith("rlnb") else run_peer(name, int(seed), steps, args.eval_every))


def ratio(summary, mine, peers):
    "`mine`'s median train_s over the best of `peers`' (None where either is missing or no peer solved)."
    best = min((summary[p]["median_train_s"] for p in peers if p in summary), default=None)
    if mine not in summary or best in (None, 0, float("inf")): return None
    return summary[mine]["median_train_s"] / best


def main():
    ap, check = matrix_parser(__doc__, "0,1,2,3,4", ALGOS, ",".join(ALGOS), "env-step budget of every run (default: 300,000 for the DQNs, 1,000,000 for the PPOs)")
    ap.add_argument("--eval-every", type=int, default=EVAL_EVERY, help="env steps between evaluations (default 10,000: the protocol; smaller only for a smoke run)")
    ap.add_argument("--out", default=os.path.join(RESULTS, "lunarlander.json"), help="where the JSON goes ('-': stdout only)")
    ap.add_argument("--log", default=os.path.join(RESULTS, "lunarlander_runs.jsonl"),
                    help="JSON lines of finished runs: a run it holds (same algo, seed and budget) is reused, not rerun ('-': none)")
    args = ap.parse_args()
    if args.child:
        return child(args)
    names = check(args)
    skipped = [n for n in names if n.startswith("sbx") and importlib.util.find_spec("sbx") is None]
    if skipped:
        print(f"skipping {', '.join(skipped)}: sbx is not installed (pip install sbx-rl, in the bench extra)", file=sys.stderr)
        names = [n for n in names if n not in skipped]
    # Split the CPU into host devices only when rlnb's learner is asked to use several (bench/apex_cartpole.py says why).
    flags = os.environ.get("XLA_FLAGS", f"--xla_force_host_platform_device_count={args.devices}" if args.devices > 1 else "")
    env = {"XLA_FLAGS": flags, "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    child_args = ["--devices", args.devices, "--eval-every", args.eval_every] + (["--max-steps", args.max_steps] if args.max_steps else [])
    results = run_matrix(__file__, names, [int(s) for s in args.seeds.split(",")], child_args, env=env, timeout=7200,
                          log=None if args.log == "-" else args.log)
    summary = summarize(results)
    for name, runs in results.items():
        summary[name]["final_evals"] = [r.get("final_eval") for r in runs]
        if name.startswith("rlnb"):
            summary[name]["updates_per_env_step"] = [round(r["updates"] / r["env_steps"], 3) if r.get("env_steps") else None for r in runs]
    peers = [n for n in names if not n.startswith("rlnb")]
    out = dict(provenance=provenance(sys.argv), env=ENV, target=TARGET, eval_every=args.eval_every, eval_episodes=EVAL_EPISODES,
               max_steps={n: args.max_steps or BUDGET[n] for n in names}, skipped=skipped, rlnb_devices=args.devices, xla_flags=flags,
               summary=summary, rlnb_apex_vs_sb3_dqn=ratio(summary, "rlnb_apex", ["sb3_dqn"]),
               best_rlnb_vs_best_peer=None, runs=results)
    mine = [n for n in names if n.startswith("rlnb")]
    if mine and peers:
        best = min(mine, key=lambda n: summary[n]["median_train_s"])
        out.update(best_rlnb=best, best_rlnb_vs_best_peer=ratio(summary, best, peers))
    text = json.dumps(out, default=str)
    print(text)
    if args.out != "-":
        with open(args.out, "w") as f: f.write(text + "\n")


if __name__ == "__main__":
    main()
