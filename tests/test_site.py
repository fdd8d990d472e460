"""The website's browser check fails when it should: a broken link, a missing anchor, a traceback in an output, an API page
without a name its module exports, a docstring link with no page. Runs where Chromium and Playwright are installed (the
`docs` extra; `.ci/run` installs Debian's chromium); the real site is built and checked by `.ci/run` itself."""
import json
import shutil
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(not CHROMIUM, reason="no chromium here (apt-get install chromium)")
playwright = pytest.importorskip("playwright", reason="the docs extra is not installed")

from site_build import write_site  # noqa: E402
from site_check import check  # noqa: E402

GOOD = '<h2 id="widget">Widget</h2><p>A <code>Widget</code> and <a href="../index.html#home">home</a>.</p>'


def _site(tmp_path, extra_body="", pages_extra=()):
    pages = [dict(path="index.html", title="Home", section="", body='<h2 id="home">Home</h2><a href="x/widget.html#widget">the widget</a>'),
             dict(path="x/widget.html", title="Widgets", section="X", body=GOOD + extra_body, md="# Widgets\n"),
             dict(path="results.html", title="Results", section="", body="<p>none</p>"), *pages_extra]
    write_site(pages, tmp_path / "site")
    nbs, lib = tmp_path / "nbs", tmp_path / "lib"
    (nbs / "x").mkdir(parents=True)
    (lib / "x").mkdir(parents=True)
    (nbs / "x" / "10_widget.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "#| default_exp x.widget"}]}))
    (lib / "x" / "widget.py").write_text('"""Widgets.\n\nDocs: https://rlnb.github.io/rlnb/x/widget.html.md"""\n__all__ = ["Widget"]\n')
    return check(tmp_path / "site", tmp_path / "shots", CHROMIUM, nbs=nbs, lib=lib, searches={"Widget": "x/widget.html"})


def test_a_good_site_passes(tmp_path):
    res = _site(tmp_path)
    assert res["ok"], res
    assert res["pages"] == 4 and all((tmp_path / "shots" / n).stat().st_size > 0 for n in ("home.png", "chapter.png"))


def test_broken_links_tracebacks_and_missing_names_fail(tmp_path):
    bad = ('<a href="nowhere.html">gone</a><a href="../index.html#no-such-anchor">anchor</a><img src="https://example.org/x.png">'
           '<div class="output_area"><pre>Traceback (most recent call last):\n  File "x", line 1\nNameError: tb</pre></div>')
    res = _site(tmp_path, bad)
    assert not res["ok"]
    assert any("nowhere.html" in b for b in res["broken_links"]) and any("no-such-anchor" in b for b in res["broken_links"]), res
    assert res["tracebacks"] and res["blocked_requests"] == 1, res  # the image's request never left the machine
    # an API page that lists none of its module's names, and a docstring whose page is missing, fail too
    shutil.rmtree(tmp_path / "site")
    write_site([dict(path="index.html", title="Home", section="", body='<h2 id="widget">Widget</h2>'),
                dict(path="results.html", title="Results", section="", body="")], tmp_path / "site")
    res = check(tmp_path / "site", tmp_path / "shots", CHROMIUM, nbs=tmp_path / "nbs", lib=tmp_path / "lib", searches={"Widget": "index.html"})
    assert res["api_missing"] == {"x/widget.html": ["(no page)"]} and "x/widget.html.md" in res["docstring_links_missing"], res
    assert not res["ok"]
