"""From env steps to training batches: n-step tracing, the sum-tree, replay buffers, frame replay.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/replay/."""


from rlnb import forward_names

__getattr__ = forward_names(__name__, 'buffers')  # `rlnb.replay` was the module `rlnb.replay.buffers` before the package had sections
