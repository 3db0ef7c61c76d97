"""Notebook 2.5: the student version is in sync, and the grader scores its exercises fairly.

Three submissions are graded in ONE grader run: the solution (full marks), the untouched
student notebook (zero, "未完成"), and the solution with a planted wrong answer (2·N instead of
6·N FLOPs per token), which loses exactly that exercise with the check's hint. nbval runs the
whole notebooks.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from labs.exercises import generate as gen
from tests import grading

ROOT = Path(__file__).resolve().parents[1]
NAME = "2.5_summary.ipynb"
SOLUTION = ROOT / "solutions" / NAME
STUDENT = ROOT / "notebooks" / NAME
EXERCISES = {"ex2_5_capstone": 4, "ex2_5_diagnose": 2, "ex2_5_training_days": 2}


def _forward_only(nb):
    (cell,) = [c for c in nb.cells if "def my_training_days" in c.source]
    cell.source = cell.source.replace("return 6 * n_params", "return 2 * n_params")
    assert "return 2 * n_params" in cell.source
    return nb


def test_student_notebook_is_generated_from_the_solution():
    assert STUDENT.read_bytes() == gen.render(SOLUTION), "run: python -m labs.exercises.generate"
    student = nbformat.read(str(STUDENT), as_version=4)
    text = "\n".join(c.source for c in student.cells)
    assert "BEGIN SOLUTION" not in text and "练习未完成" in text
    assert set(gen.graded_cells(student)) == set(EXERCISES)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.grade(tmp_path_factory.mktemp("grading_2_5"), NAME, {
        "solution": grading.exercise_cells(grading.read(SOLUTION)),
        "untouched": grading.exercise_cells(grading.read(STUDENT)),
        "wrong": _forward_only(grading.exercise_cells(grading.read(SOLUTION)))}, timeout=240)


def _points(submission) -> dict:
    return {e["grade_id"]: e["points"] for e in submission["exercises"]}


def test_grader_gives_full_marks_to_the_solution(grades):
    solution = grades["solution"]
    assert solution["error"] is None
    assert _points(solution) == EXERCISES and solution["total"] == solution["max_total"] == 8


def test_grader_gives_zero_to_the_untouched_student_notebook(grades):
    untouched = grades["untouched"]
    assert untouched["total"] == 0 and untouched["max_total"] == 8
    for e in untouched["exercises"]:
        assert e["message"].startswith(f"❌ 练习 {e['grade_id']} 未完成（0 分）"), e


def test_grader_gives_partial_marks_with_the_checks_message(grades):
    wrong = grades["wrong"]
    assert _points(wrong) == {**EXERCISES, "ex2_5_training_days": 0}
    (message,) = [e["message"] for e in wrong["exercises"]
                  if e["grade_id"] == "ex2_5_training_days"]
    assert message.startswith("❌ 练习 ex2_5_training_days 未通过（0/2 分）：")
    assert "6N" in message
