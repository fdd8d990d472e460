__version__ = "0.0.1"


def __getattr__(name):
    "`rlnb.load_policy` (imported on first use: `import rlnb` stays light)."
    if name == 'load_policy':
        from .agent import load_policy
        return load_policy
    raise AttributeError(f"module 'rlnb' has no attribute {name!r}")
