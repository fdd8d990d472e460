"""Test setup shared by every test: 8 host devices (the shape of a TPU v4-8 / v5e-8 or an 8-GPU host) before jax is imported, and SIGINT delivered."""
import os
import signal

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# A shell's background job (`nohup pytest &`, some CI wrappers) starts with SIGINT ignored, and every child process
# inherits "ignored", so the tests that interrupt a child would see it carry on. Children of a process that *handles*
# SIGINT start with the default disposition, as under a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def skip_slow(config) -> bool:
    "True when the run deselects slow tests (`-m 'not slow'`)."
    return "not slow" in (config.getoption("-m") or "")
