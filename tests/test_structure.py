"""Static checks of the package's shape (issue 54): the runtime is a composition of parts, not one object every part writes into.

- no class in `rlnb` has more than two bases (Protocol, ABC, Generic, NamedTuple, Enum and exceptions aside);
- no class carries a method defined in another module (nbdev's `@patch_to` stays inside the class's own notebook);
- an algorithm object has a bounded public surface: at most `MAX_PUBLIC` names, not counting the `a<name>` coroutine
  twins of its methods (the same call for a notebook whose event loop is already running).
"""
import abc
import enum
import importlib
import inspect
import pkgutil
import typing

import pytest

import rlnb

MAX_PUBLIC = 45
SKIP_MODULES = {'rlnb.cli'}  # the command line: a module of functions, imported by the `rlnb` script
NEUTRAL_BASES = {object, typing.Generic, abc.ABC, enum.Enum, tuple}


def _modules():
    for m in pkgutil.walk_packages(rlnb.__path__, 'rlnb.'):
        if m.ispkg or m.name.rpartition('.')[2].startswith('_') or m.name in SKIP_MODULES: continue
        try: yield importlib.import_module(m.name)
        except ImportError as e: pytest.skip(f'{m.name} needs an optional extra: {e}')  # noqa: PT  an extra not installed


def _classes():
    for mod in _modules():
        for name, c in vars(mod).items():
            if inspect.isclass(c) and c.__module__ == mod.__name__: yield mod, name, c


def _counted_bases(c):
    return [b for b in c.__bases__ if b not in NEUTRAL_BASES and not issubclass(b, BaseException)
            and not getattr(b, '_is_protocol', False) and b.__name__ != 'NamedTuple']


def test_no_class_has_more_than_two_bases():
    wide = {f'{mod.__name__}.{name}': [b.__name__ for b in _counted_bases(c)] for mod, name, c in _classes() if len(_counted_bases(c)) > 2}
    assert not wide, f'classes with more than two bases: {wide}'


def _function_of(v):
    if isinstance(v, property): return v.fget
    return getattr(v, '__func__', v)


def _foreign_methods(classes):
    "`module.Class.method (from module)` for each method of `classes` ((module, name, class) triples) defined in another rlnb module."
    out = []
    for mod, name, c in classes:
        for k, v in vars(c).items():
            f = _function_of(v)
            where = getattr(f, '__module__', None) if inspect.isfunction(f) else None
            if where and where.startswith('rlnb') and where != mod.__name__: out.append(f'{mod.__name__}.{name}.{k} (from {where})')
    return out


def test_no_method_is_added_from_another_module():
    foreign = _foreign_methods(_classes())
    assert not foreign, f"methods defined outside their class's module: {foreign}"


def test_the_checks_catch_what_they_forbid():
    "A method patched onto a class from another module is reported, and so is a class of three bases."
    import types
    from fastcore.basics import patch_to
    home, other = types.ModuleType('rlnb.home'), types.ModuleType('rlnb.other')
    Part = type('Part', (), {'__module__': home.__name__})
    ns = {'patch_to': patch_to, 'Part': Part, '__name__': other.__name__}
    exec('@patch_to(Part)\ndef extra(self): return 1', ns)
    assert _foreign_methods([(home, 'Part', Part)]) == ['rlnb.home.Part.extra (from rlnb.other)']
    A, B, C = (type(n, (), {}) for n in 'ABC')
    assert len(_counted_bases(type('Wide', (A, B, C), {}))) == 3
    assert _counted_bases(type('Err', (ValueError,), {})) == []


def _public(obj):
    names = {a for a in dir(obj) if not a.startswith('_')}
    twins = {a for a in names if a.startswith('a') and a[1:] in names}
    return sorted(names - twins)


