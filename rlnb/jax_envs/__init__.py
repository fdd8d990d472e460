"""Envs written in JAX (gymnax, brax, jumanji), stepped on the learner's devices by device actors.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/jax_envs/."""


from rlnb import forward_names

__getattr__ = forward_names(__name__, 'core')  # `rlnb.jax_envs` was the module `rlnb.jax_envs.core` before the package had sections
