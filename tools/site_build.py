"""Build the book's website into `_docs/`: every chapter in book order, its API reference, search, the results page.

    python tools/site_build.py                 # build _docs/ (pip install -e ".[docs]" first)
    python tools/site_build.py --no-execute    # the walkthrough chapters without their outputs (faster)
    python -m http.server -d _docs 8000  # then read it at http://localhost:8000/

nbdev's notebook processing makes each page: it adds a `show_doc` cell under every exported definition, runs the
import, export and `show_doc` cells to render the API reference, and drops the exported source and hidden cells (nbdev's
own `nbdev-docs` hands the result to Quarto, whose binary cannot be installed where this project builds: its PyPI
package downloads it from GitHub at install time). The walkthrough chapters (WALKTHROUGH: the home page, the agent
chapter, each algorithm) run whole, every cell that `nbdev-test` runs (no `#| slow` cell), so their outputs and figures
are on the site. nbconvert renders each processed notebook to HTML inside one page layout with the sidebar; each page
also has its markdown twin at `PAGE.html.md`, the address the module docstrings link to. Links to the site's own
address (https://rlnb.github.io/rlnb/...) become relative, so the site works from any folder or server.

nbdev runs every cell that imports anything, so a cell that imports and then uses a name from an earlier test cell fails
when run for the docs. The build leaves such a cell's output out and names it on stderr (the fix belongs in the notebook:
the import in a cell of its own); a chapter whose export or `show_doc` cells fail is run whole instead, and named too.
"""
import argparse
import concurrent.futures as cf
import html
import json
import multiprocessing
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS, PROC, OUT = ROOT / "nbs", ROOT / "_proc", ROOT / "_docs"
SITE_URL = "https://rlnb.github.io/rlnb/"
REPO_URL = "https://github.com/rlnb/rlnb"
WALKTHROUGH = ["index.ipynb", "agent/73_agent.ipynb", "algos/5*.ipynb"]  # run whole at build time
# The sidebar: the home page, then the chapters by number, grouped by section, then the other pages ("More").
SECTIONS = {".": "Base", "envs": "Env workers", "replay": "Replay", "coax": "The coax layer", "runtime": "The runtime",
            "algos": "Algorithms", "jax_envs": "JAX envs", "agent": "The agent"}
LAST = {"80_cli.ipynb": "Command line"}  # top-level chapters after the sections


def chapters() -> list:
    "Every notebook of the book, relative to nbs/, in book order (by number; index and unnumbered pages first)."
    nbs = [p.relative_to(NBS) for p in NBS.rglob("*.ipynb") if not any(s.startswith((".", "_")) for s in p.relative_to(NBS).parts)]
    def key(p):
        m = re.match(r"(\d+)_", p.name)
        return (0 if p.name == "index.ipynb" else 1 if m else 2, int(m.group(1)) if m else 0, p.as_posix())
    return sorted(nbs, key=key)


def page_path(rel: Path) -> str:
    "The page of a notebook: its folder, its name without the number prefix, `.html` (as nbdev and Quarto name it)."
    return (rel.parent / (re.sub(r"^\d+_", "", rel.stem) + ".html")).as_posix()


def is_walkthrough(rel: Path) -> bool:
    return any(rel.match(g) and len(rel.parts) == len(Path(g).parts) for g in WALKTHROUGH)


# --- processing (one spawned process per notebook, as nbdev's proc_nbs) ---------------------------------------------