@pytest.mark.parametrize('algo', ['apex-dqn', 'impala', 'ppo', 'sac', 'td3', 'r2d2', 'pqn'])
def test_an_algorithm_object_has_a_bounded_public_surface(algo):
    from rlnb.runtime.registry import get_algo
    from rlnb.runtime.runtime import Runtime
    env = {'sac': 'Pendulum-v1', 'td3': 'Pendulum-v1'}.get(algo, 'CartPole-v1')
    rt = Runtime(env, algorithm=get_algo(algo), seed=0)
    try:
        names = _public(rt)
        assert len(names) <= MAX_PUBLIC, f'{algo}: {len(names)} public names (at most {MAX_PUBLIC}): {names}'
        for part in ('actors', 'learner', 'evaluator', 'spec', 'pacing'): assert part in names  # the parts, each named once
    finally: rt.close()


# The book in sections: one number per notebook, and no module imports a module of a later chapter.

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 500
OVER_500 = {}  # module -> a recorded size over MAX_MODULE_LINES, for a module still to split (none now)


def _chapters():
    "(number, notebook path relative to nbs/, module or None) for every numbered notebook."
    out = []
    for p in sorted((ROOT / 'nbs').rglob('[0-9]*.ipynb')):
        if '.ipynb_checkpoints' in p.parts: continue
        src = '\n'.join(''.join(c['source']) for c in json.loads(p.read_text())['cells'])
        m = re.search(r'^#\| default_exp (\S+)', src, re.M)
        out.append((int(p.name.split('_')[0]), p.relative_to(ROOT / 'nbs').as_posix(), m and f'rlnb.{m.group(1)}'))
    return out


def _imported_modules(path: Path, module: str) -> set:
    "The rlnb modules `path` (the file of `module`) imports, anywhere in it (lazy imports in functions too)."
    out, package = set(), module.rpartition('.')[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            if not base.startswith('rlnb'): continue
            names = [f'{base}.{a.name}' for a in node.names]  # `from . import x` names a module
            out |= {n for n in names if (ROOT / (n.replace('.', '/') + '.py')).exists()} or {base}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith('rlnb.')}
    return out - {'rlnb'}


def test_every_notebook_has_a_number_of_its_own():
    numbers = {}
    for n, path, _ in _chapters(): numbers.setdefault(n, []).append(path)
    twice = {n: ps for n, ps in numbers.items() if len(ps) > 1}
    assert not twice, f'notebook numbers used more than once: {twice}'


def test_book_order_is_import_order():
    "Each module imports only modules whose notebooks come earlier in the book, and its notebook's folder is its package."
    number = {mod: n for n, _, mod in _chapters() if mod}
    late = []
    for n, path, mod in _chapters():
        if not mod: continue
        assert path.rpartition('/')[0] == mod[len('rlnb.'):].rpartition('.')[0], f'{path} exports {mod}: its folder should be its package'
        for dep in _imported_modules(ROOT / (mod.replace('.', '/') + '.py'), mod):
            if dep in number and number[dep] >= n: late.append(f'{mod} ({n}) imports {dep} ({number[dep]})')
    assert not late, f'modules importing a later chapter: {late}'


def test_import_order_check_reads_relative_imports():
    tree = ROOT / 'rlnb' / 'algos' / 'ppo.py'
    assert {'rlnb.algos.impala', 'rlnb.runtime.runtime', 'rlnb.core'} <= _imported_modules(tree, 'rlnb.algos.ppo')


def test_modules_stay_under_500_lines():
    sizes = {p.relative_to(ROOT / 'rlnb').as_posix(): len(p.read_text().splitlines()) for p in (ROOT / 'rlnb').rglob('*.py')
             if not p.name.startswith('_')}
    over = {f: n for f, n in sizes.items() if n > OVER_500.get(f, MAX_MODULE_LINES)}
    assert not over, f'modules over {MAX_MODULE_LINES} lines (or grown past their recorded size): {over}'


