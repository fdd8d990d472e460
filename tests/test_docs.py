"""The book documents its API: every public method of an exported class has a docstring and a `show_doc` cell in its notebook."""
import subprocess
import sys

from conftest import ROOT


def test_every_public_method_has_a_docstring_and_a_show_doc_cell():
    proc = subprocess.run([sys.executable, "tools/docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"undocumented methods (python tools/docs.py adds the cells):\n{proc.stdout}{proc.stderr}"


def test_every_exported_constant_is_named_on_its_page():
    "The browser check's API rule, without the build: nbdev gives no heading to an exported constant and hides export cells,"
    " so each constant in a module's __all__ is named in its chapter's prose or a shown cell (or listed as a known gap)."
    import ast
    import json
    import re
    sys.path.insert(0, str(ROOT / "tools"))
    from site_check import KNOWN_API_GAPS, api_pages, chapters_in
    from site_build import page_path
    pages, missing = api_pages(ROOT / "nbs", ROOT / "rlnb"), {}
    for rel in chapters_in(ROOT / "nbs"):
        page = page_path(rel)
        if page not in pages: continue
        shown, defs = [], set()
        for c in json.loads((ROOT / "nbs" / rel).read_text())["cells"]:
            src = "".join(c["source"])
            if c["cell_type"] == "code" and re.match(r"\s*#\|\s*(export|exports|exporti|hide)\b", src):
                try: tree = ast.parse(re.sub(r"^\s*#\|.*$", "", src, flags=re.M))
                except SyntaxError: continue
                for n in ast.walk(tree):  # a definition gets a heading and its docstring (a signature shows default values, not names)
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        defs.add(n.name); shown.append(ast.get_docstring(n) or "")
            else:
                shown.append(src)
        text = "\n".join(shown)
        miss = [n for n in pages[page] if n not in defs and n not in KNOWN_API_GAPS.get(page, [])
                and not re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text)]
        if miss: missing[page] = miss
    assert not missing, f"exported names their page never shows (a backticked mention in the prose fixes each): {missing}"
