"""The gradebook (one row per student across notebooks), the LMS CSV and Gradescope's
results.json, read back from the files; and the example ``run_autograder`` end to end."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.support import grader_plants as gp
from grader import gradebook
from grader.results import ExerciseResult, SubmissionResult, write_reports
from labs.messages import text

ROOT = Path(__file__).resolve().parents[2]


def _result(label, notebook, points, *, flags=(), error=None):
    exercises = [ExerciseResult(f"ex{k}", p, m, f"message {k}", list(flags) if k == 0 else [])
                 for k, (p, m) in enumerate(points)]
    return SubmissionResult(submission=label, notebook=notebook, exercises=exercises,
                            error=error)


CLASS = [
    _result("alice/2.0_collectives.ipynb", "2.0_collectives.ipynb", [(1, 1), (3, 3)]),
    _result("alice/2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", [(0, 2), (4, 4)],
            flags=["review: copied"]),
    _result("bob/en/2.0_collectives.ipynb", "en/2.0_collectives.ipynb", [(1, 1), (0, 3)],
            error="memory limit 300 MiB exceeded in exercise ex1"),
    _result("carol_2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", [(2, 2), (4, 4)]),
    _result("carol/2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", [(2, 2), (0, 4)]),
]


def _read_csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def test_students_are_found_by_folder_or_by_file_name():
    assert [gradebook.student_of(r) for r in CLASS] == ["alice", "alice", "bob", "carol",
                                                         "carol"]


@pytest.mark.parametrize("path, student", [
    ("alice/2.0_collectives.ipynb", "alice"),
    ("alice/en/2.0_collectives.ipynb", "alice"),
    ("2.1_data_parallel/alice/2.1_data_parallel.ipynb", "alice"),  # <assignment>/<student>/
    ("2.1/bob/whatever.ipynb", "bob"),
    ("en/2.1_data_parallel/carol/2.1_data_parallel.ipynb", "carol"),
    ("smithjohn_12345_678901_2.1_data_parallel-1.ipynb", "smithjohn"),  # Canvas
    ("smithjohn_LATE_12345_678901_2.1_data_parallel.ipynb", "smithjohn"),
    ("2.1_data_parallel/smithjohn_12345_678901_2.1_data_parallel.ipynb", "smithjohn"),
    ("John Smith_4242_assignsubmission_file_/2.1_data_parallel.ipynb", "John Smith"),  # Moodle
    ("John Smith_4242_assignsubmission_file_2.1_data_parallel.ipynb", "John Smith"),
    ("dave_2.1_data_parallel.ipynb", "dave"),
])
def test_students_are_found_in_the_layouts_instructors_have(path, student):
    """Issue 40, point 3: per-assignment folders merged a whole class into one student, and
    Canvas' and Moodle's download names were not read."""
    result = _result(path, "2.1_data_parallel.ipynb", [(1, 1)])
    assert gradebook.student_of(result) == student


def test_the_gradebook_and_the_lms_file_read_back(tmp_path):
    book_path, lms_path = gradebook.write(CLASS, tmp_path)
    rows = _read_csv(book_path)
    assert rows[0] == ["student", "2.0_collectives.ipynb (/4)", "2.1_data_parallel.ipynb (/6)",
                       "total", "max_total", "flags", "notes"]
    by = {row[0]: row for row in rows[1:]}
    assert list(by) == ["alice", "bob", "carol"]
    assert by["alice"][1:5] == ["4", "4", "8", "10"]
    assert by["alice"][5] == "2.1_data_parallel.ipynb/ex0: review: copied"
    assert by["bob"][1:5] == ["1", "", "1", "10"]  # the English edition shares the column
    assert "memory limit" in by["bob"][6]
    assert by["carol"][1:5] == ["", "6", "6", "10"]  # handed in twice: the better one
    assert "2.1_data_parallel.ipynb" in by["carol"][6]
    assert _read_csv(lms_path) == [["student_id", "score", "max", "error"],
                                   ["alice", "8", "10", ""], ["bob", "1", "10", ""],
                                   ["carol", "6", "10", ""]]


def test_a_failed_grading_is_an_error_in_every_export_not_a_zero(tmp_path):
    """Issue 40, point 2: the grader's own worker could not start for dave's 2.1: no 0 in
    grades.csv, gradebook.csv or lms.csv, and no Gradescope results.json for him."""
    failed = _result("dave/2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", [(0, 2), (0, 4)],
                     error="the grading process failed: RuntimeError: worker exit 1")
    failed.failed = True
    results = [*CLASS, _result("dave/2.0_collectives.ipynb", "2.0_collectives.ipynb",
                               [(1, 1), (3, 3)]), failed]
    csv_path, _ = write_reports(results, tmp_path)
    row = _read_csv(csv_path)[-1]
    assert row[:5] == ["dave/2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", "", "6",
                       failed.error]
    assert row[7] == "" and row[11] == ""  # no points for ex0 or ex1, their maxima kept
    book_path, lms_path = gradebook.write(results, tmp_path)
    dave = _read_csv(book_path)[-1]
    assert dave[:5] == ["dave", "4", text("grade.gradebook_error"), "", "10"]
    assert _read_csv(lms_path)[-1] == ["dave", "", "10", f"2.1_data_parallel.ipynb: {failed.error}"]
    with pytest.raises(ValueError, match="grading failed"):
        gradebook.gradescope(results, "dave")
    assert gradebook.gradescope(results, "alice")["score"] == 8
    assert SubmissionResult.from_dict(failed.as_dict()).failed


def test_gradescope_results_read_back(tmp_path):
    write_reports(CLASS, tmp_path)
    target = tmp_path / "gs" / "results.json"
    assert gradebook.main([str(tmp_path), "--gradescope", str(target), "--student", "alice"]) == 0
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["score"] == 8
    review = f"2.1_data_parallel.ipynb ex0 · {text('grade.review_test', lang='zh')}"
    assert [(t["name"], t["score"], t["max_score"], t["visibility"]) for t in data["tests"]] == [
        ("2.0_collectives.ipynb ex0", 1, 1, "visible"), ("2.0_collectives.ipynb ex1", 3, 3, "visible"),
        ("2.1_data_parallel.ipynb ex0", 0, 2, "visible"), ("2.1_data_parallel.ipynb ex1", 4, 4, "visible"),
        (review, 0, 0, "hidden")]  # a review flag: for the instructor's eyes only
    assert data["tests"][2]["output"] == "message 0"
    assert data["tests"][4]["output"] == "review: copied"
    assert data["stdout_visibility"] == "hidden"
    assert (tmp_path / "gradebook.csv").is_file() and (tmp_path / "lms.csv").is_file()
    assert gradebook.main([str(tmp_path), "--gradescope", str(target), "--student", "nobody"]) == 2
    one = gradebook.gradescope(CLASS[:2])  # no --student: everything, as one student's
    assert one["score"] == 8 and len(one["tests"]) == 5


#: Gradescope's documented results.json keys (help.gradescope.com, "Autograder Specifications")
TOP_KEYS = {"score", "execution_time", "output", "output_format", "test_output_format",
            "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests",
            "leaderboard"}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output",
             "output_format", "tags", "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def test_gradescope_names_tests_by_the_exercises_title_in_the_documented_format():
    """Issue 40, point 4: tests were named by grade id, and the review flags were shown."""
    result = _result("alice/en/2.0_collectives.ipynb", "en/2.0_collectives.ipynb",
                     [(3, 3)], flags=["review: same as the answer cell"])
    result.exercises[0].grade_id = "ex2_0_ring_all_reduce"
    data = gradebook.gradescope([result], "alice")
    assert set(data) <= TOP_KEYS and data["stdout_visibility"] in VISIBILITY
    for t in data["tests"]:
        assert set(t) <= TEST_KEYS and t["visibility"] in VISIBILITY
        assert isinstance(t["name"], str) and 0 <= t["score"] <= t["max_score"] or (
            t["max_score"] == 0 and t["score"] == 0)
    shown, hidden = data["tests"]
    from labs.exercises import catalog
    assert shown["name"] == (f"2.0_collectives · {catalog.label('ex2_0_ring_all_reduce', 'en')}: "
                             f"{catalog.title('ex2_0_ring_all_reduce', 'en')}")
    assert "review" not in shown["output"] and shown["visibility"] == "visible"
    assert hidden["visibility"] == "hidden" and hidden["output"] == "review: same as the answer cell"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_run_autograder_example_grades_one_student(tmp_path):
    """Gradescope's layout: the student's notebook in submission/, the course in source/."""
    course = tmp_path / "source"
    gp.write_course(course)
    (course / "grader").symlink_to(ROOT / "grader")
    (course / "labs").symlink_to(ROOT / "labs")
    submission = tmp_path / "submission"
    submission.mkdir()
    nbformat.write(gp.edit(course, "def reverse", "def reverse(xs):\n    return xs",
                           prepend=False), str(submission / gp.NAME))
    results = tmp_path / "results" / "results.json"
    script = ROOT / "scripts" / "gradescope" / "run_autograder"
    proc = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, timeout=280,
        env={**os.environ, "AUTOGRADER_SOURCE": str(course),
             "AUTOGRADER_SUBMISSION": str(submission), "AUTOGRADER_RESULTS": str(results),
             "PYTHON": sys.executable, "LABS_GRADE_EXTRA_ARGS": "--sandbox none"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert {t["name"]: t["score"] for t in data["tests"]} == {
        "quick.ipynb ex_a": 1, "quick.ipynb ex_b": 0, "quick.ipynb ex_c": 3}
    assert data["score"] == 4 and all(t["max_score"] == gp.POINTS[t["name"].split()[1]]
                                      for t in data["tests"])


def test_canvas_and_moodle_files_in_their_documented_columns(tmp_path):
    """Issue 40, point 3: the exports were a generic student_id,score,max only. Canvas' gradebook
    import (Student, ID, SIS User ID, SIS Login ID, Section, then an assignment per column) and
    Moodle's grading worksheet (Identifier 'Participant <id>', Full name, Grade, Maximum Grade,
    Feedback comments), the ids read from each LMS's download names."""
    from grader import lms
    results = [
        _result("2.0_collectives/smithjohn_12345_678901_2.0_collectives.ipynb",
                "2.0_collectives.ipynb", [(1, 1), (2, 3)]),
        _result("John Li_4242_assignsubmission_file_/2.1_data_parallel.ipynb",
                "2.1_data_parallel.ipynb", [(2, 2), (4, 4)]),
        _result("carol/2.1_data_parallel.ipynb", "2.1_data_parallel.ipynb", [(0, 2), (4, 4)]),
    ]
    failed = _result("dave/2.0_collectives.ipynb", "2.0_collectives.ipynb", [(0, 1), (0, 3)])
    failed.failed = True
    paths = lms.write([*results, failed], tmp_path)
    canvas = _read_csv(tmp_path / "canvas.csv")
    assert canvas[0] == lms.CANVAS_COLUMNS + ["2.0_collectives", "2.1_data_parallel"]
    assert canvas[1:] == [["smithjohn", "12345", "", "", "", "3", ""],
                          ["John Li", "", "", "", "", "", "6"],
                          ["carol", "", "", "", "", "", "4"],
                          ["dave", "", "", "", "", "", ""]]  # failed: no grade, not 0
    moodle = _read_csv(tmp_path / "moodle" / "2.1_data_parallel.csv")
    assert moodle == [lms.MOODLE_COLUMNS,
                      ["Participant 4242", "John Li", "6", "6", "message 0\nmessage 1"]]
    assert sorted(p.name for p in paths) == ["2.1_data_parallel.csv", "canvas.csv"]


