"""`DistributedAgent`: presets, whole-run checkpoints and the trainer facade over the runtime.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/agent/."""


def __getattr__(name):
    "`rlnb.agent.X` for a name of `rlnb.agent.agent` (`rlnb.agent` was that one module before the package had sections)."
    if name.startswith('__'): raise AttributeError(name)
    import importlib
    try: return getattr(importlib.import_module(f'{__name__}.agent'), name)
    except AttributeError: raise AttributeError(f"module 'rlnb.agent' has no attribute {name!r}") from None