def _process(job):
    "nbdev's docs processing of one notebook; with `whole`, every cell nbdev-test runs is run too. (ok, seconds, error)."
    src, dst, whole = job
    t0 = time.time()
    os.environ["IN_TEST"] = "1"
    os.chdir(src.parent)  # as nbdev-test runs a notebook
    import nbdev.processors as P
    from fastcore.nbio import read_nb, write_nb
    from nbdev.config import get_config
    from nbdev.processors import FilterDefaults
    if whole:
        flags = set(str(get_config().tst_flags or "").split())
        def _do_eval(cell):
            d = cell.directives_ or {}
            if cell.cell_type != "code" or not cell.source.strip() or flags & d.keys(): return
            if str(d.get("eval", "")).lower() in ("false", "['false']"): return
            return True
        P._do_eval = _do_eval
    class exec_docs(P.exec_show_docs):
        "nbdev's rule (run whole: every cell nbdev-test runs), except that a cell no API doc needs may fail: it shows no output."
        def __call__(self, cell):
            if whole: self.nb.has_docs_ = True
            if not self.nb.has_docs_ or not hasattr(self, "k") or not P._do_eval(cell): return
            fm = getattr(self.nb, "frontmatter_", {})
            if str(fm.get("skip_showdoc", "")).lower() in ("true", "1", "yes"): return
            needed = (cell.directives_ or {}).keys() & {"export", "exports", "exporti", "exec_doc"} or P._show_docs(cell.parsed_())
            outputs = cell.get("outputs", [])
            self.k.cell(cell)
            if (e := self.k.exc) is None: return
            if needed: raise Exception(f"Error in cell {cell.idx_}:\n{cell.source}\n{type(e).__name__}: {e}") from e
            tolerated.append(f"cell {cell.idx_} ({cell.source.splitlines()[0][:80]!r}): {type(e).__name__}: {e}"[:300])
            cell.outputs = outputs
    class Docs(FilterDefaults):
        def base_procs(self): return [exec_docs if p is P.exec_show_docs else p for p in super().base_procs()]
    filt = Docs()
    tolerated = []
    try:
        nb = read_nb(src)
        filt(nb)
        dst.parent.mkdir(parents=True, exist_ok=True)
        write_nb(nb, dst)
        return True, time.time() - t0, "\n".join(tolerated)
    except Exception as e:
        return False, time.time() - t0, f"{type(e).__name__}: {e}"[-3000:]


failed_cells = {}  # {notebook: the cells that failed and were left without output}


