"""Test setup shared by every test: 8 host devices (the shape of a TPU v4-8 / v5e-8 or an 8-GPU host) before jax is imported, one XLA compilation cache for the run, and SIGINT delivered."""
import atexit
import os
import shutil
import signal
import tempfile


def other_xla_flags() -> str:
    """The caller's `XLA_FLAGS` without the host device count: for instance `--xla_cpu_max_isa=AVX2`, which runs
    the suite on another instruction set than this CPU's default. Every child process the tests start keeps them."""
    flags = os.environ.get("XLA_FLAGS", "").split()
    return " ".join(f for f in flags if not f.startswith("--xla_force_host_platform_device_count"))


def xla_flags(devices: int = 8) -> str:
    "`XLA_FLAGS` with `devices` host devices and the caller's other flags."
    return f"{other_xla_flags()} --xla_force_host_platform_device_count={devices}".strip()


os.environ["XLA_FLAGS"] = xla_flags(8)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# One persistent XLA compilation cache for the run, shared by every process the tests start (notebooks, CLI runs,
# workers): many tests build agents whose programs are identical (a det check's repeated runs, the same small networks
# in several tests), and a program compiled once is then loaded, not compiled again. A loaded program is the same
# machine code, so results and bit-identity checks are unchanged; only `count_compiles` sees fewer compilations. The
# cache starts empty and is removed at the end. `JAX_COMPILATION_CACHE_DIR=` (empty) runs the tests without it.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _xla_cache = tempfile.mkdtemp(prefix="rlnb-tests-xla-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _xla_cache
    atexit.register(shutil.rmtree, _xla_cache, ignore_errors=True)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.3")  # JAX's default is 1 s; trivial programs stay out

# A shell's background job (`nohup pytest &`, some CI wrappers) starts with SIGINT ignored, and every child process
# inherits "ignored", so the tests that interrupt a child would see it carry on. Children of a process that *handles*
# SIGINT start with the default disposition, as under a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

