"""Grading notebook 2.2 from the command line, as an instructor would.

Three submissions in one grader run: the solution notebook (full marks), the untouched student
notebook (zero, every exercise unfinished), and a copy of the solution whose parallel MLP forgets
f (the copy-to-region before c_fc): the forward is still right, so the check must name the one
gradient that is wrong -- the input's -- and whose sequence-parallel reduce-scatter forgets its
group (right on the default group, wrong on the hidden case with two groups {0, 1}, {2, 3}),
and give the other exercises their points.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog
from labs.exercises.generate import graded_cells
from labs.messages import joined, text
from tests.support import grading, verdicts
from tests.support.messages import pattern, said

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "2.2_model_parallel.ipynb"
STUDENT = ROOT / "notebooks" / "2.2_model_parallel.ipynb"
POINTS = catalog.points(SOLUTION.name)  # the declaration's (labs/exercises/text.py)
TOTAL = sum(POINTS.values())


def _plant_missing_f(nb):
    cell = grading.solution_cell(nb, "ex2_2_parallel_mlp_solution")
    wrong = cell.source.replace("comm.copy_to_tensor_parallel_region(x, group=group)", "x")
    assert wrong != cell.source
    cell.source = wrong
    return nb


def _plant_sp_without_group(nb):
    cell = grading.solution_cell(nb, "ex2_2_sequence_parallel_mlp_solution")
    old = "dist.reduce_scatter_single(mine, full, group=group)"
    assert cell.source.count(old) == 1
    cell.source = cell.source.replace(old, "dist.reduce_scatter_single(mine, full)")
    return nb


# graded in one run with the other notebook tests' (tests/support/grading.py)
grading.declare(__name__, SOLUTION.name, lambda: {
    "solution": grading.read(SOLUTION),  # the whole notebook, as a student hands it in
    "untouched": grading.exercise_cells(grading.read(STUDENT)),
    "planted": _plant_sp_without_group(_plant_missing_f(
        grading.exercise_cells(grading.read(SOLUTION))))},
    timeout=500)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_notebook_declares_the_graded_exercises():
    cells = graded_cells(nbformat.read(str(SOLUTION), as_version=4))
    assert {gid: c.metadata["nbgrader"]["points"] for gid, c in cells.items()} == POINTS
    for gid, cell in cells.items():
        assert cell.metadata["nbgrader"] == {"grade": True, "grade_id": gid,
                                             "points": POINTS[gid], "solution": False,
                                             "locked": True, "schema_version": 3}


def test_solution_scores_full_marks(report):
    grading.assert_full_marks(report["solution"], POINTS, TOTAL)


def test_untouched_student_notebook_scores_zero(report):
    grading.assert_zero_for_untouched(report["untouched"], TOTAL)


def test_missing_f_names_the_input_gradient(report):
    planted = report["planted"]
    assert (planted["total"], planted["max_total"]) == (TOTAL - 2 - 4, TOTAL)
    exercises = grading.by_id(planted)
    assert {gid: e["points"] for gid, e in exercises.items()} == {
        **POINTS, "ex2_2_parallel_mlp": 0, "ex2_2_sequence_parallel_mlp": 0}
    message = exercises["ex2_2_parallel_mlp"]["message"]
    zh = dict(lang="zh")
    failed = said(message, "checks.verdict_failed", **zh, exercise=verdicts.label(4, "zh"),
                  points=2)["message"]
    failed = said(failed, "checks.case_failed", **zh,
                  case=text("checks_2_2.case_ranks", **zh, n=1, world_size=2))["message"]
    fields = said(failed, "checks_2_2.wrong_gradients", **zh, rank=0)
    assert fields["right"] == joined(
        ["c_fc.weight", "c_fc.bias", "c_proj.weight", "c_proj.bias"], **zh), fields
    (wrong,) = fields["wrong"].split(joined(["", ""], "clauses", **zh))  # only x's gradient
    assert re.search(r"\(\d+, \d+\)", said(wrong, "checks.wrong_elements", **zh)["index"]), wrong


def test_sequence_parallel_without_group_fails_on_the_hidden_group_case(report):
    message = grading.by_id(report["planted"])["ex2_2_sequence_parallel_mlp"]["message"]
    assert message.startswith(verdicts.failed(7, 4, "zh")), message
    assert text("checks_2_2.case_hidden_two_groups", lang="zh", n=3, world_size=4) in message
    assert pattern("checks.frame", lang="zh", func="forward").search(message), message
