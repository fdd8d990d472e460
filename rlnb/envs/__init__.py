"""Envs behind rlnb's env workers: the worker contract and its transports (sync, thread, process, Ray), pools,
the episode monitor, pixels and Atari, EnvPool.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/envs/."""


def __getattr__(name):
    "`rlnb.envs.X` for a name of `rlnb.envs.pool` (`rlnb.envs` was that one module before the package had sections)."
    if name.startswith('__'): raise AttributeError(name)
    import importlib
    try: return getattr(importlib.import_module(f'{__name__}.pool'), name)
    except AttributeError: raise AttributeError(f"module 'rlnb.envs' has no attribute {name!r}") from None
