"""Notebook 2.3: the student version is in sync, and the grader scores its exercises fairly.

Three submissions are graded in ONE grader run: the solution (full marks), the untouched
student notebook (zero, "未完成"), and the solution with a planted wrong 1F1B order (partial,
with the check's message). To keep the test short, each submission keeps only the setup cell,
the exercise cells and their checks (the graded cells do not depend on the rest); nbval runs
the whole notebooks (see README: make test).
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from labs.exercises import generate as gen
from tests import grading

ROOT = Path(__file__).resolve().parents[1]
NAME = "2.3_pipeline_parallel.ipynb"
SOLUTION = ROOT / "solutions" / NAME
STUDENT = ROOT / "notebooks" / NAME
EXERCISES = {"ex2_3_gpipe_order": 2, "ex2_3_1f1b_order": 3, "ex2_3_bubble": 1,
             "ex2_3_min_microbatches": 1, "ex2_3_balanced_partition": 3}


def _wrong_1f1b(nb):
    (cell,) = [c for c in nb.cells if "def my_1f1b_order" in c.source]
    cell.source = cell.source.replace("warmup = min(n_stages - stage - 1, m)",
                                      "warmup = min(n_stages - stage, m)")
    assert "n_stages - stage, m" in cell.source
    return nb


def test_student_notebook_is_generated_from_the_solution():
    assert STUDENT.read_bytes() == gen.render(SOLUTION), "run: python -m labs.exercises.generate"
    student = nbformat.read(str(STUDENT), as_version=4)
    text = "\n".join(c.source for c in student.cells)
    assert "BEGIN SOLUTION" not in text and "练习未完成" in text
    assert set(gen.graded_cells(student)) == set(EXERCISES)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.grade(tmp_path_factory.mktemp("grading_2_3"), NAME, {
        "solution": grading.exercise_cells(grading.read(SOLUTION)),
        "untouched": grading.exercise_cells(grading.read(STUDENT)),
        "wrong": _wrong_1f1b(grading.exercise_cells(grading.read(SOLUTION)))}, timeout=240)


def _points(submission) -> dict:
    return {e["grade_id"]: e["points"] for e in submission["exercises"]}


def test_grader_gives_full_marks_to_the_solution(grades):
    solution = grades["solution"]
    assert solution["error"] is None
    assert _points(solution) == EXERCISES and solution["total"] == solution["max_total"] == 10


def test_grader_gives_zero_to_the_untouched_student_notebook(grades):
    untouched = grades["untouched"]
    assert untouched["total"] == 0 and untouched["max_total"] == 10
    for e in untouched["exercises"]:
        assert e["message"].startswith(f"❌ 练习 {e['grade_id']} 未完成（0 分）"), e


def test_grader_gives_partial_marks_with_the_checks_message(grades):
    wrong = grades["wrong"]
    assert _points(wrong) == {**EXERCISES, "ex2_3_1f1b_order": 0}
    (message,) = [e["message"] for e in wrong["exercises"] if e["grade_id"] == "ex2_3_1f1b_order"]
    assert message == ("❌ 练习 ex2_3_1f1b_order 未通过（0/3 分）：用例 one_f_one_b_order(4, 5, 1)："
                       "顺序不对：第 3 个动作期望 B0，实际 F3（期望的开头：['F0', 'F1', 'F2', 'B0', 'F3']）")
