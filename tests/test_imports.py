"""Every module of the generated package imports cleanly in a fresh interpreter.

nbdev-test accepts a top-level `await` in an exported cell; `import` does not. This catches it.
"""
import subprocess
import sys

import pytest

from conftest import ROOT

MODULES = sorted(".".join(p.relative_to(ROOT / "rlnb").with_suffix("").parts) for p in (ROOT / "rlnb").rglob("*.py")
                 if not p.name.startswith("_"))  # every generated module, in every section


def test_package_has_modules():
    assert {"core", "cli"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module):
    code = f"import rlnb.{module} as m; names = getattr(m, '__all__', []); missing = [n for n in names if not hasattr(m, n)]; assert not missing, missing"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_runtime_imports_leave_out_rlax_and_nnx():
    "`import rlnb.agent.agent` (and the CLI) load neither rlax (distrax, tensorflow-probability) nor flax.nnx nor Ray: rlnb has its own losses, nnx is the user's choice, and Ray is imported by the first Ray env worker."
    heavy = ["rlax", "distrax", "tensorflow_probability", "flax.nnx", "ray"]
    code = f"import sys, rlnb.agent.agent, rlnb.cli, rlnb.agent.presets; print([m for m in {heavy!r} if m in sys.modules])"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip() == "[]", proc.stdout


def test_module_paths_from_before_the_sections_still_import():
    "`rlnb.ppo`, `rlnb.env_core`, ... import as the modules they moved to; `rlnb.envs`, `rlnb.agent`, ... forward their old names."
    code = ("import importlib, rlnb\n"
            "bad = [o for o, n in rlnb.MOVED.items() if importlib.import_module(f'rlnb.{o}') is not importlib.import_module(f'rlnb.{n}')]\n"
            "assert len(rlnb.MOVED) > 30 and not bad, bad\n"
            "from rlnb.ppo import PPO; from rlnb.algos.ppo import PPO as P; assert PPO is P\n"
            "from rlnb.envs import AsyncEnvWorker; from rlnb.replay import ReplayBuffer; from rlnb.runtime import Runtime\n"
            "from rlnb.agent import DistributedAgent, load_policy; from rlnb.jax_envs import GYMNAX\n"
            "from rlnb.runtime.registry import get_algo; import rlnb.runtime.registry as r\n"
            "r.register('ppo-old-path', 'rlnb.ppo:PPOSpec'); assert get_algo('ppo-old-path') is get_algo('ppo')\n"
            "try: from rlnb.envs import NoSuchName\n"
            "except ImportError as e: assert 'NoSuchName' in str(e)\n"
            "else: raise AssertionError('an unknown name imported')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
