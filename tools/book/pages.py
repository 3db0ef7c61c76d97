"""The notebook pages of the web book: the student notebook's cells, with the outputs of the
executed solution notebook only where they reveal no answer.

A page is built from the student notebook (``notebooks/``, ``notebooks/en/``: the stubs, the
statements, the hints folded in ``<details>``) and takes outputs (figures, printed text) from the
executed solution notebook (``solutions/``, ``solutions/en/``), cell by cell (the two have the
same cell ids). **The rule**: a code cell shows its solution twin's outputs only when

1. its student source is the solution's source unchanged (no answer block was replaced by a stub);
2. it is no nbgrader cell (neither an answer cell nor a graded check cell);
3. it is outside every exercise part: from an exercise heading (``### 练习 n`` /
   ``### Exercise n``) to the next heading of level 1 or 2 -- there the course shows reference
   code after an exercise (``inspect.getsource`` of the executor an exercise asks for), as the
   slides skip it (tools/slides.py);
4. it calls no ``check_*`` function and imports nothing from ``labs.exercises``;
5. it reads no name that an answer block of an earlier cell defines.

Every other code cell is shown without outputs, as in the student notebook. An interactive widget
(no kernel behind a static page) is replaced by a note pointing to "Run it yourself". The errata
links (``../ERRATA.md#14``, ``../../ERRATA.en.md#14``) point to the book's errata page, and the
hosted-setup cell (the Colab/Kaggle bootstrap) is folded.

Owns: the output rule and the page notebooks. Must not: import Sphinx, torch or the grader;
execute a notebook; write into notebooks/ or solutions/.
"""
from __future__ import annotations

import ast
import copy
import html
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.book.texts import text

EXERCISE_HEADING = re.compile(r"^###\s+(练习\s*\d+|Exercise\s+\d+)", re.M)
HEADING = re.compile(r"^(#{1,6})\s+\S", re.M)
FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
BEGIN = re.compile(r"^[ \t]*#+\s*BEGIN SOLUTION\s*$", re.M)
CHECK_CALL = re.compile(r"\bcheck_\w+\s*\(")
CHECK_IMPORT = re.compile(r"^\s*(from\s+labs\.exercises\b|import\s+labs\.exercises\b)", re.M)
ERRATA_LINK = re.compile(r"\[([^\]]+)\]\((?:\.\./)+ERRATA(?:\.en)?\.md#(\d+)\)")
WIDGET = "application/vnd.jupyter.widget-view+json"
HOSTED_TAG, HIDE_INPUT = "hosted-setup", "hide-input"


@dataclass(frozen=True)
class Verdict:
    """Whether code cell ``cell_id`` shows its solution outputs, and why not."""
    cell_id: str
    keep: bool
    why: str


def _source(cell) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def heading_levels(markdown: str) -> list[int]:
    """The levels of the headings of a markdown cell, outside fenced code blocks."""
    return [len(m.group(1)) for m in HEADING.finditer(FENCE.sub("", markdown))]


