"""Envs behind rlnb's env workers: the worker contract and its transports (sync, thread, process, Ray), pools,
the episode monitor, pixels and Atari, EnvPool.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/envs/."""


from rlnb import forward_names

__getattr__ = forward_names(__name__, 'pool')  # `rlnb.envs` was the module `rlnb.envs.pool` before the package had sections
