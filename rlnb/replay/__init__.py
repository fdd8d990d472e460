"""From env steps to training batches: n-step tracing, the sum-tree, replay buffers, frame replay.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/replay/."""


def __getattr__(name):
    "`rlnb.replay.X` for a name of `rlnb.replay.buffers` (`rlnb.replay` was that one module before the package had sections)."
    if name.startswith('__'): raise AttributeError(name)
    import importlib
    try: return getattr(importlib.import_module(f'{__name__}.buffers'), name)
    except AttributeError: raise AttributeError(f"module 'rlnb.replay' has no attribute {name!r}") from None
