"""Write (or refresh) the hosted bootstrap cell, the first code cell of every solution notebook.

    python -m labs.exercises.hosted_cell solutions/*.ipynb solutions/en/*.ipynb [--check]

The cell (:func:`cell_source`) is what :mod:`labs.notebook.hosted` describes: on Google Colab or Kaggle it
installs the course's lab package from the student handout (:data:`labs.notebook.hosted.HANDOUT_URL`) and
calls :func:`labs.notebook.hosted.bootstrap`; anywhere else it only sets the
notebook's language. Its code is the same in both editions but for the language literal and the
comments, so ``edition check`` accepts it. It goes right after the notebook's first markdown cell
(the title and introduction), before the setup cell; an older copy anywhere is replaced, so a second
run changes nothing. ``labs.exercises.generate`` copies it into the student notebooks unchanged,
and the grader skips it when it looks for the setup cell (``labs.notebook.hosted.is_hosted_cell``).

Owns: the bootstrap cell's text and its place in a notebook, and this command line. Must not:
run a notebook, touch any other cell, or import torch, the checks or the grader.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from labs.exercises.generate import notebook_language
from labs.notebook.hosted import CELL_ID, CELL_TAG, HANDOUT_URL, SOURCE_ENV, is_hosted_cell
from labs.messages import LANG_ENV, text

__all__ = ["cell_source", "make_cell", "write_cell", "main"]

_BODY = '''import os
import sys

os.environ.setdefault("{lang_env}", "{lang}")
if ("google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
        or "KAGGLE_KERNEL_RUN_TYPE" in os.environ):
    import importlib
    import subprocess

    try:
        import labs.notebook.hosted
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        os.environ.get("{source_env}",
                                       "{handout}")],
                       check=True)
        importlib.invalidate_caches()
        import labs.notebook.hosted
    labs.notebook.hosted.bootstrap()'''


def cell_source(lang: str) -> str:
    """The bootstrap cell's code for a notebook in ``lang``."""
    return text("hosted.cell_comment", lang=lang) + _BODY.format(
        lang_env=LANG_ENV, lang=lang, source_env=SOURCE_ENV, handout=HANDOUT_URL)


def make_cell(lang: str):
    """The bootstrap cell (a fresh code cell: no outputs, tagged and with its fixed id)."""
    # never on a slide (tools/slides.py marks it so too; here a rewrite keeps it)
    cell = nbformat.v4.new_code_cell(cell_source(lang), metadata={
        "slideshow": {"slide_type": "skip"}, "tags": [CELL_TAG]})
    cell.id = CELL_ID
    return cell


def write_cell(nb, lang: str) -> bool:
    """Put the bootstrap cell in ``nb`` (in place): after the first markdown cell, or first when
    the notebook opens with code; an older copy is removed. True when ``nb`` changed."""
    cell = make_cell(lang)
    kept = [c for c in nb.cells if not is_hosted_cell(c)]
    at = 1 if kept and kept[0].cell_type == "markdown" else 0
    there = nb.cells[at] if len(nb.cells) > at else None
    if (len(kept) == len(nb.cells) - 1 and there is not None and is_hosted_cell(there)
            and there.source == cell.source and there.get("id") == CELL_ID
            and there.metadata.get("tags") == [CELL_TAG]):
        return False
    kept.insert(at, cell)
    nb.cells = kept
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.exercises.hosted_cell",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook lacks the current cell")
    args = parser.parse_args(argv)
    stale = []
    for path in args.notebooks:
        nb = nbformat.read(str(path), as_version=4)
        if write_cell(nb, notebook_language(nb, path)):
            stale.append(path)
            if not args.check:
                nbformat.write(nb, str(path))
    for path in stale:
        print(f"{'stale' if args.check else 'written'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
