"""The class's gradebook and exports, next to ``grades.csv`` (one row per submission):

- ``gradebook.csv``: one row per student across all notebooks -- a column per notebook (its
  score; the header gives its maximum), the total and its maximum, and the flags for review
  (``notebook/grade_id``) and notes (errors, limits, a notebook handed in twice: the better
  score counts);
- ``lms.csv``: what an LMS imports -- student id, score, max (the class's maximum: a notebook not
  handed in counts 0 of its points), error;

A notebook whose grading failed for a reason outside the student's code (``failed``) is no grade:
its column says so, the student's total and score stay empty, and no Gradescope results.json is
written for that student (the autograder then fails, rather than scoring 0);
- ``python -m grader.gradebook DIR --gradescope results.json [--student ID]``: one student's
  results as Gradescope reads them (``score``, and ``tests`` with ``name`` -- the exercise's
  title --, ``score``, ``max_score``, ``output``, ``visibility``: the review flags are tests only
  the instructor sees); ``make gradescope`` (:mod:`grader.gradescope`) builds the autograder;
- Canvas' and Moodle's own import formats: :mod:`grader.lms` (``python -m grader.lms DIR``).

A student is the first folder of a submission's path that is not an assignment's or an
edition's (``alice/2.0_collectives.ipynb``, ``2.1_data_parallel/alice/…``; Moodle's
``Alice Li_1234_assignsubmission_file_/`` is ``Alice Li``), else read from the file name:
Canvas' ``lialice_1234_5678_2.0_collectives.ipynb`` is ``lialice``, Moodle's the same as its
folder, any other the name less the notebook's (``alice_2.0_collectives.ipynb``). The two editions of a notebook
share its column (``en/2.0_collectives.ipynb`` is ``2.0_collectives.ipynb``).

Owns: grouping results by student and writing these three files. Must not: grade, judge, or
change ``grades.csv`` / ``grades.json`` (:mod:`grader.results`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from pathlib import Path, PurePosixPath

from labs.exercises import catalog
from labs.messages import text

from grader.results import SubmissionResult, number
from grader.results import _write_atomic  # the one atomic, symlink-proof writer

__all__ = ["student_of", "lms_ids", "book", "write", "gradescope", "main"]


def _column(notebook: str | None) -> str:
    return PurePosixPath(notebook).name if notebook else ""


#: A folder that names an assignment, not a student (``2.1_data_parallel/``, ``2.1/``), or an
#: edition (``en/``): skipped when looking for the student's folder.
_NOT_A_STUDENT = re.compile(r"\d+\.\d+([_ -].*)?|en|zh")
#: Canvas' download names: ``lastfirst[_LATE]_<user id>_<submission id>_<file name>``.
_CANVAS = re.compile(r"(?P<student>[^_]+)(_LATE)?_(?P<id>\d+)_\d+_.+")
#: Moodle's: ``<Full Name>_<id>_assignsubmission_file[_<file name>]`` (a folder or a file).
_MOODLE = re.compile(r"(?P<student>.+?)_(?P<id>\d+)_assignsubmission_\w*")


def lms_ids(result: SubmissionResult) -> dict:
    """The ids an LMS's download name gave the submission: ``{"canvas": user id}`` or
    ``{"moodle": participant id}`` (empty for any other name)."""
    parts = PurePosixPath(result.submission.replace("\\", "/")).parts
    for part in parts:
        found = _CANVAS.fullmatch(PurePosixPath(part).name)
        if found and part == parts[-1]:
            return {"canvas": found["id"]}
        found = _MOODLE.match(part)
        if found:
            return {"moodle": found["id"], "name": found["student"]}
    return {}


def student_of(result: SubmissionResult) -> str:
    """The student a submission belongs to (see the module's docstring)."""
    parts = PurePosixPath(result.submission.replace("\\", "/")).parts
    folders = [p for p in parts[:-1] if not _NOT_A_STUDENT.fullmatch(p)]
    if folders:
        moodle = _MOODLE.match(folders[0])
        return moodle["student"] if moodle else folders[0]
    stem = PurePosixPath(parts[-1] if parts else "").name
    for layout in (_CANVAS, _MOODLE):
        found = layout.fullmatch(stem) if layout is _CANVAS else layout.match(stem)
        if found:
            return found["student"]
    name = _column(result.notebook)
    if name and stem.endswith(name) and len(stem) > len(name):
        return stem[:-len(name)].rstrip("_-. ") or stem
    return stem.removesuffix(".ipynb")


def book(results: list[SubmissionResult], who=student_of
         ) -> tuple[dict[str, float], dict[str, dict]]:
    """(``{notebook column: max points}``, ``{student: {"scores": {column: points}, "flags",
    "notes", "results": {column: SubmissionResult}}}``), students (``who(result)``) and columns
    in first-seen order."""
    maxima: dict[str, float] = {}
    students: dict[str, dict] = {}
    for r in results:
        column = _column(r.notebook)
        if column:
            maxima[column] = max(maxima.get(column, 0.0), r.max_total)
        row = students.setdefault(who(r), {"scores": {}, "flags": [], "notes": [],
                                                  "results": {}})
        if not column:
            row["notes"].append(f"{r.submission}: {r.error or ''}".strip())
            continue
        kept = row["results"].get(column)
        if kept is not None:
            row["notes"].append(text("grade.gradebook_twice", notebook=column))
            if kept.total >= r.total:
                continue
        row["results"][column] = r
    for row in students.values():
        row["failed"] = [c for c, r in row["results"].items() if r.failed]  # no grade there
        for column, r in row["results"].items():
            if not r.failed:
                row["scores"][column] = r.total
            row["flags"] += [f"{column}/{flag}" for flag in r.flags]
            if r.error:
                row["notes"].append(f"{column}: {r.error}")
    return maxima, students


def write(results: list[SubmissionResult], out: Path) -> tuple[Path, Path]:
    """Write ``out/gradebook.csv`` and ``out/lms.csv``; their paths."""
    maxima, students = book(results)
    columns = list(maxima)
    class_max = sum(maxima.values())
    buffer = io.StringIO(newline="")
    w = csv.writer(buffer)
    w.writerow(["student", *(f"{c} (/{number(maxima[c])})" for c in columns), "total",
                "max_total", "flags", "notes"])
    lms = io.StringIO(newline="")
    wl = csv.writer(lms)
    wl.writerow(["student_id", "score", "max", "error"])
    error = text("grade.gradebook_error")
    for student, row in students.items():
        # a notebook whose grading failed is no grade: neither it nor the total is a number
        total = "" if row["failed"] else number(sum(row["scores"].values()))
        w.writerow([student, *(error if c in row["failed"] else number(row["scores"][c])
                               if c in row["scores"] else "" for c in columns),
                    total, number(class_max), " | ".join(row["flags"]),
                    " | ".join(row["notes"])])
        wl.writerow([student, total, number(class_max),
                     " | ".join(row["notes"]) if row["failed"] else ""])
    out = Path(out)
    paths = []
    for name, body in (("gradebook.csv", buffer.getvalue()), ("lms.csv", lms.getvalue())):
        # utf-8-sig: spreadsheet programs then read the Chinese notes correctly
        paths.append(_write_atomic(out, name, body.encode("utf-8-sig")))
    return paths[0], paths[1]


def gradescope(results: list[SubmissionResult], student: str | None = None) -> dict:
    """One student's results as Gradescope's ``results.json``: ``student``'s, or, without
    ``student``, all the results as one student's (Gradescope grades one student per run)."""
    _, students = book(results, who=(lambda r: "") if student is None else student_of)
    student = "" if student is None else student
    if student not in students:
        raise ValueError(f"no student {student!r} in the results")
    row = students[student]
    if row["failed"]:  # no results.json at all: Gradescope then reports a failed autograder
        raise ValueError(f"grading failed for {student or 'this submission'}: "
                         + " | ".join(row["notes"]))
    tests, review = [], []
    for column, r in row["results"].items():
        lang = "en" if (r.notebook or "").startswith("en/") else "zh"
        for e in r.exercises:
            name = _test_name(column, e.grade_id, lang)
            tests.append({"name": name, "score": e.points, "max_score": e.max_points,
                          "output": e.message, "visibility": "visible"})
            if e.flags:  # for the instructor only: a review flag is no verdict on the student
                review.append({"name": f"{name} · {text('grade.review_test', lang=lang)}",
                               "score": 0, "max_score": 0, "output": "\n".join(e.flags),
                               "visibility": "hidden"})
    return {"score": sum(t["score"] for t in tests), "tests": tests + review,
            "output": "\n".join(row["notes"]), "stdout_visibility": "hidden"}


def _test_name(column: str, grade_id: str, lang: str) -> str:
    """``2.0_collectives · Exercise 1: A ring all-reduce`` (the notebook's heading), or the
    column and the id for an exercise the course does not declare."""
    if grade_id not in catalog.EXERCISES:
        return f"{column} {grade_id}"
    return (f"{column.removesuffix('.ipynb')} · {catalog.label(grade_id, lang)}: "
            f"{catalog.title(grade_id, lang)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader.gradebook",
        description="Rebuild gradebook.csv and lms.csv from a grading run's grades.json; "
                    "optionally write one student's Gradescope results.json.")
    parser.add_argument("grades", type=Path, help="the grader's output folder (--out)")
    parser.add_argument("--gradescope", type=Path, default=None,
                        help="write one student's results as Gradescope's results.json here")
    parser.add_argument("--student", default=None,
                        help="the student for --gradescope (default: every result in the "
                        "folder, as one student's)")
    args = parser.parse_args(argv)
    try:
        data = json.loads((args.grades / "grades.json").read_text(encoding="utf-8"))
        results = [SubmissionResult.from_dict(s) for s in data["submissions"]]
        gradebook_path, lms_path = write(results, args.grades)
        print(text("grade.gradebook_written", gradebook=gradebook_path, lms=lms_path))
        if args.gradescope is not None:
            args.gradescope.parent.mkdir(parents=True, exist_ok=True)
            args.gradescope.write_text(json.dumps(gradescope(results, args.student),
                                                  ensure_ascii=False, indent=1) + "\n",
                                       encoding="utf-8")
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
