"""The book documents its API: every public method of an exported class has a docstring and a `show_doc` cell in its notebook."""
import subprocess
import sys

from conftest import ROOT


def test_every_public_method_has_a_docstring_and_a_show_doc_cell():
    proc = subprocess.run([sys.executable, "tools/docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"undocumented methods (python tools/docs.py adds the cells):\n{proc.stdout}{proc.stderr}"
