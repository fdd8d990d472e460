"""The actor-learner runtime: an algorithm's spec, its registry, pacing, the actors, the learner, run state,
evaluation, and the `Runtime` that composes them.

Written by hand (nbdev exports modules, not packages): the modules are generated from nbs/runtime/."""


from rlnb import forward_names

__getattr__ = forward_names(__name__, 'runtime')  # `rlnb.runtime` was the module `rlnb.runtime.runtime` before the package had sections
