"""The Sphinx sources of one edition of the web book, written into a folder of their own.

``write_sources(edition, dst)`` lays out:

- ``index.md``: the landing page: the course map (the README's table, each notebook name a link
  to its page), the run-it-yourself box, and the table of contents;
- ``<notebook>.ipynb``: one page per notebook 2.0-2.5 (:func:`tools.book.pages.page_notebook`);
- ``errata.md``: ERRATA.md (zh) or ERRATA.en.md (en), its links pointing into the book;
- ``_student/<notebook>.ipynb``: the student notebooks, unchanged, for the pages' download links
  (no answers, no outputs).

Owns: what goes into an edition's sources. Must not: import Sphinx; execute a notebook; write
outside ``dst``.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat

from tools.book import pages
from tools.book.texts import (COURSE_MAP_HEADING, ERRATA, NOTEBOOKS, OTHER, READMES, SOLUTIONS,
                              text)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_NAME = re.compile(r"`(\d\.\d_\w+)\.ipynb`")
MD_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def notebook_names(edition: str, root: Path = ROOT) -> list[str]:
    """The notebook file names of ``edition``, in course order."""
    return sorted(p.name for p in (root / NOTEBOOKS[edition]).glob("*.ipynb"))


def handout_url() -> str | None:
    """Where the hosted first cell installs the course from; None while it is the placeholder."""
    from labs.notebook.hosted import HANDOUT_URL  # no torch: the module promises it
    return None if HANDOUT_URL.split("/")[2].endswith(".invalid") else HANDOUT_URL


def course_map(edition: str, root: Path = ROOT) -> str:
    """The README's course map table, each ``2.x_name.ipynb`` a link to its page."""
    readme = (root / READMES[edition]).read_text(encoding="utf-8")
    after = readme.split("\n" + COURSE_MAP_HEADING[edition] + "\n", 1)[1]
    rows = []
    for line in after.lstrip("\n").splitlines():
        if not line.startswith("|"):
            break
        rows.append(line)
    if len(rows) < 3:
        raise ValueError(f"{READMES[edition]}: no table under {COURSE_MAP_HEADING[edition]!r}")
    return "\n".join(NOTEBOOK_NAME.sub(r"[`\1`](\1.ipynb)", row) for row in rows)


def landing_page(edition: str, names: list[str], handout: str | None, root: Path = ROOT) -> str:
    """``index.md``: title, introduction, course map, run box and table of contents."""
    toc = "\n".join(Path(name).stem for name in names)
    return "\n".join([
        f"# {text('project', edition)}", "", text("landing_intro", edition), "",
        course_map(edition, root), "", pages.run_box(edition, "", "", handout), "",
        text("license", edition), "",
        f"## {text('landing_pages', edition)}", "", "```{toctree}", ":maxdepth: 1", "",
        toc, "errata", "```", ""])


def errata_page(edition: str, root: Path = ROOT) -> str:
    """``errata.md``: the errata file with its links pointing into the book (the notebooks'
    pages, the other edition's errata page, its own rows)."""
    source = (root / ERRATA[edition]).read_text(encoding="utf-8")

    def link(match: re.Match) -> str:
        label, target = match.group(1), match.group(2)
        notebook = re.fullmatch(r"notebooks/(?:en/)?(\d\.\d_\w+\.ipynb)(#.*)?", target)
        if notebook:
            return f"[{label}]({notebook.group(1)})"
        if target in ERRATA.values():  # the other edition's errata
            return f'<a href="../{OTHER[edition]}/errata.html">{label}</a>'
        if target.startswith("#"):  # a row of this page: anchored <a id="n"></a>
            return f'<a href="{target}">{label}</a>'
        return match.group(0)

    return MD_LINK.sub(link, source)


def write_sources(edition: str, dst: Path, root: Path = ROOT) -> list[Path]:
    """Write ``edition``'s sources into ``dst`` (emptied first); returns the files written."""
    if dst.exists():
        shutil.rmtree(dst)
    (dst / "_student").mkdir(parents=True)
    names, handout = notebook_names(edition, root), handout_url()
    written = []
    for name in names:
        student = root / NOTEBOOKS[edition] / name
        box = pages.run_box(edition, f"{NOTEBOOKS[edition]}/{name}", f"_student/{name}", handout)
        page = pages.page_notebook(root / SOLUTIONS[edition] / name, student, edition, box=box)
        nbformat.write(page, str(dst / name))
        shutil.copy(student, dst / "_student" / name)
        written += [dst / name, dst / "_student" / name]
    for filename, content in (("index.md", landing_page(edition, names, handout, root)),
                              ("errata.md", errata_page(edition, root))):
        (dst / filename).write_text(content, encoding="utf-8")
        written.append(dst / filename)
    return written
