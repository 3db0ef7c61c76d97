"""The web book's Sphinx extension: section anchors for the language switch, the switch's target,
and MathJax served from the site itself.

- Every section of a page gets an extra anchor ``s-k`` (k = 1, 2, ... in document order). The two
  editions' pages have the same headings in the same order (tests/notebooks/test_edition.py), so
  ``s-k`` names the same section in both; ``static/book.js`` points the switch at it.
- Each page's template gets ``book_switch_url`` (the same page of the other edition),
  ``book_switch_label`` and ``book_switch_title`` (tools/book/texts.py).
- MathJax 3 (TeX input, CommonHTML output) is copied from the ``sphinx-mathjax-offline`` package
  into ``_static/mathjax/``, and ``mathjax_path`` points there: no CDN, the site works offline.

Owns: these three hooks. Must not: execute a notebook; read the network; change the sources.
"""
from __future__ import annotations

import importlib.metadata
import shutil
from pathlib import Path

from docutils import nodes

from tools.book.texts import OTHER, text

MATHJAX_DISTRIBUTION = "sphinx-mathjax-offline"
MATHJAX_FOLDER = "sphinx-mathjax-offline/static/mathjax"
#: What the pages load of MathJax: the combined TeX-to-CommonHTML component, the TeX extensions
#: it loads on demand (autoload), and the CommonHTML fonts (about 1.5 of the package's 24 MB).
MATHJAX_FILES = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")
SECTION_ANCHOR = "s-{}"


def mathjax_source() -> Path:
    """The folder of MathJax's files in the installed ``sphinx-mathjax-offline``."""
    folder = Path(importlib.metadata.distribution(MATHJAX_DISTRIBUTION).locate_file(MATHJAX_FOLDER))
    if not (folder / MATHJAX_FILES[0]).is_file():
        raise FileNotFoundError(f"no {MATHJAX_FILES[0]} in {folder}: pip install -r requirements-book.txt")
    return folder


def add_section_anchors(app, doctree, docname) -> None:
    """Give the k-th section of the page the extra id ``s-k``."""
    for k, section in enumerate(doctree.findall(nodes.section), 1):
        section["ids"].append(SECTION_ANCHOR.format(k))


def add_switch(app, pagename, templatename, context, doctree) -> None:
    """The template's language switch: the same page of the other edition."""
    edition = app.config.book_edition
    other = OTHER[edition]
    up = "../" * (pagename.count("/") + 1)
    context.update(book_switch_url=f"{up}{other}/{pagename}.html",
                   book_switch_lang={"zh": "zh-CN", "en": "en"}[other],
                   book_switch_label=text("switch", edition),
                   book_switch_title=text("switch_title", edition))


def copy_mathjax(app, exception) -> None:
    """Copy MathJax's files into the site's ``_static/mathjax/``."""
    if exception is not None or app.builder.format != "html":
        return
    source, target = mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    for name in MATHJAX_FILES:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, dirs_exist_ok=True)
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)


def chinese_search():
    """Sphinx's Chinese search language, its JavaScript stemmer named as the one it ships.

    Sphinx 9.0 writes ``window.Stemmer = ChineseStemmer`` but ships (and defines) only the
    English stemmer for Chinese, so the search page stops with "ChineseStemmer is not defined"
    (sphinx-doc/sphinx issue 14229, fixed after 9.0, in releases that need Python 3.12)."""
    from sphinx.search.zh import SearchChinese

    class SearchChineseFixed(SearchChinese):
        language_name = "English"  # the name of its JavaScript stemmer: EnglishStemmer

    return SearchChineseFixed


def setup(app):
    app.add_config_value("book_edition", "en", "html")
    app.add_search_language(chinese_search())
    app.connect("doctree-resolved", add_section_anchors)
    app.connect("html-page-context", add_switch)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
