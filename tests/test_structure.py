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


@pytest.mark.parametrize('algo', ['apex-dqn', 'impala', 'ppo', 'sac', 'td3', 'r2d2'])
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
