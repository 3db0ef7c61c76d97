"""An answer graded the two ways the course grades it: in the notebook and by the grader.

:func:`grade` defines an answer cell (its source, in the namespace of its notebook's setup
cell and reference answers, as a kernel would have them), runs the exercise's own check cell
with the grader's recorder installed -- so the check runs and prints exactly as in a notebook,
and leaves the record the grader's kernel would leave -- then replays that record through the
grader's judge (grader.judge, with the source notebook's check cell and setup), as
``python -m grader`` does in its own process. It returns both verdicts; the catalog tests
require them to agree (issue 37, item 5) and to give the points each answer must get.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from labs.exercises import catalog, hooks

__all__ = ["Answer", "Verdicts", "grade", "base_namespace"]


@dataclass(frozen=True)
class Answer:
    """One answer of the catalog: the exercise, what it is, its cell's source, the points it
    must get (0 for a wrong answer, the exercise's points for a right one), and, for a wrong
    answer that no check can stop, that the grader flags it for review instead."""
    exercise: str
    what: str
    source: str
    points: float | None = None  # None: the exercise's full points
    flagged: bool = False

    @property
    def expected(self) -> float:
        return float(catalog.EXERCISES[self.exercise].points if self.points is None
                     else self.points)

    def __str__(self) -> str:  # the test's id
        return f"{self.exercise}: {self.what}"


@dataclass(frozen=True)
class Verdicts:
    notebook_points: float
    notebook_line: str
    grader_points: float
    grader_message: str  # the judge's verdict: the notebook's first line and what it adds below
    notebook_printed: str  # everything the check printed in the notebook


_bases: dict = {}


def base_namespace(notebook: str) -> dict:
    """The notebook's setup cell and every reference answer run once (cached), as the
    mutation runner has them (grader.mutants)."""
    from grader.mutants import _base

    if notebook not in _bases:
        _bases[notebook] = _base(notebook)
    return _bases[notebook]


def _checks(notebook: str) -> tuple[str, dict]:
    from grader.mutants import notebook_cells

    setup, _, checks = notebook_cells(notebook)
    return setup, checks


def grade(answer: Answer) -> Verdicts:
    """Both verdicts of ``answer`` (see the module's docstring)."""
    from grader import judge, record, recorder

    exercise = catalog.EXERCISES[answer.exercise]
    setup, checks = _checks(exercise.notebook)
    namespace = dict(base_namespace(exercise.notebook))
    printed = io.StringIO()
    with tempfile.TemporaryDirectory() as folder, _env(record.RECORDS_ENV, folder), \
            hooks.intercepting(recorder.Interceptor()):
        passed = True
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            try:
                # dont_inherit: not this module's __future__ annotations (a kernel has none)
                exec(compile(answer.source, "<answer>", "exec", dont_inherit=True), namespace)
                exec(compile(checks[answer.exercise], "<check>", "exec"), namespace)
            except Exception:  # noqa: BLE001 - the verdict says why
                passed = False
        path = record.record_path(answer.exercise, folder)
        data = record.read(path) if path and Path(path).exists() else None
    shown = printed.getvalue()
    line = next((ln for ln in shown.splitlines() if ln.startswith(("✅", "❌"))), "")
    notebook_points = float(exercise.points) if passed and line.startswith("✅") else 0.0
    if data is None:
        verdict = judge.missing(answer.exercise, exercise.points)
    else:
        verdict = judge.judge(answer.exercise, data, exercise.points, checks[answer.exercise],
                              setup)
    return Verdicts(notebook_points, line, float(verdict["points"]), verdict["message"], shown)


@contextlib.contextmanager
def _env(name: str, value: str):
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved
