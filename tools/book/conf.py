"""Sphinx configuration of the web book, one edition per build (``LABS_BOOK_EDITION``: zh or en).

Used as ``sphinx-build -c tools/book SOURCES OUT`` by ``python -m tools.book build`` (``make
book``), on the sources that :mod:`tools.book.sources` writes. MyST-NB renders the notebooks as
they are stored (``nb_execution_mode = "off"``: nothing is executed), the furo theme lays out the
pages, Sphinx's own search indexes them (jieba splits the Chinese words), and MathJax comes from
the site itself (tools/book/extension.py).

Must not: execute notebooks; load anything from the network at build or reading time.
"""
from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root: tools.book, labs

from tools.book.texts import EDITIONS, SPHINX_LANGUAGE, text  # noqa: E402

book_edition = os.environ.get("LABS_BOOK_EDITION", "en")
if book_edition not in EDITIONS:
    raise ValueError(f"LABS_BOOK_EDITION is zh or en, not {book_edition!r}")

if book_edition == "zh":  # jieba (Chinese search words) logs its dictionary loading at DEBUG
    try:
        import jieba
        jieba.setLogLevel(logging.WARNING)
    except ImportError:
        pass

project = text("project", book_edition)
author = "The course's contributors"
copyright = "the course's contributors (prose and figures CC BY 4.0, code MIT)"
language = SPHINX_LANGUAGE[book_edition]

extensions = ["myst_nb", "tools.book.extension"]
exclude_patterns = ["_student", "_student/**"]
templates_path = [str(HERE / "templates")]
# The theme's words that Sphinx's Chinese catalog lacks (tools.book.texts.THEME_ZH), written there
# by tools.book.build; Sphinx's own catalog comes first.
locale_dirs = [os.environ["LABS_BOOK_LOCALE"]] if os.environ.get("LABS_BOOK_LOCALE") else []

# The notebooks as stored: outputs from the executed solutions (tools/book/pages.py), never run.
nb_execution_mode = "off"
nb_merge_streams = True
nb_code_prompt_show = text("show_setup", book_edition)  # only the hosted-setup cell is folded
nb_code_prompt_hide = text("hide_setup", book_edition)
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]

# MathJax 3 from the site's own _static/mathjax/ (copied there by tools.book.extension).
mathjax_path = "mathjax/tex-chtml.js"

html_theme = "furo"
html_title = project
html_favicon = str(HERE / "static" / "favicon.svg")  # four ranks
html_static_path = [str(HERE / "static")]
html_css_files = ["book.css"]
html_js_files = ["book.js"]
html_copy_source = False
html_show_copyright = False  # the landing page says the licences, in the page's language
html_show_sphinx = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_permalinks_icon = "#"
