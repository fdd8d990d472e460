"""The actor-learner runtime: an algorithm's spec, its registry, pacing, the actors, the learner, run state,
evaluation, and the `Runtime` that composes them.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/runtime/."""


def __getattr__(name):
    "`rlnb.runtime.X` for a name of `rlnb.runtime.runtime` (`rlnb.runtime` was that one module before the package had sections)."
    if name.startswith('__'): raise AttributeError(name)
    import importlib
    try: return getattr(importlib.import_module(f'{__name__}.runtime'), name)
    except AttributeError: raise AttributeError(f"module 'rlnb.runtime' has no attribute {name!r}") from None
