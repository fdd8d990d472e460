"""Generate README.md from nbs/index.ipynb (nbdev's own renderer needs Quarto, which cannot be installed here).

    python tools/readme.py          # write README.md
    python tools/readme.py --check  # exit 1 if README.md is out of step with the notebook
"""
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SITE_ONLY = "<!-- site only"  # a markdown cell that starts so is on the book's home page, not in README.md


def render() -> str:
    "Markdown cells as they are, code cells as python blocks; outputs are not included, nor cells marked for the site only."
    nb = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4)
    parts = []
    for c in nb.cells:
        src = c.source.strip()
        lines = src.splitlines()
        directives = [l for l in lines if l.startswith("#|")]
        if not src or any("hide" in d or "export" in d for d in directives) or src.startswith(SITE_ONLY): continue
        src = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        parts.append(src if c.cell_type == "markdown" else f"```python\n{src}\n```")
    body = "\n\n".join(parts) + "\n"
    return body.replace("\n> ", "\n", 1) if body.startswith("# ") else body


if __name__ == "__main__":
    text, readme = render(), ROOT / "README.md"
    if "--check" in sys.argv:
        ok = readme.exists() and readme.read_text() == text
        print("README.md is in step with nbs/index.ipynb" if ok else "README.md is out of step: run python tools/readme.py")
        sys.exit(0 if ok else 1)
    readme.write_text(text)
