"""Notebook 2.5: the student version is in sync, and the grader scores its exercises fairly.

Three submissions are graded in ONE grader run: the solution (full marks), the untouched
student notebook (zero, unfinished), and the solution with a planted wrong answer (2·N instead of
6·N FLOPs per token), which loses exactly that exercise with the check's hint. nbval runs the
whole notebooks.
"""
from __future__ import annotations

import pytest

from labs.exercises import catalog
from tests.support import grading, verdicts

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "2.5_summary.ipynb"
EXERCISES = catalog.points(NAME)  # the declaration's (labs/exercises/text.py)
TOTAL = sum(EXERCISES.values())


def _forward_only(nb):
    (cell,) = [c for c in nb.cells if "def my_training_days" in c.source]
    cell.source = cell.source.replace("return 6 * n_params", "return 2 * n_params")
    assert "return 2 * n_params" in cell.source
    return nb


def test_student_notebook_is_generated_from_the_solution():
    grading.assert_student_version(NAME, EXERCISES)


# graded in one run with the other notebook tests' (tests/support/grading.py)
grading.declare_three(__name__, NAME, _forward_only)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_grader_gives_full_marks_to_the_solution(grades):
    grading.assert_full_marks(grades["solution"], EXERCISES, TOTAL)


def test_grader_gives_zero_to_the_untouched_student_notebook(grades):
    grading.assert_zero_for_untouched(grades["untouched"], TOTAL)


def test_grader_gives_partial_marks_with_the_checks_message(grades):
    message = grading.only_lost(grades["wrong"], EXERCISES, "ex2_5_training_days")
    assert message.startswith(verdicts.failed(3, 2, "zh")), message
    assert "6N" in message
