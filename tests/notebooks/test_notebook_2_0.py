"""Grading notebook 2.0 from the command line, as an instructor would.

Three submissions are graded in one run: the solution notebook (full marks), the untouched
student notebook (zero, every exercise unfinished), and a copy of the solution whose ring
all-reduce forgets the all-gather phase (partial marks, with the rank/element message).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog
from labs.exercises.generate import graded_cells
from labs.messages import text
from tests.support import grading, verdicts
from tests.support.messages import found_in, said

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "2.0_collectives.ipynb"
STUDENT = ROOT / "notebooks" / "2.0_collectives.ipynb"
SOLUTION_EN = ROOT / "solutions" / "en" / "2.0_collectives.ipynb"
STUDENT_EN = ROOT / "notebooks" / "en" / "2.0_collectives.ipynb"
POINTS = catalog.points("2.0_collectives.ipynb")  # the declaration's (labs/exercises/text.py)
TOTAL = sum(POINTS.values())


def _plant_wrong_ring(nb):
    """The solution with the ring's all-gather loop removed: only reduce-scatter is done."""
    cell = grading.solution_cell(nb, "ex2_0_ring_all_reduce_solution")
    lines = cell.source.split("\n")
    start = next(i for i, line in enumerate(lines) if "# all-gather" in line)
    end = next(i for i, line in enumerate(lines) if "END SOLUTION" in line)
    assert start < end
    cell.source = "\n".join(lines[:start] + lines[end:])
    return nb


def _body(nb, grade_id: str, body: str):
    """The solution with the answer of ``grade_id`` replaced by ``body`` (same indentation)."""
    cell = grading.solution_cell(nb, grade_id)
    lines = cell.source.split("\n")
    start = next(i for i, line in enumerate(lines) if "BEGIN SOLUTION" in line)
    end = next(i for i, line in enumerate(lines) if "END SOLUTION" in line)
    cell.source = "\n".join(lines[:start + 1] + body.split("\n") + lines[end:])
    return nb


def _plant_borrowed(nb):
    """Two answers that got full marks before issue 30: the ring through distributed_c10d's
    own all_reduce, and the byte formula through the course's."""
    nb = _body(nb, "ex2_0_ring_all_reduce_solution",
               "    torch.distributed.distributed_c10d.all_reduce(tensor)")
    return _body(nb, "ex2_0_ring_bytes_solution",
                 "    from labs import collectives\n"
                 "    return collectives.ring_all_reduce_bytes_per_rank(size_bytes, world_size)")


# Graded in one run with the other notebook tests' (tests/support/grading.py); both editions in
# it: the grader finds each one's source by its language.
def _cells(path):
    """The setup and exercise cells only (the demos would run again for nothing): the solution
    alone is graded as the whole notebook, as a student hands it in."""
    return grading.exercise_cells(grading.read(path))


grading.declare(__name__, SOLUTION.name, lambda: {
    "solution": grading.read(SOLUTION), "untouched": _cells(STUDENT),
    "planted": _plant_wrong_ring(_cells(SOLUTION)),
    "borrowed": _plant_borrowed(_cells(SOLUTION)),
    "solution_en": _cells(SOLUTION_EN), "untouched_en": _cells(STUDENT_EN),
    "planted_en": _plant_wrong_ring(_cells(SOLUTION_EN))}, timeout=240)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_notebook_declares_the_graded_exercises():
    nb = nbformat.read(str(SOLUTION), as_version=4)
    cells = graded_cells(nb)
    assert {gid: c.metadata["nbgrader"]["points"] for gid, c in cells.items()} == POINTS
    for cell in cells.values():
        assert cell.metadata["nbgrader"] == {
            "grade": True, "grade_id": cell.metadata["nbgrader"]["grade_id"],
            "points": cell.metadata["nbgrader"]["points"], "solution": False,
            "locked": True, "schema_version": 3}


def test_solution_scores_full_marks(report):
    grading.assert_full_marks(report["solution"], POINTS, TOTAL)


def test_untouched_student_notebook_scores_zero(report):
    grading.assert_zero_for_untouched(report["untouched"], TOTAL)


def test_planted_wrong_ring_scores_partial_marks_with_the_reason(report):
    planted = report["planted"]
    assert (planted["total"], planted["max_total"]) == (TOTAL - POINTS["ex2_0_ring_all_reduce"], TOTAL)
    exercises = grading.by_id(planted)
    assert {gid: e["points"] for gid, e in exercises.items()} == {**POINTS, "ex2_0_ring_all_reduce": 0}
    message = exercises["ex2_0_ring_all_reduce"]["message"]
    zh = dict(lang="zh")
    case = text("checks_2_0.case_ranks_length", **zh, n=1, world_size=4, length=8)
    failed = said(message, "checks.verdict_failed", **zh, exercise=verdicts.label(1, "zh"),
                  points=3)["message"]
    wrong = said(failed, "checks.case_failed", **zh, case=case)["message"]
    fields = said(wrong, "checks.wrong_elements", **zh, total=8)
    said(fields["where"], "checks.on_rank", **zh, what=text("checks_2_0.what_result", **zh))
    assert re.fullmatch(r"-?\d+(\.\d+)?", fields["got"]) and int(fields["bad"]) <= 8, fields


def test_the_english_edition_gets_the_same_points_with_english_messages(report):
    for who in ("solution", "untouched", "planted"):
        zh, en = report[who], report[who + "_en"]
        assert en["notebook"] == "en/" + zh["notebook"]
        assert grading.points(en) == grading.points(zh), who
    messages = {gid: e["message"] for gid, e in grading.by_id(report["solution_en"]).items()}
    assert messages["ex2_0_ring_bytes"] == verdicts.passed(3, 1, "en")
    # the review flags too (issue 40: they were in Chinese in an English submission)
    flags = [f for e in report["solution_en"]["exercises"] for f in e["flags"]]
    assert flags and not [f for f in flags if re.search("[\u4e00-\u9fff]", f)], flags
    for e in report["untouched_en"]["exercises"]:
        number = catalog.EXERCISES[e["grade_id"]].number
        assert e["message"].startswith(verdicts.incomplete(number, "en")), e
    wrong = grading.by_id(report["planted_en"])["ex2_0_ring_all_reduce"]["message"]
    case = text("checks_2_0.case_ranks_length", lang="en", n=1, world_size=4, length=8)
    assert wrong.startswith(verdicts.failed(1, 3, "en") + case), wrong


def test_borrowed_collectives_and_formulas_score_zero_in_the_grader_too(report):
    # the refusals happen on ranks, whose results the judge replays: same verdict as the notebook
    borrowed = grading.by_id(report["borrowed"])
    assert {gid: e["points"] for gid, e in borrowed.items()} == {
        **POINTS, "ex2_0_ring_all_reduce": 0, "ex2_0_ring_bytes": 0}
    found_in(borrowed["ex2_0_ring_all_reduce"]["message"], "checks.off_limits", lang="zh",
             shown="torch.distributed.all_reduce")
    found_in(borrowed["ex2_0_ring_bytes"]["message"], "checks.off_limits", lang="zh",
             shown="labs.collectives.ring_all_reduce_bytes_per_rank")