def test_a_dry_run_lists_who_was_found_with_which_notebooks(tmp_path, capsys, monkeypatch):
    """Issue 40, point 3: `--list` shows the class as the grader reads it, grading nothing."""
    from grader import cli
    monkeypatch.setenv("LABS_LANG", "en")
    source = nbformat.read(str(ROOT / "notebooks" / "en" / "2.0_collectives.ipynb"), as_version=4)
    for where in ("2.0_collectives/alice/2.0_collectives.ipynb",
                  "2.0_collectives/smithjohn_12345_678901_2.0_collectives-1.ipynb"):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(source, str(tmp_path / where))
    (tmp_path / "notes.ipynb").write_text("{}")
    assert cli.main([str(tmp_path), "--list"]) == 0
    out = capsys.readouterr().out
    assert text("grade.list_student", lang="en", student="alice", count=1) in out
    assert text("grade.list_student", lang="en", student="smithjohn", count=1) in out
    assert text("grade.list_unknown", lang="en", file="notes.ipynb") in out
    assert text("grade.list_total", lang="en", students=3, files=3) in out
    assert not (tmp_path / "grades").exists() and not (ROOT / "grades").exists()


def test_the_lms_files_rebuild_from_grades_json(tmp_path):
    from grader import lms
    write_reports(CLASS, tmp_path)
    assert lms.main([str(tmp_path)]) == 0
    assert _read_csv(tmp_path / "canvas.csv")[0][:5] == lms.CANVAS_COLUMNS
    assert lms.main([str(tmp_path / "nowhere")]) == 2
