"""Planning a submission: which source notebook it answers, and which of its cells run.

Owns: finding the submissions under a path, loading the source notebooks (``solutions/`` and
``solutions/en/``), matching a submission to its source, making the fields the grader reads
well-typed (:func:`sanitize`), putting the source's check cells in place of the student's
(:func:`prepare`) and the plan of the run (:func:`plan`: the setup cell, each exercise's cells
and check). Must not: execute cells, start processes, or decide a verdict.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import nbformat

from labs.exercises.generate import graded_cells, is_graded
from labs.notebook.hosted import is_hosted_cell
from labs.messages import EDITION_FOLDERS

from grader.results import GraderError

__all__ = ["find_submissions", "load_sources", "source_hashes", "match_source", "sanitize",
           "prepare", "setup_source", "plan", "max_points"]

HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s", re.M)


def find_submissions(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        if path.suffix != ".ipynb":
            raise GraderError(f"{path} is not a .ipynb notebook")
        return [path]
    if not path.is_dir():
        raise GraderError(f"{path} does not exist")
    found = [p for p in sorted(path.rglob("*.ipynb"))
             if ".ipynb_checkpoints" not in p.relative_to(path).parts and p.is_file()
             and not p.is_symlink()]
    if not found:
        raise GraderError(f"no .ipynb notebooks found under {path}")
    return found


def load_sources(solutions: Path) -> dict[str, nbformat.NotebookNode]:
    """The source notebooks by name: ``X.ipynb`` (Chinese) and ``en/X.ipynb`` (the English
    edition, ``solutions/en/``)."""
    solutions = Path(solutions)
    sources = {p.name: nbformat.read(str(p), as_version=4)
               for p in sorted(solutions.glob("*.ipynb"))} if solutions.is_dir() else {}
    for folder in EDITION_FOLDERS:
        for p in sorted((solutions / folder).glob("*.ipynb")) if solutions.is_dir() else []:
            sources[f"{folder}/{p.name}"] = nbformat.read(str(p), as_version=4)
    if not sources:
        raise GraderError(f"no solution notebooks in {solutions} (use --solutions DIR)")
    for name, nb in sources.items():
        try:
            graded_cells(nb)
        except ValueError as exc:
            raise GraderError(f"{solutions / name}: {exc}") from None
    return sources


def source_hashes(sources: dict) -> dict[str, str]:
    return {name: hashlib.sha256(json.dumps(nb, sort_keys=True).encode()).hexdigest()
            for name, nb in sources.items()}


def match_source(path: Path, nb, sources: dict) -> str | None:
    """The source of a submission: by ``metadata.course.notebook`` (in the edition of
    ``metadata.course.language``, else of a folder ``en/`` on the submission's path), else by
    file name, else by the longest source name that ends the file name."""
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    course = metadata.get("course") if isinstance(metadata, dict) else None
    name = course.get("notebook") if isinstance(course, dict) else None
    lang = course.get("language") if isinstance(course, dict) else None
    folder = next((f for f, code in EDITION_FOLDERS.items()
                   if code == lang or (lang is None and f in Path(path).parent.parts)), None)

    def pick(found: str) -> str:
        edition = f"{folder}/{found}" if folder else None
        return edition if edition in sources else found

    if isinstance(name, str) and "/" not in name and name in sources:
        return pick(name)
    if path.name in sources:
        return pick(path.name)
    suffixes = [n for n in sources if "/" not in n and path.name.endswith(n)]
    return pick(max(suffixes, key=len)) if suffixes else None


def sanitize(nb) -> list[str]:
    """Make the few fields the grader reads well-typed, in place; what was wrong.

    A cell whose ``metadata`` is not a mapping gets an empty one; ``nbgrader`` metadata that is
    not a mapping, or whose ``grade_id`` is not a string, is dropped (the cell becomes an
    ordinary cell); a cell that is not a mapping with a known type is dropped.
    """
    problems = []
    if not isinstance(nb.get("metadata"), dict):
        problems.append("metadata")
        nb["metadata"] = nbformat.NotebookNode()
    course = nb.metadata.get("course")
    if course is not None and (not isinstance(course, dict)
                               or not isinstance(course.get("notebook", ""), str)):
        problems.append("metadata.course")
        nb.metadata.pop("course")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        problems.append("cells")
        cells = []
    kept = []
    for k, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            problems.append(f"cells[{k}]")
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            problems.append(f"cells[{k}].source")
            source = ""
        cell["source"] = source
        if not isinstance(cell.get("metadata"), dict):
            problems.append(f"cells[{k}].metadata")
            cell["metadata"] = nbformat.NotebookNode()
        grader = cell.metadata.get("nbgrader")
        if grader is not None and (not isinstance(grader, dict)
                                   or not isinstance(grader.get("grade_id", ""), str)):
            problems.append(f"cells[{k}].metadata.nbgrader")
            cell.metadata.pop("nbgrader")
        if cell.get("id") is not None and not isinstance(cell.get("id"), str):
            cell.pop("id")
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        kept.append(nbformat.from_dict(cell))
    nb["cells"] = kept
    return problems


def prepare(submission, source) -> tuple[nbformat.NotebookNode, dict[str, int]]:
    """The notebook to execute and ``{grade_id: cell index}`` of the checks in it.

    Graded cells take the source's code and metadata; outputs are cleared; the submission's
    own graded cells that the source does not know become ordinary cells.
    """
    nb = copy.deepcopy(submission)
    reference = graded_cells(source)
    by_cell_id = {_cell_id(cell): grade_id for grade_id, cell in reference.items()
                  if _cell_id(cell)}
    positions: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if is_graded(cell):
            grade_id = cell.metadata["nbgrader"].get("grade_id")
        elif cell.cell_type == "code":  # a check whose metadata was lost: known by its cell id
            grade_id = by_cell_id.get(_cell_id(cell))
        else:
            continue
        if grade_id in reference and grade_id not in positions:
            cell.source = reference[grade_id].source
            cell.metadata = copy.deepcopy(reference[grade_id].metadata)
            positions[grade_id] = index
        else:  # unknown or duplicated check: it scores nothing
            cell.metadata.pop("nbgrader", None)
    return nb, positions


def setup_source(source) -> str:
    """The source notebook's setup cell: its first code cell (the hosted bootstrap skipped)."""
    return next((c.source for c in source.cells
                 if c.cell_type == "code" and not is_hosted_cell(c)), "")


def plan(nb, positions: dict[str, int], source) -> dict:
    """Which cells run: ``{"setup": [i], "exercises": [{grade_id, cells, check}]}``.

    The setup is the cell of the source's setup, found by its id (``cell.id``, or
    ``metadata.id`` as Colab saves it), else by its code, else the first code cell: a cell
    inserted above it changes nothing. The exercise section starts at the last markdown heading
    above the first exercise cell (a solution cell of the source, known by ``grade_id`` or cell
    id, or the first check); exercise k is every code cell after the previous check (or the
    section's start) up to its check, in notebook order. Checks out of order run in notebook
    order; a deleted check's exercise is not run.
    """
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    setup = [setup_index(nb, source, code)] if code else []
    # the judge imports what the SOURCE's setup cell imports (the student's may be edited)
    judge_setup = setup_source(source)
    checks = sorted((i, gid) for gid, i in positions.items())
    if not checks:
        return {"setup": setup, "exercises": [], "judge_setup": judge_setup}
    sol_ids = {_cell_id(c) for c in source.cells if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("solution")
               and not c.metadata.get("nbgrader", {}).get("grade")}
    sol_gids = {c.metadata["nbgrader"].get("grade_id") for c in source.cells
                if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}
    first = checks[0][0]
    for i, cell in enumerate(nb.cells[:first]):
        if cell.cell_type != "code" or i in setup:
            continue
        grader = cell.metadata.get("nbgrader", {})
        if (_cell_id(cell) in sol_ids and _cell_id(cell)) or grader.get("grade_id") in sol_gids \
                or grader.get("solution"):
            first = i
            break
    start = setup[0] + 1 if setup else 0
    for i in range(first, start - 1, -1):
        cell = nb.cells[i]
        if cell.cell_type == "markdown" and HEADING_RE.search(cell.source):
            start = i
            break
    else:
        start = first
    exercises, previous = [], start
    for at, gid in checks:
        cells = [i for i in code if previous <= i <= at and i not in setup]
        exercises.append({"grade_id": gid, "cells": cells, "check": at,
                          "points": max_points(nb.cells[at]),
                          "check_source": nb.cells[at].source})  # the source's (prepare())
        previous = at + 1
    return {"setup": setup, "exercises": exercises, "judge_setup": judge_setup}


def _cell_id(cell):
    """A cell's id: nbformat >= 4.5's ``id``, or the ``metadata.id`` older savers keep."""
    return cell.get("id") or cell.get("metadata", {}).get("id")


def setup_index(nb, source, code: list) -> int:
    """The index in ``nb`` of the source's setup cell (its first code cell but the hosted
    bootstrap): the code cell with the same id, else the same code, else ``nb``'s first code cell
    that is not the bootstrap."""
    code = [i for i in code if not is_hosted_cell(nb.cells[i])] or code
    source_code = [c for c in source.cells if c.cell_type == "code" and not is_hosted_cell(c)]
    if not source_code:
        return code[0]
    wanted = source_code[0]
    wanted_id = _cell_id(wanted)
    if wanted_id:
        for i in code:
            if _cell_id(nb.cells[i]) == wanted_id:
                return i
    for i in code:
        if nb.cells[i].source.strip() == wanted.source.strip():
            return i
    return code[0]


def max_points(cell) -> float:
    """The points of a check cell (``nbgrader.points``; 0 when unreadable)."""
    try:
        return float(cell.metadata["nbgrader"].get("points", 0))
    except (TypeError, ValueError):
        return 0.0

