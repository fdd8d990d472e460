"""Run every notebook in nbs/ through nbdev's test runner, one pytest test per notebook.

Each notebook runs in its own process (a fresh JAX runtime with 8 host devices), its fast cells in the fast tier
(`pytest -m "not slow"`, the README's command). The slow tier (`pytest -m slow`) runs the notebooks that hold `#| slow`
cells once more with those cells, and every notebook once more on one device, its fast cells only, as a Colab GPU or a
single TPU chip runs it (`-m one_device` selects just that pass: CI runs it under the newest Python and JAX).
"""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, xla_flags

NOTEBOOKS = sorted(p.relative_to(ROOT / "nbs").as_posix() for p in (ROOT / "nbs").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
NBDEV_TEST = os.path.join(os.path.dirname(sys.executable), "nbdev-test")
HAS_GYMNAX = importlib.util.find_spec("gymnax") is not None  # cells flagged `jaxenvs` need it (the `jaxenvs` extra; gymnax pins jax < 0.12)
HAS_BRAX = importlib.util.find_spec("brax") is not None  # cells flagged `brax` need it (the `jaxenvs` extra; see jax_envs/61_brax)
HAS_JUMANJI = importlib.util.find_spec("jumanji") is not None  # cells flagged `jumanji` need it (the `jaxenvs` extra; see jax_envs/62_jumanji)


def _has_slow_cells(name):
    return "#| slow" in (ROOT / "nbs" / name).read_text()


SLOW_NOTEBOOKS = [name for name in NOTEBOOKS if _has_slow_cells(name)]


def _run_notebook(name: str, devices: int, slow: bool) -> str:
    "Run one notebook in a fresh process with `devices` host devices, its `#| slow` cells too when `slow`; its output."
    flags = " ".join(["slow"] * slow + ["jaxenvs"] * HAS_GYMNAX + ["brax"] * HAS_BRAX + ["jumanji"] * HAS_JUMANJI)  # without gymnax its cells are skipped (see jax_envs/60_core)
    cmd = [NBDEV_TEST, f"nbs/{name}", "--n-workers", "0", "--do-print"] + (["--flags", flags] if flags else [])
    env = {**os.environ, "XLA_FLAGS": xla_flags(devices), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
    out = proc.stdout + proc.stderr
    where = "" if devices == 8 else f" on {devices} device(s)"
    assert proc.returncode == 0 and "Success" in out, f"{name} failed{where} (exit {proc.returncode}):\n{out[-8000:]}"
    return out


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook(name):
    "Every chapter's fast cells, top to bottom, with 8 host devices: the fast tier's unit tests."
    _run_notebook(name, devices=8, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_NOTEBOOKS)
def test_notebook_with_slow_cells(name):
    "The chapters that hold `#| slow` cells (learning runs to the env's target), every cell, with 8 host devices."
    _run_notebook(name, devices=8, slow=True)


@pytest.mark.slow
@pytest.mark.one_device
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_on_one_device(name):
    "Every chapter runs top to bottom on one device, as on a Colab GPU or a single TPU chip: its fast cells, without the 8 host devices."
    _run_notebook(name, devices=1, slow=False)


def test_every_notebook_exports_or_is_documentation():
    "A notebook with exported cells declares its module; one with none is a documentation chapter (jax_envs/63_backends)."
    docs = []
    for name in NOTEBOOKS:
        text = (ROOT / "nbs" / name).read_text()
        exports = re.search(r"#\| (export|exports)\b", text)
        if exports:
            assert "#| default_exp" in text, f"{name} has exported cells but no `#| default_exp` cell"
        else:
            docs.append(name)
    assert "01_core.ipynb" not in docs and len(docs) < len(NOTEBOOKS) // 2, f"too many notebooks export nothing: {docs}"
