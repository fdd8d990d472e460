"""Edit rlnb's notebooks as plain text: convert between `.ipynb` and a percent-format `.py`.

    python tools/nbpy.py to-py nbs/01_core.ipynb > /tmp/core.py    # notebook -> text
    python tools/nbpy.py to-nb /tmp/core.py nbs/01_core.ipynb      # text -> notebook

In the text form a line `# %%` starts a code cell and `# %% [markdown]` a markdown cell
whose lines are prefixed with `# `. Cell ids of an existing notebook are kept in order
so diffs stay small. The notebook stays the source: run `nbdev-export` and `nbdev-clean` after.
"""
import re, sys
from pathlib import Path
import nbformat

_MD = '# %% [markdown]'
_CODE = '# %%'


def to_py(nb_path):
    "Render notebook `nb_path` as percent-format text."
    nb = nbformat.read(nb_path, as_version=4)
    out = []
    for c in nb.cells:
        if c.cell_type == 'markdown':
            out.append(_MD)
            out += [('# ' + l) if l else '#' for l in c.source.splitlines()]
        else:
            out.append(_CODE)
            out += c.source.splitlines()
        out.append('')
    return '\n'.join(out)


def _cells(text):
    "Split percent-format `text` into (kind, source) pairs."
    cells, kind, buf = [], None, []
    def flush():
        if kind is not None:
            while buf and not buf[-1].strip(): buf.pop()
            cells.append((kind, '\n'.join(buf)))
    for line in text.splitlines():
        if line.strip() == _MD or line.rstrip() == _CODE:
            flush()
            kind, buf = ('markdown' if line.strip() == _MD else 'code'), []
        elif kind == 'markdown':
            buf.append(re.sub(r'^# ?', '', line) if line.startswith('#') else line)
        elif kind is not None:
            buf.append(line)
    flush()
    return cells


def to_nb(py_path, nb_path):
    "Write the cells of percent-format file `py_path` into notebook `nb_path`."
    old_ids = []
    if Path(nb_path).exists():
        old_ids = [c.get('id') for c in nbformat.read(nb_path, as_version=4).cells]
    nb = nbformat.v4.new_notebook()
    nb.metadata = {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}}
    for i, (kind, src) in enumerate(_cells(Path(py_path).read_text())):
        cell = nbformat.v4.new_markdown_cell(src) if kind == 'markdown' else nbformat.v4.new_code_cell(src)
        if i < len(old_ids) and old_ids[i]: cell['id'] = old_ids[i]
        nb.cells.append(cell)
    nbformat.write(nb, nb_path)


if __name__ == '__main__':
    cmd, *args = sys.argv[1:] or ['help']
    if cmd == 'to-py' and len(args) == 1: print(to_py(args[0]))
    elif cmd == 'to-nb' and len(args) == 2: to_nb(*args)
    else: sys.exit(__doc__)
