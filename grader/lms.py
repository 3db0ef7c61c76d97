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

Owns: these two formats. Must not: grade, judge, or change the other exports.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from grader.gradebook import book, lms_ids
from grader.results import SubmissionResult, _write_atomic, number

__all__ = ["CANVAS_COLUMNS", "MOODLE_COLUMNS", "write"]

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