def defined_names(source: str) -> set[str]:
    """The names a cell defines at its top level (functions, classes, assignments)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def read_names(source: str) -> set[str]:
    """The bare names a cell reads (attributes such as ``memory.x`` are not names)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: fall back to every word
        return set(re.findall(r"\b[A-Za-z_]\w*\b", source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _why_not(solution_cell, student_cell, in_exercise: bool, answers: set[str]) -> str:
    """Why a code cell must not show its solution outputs ('' when it may)."""
    source = _source(solution_cell)
    if _source(student_cell) != source:
        return "its answer block became a stub"
    if "nbgrader" in solution_cell.get("metadata", {}):
        return "an nbgrader cell (answer or graded check)"
    if in_exercise:
        return "inside an exercise part"
    if CHECK_CALL.search(source) or CHECK_IMPORT.search(source):
        return "calls a check or imports labs.exercises"
    used = read_names(source) & answers
    if used:
        return "reads an answer's " + ", ".join(sorted(used))
    return ""


def verdicts(solution, student) -> list[Verdict]:
    """The rule of the module docstring for every code cell of ``student`` (nbformat notebooks
    or dicts; the two share cell ids). Raises ValueError when a student cell has no twin."""
    twins = {cell.get("id"): cell for cell in solution["cells"]}
    result, answers, in_exercise = [], set(), False
    for cell in student["cells"]:
        twin = twins.get(cell.get("id"))
        if twin is None:
            raise ValueError(f"student cell {cell.get('id')!r} has no solution cell of that id")
        if cell["cell_type"] == "markdown":
            levels = heading_levels(_source(cell))
            if EXERCISE_HEADING.search(FENCE.sub("", _source(cell))):
                in_exercise = True
            elif levels and min(levels) <= 2:
                in_exercise = False
            continue
        if cell["cell_type"] != "code":
            continue
        why = _why_not(twin, cell, in_exercise, answers)
        result.append(Verdict(cell.get("id"), not why, why))
        if BEGIN.search(_source(twin)):
            answers |= defined_names(_source(twin))
    return result


def rewrite_errata_links(markdown: str) -> str:
    """``[errata #14](../../ERRATA.en.md#14)`` -> a link to row 14 of the book's errata page."""
    return ERRATA_LINK.sub(
        lambda m: f'<a class="errata-link" href="errata.html#{m.group(2)}">'
                  f"{html.escape(m.group(1))}</a>", markdown)


def _widget_note(output, edition: str):
    if output.get("output_type") in ("display_data", "execute_result") and \
            WIDGET in output.get("data", {}):
        note = html.escape(text("widget_note", edition))
        return nbformat.v4.new_output("display_data", data={
            "text/html": f'<p class="book-widget-note">{note}</p>', "text/plain": note})
    return output


def run_box(edition: str, student_path: str, download: str, handout: str | None) -> str:
    """The "run it yourself" box (MyST markdown): the two local commands and the hosted path.
    ``student_path`` is the page's notebook in the repository (empty on the landing page),
    ``download`` the relative path of its copy in the book's sources, ``handout`` the address
    the hosted first cell installs from (None: not set yet)."""
    folder = "notebooks/en/" if edition == "en" else "notebooks/"
    where = (text("run_lab_page", edition, path=student_path) if student_path else
             text("run_lab_course", edition, path=folder))
    label = text("run_hosted_download" if download else "run_hosted_course", edition)
    link = f"{{download}}`{label} <{download}>`" if download else label
    hosted = text("run_hosted", edition, download=link, handout=handout or "HANDOUT_URL")
    lines = [f":::{{admonition}} {text('run_title', edition)}", ":class: tip run-it-yourself", "",
             text("run_local", edition), "", "```bash", text("run_check", edition),
             text("run_lab", edition, where=where), "```", "", hosted]
    if handout is None:
        lines += ["", text("run_handout_unset", edition)]
    return "\n".join(lines + [":::"])


def page_notebook(solution_path: Path, student_path: Path, edition: str, *,
                  box: str = "") -> nbformat.NotebookNode:
    """The page of one notebook: ``student_path``'s cells, outputs by :func:`verdicts`, errata
    links rewritten, widgets replaced by a note, and ``box`` (markdown) after the first cell."""
    solution = nbformat.read(str(solution_path), as_version=4)
    page = copy.deepcopy(nbformat.read(str(student_path), as_version=4))
    twins = {cell.get("id"): cell for cell in solution.cells}
    keep = {v.cell_id for v in verdicts(solution, page) if v.keep}
    for cell in page.cells:
        if cell.cell_type == "markdown":
            cell.source = rewrite_errata_links(cell.source)
        elif cell.cell_type == "code":
            twin = twins[cell.get("id")]
            cell.outputs = ([_widget_note(o, edition) for o in twin.get("outputs", [])]
                            if cell.get("id") in keep else [])
            cell.execution_count = twin.get("execution_count") if cell.outputs else None
            tags = cell.metadata.get("tags", [])
            if HOSTED_TAG in tags and HIDE_INPUT not in tags:
                cell.metadata["tags"] = [*tags, HIDE_INPUT]
    if box:
        page.cells.insert(1, nbformat.v4.new_markdown_cell(box, id="book-run-it-yourself"))
    return page
