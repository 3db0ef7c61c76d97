"""Every markdown cell renders without leftover emphasis markers.

CommonMark's flanking rules make `**中文（English）**中文` render literally (the closing `**`
follows full-width punctuation and precedes a letter), so JupyterLab shows the asterisks. This
test renders each markdown cell (and the README and errata pages) with markdown-it-py's
CommonMark parser, as JupyterLab does after taking the LaTeX out, and fails on a `**` or `__`
left in the rendered text outside code.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
PAGES = [path for folder in ("solutions", "notebooks", "solutions/en", "notebooks/en")
         for path in sorted((ROOT / folder).glob("*.ipynb"))]  # both editions (issue 39)
MD = MarkdownIt("commonmark").enable("table").enable("strikethrough")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
CODE = re.compile(r"<(code|pre)[^>]*>.*?</\1>", re.S)


def leftovers(markdown: str) -> list[str]:
    """The rendered snippets around each leftover ``**`` or ``__``."""
    rendered = CODE.sub(" ", MD.render(MATH.sub(" MATH ", markdown)))
    text = html.unescape(re.sub(r"<[^>]+>", " ", rendered))
    return [text[max(0, m.start() - 30):m.end() + 30].replace("\n", " ")
            for m in re.finditer(r"\*\*|__", text)]


def test_the_check_finds_the_known_failure():
    assert leftovers("**数据并行（Data Parallelism）**是")  # closes after punctuation
    assert not leftovers("**数据并行**（Data Parallelism）是")
    assert not leftovers("`a ** b` and $x^{**}$ and\n\n```\n__init__\n```")


@pytest.mark.parametrize("path", PAGES + [ROOT / "README.md", ROOT / "README.en.md",
                                          ROOT / "ERRATA.md", ROOT / "INSTRUCTORS.md",
                                          ROOT / "INSTRUCTORS.en.md"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_markdown_renders_without_literal_markers(path):
    if path.suffix == ".md":
        cells = [(0, path.read_text(encoding="utf-8"))]
    else:
        nb = nbformat.read(str(path), as_version=4)
        cells = [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    bad = [(i, snippet) for i, source in cells for snippet in leftovers(source)]
    assert not bad, f"{path.name}: literal ** or __ after rendering: {bad[:5]}"