def test_ppo_reading_list_is_true_and_short():
    "52_ppo's introduction lists the files that hold PPO with their line counts: the counts match, and the reading stays about 1,200 lines."
    intro = ''.join(''.join(c['source']) for c in json.loads((ROOT / 'nbs/algos/52_ppo.ipynb').read_text())['cells'][:10])
    rows = re.findall(r'^\| `rlnb/(\S+\.py)`[^\n]*\| (\d[\d,]*) \|$', intro, re.M)
    assert len(rows) == 4, f'the reading table should list four files, found {rows}'
    lines = {f: len((ROOT / 'rlnb' / f).read_text().splitlines()) for f, _ in rows}
    assert {f: int(n.replace(',', '')) for f, n in rows} == lines, f'line counts changed: {lines}; update 52_ppo\'s table'
    spec = (ROOT / 'rlnb/runtime/spec.py').read_text().splitlines()
    spec_part = len(spec) - next(i for i, l in enumerate(spec) if l.startswith('class Spec('))
    assert f'its last {spec_part + 1} lines' in intro or f'its last {spec_part} lines' in intro, spec_part
    assert sum(lines.values()) - lines['runtime/spec.py'] + spec_part <= 1_200


MAX_EXPORT_CELL_LINES = 60


def _export_cells():
    "(notebook, cell index, line count) of every exported code cell in the book."
    for p in sorted((ROOT / 'nbs').rglob('*.ipynb')):
        if '.ipynb_checkpoints' in p.parts: continue
        for i, c in enumerate(json.loads(p.read_text())['cells']):
            src = ''.join(c['source'])
            if c['cell_type'] == 'code' and re.search(r'^#\|\s*export', src, re.M):
                yield p.relative_to(ROOT / 'nbs').as_posix(), i, src.count('\n') + 1


def test_export_cells_are_small():
    "One definition (or a small family) per exported cell: none over 60 lines, the median about 15 (issue 54)."
    cells = list(_export_cells())
    big = [f'{nb} cell {i}: {n} lines' for nb, i, n in cells if n > MAX_EXPORT_CELL_LINES]
    assert not big, f'export cells over {MAX_EXPORT_CELL_LINES} lines: {big}'
    sizes = sorted(n for _, _, n in cells)
    assert sizes[len(sizes) // 2] <= 16, f'the median export cell is {sizes[len(sizes) // 2]} lines'


JAX_ENV_FLAGS = {'gymnax': 'jaxenvs', 'brax': 'brax', 'jumanji': 'jumanji'}  # the extra each JAX env id needs, as a tst_flag
_BUILDS_JAX_ENV = re.compile(r"\b(?:[A-Z]\w*|make_\w+)\(\s*['\"](gymnax|brax|jumanji):")


def _unflagged_jax_env_cells(cells):
    "(index, kind) of the test cells that build an agent or env on a JAX env id without the flag its optional extra has."
    for i, c in enumerate(cells):
        src = ''.join(c['source'])
        if c['cell_type'] != 'code' or re.search(r'^#\|\s*(export|notest|slow)', src, re.M): continue
        for kind in set(_BUILDS_JAX_ENV.findall(src)):
            guarded = re.search(rf'^\s*try:\s*import {kind}\b', src, re.M)  # a cell that checks for the extra itself
            if not guarded and not re.search(rf'^#\|\s*{JAX_ENV_FLAGS[kind]}\b', src, re.M): yield i, kind


def test_cells_on_jax_envs_carry_their_extras_flag():
    "A test cell that builds a gymnax/brax/jumanji env is flagged, so that a run without the extra (CI's newest-Python job) skips it."
    bad = [f'{p.relative_to(ROOT / "nbs").as_posix()} cell {i} ({kind}: add `#| {JAX_ENV_FLAGS[kind]}`)'
           for p in sorted((ROOT / 'nbs').rglob('*.ipynb')) if '.ipynb_checkpoints' not in p.parts
           for i, kind in _unflagged_jax_env_cells(json.loads(p.read_text())['cells'])]
    assert not bad, f'cells that fail where the extra is not installed: {bad}'
    cell = lambda s: {'cell_type': 'code', 'source': [s]}
    assert list(_unflagged_jax_env_cells([cell("ag = PQN('gymnax:CartPole-v1')")])) == [(0, 'gymnax')]
    assert not list(_unflagged_jax_env_cells([cell("#| jaxenvs\nag = PQN('gymnax:CartPole-v1')"),
                                              cell("test_eq(run_name('ppo', 'brax:ant'), 'x')")]))
