"""`DistributedAgent`: presets, whole-run checkpoints and the trainer facade over the runtime.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/agent/."""


from rlnb import forward_names

__getattr__ = forward_names(__name__, 'agent')  # `rlnb.agent` was the module `rlnb.agent.agent` before the package had sections
