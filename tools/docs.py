"""Give every public method of rlnb's exported classes its documentation cell in the notebook that defines it.

    python tools/docs.py          # insert the missing `show_doc` cells (then nbdev-clean)
    python tools/docs.py --check  # exit 1 and list the methods that have none (tests/test_docs.py runs this)

A class's methods are shown right below the cell that defines them (the class cell, or a `@patch_to(Class)` cell), one
`show_doc` per method, so the rendered book lists each method with its signature, argument comments and docstring.
"""
import importlib
import inspect
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
IMPORT = "#| hide\nfrom nbdev.showdoc import show_doc"


def public_methods(cls) -> list:
    "Names of the methods `cls` itself defines (functions, classmethods, staticmethods; properties are documented by their docstring)."
    fns = {k: getattr(v, '__func__', v) for k, v in vars(cls).items() if not k.startswith('_') and (inspect.isfunction(v) or isinstance(v, (classmethod, staticmethod)))}
    return [k for k, f in fns.items() if f.__module__ == cls.__module__]  # not the methods a decorator generates (flax.struct's `replace`)


def exported_classes(mod) -> list:
    return [getattr(mod, n) for n in getattr(mod, '__all__', []) if inspect.isclass(getattr(mod, n)) and getattr(mod, n).__module__ == mod.__name__]


def _class_segment(src: str, name: str) -> str | None:
    "The lines of `class name` in a cell, up to the next top-level statement."
    lines, out = src.splitlines(), None
    for line in lines:
        if out is None:
            if re.match(rf'class {name}\b', line): out = [line]
        elif line and not line[0].isspace() and not line.startswith('#'): break
        else: out.append(line)
    return None if out is None else '\n'.join(out)


def defining_cells(nb, cls) -> dict:
    "Index of the export cell that defines each public method of `cls`."
    where = {}
    for i, c in enumerate(nb.cells):
        if c.cell_type != 'code' or '#| export' not in c.source: continue
        seg = _class_segment(c.source, cls.__name__)
        if seg is not None:
            for m in re.findall(r'^    (?:async )?def (\w+)\(', seg, re.M): where.setdefault(m, i)
        if re.search(rf'@patch_to\({cls.__name__}\b|self:\s*{cls.__name__}\b', c.source):
            for m in re.findall(r'^(?:async )?def (\w+)\(', c.source, re.M): where.setdefault(m, i)
    return where


def documented(nb, cls) -> set:
    "Methods of `cls` named in a cell that calls `show_doc`."
    text = '\n'.join(c.source for c in nb.cells if c.cell_type == 'code' and 'show_doc' in c.source)
    return set(re.findall(rf'\b{cls.__name__}\.(\w+)\b', text))


def doc_cell(cls, names) -> str:
    return '\n'.join(f"show_doc({cls.__name__}.{m})" for m in names) if len(names) == 1 else \
        "#| echo: false\nfor _m in (\n" + ''.join(f"    {cls.__name__}.{m},\n" for m in names) + "): display(show_doc(_m))"


def missing():
    "(notebook, class, method, reason) for every public method without a docstring or a documentation cell."
    out = []
    for path in sorted(p for p in (ROOT / 'nbs').rglob('[0-9]*.ipynb') if '.ipynb_checkpoints' not in p.parts):
        nb = nbformat.read(path, as_version=4)
        m = re.search(r'#\| default_exp (\S+)', '\n'.join(c.source for c in nb.cells))
        if not m: continue
        mod = importlib.import_module(f'rlnb.{m.group(1)}')
        for cls in exported_classes(mod):
            shown = documented(nb, cls)
            for name in public_methods(cls):
                if not inspect.getdoc(getattr(cls, name)): out.append((path.relative_to(ROOT / 'nbs').as_posix(), cls.__name__, name, 'no docstring'))
                if name not in shown: out.append((path.relative_to(ROOT / 'nbs').as_posix(), cls.__name__, name, 'no show_doc cell'))
    return out


def fix():
    for path in sorted(p for p in (ROOT / 'nbs').rglob('[0-9]*.ipynb') if '.ipynb_checkpoints' not in p.parts):
        nb = nbformat.read(path, as_version=4)
        m = re.search(r'#\| default_exp (\S+)', '\n'.join(c.source for c in nb.cells))
        if not m: continue
        mod = importlib.import_module(f'rlnb.{m.group(1)}')
        inserts = {}  # cell index -> [(cls, names)]
        for cls in exported_classes(mod):
            shown, where = documented(nb, cls), defining_cells(nb, cls)
            todo = [n for n in public_methods(cls) if n not in shown]
            for i in sorted({where[n] for n in todo if n in where}):
                inserts.setdefault(i, []).append((cls, [n for n in todo if where.get(n) == i]))
            if any(n not in where for n in todo): print(f"{path.relative_to(ROOT / 'nbs').as_posix()}: {cls.__name__}: no defining cell found for {[n for n in todo if n not in where]}")
        if not inserts: continue
        for i in sorted(inserts, reverse=True):
            for cls, names in reversed(inserts[i]): nb.cells.insert(i + 1, nbformat.v4.new_code_cell(doc_cell(cls, names)))
        if not any('from nbdev.showdoc import show_doc' in c.source for c in nb.cells):
            at = next(i for i, c in enumerate(nb.cells) if '#| default_exp' in c.source)
            nb.cells.insert(at + 1, nbformat.v4.new_code_cell(IMPORT))
        nbformat.write(nb, path)
        print(f"{path.relative_to(ROOT / 'nbs').as_posix()}: {sum(len(n) for v in inserts.values() for _, n in v)} methods documented")


if __name__ == '__main__':
    if '--check' in sys.argv:
        gaps = missing()
        for g in gaps: print(*g)
        sys.exit(1 if gaps else 0)
    fix()
