"""The built web book (``make book``; issue 41), read as files: no answer anywhere in it, every
notebook a page with its figures and outputs, math and scripts served by the site itself, the
errata anchors that the notebooks link to, sections that pair up for the language switch.

The answer scan reads every text file of the site (pages with their tags stripped, scripts, the
downloadable notebooks) and looks for
- every meaningful line (25 characters or more) of every reference answer (between ``### BEGIN
  SOLUTION`` and ``### END SOLUTION`` in solutions/), unless the student notebook shows that
  line too (a line the stub keeps is no secret);
- every line (10 characters or more) printed by a cell whose outputs the rule holds back (the
  graded checks' verdicts on the reference answers, the reference code shown after an
  exercise), unless a shown cell prints it or the student notebook holds it;
- every image such a cell drew (by its bytes).
Each scan also finds a line or image that must be there, so that a scan that reads nothing fails.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

from tools.book import pages, sources
from tools.book.build import section_counts
from tools.book.texts import EDITIONS, NOTEBOOKS, SOLUTIONS, THEME_ZH_MARKUP, text

pytestmark = [pytest.mark.book, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
TAG = re.compile(r"<[^>]+>")
BEGIN, END = re.compile(r"#+\s*BEGIN SOLUTION"), re.compile(r"#+\s*END SOLUTION")
TEXT_FILES = {".html", ".js", ".txt", ".ipynb", ".json", ".css"}


def _solution(edition, name):
    return nbformat.read(str(ROOT / SOLUTIONS[edition] / name), as_version=4)


def _student(edition, name):
    return nbformat.read(str(ROOT / NOTEBOOKS[edition] / name), as_version=4)


def answer_lines(source: str) -> list[str]:
    """The stripped lines between BEGIN and END SOLUTION markers."""
    lines, inside = [], False
    for line in source.splitlines():
        if BEGIN.search(line):
            inside = True
        elif END.search(line):
            inside = False
        elif inside:
            lines.append(line.strip())
    return lines


def _output_text(output) -> str:
    """What a page prints of an output (a figure's ``<Figure ...>`` text is not shown)."""
    if output.get("output_type") == "stream":
        return output.get("text", "")
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    data = output.get("data", {})
    return "" if {"image/png", "text/html"} & set(data) else data.get("text/plain", "")


def _images(outputs) -> set[str]:
    return {hashlib.sha256(base64.b64decode(o["data"]["image/png"])).hexdigest()
            for o in outputs if "image/png" in o.get("data", {})}


def _file_text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        nb = json.loads(raw)
        return "\n".join("".join(c["source"]) + "\n" + "\n".join(
            _output_text(o) for o in c.get("outputs", [])) for c in nb["cells"])
    return html.unescape(TAG.sub("", raw)) if path.suffix == ".html" else raw


@lru_cache(maxsize=None)
def site_text(site: Path, edition: str) -> str:
    """Every text file of one edition of the site, as a reader (or a script) would see it."""
    files = sorted(p for p in (site / edition).rglob("*") if p.suffix in TEXT_FILES)
    return "\n".join(_file_text(p) for p in files if "mathjax" not in p.parts)


def site_images(site: Path, edition: str) -> set[str]:
    return {hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (site / edition).rglob("*.png")}


def secrets(edition: str) -> tuple[set[str], set[str], set[str], set[str]]:
    """(answer lines, held-back output lines, held-back images, shown images) of ``edition``;
    a line that the student notebooks (their code and hints) or a shown output also hold is
    no secret."""
    answers, held, held_images, shown_images, public = set(), set(), set(), set(), []
    for name in sources.notebook_names(edition):
        solution, student = _solution(edition, name), _student(edition, name)
        public += [c.source.replace("`", "") if c.cell_type == "markdown" else c.source
                   for c in student.cells]  # "return `a * b`" in a hint reads "return a * b"
        keep = {v.cell_id for v in pages.verdicts(solution, student) if v.keep}
        for cell in solution.cells:
            answers |= {line for line in answer_lines(cell.source) if len(line) >= 25}
            outputs = cell.get("outputs", [])
            printed = "\n".join(_output_text(o) for o in outputs)
            if cell.get("id") in keep:
                public.append(printed)
                shown_images |= _images(outputs)
            else:
                held |= {line.strip() for line in printed.splitlines() if len(line.strip()) >= 10}
                held_images |= _images(outputs)
    shown = _flat("\n".join(public))  # a hint may wrap a line of code over two lines
    return ({line for line in answers if _flat(line) not in shown},
            {line for line in held if _flat(line) not in shown}, held_images - shown_images,
            shown_images)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("edition", EDITIONS)
def test_no_answer_reaches_the_site(site, edition):
    answers, held, held_images, shown_images = secrets(edition)
    assert len(answers) >= 30 and len(held) >= 10, "the scan would look for hardly anything"
    text = site_text(site, edition)
    flat = _flat(text)
    found = sorted(line for line in answers if line in text or _flat(line) in flat)
    assert not found, f"{len(found)} reference-answer lines in the {edition} site: {found[:5]}"
    printed = sorted(line for line in held if line in text or _flat(line) in flat)
    assert not printed, f"held-back outputs in the {edition} site: {printed[:5]}"
    images = site_images(site, edition)
    assert not held_images & images, "a held-back figure is in the site"
    assert shown_images & images, "no figure of a shown cell found: the image scan reads nothing"


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_scan_finds_what_is_shown(site, edition):
    """The control: lines of shown code and shown outputs are found by the same scan."""
    text = site_text(site, edition)
    name = sources.notebook_names(edition)[0]
    solution, student = _solution(edition, name), _student(edition, name)
    kept = [c for c in solution.cells if c.get("id") in
            {v.cell_id for v in pages.verdicts(solution, student) if v.keep}]
    code = [line.strip() for c in kept for line in c.source.splitlines() if len(line.strip()) >= 25]
    printed = [line.strip() for c in kept for o in c.outputs
               for line in _output_text(o).splitlines() if len(line.strip()) >= 25]
    assert code and all(line in text for line in code)
    assert printed and all(line in text for line in printed)


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_notebook_is_a_page_with_its_figures(site, edition):
    for name in sources.notebook_names(edition):
        page = (site / edition / name.replace(".ipynb", ".html")).read_text(encoding="utf-8")
        solution, student = _solution(edition, name), _student(edition, name)
        keep = {v.cell_id for v in pages.verdicts(solution, student) if v.keep}
        figures = sum("image/png" in o.get("data", {}) for c in solution.cells
                      if c.get("id") in keep for o in c.outputs)
        shown = re.findall(r'<img [^>]*src="(_images/[^"]+)"', page)
        assert len(shown) == figures, f"{edition}/{name}: {len(shown)} figures, {figures} expected"
        assert all((site / edition / src).is_file() for src in shown)
        assert f'href="../{"en" if edition == "zh" else "zh"}/{name.replace(".ipynb", ".html")}"' in page
        assert "run-it-yourself" in page and "_downloads/" in page


def test_the_site_loads_nothing_from_elsewhere(site):
    pages_html = sorted(site.rglob("*.html"))
    assert len(pages_html) >= 2 * 9
    outside = re.compile(r'<(?:script|link|img)\b[^>]*(?:src|href)="(?:https?:)?//', re.I)
    for page in pages_html:
        assert not outside.search(page.read_text(encoding="utf-8")), f"{page}: a remote resource"
    for edition in EDITIONS:
        assert (site / edition / "_static" / "mathjax" / "tex-chtml.js").is_file()
        math_pages = [p for p in (site / edition).glob("*.html")
                      if 'class="math' in p.read_text(encoding="utf-8")]
        assert math_pages and all("_static/mathjax/tex-chtml.js" in p.read_text(encoding="utf-8")
                                  for p in math_pages)
    assert (site / "index.html").is_file() and (site / ".nojekyll").is_file()


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_errata_link_has_its_row(site, edition):
    errata = (site / edition / "errata.html").read_text(encoding="utf-8")
    rows = set(re.findall(r'<a id="(\d+)">', errata))
    links = [(page.name, n) for page in (site / edition).glob("2.*.html")
             for n in re.findall(r'href="errata\.html#(\d+)"', page.read_text(encoding="utf-8"))]
    assert rows and links
    assert [link for link in links if link[1] not in rows] == []


def test_the_sections_pair_up_between_the_editions(site):
    zh, en = section_counts(site / "zh"), section_counts(site / "en")
    assert zh == en and sum(zh.values()) > 100


def test_the_chinese_pages_speak_chinese_around_the_content(site):
    """The theme's labels, the switch, the run box and the folded setup cell, in each language."""
    for page in sorted((site / "zh").glob("2.*.html")):
        markup = page.read_text(encoding="utf-8")
        assert not [english for english in THEME_ZH_MARKUP if english in markup], page.name
        assert all(text(key, "zh") in markup for key in ("run_title", "switch", "show_setup"))
    for page in sorted((site / "en").glob("2.*.html")):
        markup = page.read_text(encoding="utf-8")
        assert all(text(key, "en") in markup for key in ("run_title", "switch", "show_setup"))


NO_NETWORK = '''import socket
def _refuse(*args, **kwargs):
    raise OSError("the book's build must not use the network")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
'''


def test_the_book_builds_without_the_network(tmp_path):
    """The whole build, its Sphinx processes included, with every socket connection refused
    (a sitecustomize on PYTHONPATH), and without a notebook kernel to start."""
    pytest.importorskip("sphinx", reason="the book's tools are not installed (make book)")
    import os
    import subprocess
    import sys

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(NO_NETWORK, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(blocker), "JUPYTER_PATH": str(tmp_path / "nokernels")}
    out = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "tools.book", "build", "--out", str(out),
                             "--work", str(tmp_path / "work")], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    for edition in EDITIONS:
        built = sorted(p.name for p in (out / edition).glob("*.html"))
        assert [f"{Path(n).stem}.html" for n in sources.notebook_names(edition)] == \
            [name for name in built if name.startswith("2.")]
    check = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection"
                            "(('127.0.0.1', 9))"], env=env, capture_output=True, text=True)
    assert "must not use the network" in check.stderr, "the blocker did not block"
