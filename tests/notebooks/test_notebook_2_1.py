"""Notebook 2.1: the grader gives the solutions full marks, the untouched student version zero,
and planted wrong answers (buckets; ZeRO-1's broadcast src) partial marks with the check's
message (asserted on grades.json).

To stay fast the submissions keep the notebook's setup cell and its exercise section only (the
exercises do not depend on the sections before them); nbval runs the whole notebooks:
``pytest --nbval-lax solutions/2.1_data_parallel.ipynb notebooks/2.1_data_parallel.ipynb``.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog, generate
from labs.messages import text
from tests.support import grading, verdicts
from tests.support.messages import pattern

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
NAME = "2.1_data_parallel.ipynb"
SOLUTION = ROOT / "solutions" / NAME
STUDENT = ROOT / "notebooks" / NAME
POINTS = catalog.points(NAME)  # the declaration's (labs/exercises/text.py)


def plant_wrong_buckets(nb):
    """make_buckets walking the tensors in forward order: a plausible student mistake."""
    (cell,) = [c for c in nb.cells if c.source.startswith("def make_buckets")]
    cell.source = cell.source.replace("for i in reversed(range(len(sizes_bytes))):",
                                      "for i in range(len(sizes_bytes)):")
    assert "range(len(sizes_bytes)):" in cell.source
    return nb


def plant_wrong_zero1(nb):
    """MyZero1 broadcasting from the owner's rank in the group, not its global rank: right on
    the default group, wrong on the hidden case with two groups {0, 1}, {2, 3}."""
    (cell,) = [c for c in nb.cells if c.source.startswith("class MyZero1")]
    old = "src=self.global_ranks[self.owner[i]]"
    assert old in cell.source
    cell.source = cell.source.replace(old, "src=self.owner[i]")
    return nb


# graded in one run with the other notebook tests' (tests/support/grading.py)
grading.declare(__name__, NAME, lambda: {
    "solution": grading.exercise_cells(grading.read(SOLUTION)),
    "untouched": grading.exercise_cells(grading.read(STUDENT)),
    "planted": plant_wrong_zero1(plant_wrong_buckets(
        grading.exercise_cells(grading.read(SOLUTION))))},
    timeout=300)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_student_notebook_is_in_sync_with_the_solutions():
    proc = subprocess.run([sys.executable, "-m", "labs.exercises.generate", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    graded = generate.graded_cells(nbformat.read(str(SOLUTION), as_version=4))
    assert {gid: int(c.metadata["nbgrader"]["points"]) for gid, c in graded.items()} == POINTS


def test_solution_gets_full_marks(grades):
    s = grades["solution"]
    assert s["error"] is None
    assert s["total"] == s["max_total"] == sum(POINTS.values())


def test_untouched_student_notebook_gets_zero(grades):
    s = grades["untouched"]
    assert s["total"] == 0 and s["max_total"] == sum(POINTS.values())
    for exercise in s["exercises"]:
        number = catalog.EXERCISES[exercise["grade_id"]].number
        assert exercise["message"].startswith(verdicts.incomplete(number, "zh")), exercise


def test_planted_wrong_answer_gets_partial_marks_with_the_reason(grades):
    s = grades["planted"]
    wrong_ids = {"ex2_1_buckets", "ex2_1_zero1"}
    assert s["total"] == sum(POINTS.values()) - sum(POINTS[gid] for gid in wrong_ids)
    wrong = grading.by_id(s)["ex2_1_buckets"]
    assert wrong["points"] == 0
    zh = dict(lang="zh")
    assert wrong["message"].startswith(verdicts.failed(2, 2, "zh")), wrong
    assert text("checks.case_failed", **zh, case=text(
        "checks.case_call", **zh, call="make_buckets([4, 4, 4, 4], 8)"), message=text(
        "checks.wrong_value", **zh, where=text("checks_2_1.what_buckets", **zh) + "[0][0]",
        expected=3, got=0)) in wrong["message"], wrong
    zero1 = grading.by_id(s)["ex2_1_zero1"]
    assert zero1["points"] == 0
    assert zero1["message"].startswith(verdicts.failed(6, 4, "zh")), zero1
    assert text("checks.case_hidden", **zh, n=3) in zero1["message"], zero1
    assert pattern("checks.frame", **zh, func="step").search(zero1["message"]), zero1
    assert all(e["points"] == e["max_points"] for gid, e in grading.by_id(s).items()
               if gid not in wrong_ids)
