"""Test setup shared by every test: 8 host devices (the shape of a TPU v2-8) before jax is imported."""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def skip_slow(config) -> bool:
    "True when the run deselects slow tests (`-m 'not slow'`)."
    return "not slow" in (config.getoption("-m") or "")
