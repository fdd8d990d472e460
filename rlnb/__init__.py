__version__ = "0.0.1"

import importlib
import importlib.abc
import importlib.util
import sys

# The module paths from before the package had sections (rlnb.ppo is now rlnb.algos.ppo): importing one gives the module
# it moved to, so earlier code and registered 'module:Class' strings keep working. rlnb.envs, rlnb.replay, rlnb.runtime,
# rlnb.agent and rlnb.jax_envs are packages now; each forwards its old module's names (see their __init__.py).
MOVED = {
    'env_core': 'envs.core',
    'env_worker': 'envs.worker',
    'env_thread': 'envs.thread',
    'env_process': 'envs.process',
    'env_ray': 'envs.ray',
    'monitor': 'envs.monitor',
    'pixels': 'envs.pixels',
    'env_envpool': 'envs.envpool',
    'tracing': 'replay.tracing',
    'sumtree': 'replay.sumtree',
    'frame_tracer': 'replay.frame_tracer',
    'frames': 'replay.frames',
    'functions': 'coax.functions',
    'td_learning': 'coax.td_learning',
    'policy_gradient': 'coax.policy_gradient',
    'workers': 'coax.workers',
    'examples': 'coax.examples',
    'spec': 'runtime.spec',
    'registry': 'runtime.registry',
    'pacing': 'runtime.pacing',
    'acting': 'runtime.acting',
    'schedules': 'runtime.learner',
    'runstate': 'runtime.runstate',
    'evaluation': 'runtime.evaluation',
    'apex_dqn': 'algos.apex_dqn',
    'impala': 'algos.impala',
    'ppo': 'algos.ppo',
    'sac': 'algos.sac',
    'td3': 'algos.td3',
    'r2d2': 'algos.r2d2',
    'brax_envs': 'jax_envs.brax',
    'jumanji_envs': 'jax_envs.jumanji',
    'presets': 'agent.presets',
    'agent_checkpoints': 'agent.checkpoints',
}


def forward_names(package:str, module:str):
    "A module `__getattr__` for `package` that gives the names of its `module`: what a package whose name was once that module's uses."
    def __getattr__(name):
        if name.startswith('__'): raise AttributeError(name)
        try: return getattr(importlib.import_module(f'{package}.{module}'), name)
        except AttributeError: raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    return __getattr__


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    "Import `rlnb.<old name>` as the module it moved to (the same module object: classes and functions are shared)."
    def find_spec(self, fullname, path=None, target=None):
        old = fullname.partition('rlnb.')[2]
        return importlib.util.spec_from_loader(fullname, self) if fullname.startswith('rlnb.') and old in MOVED else None

    def create_module(self, spec): return importlib.import_module(f"rlnb.{MOVED[spec.name[5:]]}")
    def exec_module(self, module): pass


if not any(isinstance(f, _MovedModules) for f in sys.meta_path): sys.meta_path.append(_MovedModules())


def __getattr__(name):
    "`rlnb.load_policy` (imported on first use: `import rlnb` stays light)."
    if name == 'load_policy':
        from .agent.agent import load_policy
        return load_policy
    raise AttributeError(f"module 'rlnb' has no attribute {name!r}")