def process(rels, execute: bool, workers: int) -> dict:
    "Process every notebook into _proc/; returns {rel: (mode, seconds)} and exits on a failure."
    shutil.rmtree(PROC, ignore_errors=True)
    jobs = {rel: (NBS / rel, PROC / rel, execute and is_walkthrough(rel)) for rel in rels}
    timing, failed = {}, {}
    failed_cells.clear()
    ctx = multiprocessing.get_context("spawn")
    # the workers find `_process` by this module's name: IPython, which runs the cells, takes over `__main__` in a worker
    sys.path.insert(0, str(Path(__file__).parent))
    from site_build import _process
    # Two lanes: the API pages in processes that live on (imports are paid once, as nbdev's proc_nbs does), and the
    # chapters run whole each in a fresh process (they start actors, threads and processes of their own).
    n_whole = max(1, workers // 2)  # the lanes share the cores: a chapter run whole waits on its actors and processes
    with cf.ProcessPoolExecutor(workers, mp_context=ctx) as api, \
         cf.ProcessPoolExecutor(n_whole, mp_context=ctx, max_tasks_per_child=1) as whole:
        futs = {(whole if job[2] else api).submit(_process, job): rel
                for rel, job in sorted(jobs.items(), key=lambda kv: not kv[1][2])}
        retry = {}
        for f in cf.as_completed(futs):
            rel = futs[f]
            ok, s, err = f.result()
            if ok:
                timing[rel] = ("whole" if jobs[rel][2] else "api", s)
                if err: print(f"site: {rel}: cells that fail (their outputs are left out; run whole: the chapter's test fails, see"
                              f" nbdev-test; else: a cell nbdev runs for its imports needs an earlier test cell, so the import belongs in a"
                              f" cell of its own):\n  " + err.replace("\n", "\n  "), file=sys.stderr)
                if err: failed_cells[rel.as_posix()] = err.splitlines()
            elif not jobs[rel][2]:  # run it whole instead, and say so
                print(f"site: {rel}: its docs cells fail when run alone; running it whole instead. Fix the notebook:\n  {err.splitlines()[0]}\n"
                      + "\n".join("    " + l for l in err.splitlines()[1:12]), file=sys.stderr)
                retry[whole.submit(_process, (NBS / rel, PROC / rel, True))] = rel
            else: failed[rel] = err
        for f in cf.as_completed(retry):
            rel = retry[f]
            ok, s, err = f.result()
            if ok: timing[rel] = ("whole (fallback)", s)
            else: failed[rel] = err
    if failed:
        for rel, err in failed.items(): print(f"site: FAIL: {rel}:\n{err}", file=sys.stderr)
        sys.exit(1)
    return timing


# --- rendering --------------------------------------------------------------------------------------------------------

def _directives(src: str) -> tuple:
    "The Quarto `#| key: value` lines of a processed cell, and its source without them."
    d, keep = {}, []
    for line in src.splitlines():
        m = re.match(r"#\|\s*([\w-]+)\s*:?\s*(.*)$", line)
        if m: d[m.group(1)] = m.group(2).strip().lower()
        else: keep.append(line)
    return d, "\n".join(keep).strip("\n")


def _pandoc_md(md: str) -> str:
    "Markdown with Pandoc's link attributes (`[x](url){target=...}`) made plain."
    return re.sub(r"(\]\([^)\s]+\))\{[^}]*\}", r"\1", md)


def prepare(nb):
    "The processed notebook as nbconvert renders it: frontmatter out, Quarto directives applied, plain markdown."
    import nbformat
    fm, cells = {}, []
    for c in nb.cells:
        if c.cell_type == "raw" and c.source.startswith("---"):
            import yaml
            fm.update(yaml.safe_load(c.source.strip().strip("-")) or {})
            continue
        if c.cell_type == "markdown":
            if "AUTOGENERATED! DO NOT EDIT" in c.source: continue
            c.source = _pandoc_md(c.source)
        elif c.cell_type == "code":
            d, c.source = _directives(c.source)
            if d.get("include") == "false": continue
            if d.get("output") == "false": c.outputs = []
            if d.get("echo") == "false": c.source, c.metadata = "", {"tags": ["remove_input"]}
            for o in c.get("outputs", []):
                if "data" in o and "text/markdown" in o.data: o.data["text/markdown"] = _pandoc_md(o.data["text/markdown"])
            if not c.source and not c.get("outputs"): continue
        c.metadata = {k: v for k, v in c.metadata.items() if k == "tags"}
        for k in list(c.keys()):
            if k not in ("cell_type", "id", "metadata", "source", "outputs", "execution_count", "attachments"): del c[k]
        cells.append(c)
    nb.cells = cells
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return fm, nb


def pandoc_id(text: str) -> str:
    "The identifier Pandoc (and so Quarto and nbdev's links) gives a heading."
    s = re.sub(r"[^\w\s.-]", "", text.strip().lower()).strip()
    s = re.sub(r"\s+", "-", s)
    return re.sub(r"^[^a-z_]+", "", s) or "section"


def _fix_headings(body: str) -> str:
    def fix(m):
        level, attrs, inner = m.group(1), m.group(2), m.group(3)
        text = html.unescape(re.sub(r"<[^>]+>", "", inner)).replace("¶", "").strip()
        hid = pandoc_id(text)
        attrs = re.sub(r'\s*id="[^"]*"', "", attrs)
        inner = re.sub(r'<a class="anchor-link" href="#[^"]*">', f'<a class="anchor-link" href="#{hid}">', inner)
        return f'<h{level} id="{hid}"{attrs}>{inner}</h{level}>'
    return re.sub(r"<h([1-6])([^>]*)>(.*?)</h\1>", fix, body, flags=re.S)


def _fix_links(body: str, here: str, pages: dict) -> str:
    "Links to the site's own address and to notebooks become relative links to their pages."
    up = "../" * here.count("/")
    def fix(m):
        attr, url = m.group(1), html.unescape(m.group(2))
        if url.startswith(SITE_URL): url = up + url[len(SITE_URL):]
        elif not re.match(r"^[a-z]+:|^#|^/", url):
            path, _, frag = url.partition("#")
            if path.endswith(".ipynb"):
                target = (Path(here).parent / path).as_posix()
                target = os.path.normpath(target)
                if target.startswith("nbs/"): target = target[4:]
                if target in pages: url = os.path.relpath(pages[target], Path(here).parent.as_posix() or ".") + ("#" + frag if frag else "")
        return f'{attr}="{html.escape(url, quote=True)}"'
    return re.sub(r'\b(href|src)="([^"]*)"', fix, body)


def render(rels) -> list:
    "Every page's (rel, path, title, section, html body, markdown)."
    import nbformat
    from nbconvert import HTMLExporter, MarkdownExporter
    from traitlets.config import Config
    cfg = Config({"TagRemovePreprocessor": {"enabled": True, "remove_input_tags": {"remove_input"}}})
    hx = HTMLExporter(config=cfg, template_name="basic", exclude_input_prompt=True, exclude_output_prompt=True)
    mx = MarkdownExporter(config=cfg)
    pages = []
    for rel in rels:
        nb = nbformat.read(PROC / rel, as_version=4)
        fm, nb = prepare(nb)
        path = page_path(rel) if rel.name != "index.ipynb" else (rel.parent / "index.html").as_posix()
        title = fm.get("title") or rel.stem
        head = f"# {title}\n\n" + (f"> {fm['description']}\n\n" if fm.get("description") else "")
        body, _ = hx.from_notebook_node(nb)
        md, _ = mx.from_notebook_node(nb)
        section = "" if rel.name == "index.ipynb" else "More" if not re.match(r"\d+_", rel.name) else (LAST.get(rel.as_posix()) or SECTIONS.get(rel.parent.as_posix(), rel.parent.as_posix()))
        pages.append(dict(rel=rel.as_posix(), path=path, title=title, description=fm.get("description", ""), section=section,
                          body=body, md=head + md))
    return pages


CSS = """
:root { --side: 17rem; --fg: #1d2127; --muted: #5b6470; --accent: #1f5fa8; --border: #e3e6ea; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
header { position: sticky; top: 0; z-index: 10; display: flex; gap: 1rem; align-items: center; padding: .5rem 1rem;
  background: var(--accent); color: white; }
header a { color: white; text-decoration: none; font-weight: 600; }
header form { margin-left: auto; position: relative; }
header input { width: 18rem; padding: .3rem .5rem; border-radius: 4px; border: 0; }
#search-dropdown { position: absolute; right: 0; top: 2.2rem; width: 28rem; max-height: 70vh; overflow: auto; background: white;
  color: var(--fg); border: 1px solid var(--border); border-radius: 4px; box-shadow: 0 4px 14px rgba(0,0,0,.15); }
#search-dropdown:empty { display: none; }
.search-hit { display: block; padding: .4rem .6rem; border-bottom: 1px solid var(--border); color: var(--fg) !important; font-weight: normal !important; }
.search-hit small { color: var(--muted); display: block; }
.layout { display: flex; }
nav.sidebar { width: var(--side); flex: none; padding: 1rem; border-right: 1px solid var(--border); font-size: .9rem;
  position: sticky; top: 2.9rem; height: calc(100vh - 2.9rem); overflow: auto; }
nav.sidebar h4 { margin: 1rem 0 .3rem; font-size: .8rem; text-transform: uppercase; color: var(--muted); }
nav.sidebar a { display: block; padding: .12rem 0; color: var(--fg); text-decoration: none; }
nav.sidebar a.active { color: var(--accent); font-weight: 600; }
main { flex: 1; min-width: 0; max-width: 62rem; padding: 1rem 2rem 4rem; }
main a { color: var(--accent); }
.page-description { color: var(--muted); font-size: 1.1rem; }
.alt-format { float: right; font-size: .85rem; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88em; }
pre { background: #f6f8fa; padding: .6rem .8rem; overflow: auto; border-radius: 4px; }
.output_area pre, .output_text pre { background: white; border-left: 3px solid var(--border); }
.output_stderr pre { border-left-color: #e0b4b4; }
.cell { margin: .6rem 0; }
.prompt { display: none; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9rem; display: block; overflow: auto; }
th, td { border: 1px solid var(--border); padding: .25rem .5rem; vertical-align: top; }
img { max-width: 100%; }
.anchor-link { visibility: hidden; margin-left: .3rem; text-decoration: none; }
h1:hover .anchor-link, h2:hover .anchor-link, h3:hover .anchor-link, h4:hover .anchor-link { visibility: visible; }
@media (max-width: 800px) { nav.sidebar { display: none; } main { padding: 1rem; } header input { width: 10rem; } }
"""

SEARCH_JS = r"""
(function () {
  const root = document.documentElement.dataset.root || "";
  let index = null;
  async function load() { if (!index) index = await (await fetch(root + "search.json")).json(); return index; }
  function esc(s) { return s.replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
  async function search(q) {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const hits = [];
    for (const e of await load()) {
      const head = (e.title + " " + e.section).toLowerCase(), all = head + " " + e.text.toLowerCase();
      if (!words.every(w => all.includes(w))) continue;
      const score = words.filter(w => e.section.toLowerCase() === w).length * 10 + words.filter(w => head.includes(w)).length;
      hits.push([score, e]);
    }
    return hits.sort((a, b) => b[0] - a[0]).slice(0, 50).map(h => h[1]);
  }
  function render(hits, el) {
    el.innerHTML = hits.map(e => `<a class="search-hit" href="${root}${e.href}">${esc(e.section || e.title)}<small>${esc(e.title)}` +
      ` — ${esc(e.text.slice(0, 120))}</small></a>`).join("");
  }
  window.rlnbSearch = search;
  document.addEventListener("DOMContentLoaded", async () => {
    const input = document.getElementById("search-input"), drop = document.getElementById("search-dropdown");
    if (input) input.addEventListener("input", async () => render((await search(input.value)).slice(0, 12), drop));
    const page = document.getElementById("search-results");
    if (page) {
      const q = new URLSearchParams(location.search).get("q") || "";
      if (input) input.value = q;
      const hits = await search(q);
      render(hits, page);
      document.getElementById("search-count").textContent = `${hits.length} result${hits.length === 1 ? "" : "s"} for “${q}”`;
    }
  });
})();
"""


def layout(page, pages, body, root):
    nav, group = [], None
    for p in pages:
        if p["section"] != group:
            group = p["section"]
            if group: nav.append(f"<h4>{html.escape(group)}</h4>")
        cls = ' class="active"' if p is page else ""
        nav.append(f'<a{cls} href="{root}{p["path"]}">{html.escape(p["title"])}</a>')
    desc = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(page.get("description") or ""))
    desc = f'<p class="page-description">{desc}</p>' if desc else ""
    alt = f'<a class="alt-format" href="{Path(page["path"]).name}.md">Markdown</a>' if page.get("md") else ""
    title = "" if page.get("notitle") else f'<h1 class="title">{html.escape(page["title"])}</h1>'
    return f"""<!doctype html>
<html lang="en" data-root="{root}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(page["title"])} – rlnb</title><link rel="stylesheet" href="{root}styles.css"><link rel="stylesheet" href="{root}pygments.css">
<script src="{root}search.js"></script></head>
<body><header><a href="{root}index.html">rlnb</a><a href="{root}results.html">Results</a><a href="{REPO_URL}">GitHub</a>
<form action="{root}search.html" method="get" role="search"><input id="search-input" name="q" type="search" placeholder="Search" autocomplete="off">
<div id="search-dropdown"></div></form></header>
<div class="layout"><nav class="sidebar">{"".join(nav)}</nav>
<main>{alt}{title}{desc}{body}</main></div></body></html>
"""


