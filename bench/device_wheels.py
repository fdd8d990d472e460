"""Fill `.whl/` with what a lent GPU machine lacks for `bench/accelerator.py`, Pong and EnvPool included.

    python bench/device_wheels.py [--dir .whl] [--python 3.12]

The device machines (bench/README.md, "On a lent GPU") reach no network and run Python 3.12 with JAX, flax, optax,
chex, numpy, matplotlib, absl-py, attrs and wrapt already there. This downloads, for that Python, the wheels of
gymnasium, farama-notifications, ale-py, tensorboardX, dm-env, dm-tree and optree, at the versions this machine's
environment has where it has them, and unpacks EnvPool cut to its Atari and classic-control envs, with the Atari ROMs,
into `.whl/ep/`: the whole EnvPool wheel (about 53 MB) and its assets package are more than a call carries beside the
tree (64 MiB). Then, on the device machine, with `.whl` in `carry`:

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \\
      && export PYTHONPATH=/tmp/site:$PWD/.whl/ep:$PWD PYTHONUNBUFFERED=1 RLNB_BENCH_MACHINE=nvidia-h100-x1 \\
      && python3 bench/accelerator.py ...

`.whl/` must be ignored by git (`echo /.whl/ >> .git/info/exclude`) and is named in `carry`.
"""
import argparse
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import zipfile

PLATFORMS = ('manylinux_2_28_x86_64', 'manylinux_2_27_x86_64', 'manylinux_2_24_x86_64', 'manylinux_2_17_x86_64',
             'manylinux2014_x86_64', 'manylinux1_x86_64')
WHEELS = ('gymnasium', 'farama-notifications', 'ale-py', 'tensorboardX', 'dm-env', 'dm-tree', 'optree')
ENVPOOL_KEEP = {'atari', 'classic_control', 'python', 'toy_text'}  # envpool's subpackages that stay


def pinned(name):
    "`name==version` of this environment's copy, so the device runs what was tested here; the newest where it is absent."
    try: return f"{name}=={importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError: return name


def download(reqs, dest, python):
    cmd = [sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '--python-version', python,
           '--implementation', 'cp', '-d', str(dest)]
    for p in PLATFORMS: cmd += ['--platform', p]
    subprocess.run(cmd + list(reqs), check=True)


def envpool_cut(wheel, dest, assets):
    "Unpack the EnvPool `wheel` into `dest` with only `ENVPOOL_KEEP` and an entry point that registers just those, plus the Atari ROMs of `assets`."
    if dest.exists(): shutil.rmtree(dest)
    zipfile.ZipFile(wheel).extractall(dest)
    ep = dest / 'envpool'
    for d in ep.iterdir():
        if d.is_dir() and d.name not in ENVPOOL_KEEP and d.name != '__pycache__': shutil.rmtree(d)
    (ep / 'entry.py').write_text('"Registers the envs this cut copy keeps: Atari and classic control."\n'
                                 'import envpool.atari.registration  # noqa: F401\nimport envpool.classic_control.registration  # noqa: F401\n')
    shutil.rmtree(dest / 'envpool.libs', ignore_errors=True)  # Qt, for procgen only
    (dest / 'envpool_assets').mkdir()
    shutil.copy(assets / '__init__.py', dest / 'envpool_assets')
    shutil.copytree(assets / 'atari', dest / 'envpool_assets' / 'atari')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--dir', default='.whl')
    ap.add_argument('--python', default='3.12', help="the device machine's Python (KINDS.md: 3.12)")
    a = ap.parse_args()
    dest = pathlib.Path(a.dir)
    dest.mkdir(exist_ok=True)
    download([pinned(n) for n in WHEELS], dest, a.python)
    try: import envpool_assets
    except ImportError: sys.exit("envpool_assets is not installed here: pip install envpool (the dev extra has it), then run this again.")
    tmp = dest / '_envpool'
    download([pinned('envpool')], tmp, a.python)
    envpool_cut(next(tmp.glob('envpool-*.whl')), dest / 'ep', pathlib.Path(envpool_assets.__file__).parent)
    shutil.rmtree(tmp)
    size = sum(f.stat().st_size for f in dest.rglob('*') if f.is_file())
    print(f"{dest}: {size / 2**20:.1f} MiB ({', '.join(sorted(f.name for f in dest.glob('*.whl')))}; ep/: envpool cut)")


if __name__ == '__main__':
    main()
