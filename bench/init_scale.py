"""How the default networks start on image observations: rlnb's initial params (`rlnb.runtime.spec.numpy_init`, what every run
starts from) against flax's own `init` of the same module, layer by layer and at the outputs.

    python bench/init_scale.py                                   # writes bench/results/init_scale.json
    PYTHONPATH=/tmp/rlnb-before python bench/init_scale.py --out -   # the same for another checkout (e.g. a git worktree)

Networks: IMPALA's and PPO's `ActorCritic` with the default encoder (`rlnb.envs.pixels.image_encoder`) for Pong's 84x84x4
uint8 stacks (the Nature CNN) and MinAtar Breakout's 10x10x4 grids (the small CNN), 6 and 3 actions. Inputs: uniform
random pixels (Pong) and random 0/1 grids (MinAtar), 64 of each, the same for both inits. Per kernel: its standard
deviation under both; per network: the RMS of the encoder's features, and the standard deviation of the logits and of V.
"""
import argparse
import json
import os
import sys

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np

from _harness import RESULTS, provenance


def case(name, space, n_actions, x):
    from rlnb.algos.impala import ActorCritic
    from rlnb.envs.pixels import image_encoder
    from rlnb.runtime.spec import numpy_init
    net = ActorCritic(n_actions, (), False, 0.0, image_encoder(space))
    inits = dict(rlnb=numpy_init(net, space, 0), flax=jax.device_get(net.init(jax.random.key(0), jnp.zeros((1, *space.shape), jnp.float32))))
    out = dict(network=name, kernels={}, outputs={})
    for k, p in inits.items():
        for path, leaf in jax.tree_util.tree_leaves_with_path(p):
            if jax.tree_util.keystr(path).endswith("['kernel']"):
                out["kernels"].setdefault(jax.tree_util.keystr(path[1:-1]), dict(shape=list(leaf.shape)))[f"{k}_std"] = round(float(np.std(leaf)), 4)
        feats = net.apply(p, x, method=lambda m, s: m.encoder(s))
        logits, v = net.apply(p, x)
        out["outputs"][k] = dict(feature_rms=float(np.sqrt(np.mean(np.square(feats)))), logits_std=float(np.std(logits)), value_std=float(np.std(v)),
                                 value_mean=float(np.mean(v)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(RESULTS, "init_scale.json"), help="where the JSON goes ('-': only print)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    pong = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
    minatar = gym.spaces.Box(0, 1, (10, 10, 4), np.float32)
    cases = [case("Nature CNN, Pong 84x84x4", pong, 6, rng.integers(0, 256, (64, 84, 84, 4)).astype(np.uint8)),
             case("small CNN, MinAtar 10x10x4", minatar, 3, rng.integers(0, 2, (64, 10, 10, 4)).astype(np.float32))]
    import rlnb
    text = json.dumps(dict(provenance=provenance(sys.argv), rlnb=os.path.dirname(rlnb.__file__), cases=cases))
    print(text)
    if args.out != "-":
        with open(args.out, "w") as f: f.write(text + "\n")


if __name__ == "__main__":
    main()
