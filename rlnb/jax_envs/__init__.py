"""Envs written in JAX (gymnax, brax, jumanji), stepped on the learner's devices by device actors.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/jax_envs/."""


def __getattr__(name):
    "`rlnb.jax_envs.X` for a name of `rlnb.jax_envs.core` (`rlnb.jax_envs` was that one module before the package had sections)."
    if name.startswith('__'): raise AttributeError(name)
    import importlib
    try: return getattr(importlib.import_module(f'{__name__}.core'), name)
    except AttributeError: raise AttributeError(f"module 'rlnb.jax_envs' has no attribute {name!r}") from None
