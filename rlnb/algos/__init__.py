"""The algorithms on the runtime: Ape-X DQN, IMPALA, PPO, SAC, TD3, R2D2, PQN.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/algos/."""
