"""The slides (``make slides``, tools/slides.py; issue 40, item 7): the solution notebooks carry the
slide metadata the rules make, no answer is on a slide, and a deck builds in each language with
its notebook's headings on several slides, from the CDN or from local copies (offline)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tools import slides

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = slides.notebooks()
DECK_OF = "2.0_collectives.ipynb"  # the first notebook, built in each language


def _cells(path: Path) -> list:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _md(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _code(source: str, **metadata) -> dict:
    return {"cell_type": "code", "metadata": metadata, "source": source, "outputs": []}


def test_every_solution_notebook_of_both_editions_is_covered():
    assert len(SOLUTIONS) == 12
    assert {p.parent.name for p in SOLUTIONS} == {"solutions", "en"}


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_slide_metadata_is_what_the_rules_make(path):
    assert slides.unmarked(path) == [], \
        f"{path.relative_to(ROOT)}: run python tools/slides.py mark (then make notebooks)"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_answer_and_no_setup_code_is_on_a_slide(path):
    for index, cell in enumerate(_cells(path)):
        source = "".join(cell["source"])
        kind = cell["metadata"]["slideshow"]["slide_type"]
        if ("nbgrader" in cell["metadata"] or "BEGIN SOLUTION" in source
                or "hosted-setup" in cell["metadata"].get("tags", [])):
            assert kind == "skip", f"{path.name} cell {index} is on a slide: {source[:60]!r}"
    kinds = [c["metadata"]["slideshow"]["slide_type"] for c in _cells(path)]
    assert kinds[0] == "slide" and kinds.count("slide") >= 5, kinds


def test_the_rules():
    cells = [_md("# 2.9 Title\n\n## Goals"), _code("import os", tags=["hosted-setup"]),
             _code("WORLD_SIZE = 4"), _md("## 1. Section"), _md("Some text."), _code("demo()"),
             _md("### 1.1 Sub-section"),
             _md("```python\n# not a heading\n## nor this\n```\nText."),
             _md("## Exercises\n\n### Exercise 1 (2 points): Do it"),
             _code("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
             _code("check_f(f)", nbgrader={"grade": True, "grade_id": "ex_f"}),
             _md("**After exercise 1.** The course's own version:"), _code("show_source()"),
             _md("### Compare"), _code("more_source()"),
             _md("## 2. Beyond the chapter"), _code("lecture_again()"),
             {"cell_type": "raw", "metadata": {}, "source": "raw"}]
    assert slides.slide_types(cells) == [
        "slide", "skip", "-", "slide", "-", "-", "subslide", "-", "slide", "skip", "skip",
        "-", "skip", "subslide", "skip", "slide", "-", "skip"]
    assert slides.slide_types([_md("Text\n\n### 练习 7（3 分）：题目"), _code("x = 1"),
                               _md("## 自测题"), _code("y = 2")]) == ["subslide", "skip",
                                                                      "slide", "-"]


def test_mark_writes_only_the_slide_metadata(tmp_path):
    source = ROOT / "solutions" / DECK_OF
    copy = tmp_path / DECK_OF
    cells = _cells(source)
    for cell in cells:
        cell["metadata"].pop("slideshow", None)
    copy.write_text(json.dumps({**json.loads(source.read_text(encoding="utf-8")),
                                "cells": cells}), encoding="utf-8")
    assert slides.unmarked(copy) == list(range(len(cells)))
    assert slides.mark(copy) and not slides.mark(copy)  # the second time: nothing to do
    assert slides.unmarked(copy) == []
    assert copy.read_bytes() == source.read_bytes()  # as the committed notebook is written


def _headings(path: Path) -> list[str]:
    """The ``#``/``##`` headings of the cells on slides, as their text."""
    found = []
    for cell in _cells(path):
        if cell["cell_type"] == "markdown" and cell["metadata"]["slideshow"]["slide_type"] != "skip":
            found += [m.group(1).strip() for m in
                      re.finditer(r"^#{1,2}\s+(.+)$", slides.FENCE.sub("", "".join(cell["source"])),
                                  flags=re.M)]
    return found


@pytest.mark.parametrize("edition", ["solutions", "solutions/en"])
def test_a_deck_builds_with_its_headings_on_slides(tmp_path, edition):
    notebook = ROOT / edition / DECK_OF
    [deck] = slides.build([notebook], tmp_path)
    assert deck == tmp_path / ("en" if edition.endswith("en") else "zh") / "2.0_collectives.slides.html"
    page = deck.read_text(encoding="utf-8")
    assert page.count("<section") >= 10
    plain = re.sub(r"<[^>]+>", "", page)
    for heading in _headings(notebook):
        words = re.sub(r"[`*]", "", heading).replace("&", "&amp;")
        assert words in plain, f"{heading!r} is not in the deck"
    assert "check_ring_all_reduce" not in page  # the checks are skipped
    assert "https://unpkg.com/reveal.js@4.0.2/dist/reveal.js" in page  # by default: the CDN


def _fake_assets(folder: Path) -> Path:
    for name in ("reveal.js/dist/reveal.js", "reveal.js/dist/reveal.css",
                 "reveal.js/plugin/notes/notes.js", "requirejs/require.js",
                 "mathjax/MathJax.js", "mathjax/config/TeX-AMS_CHTML-full.js"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("// stand-in\n")
    return folder


def test_with_local_assets_the_deck_needs_no_cdn(tmp_path):
    assets = _fake_assets(tmp_path / "assets")
    [deck] = slides.build([ROOT / "solutions" / "en" / DECK_OF], tmp_path / "out", assets)
    page = deck.read_text(encoding="utf-8")
    for url in ("../_assets/reveal.js/dist/reveal.js", "../_assets/requirejs/require.js",
                "../_assets/mathjax/MathJax.js"):
        assert url in page
        assert (deck.parent / url.split("?")[0]).resolve().is_file(), url
    assert "unpkg.com/reveal" not in page and "require.js/2.1.10" not in page
    assert "mathjax/2.7.7" not in page


def test_missing_assets_say_how_to_get_them(tmp_path):
    with pytest.raises(SystemExit, match="fetch-assets"):
        slides.build([ROOT / "solutions" / DECK_OF], tmp_path / "out", tmp_path / "empty")


def test_make_slides_runs_the_tool():
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    proc = subprocess.run([make, "-n", "-C", str(ROOT), "slides", "SLIDE_ASSETS=a b"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "tools/slides.py build --out slides --assets 'a b'" in proc.stdout
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "/slides/" in ignored


def test_mark_check_exits_1_when_out_of_date(tmp_path, monkeypatch):
    copy = tmp_path / "solutions" / DECK_OF
    copy.parent.mkdir()
    cells = _cells(ROOT / "solutions" / DECK_OF)
    cells[3]["metadata"]["slideshow"] = {"slide_type": "skip"}
    copy.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")
    monkeypatch.setattr(slides, "EDITIONS", {"zh": copy.parent})
    monkeypatch.setattr(slides, "notebooks", lambda editions=None: [copy])
    monkeypatch.setattr(slides, "ROOT", tmp_path)
    assert slides.main(["mark", "--check"]) == 1
    assert slides.main(["mark"]) == 0 and slides.main(["mark", "--check"]) == 0
