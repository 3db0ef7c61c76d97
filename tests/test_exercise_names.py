"""Checks name their exercise as the notebook does: 练习 n, from labs.exercises.catalog.

The catalog (grade_id -> notebook, number, title, points) must agree with the headings
``### 练习 n（k 分）：title`` above each graded check cell, in the solutions and in the student
notebooks; every check function's points must agree too, and the hints a failure points to
must exist in the exercise's section.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog
from labs.exercises import generate as gen

ROOT = Path(__file__).resolve().parents[1]
HEADING_RE = re.compile(r"^#{2,4}\s*练习\s*(\d+)\s*（(\d+)\s*分）：\s*(.+?)\s*$", re.M)
SUMMARY_RE = re.compile(r"<summary>\s*练习\s*(\d+)\s*·\s*提示\s*(\d+)")
CHECK_MODULES = ("collectives_checks", "data_parallel_checks", "tensor_parallel_checks",
                 "pipeline_checks", "hybrid_checks", "summary_checks")


def exercises_in(path: Path) -> dict:
    """``{grade_id: (Exercise as the notebook has it, hint numbers of its section)}``."""
    nb = nbformat.read(str(path), as_version=4)
    found, heading, hints = {}, None, set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = HEADING_RE.search(cell.source)
            if m:
                heading, hints = m, set()
            hints |= {(int(n), int(k)) for n, k in SUMMARY_RE.findall(cell.source)}
        if gen.is_graded(cell):
            meta = cell.metadata["nbgrader"]
            assert heading is not None, f"{path.name}: check {meta['grade_id']} without a heading"
            number = int(heading.group(1))
            found[meta["grade_id"]] = (
                catalog.Exercise(path.name, number, heading.group(3), int(meta["points"])),
                {k for n, k in hints if n == number})
            assert int(heading.group(2)) == meta["points"], f"{path.name} 练习 {number}: points"
            heading = None
    return found


@pytest.mark.parametrize("folder", ["solutions", "notebooks"])
def test_catalog_matches_the_notebooks_headings(folder):
    found = {}
    for path in sorted((ROOT / folder).glob("*.ipynb")):
        found.update(exercises_in(path))
    assert sorted(found) == sorted(catalog.EXERCISES), "ids in the notebooks vs the catalog"
    for grade_id, (exercise, hints) in found.items():
        assert catalog.EXERCISES[grade_id] == exercise, (
            f"{folder}/{exercise.notebook}: {grade_id} is 练习 {exercise.number}"
            f"（{exercise.points} 分）：{exercise.title} there; update labs/exercises/catalog.py")
        for kind in ("error", "wrong", "timeout"):
            k = catalog.hint(grade_id, kind)
            assert k is None or (k in hints and k < max(hints)), (
                f"{grade_id}: a {kind} points to 提示 {k}, the section has {sorted(hints)} "
                "(never the last, the near-solution)")


def test_check_functions_use_the_catalogs_points():
    seen = set()
    for name in CHECK_MODULES:
        module = importlib.import_module(f"labs.exercises.{name}")
        for value in vars(module).values():
            grade_id = getattr(value, "exercise_id", None)
            if grade_id is None or not callable(value):
                continue
            assert grade_id in catalog.EXERCISES, f"{name}: {grade_id} is not in the catalog"
            assert value.points == catalog.EXERCISES[grade_id].points, grade_id
            seen.add(grade_id)
    assert seen == set(catalog.EXERCISES)


def test_labels():
    assert catalog.label("ex2_0_ring_all_reduce") == "练习 1"
    assert catalog.label("ex2_3_bubble") == "练习 3"
    assert catalog.label("ex_sum") == "练习 ex_sum"  # a test's own check: its id
    assert catalog.hint("ex2_0_ring_all_reduce", "error") == 2
    assert catalog.hint("ex_sum", "error") is None
