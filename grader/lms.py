"""The class's grades in two LMSs' own import formats, beside ``gradebook.csv`` and ``lms.csv``:

- ``canvas.csv``: Canvas' gradebook import (Grades, Import): the columns ``Student``, ``ID``,
  ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per notebook (Canvas makes a
  new column a new assignment). ``ID`` is the Canvas user id read from Canvas' download names
  (``lastfirst_<user id>_<submission id>_<file>``); without one Canvas matches the ``Student``
  name. A cell is empty where there is no grade (nothing handed in, or a grading that failed):
  Canvas leaves an empty cell's grade as it was.
- ``moodle/<notebook>.csv``: Moodle's assignment grading worksheet (Upload grading worksheet),
  one per notebook, for the submissions downloaded from Moodle (``<Full name>_<participant
  id>_assignsubmission_file_``): ``Identifier`` (``Participant <id>``), ``Full name``,
  ``Grade``, ``Maximum Grade``, ``Feedback comments`` (the exercises' verdicts).

The grader writes them after each run; ``python -m grader.lms DIR`` rebuilds them from
``DIR/grades.json``.

Owns: these two formats. Must not: grade, judge, or change the other exports.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

from labs.messages import text

from grader.gradebook import book, lms_ids
from grader.results import SubmissionResult, _write_atomic, number

__all__ = ["CANVAS_COLUMNS", "MOODLE_COLUMNS", "write", "main"]

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade", "Feedback comments"]


def _csv(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO(newline="")
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode("utf-8")


def write(results: list[SubmissionResult], out: Path) -> list[Path]:
    """Write ``out/canvas.csv`` and, for submissions from Moodle, ``out/moodle/<notebook>.csv``;
    their paths."""
    maxima, students = book(results)
    columns = list(maxima)
    rows = [CANVAS_COLUMNS + [c.removesuffix(".ipynb") for c in columns]]
    moodle: dict[str, list[list[str]]] = {}
    for student, row in students.items():
        ids = next((lms_ids(r) for r in row["results"].values() if lms_ids(r)), {})
        rows.append([student, ids.get("canvas", ""), "", "", ""]
                    + [number(row["scores"][c]) if c in row["scores"] else "" for c in columns])
        for column, r in row["results"].items():
            found = lms_ids(r)
            if "moodle" in found and not r.failed:
                moodle.setdefault(column, [MOODLE_COLUMNS]).append(
                    [f"Participant {found['moodle']}", found["name"], number(r.total),
                     number(r.max_total), "\n".join(e.message for e in r.exercises)])
    paths = [_write_atomic(Path(out), "canvas.csv", _csv(rows))]
    for column, sheet in moodle.items():
        folder = Path(out) / "moodle"
        folder.mkdir(exist_ok=True)
        paths.append(_write_atomic(folder, f"{column.removesuffix('.ipynb')}.csv", _csv(sheet)))
    return paths


def main(argv: list[str] | None = None) -> int:
    """``python -m grader.lms DIR``: rebuild DIR's Canvas and Moodle files from its grades.json."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m grader.lms GRADES_DIR", file=sys.stderr)
        return 2
    try:
        data = json.loads((Path(args[0]) / "grades.json").read_text(encoding="utf-8"))
        results = [SubmissionResult.from_dict(s) for s in data["submissions"]]
        paths = write(results, Path(args[0]))
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text("grade.lms_written", paths=", ".join(str(p) for p in paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
