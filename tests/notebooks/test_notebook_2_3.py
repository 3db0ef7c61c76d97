"""Notebook 2.3: the student version is in sync, and the grader scores its exercises fairly.

Three submissions are graded in ONE grader run: the solution (full marks), the untouched
student notebook (zero, unfinished), and the solution with a planted wrong 1F1B order (partial,
with the check's message). To keep the test short, each submission keeps only the setup cell,
the exercise cells and their checks (the graded cells do not depend on the rest); nbval runs
the whole notebooks (see README: make test).
"""
from __future__ import annotations

import pytest

from labs.exercises import catalog
from labs.messages import text
from tests.support import grading, verdicts

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "2.3_pipeline_parallel.ipynb"
EXERCISES = catalog.points(NAME)  # the declaration's (labs/exercises/text.py)
TOTAL = sum(EXERCISES.values())


def _wrong_1f1b(nb):
    (cell,) = [c for c in nb.cells if "def my_1f1b_order" in c.source]
    cell.source = cell.source.replace("warmup = min(n_stages - stage - 1, m)",
                                      "warmup = min(n_stages - stage, m)")
    assert "n_stages - stage, m" in cell.source
    return nb


def test_student_notebook_is_generated_from_the_solution():
    grading.assert_student_version(NAME, EXERCISES)


# graded in one run with the other notebook tests' (tests/support/grading.py)
grading.declare_three(__name__, NAME, _wrong_1f1b)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_grader_gives_full_marks_to_the_solution(grades):
    grading.assert_full_marks(grades["solution"], EXERCISES, TOTAL)


def test_grader_gives_zero_to_the_untouched_student_notebook(grades):
    grading.assert_zero_for_untouched(grades["untouched"], TOTAL)


def test_grader_gives_partial_marks_with_the_checks_message(grades):
    message = grading.only_lost(grades["wrong"], EXERCISES, "ex2_3_1f1b_order")
    zh = dict(lang="zh")
    assert message == verdicts.failed(2, 3, "zh") + text(
        "checks.case_failed", **zh, case=text("checks.case_call", **zh, call="my_1f1b_order(4, 5, 1)"),
        message=text("checks_2_3.order_wrong", **zh, index=4, expected="B0", got="F3",
                     head=['F0', 'F1', 'F2', 'B0', 'F3']))
