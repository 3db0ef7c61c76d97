"""Build the web book: both editions with Sphinx, then one static site (``make book``).

    python -m tools.book build [--out book] [--work build/book]

For each edition (zh, en) the sources are written into ``WORK/<edition>/src``
(:mod:`tools.book.sources`) and Sphinx builds them into ``WORK/<edition>/html`` (``-W``: a
warning, e.g. a broken link, fails the build). The site ``OUT/`` then holds ``zh/`` and ``en/``,
a root ``index.html`` that leads to both, and ``.nojekyll`` (GitHub Pages serves ``_static/``
as it is). The build checks that every page has as many sections in both editions, since the
language switch pairs sections by their order.

Offline: nothing is downloaded and no notebook is executed (the outputs are the stored ones).

Owns: the build's steps and the site's layout. Must not: execute notebooks; use the network;
write outside ``OUT`` and ``WORK``.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools.book.sources import ROOT, write_sources
from tools.book.texts import EDITIONS, SPHINX_LANGUAGE, THEME_ZH, THEME_ZH_MARKUP, text

CONF_DIR = Path(__file__).resolve().parent
SECTION_ANCHOR = re.compile(r'<span id="s-(\d+)"></span>')


def _po_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_theme_catalog(locale: Path) -> Path:
    """The gettext catalog of :data:`THEME_ZH` under ``locale`` (Sphinx compiles it)."""
    folder = locale / SPHINX_LANGUAGE["zh"] / "LC_MESSAGES"
    folder.mkdir(parents=True, exist_ok=True)
    entries = ['msgid ""', 'msgstr ""', '"Content-Type: text/plain; charset=UTF-8\\n"', ""]
    for english, chinese in THEME_ZH.items():
        entries += [f"msgid {_po_string(english)}", f"msgstr {_po_string(chinese)}", ""]
    (folder / "sphinx.po").write_text("\n".join(entries), encoding="utf-8")
    return locale


def sphinx_build(edition: str, src: Path, out: Path, doctrees: Path, locale: Path) -> None:
    """Run Sphinx on ``src`` into ``out``, in a process of its own; raise on failure."""
    env = {**os.environ, "LABS_BOOK_EDITION": edition, "LABS_BOOK_LOCALE": str(locale),
           "PYTHONHASHSEED": "0"}
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going",
               "-c", str(CONF_DIR), "-d", str(doctrees), str(src), str(out)]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"sphinx-build ({edition}) failed:\n{result.stdout}{result.stderr}")


def localize_theme(site_edition: Path) -> int:
    """Replace the theme's English fragments (:data:`THEME_ZH_MARKUP`) in the Chinese pages;
    returns how many pages changed."""
    changed = 0
    for page in site_edition.glob("*.html"):
        markup = original = page.read_text(encoding="utf-8")
        for english, chinese in THEME_ZH_MARKUP.items():
            markup = markup.replace(english, chinese)
        if markup != original:
            page.write_text(markup, encoding="utf-8")
            changed += 1
    return changed


def section_counts(site_edition: Path) -> dict[str, int]:
    """``{page: number of sections}`` of one built edition (its ``s-k`` anchors)."""
    return {page.name: len(SECTION_ANCHOR.findall(page.read_text(encoding="utf-8")))
            for page in sorted(site_edition.glob("*.html"))}


def check_sections(out: Path) -> None:
    """Every page has the same number of sections in both editions (the switch pairs them)."""
    counts = {edition: section_counts(out / edition) for edition in EDITIONS}
    if set(counts["zh"]) != set(counts["en"]):
        raise RuntimeError(f"the editions have different pages: {sorted(counts['zh'])} "
                           f"and {sorted(counts['en'])}")
    differ = {page: (counts["zh"][page], counts["en"][page]) for page in counts["zh"]
              if counts["zh"][page] != counts["en"][page]}
    if differ:
        raise RuntimeError(f"sections per page differ between zh and en: {differ}")


def root_page() -> str:
    """``OUT/index.html``: one link to each edition's landing page."""
    links = "\n".join(
        f'  <li><a href="{edition}/index.html" lang="{"zh-CN" if edition == "zh" else "en"}">'
        f'{html.escape(text("project", edition))} · {html.escape(text("choose_edition", edition))}'
        "</a></li>" for edition in EDITIONS)
    title = html.escape(f"{text('project', 'zh')} · {text('project', 'en')}")
    return (f'<!DOCTYPE html>\n<html lang="zh-CN">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<link rel="icon" href="en/_static/favicon.svg">\n'
            f"<title>{title}</title>\n</head>\n<body>\n<h1>{title}</h1>\n<ul>\n{links}\n</ul>\n"
            "</body>\n</html>\n")


def build(out: Path, work: Path, log=print) -> dict[str, float]:
    """Build both editions into ``out``; returns the seconds each step took."""
    seconds, locale = {}, write_theme_catalog(work / "locale")
    for edition in EDITIONS:
        started = time.monotonic()
        base = work / edition
        write_sources(edition, base / "src")
        if (base / "html").exists():
            shutil.rmtree(base / "html")
        sphinx_build(edition, base / "src", base / "html", base / "doctrees", locale)
        seconds[edition] = time.monotonic() - started
        log(f"book: {edition} built in {seconds[edition]:.1f} s")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for edition in EDITIONS:
        shutil.copytree(work / edition / "html", out / edition,
                        ignore=shutil.ignore_patterns(".buildinfo", ".doctrees", "_sources"))
    localize_theme(out / "zh")
    (out / "index.html").write_text(root_page(), encoding="utf-8")
    (out / ".nojekyll").write_text("", encoding="utf-8")
    check_sections(out)
    log(f"book: {out}/ (zh/, en/) ready")
    return seconds