def search_entries(page) -> list:
    "One entry per heading of the page: its title, the heading, its anchor and the text under it."
    out = []
    parts = re.split(r'(<h[1-4] id="[^"]*"[^>]*>.*?</h[1-4]>)', page["body"], flags=re.S)
    head, anchor = "", ""
    for part in parts:
        m = re.match(r'<h[1-4] id="([^"]*)"[^>]*>(.*?)</h[1-4]>', part, flags=re.S)
        if m:
            anchor, head = m.group(1), html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).replace("¶", "").strip()
            continue
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", part))).strip()
        if text or head:
            out.append(dict(title=page["title"], section=head, href=page["path"] + (f"#{anchor}" if anchor else ""), text=text[:2000]))
    return out


def write_site(pages, out=OUT):
    "The pages in their layout, their markdown twins, the styles, the search index and page into `out`."
    from pygments.formatters import HtmlFormatter
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    (tmp / "styles.css").write_text(CSS + ((NBS / "styles.css").read_text() if (NBS / "styles.css").exists() else ""))
    (tmp / "pygments.css").write_text(HtmlFormatter(style="default").get_style_defs(".highlight"))
    (tmp / "search.js").write_text(SEARCH_JS)
    (tmp / ".nojekyll").write_text("")
    known = {p["rel"]: p["path"] for p in pages if "rel" in p}
    entries = []
    for p in pages: p["body"] = _fix_links(_fix_headings(p["body"]), p["path"], known)
    ids = {p["path"]: set(re.findall(r'\sid="([^"]+)"', p["body"])) for p in pages}
    for p in pages:  # nbdev links every backticked name it knows, private ones and fields too: no anchor, no link
        def unlink(m, here=p["path"]):
            target, _, frag = m.group(1).partition("#")
            page = os.path.normpath(os.path.join(os.path.dirname(here), target)) if target else here
            return m.group(2) if frag and page in ids and frag not in ids[page] else m.group(0)
        p["body"] = re.sub(r'<a href="([^"]*#[^"]*)">(<code>[^<]*</code>)</a>', unlink, p["body"])
        md = re.sub(r"\]\(" + re.escape(SITE_URL) + r"([^)]*)\)", lambda m: "](" + "../" * p["path"].count("/") + m.group(1) + ")", p.get("md", ""))
        root = "../" * p["path"].count("/")
        f = tmp / p["path"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(layout(p, pages, p["body"], root))
        if md: Path(str(f) + ".md").write_text(md)
        entries += search_entries(p)
    (tmp / "search.json").write_text(json.dumps(entries))
    search = dict(path="search.html", title="Search", notitle=False, section="")
    (tmp / "search.html").write_text(layout(search, pages, '<p id="search-count"></p><div id="search-results"></div>', ""))
    (tmp / "sitemap.txt").write_text("".join(SITE_URL + p["path"] + "\n" for p in pages))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-execute", action="store_true", help="do not run the walkthrough chapters whole")
    ap.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 2), help="notebooks processed at once")
    ap.add_argument("--only", nargs="*", help="only these notebooks (paths relative to nbs/), for a quick look")
    a = ap.parse_args()
    t0 = time.time()
    rels = chapters()
    if a.only: rels = [r for r in rels if r.as_posix() in a.only]
    timing = process(rels, not a.no_execute, a.workers)
    t1 = time.time()
    pages = render(rels)
    write_site(pages)
    whole = {r.as_posix(): round(s) for r, (m, s) in timing.items() if m.startswith("whole")}
    print(json.dumps(dict(pages=len(pages), out=str(OUT.relative_to(ROOT)), process_s=round(t1 - t0), render_s=round(time.time() - t1),
                          total_s=round(time.time() - t0), run_whole_s=whole,
                          slowest_api_s=dict(sorted(((r.as_posix(), round(s)) for r, (m, s) in timing.items() if m == "api"), key=lambda kv: -kv[1])[:5]),
                          fallback=[r.as_posix() for r, (m, s) in timing.items() if "fallback" in m], cells_failed=failed_cells)))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
