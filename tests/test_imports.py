"""Every module of the generated package imports cleanly in a fresh interpreter.

nbdev-test accepts a top-level `await` in an exported cell; `import` does not. This catches it.
"""
import subprocess
import sys

import pytest

from conftest import ROOT

MODULES = sorted(p.stem for p in (ROOT / "rlnb").glob("*.py") if not p.stem.startswith("_"))


def test_package_has_modules():
    assert {"core", "cli"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_imports(module):
    code = f"import rlnb.{module} as m; names = getattr(m, '__all__', []); missing = [n for n in names if not hasattr(m, n)]; assert not missing, missing"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
