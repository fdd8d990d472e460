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
