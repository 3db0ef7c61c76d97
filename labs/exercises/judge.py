"""The grader's verdict on one exercise, decided in the grader's process from the record the
student's kernel handed back (:mod:`labs.exercises.record`).

The exercise's check cell -- the instructor's, from the source notebook -- runs here again, after
the imports of the source's setup cell, with every name the student defines standing for a
placeholder. When the cell calls its graded check, :func:`labs.exercises.checks.run_check` sees
the judge waiting (:func:`judging`) and runs the check against the record: each call of a
student object, and each launch of ranks with one, returns what the record says came back; the
hidden cases (from the instructor's secret, :mod:`labs.exercises.secret`), the references, the
comparisons and the points are this process's own. The message is the verdict the notebook
shows. Nothing of the student's runs here, and nothing is unpickled.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
from pathlib import Path

from labs.messages import text

from . import catalog, checks, record

__all__ = ["Judging", "judging", "pending", "judge", "judge_file", "missing", "refused",
           "setup_imports"]


class Judging:
    """The judge waiting for the check of ``exercise_id`` to be called: what it decided."""

    def __init__(self, exercise_id: str, data: dict):
        self.exercise_id, self.data = exercise_id, data
        self.verdict: dict | None = None

    def run(self, exercise_id: str, points, fn, args: tuple) -> None:
        """Called by run_check instead of running the check on the student's objects."""
        if exercise_id != self.exercise_id or self.verdict is not None:
            return None  # another exercise's check in the same cell: not judged here
        try:
            replayer = record.Replayer(exercise_id, len(args), self.data)
        except record.RecordError as exc:
            self.verdict = refused(exercise_id, points, str(exc))
            return None
        checks.feedback.clear_hidden_logs()
        try:
            with record.active(replayer):
                fn(*replayer.args)
            replayer.finished()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - the check's verdict, as in the notebook
            cause = _record_error(exc)
            if cause is not None:
                self.verdict = refused(exercise_id, points, str(cause))
            else:
                final = checks._verdict_exception(exc)
                self.verdict = {"passed": False, "points": 0.0,
                                "message": checks.verdict_lines(exercise_id, points, final)[0]}
            return None
        finally:
            checks.feedback.clear_hidden_logs()
        self.verdict = {"passed": True, "points": float(points),
                        "message": text("checks.verdict_passed",
                                        exercise=catalog.label(exercise_id), points=points)}
        return None


def _record_error(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, record.RecordError):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


_pending: Judging | None = None


def pending() -> Judging | None:
    """The judge waiting for a check (None in a notebook: checks run as usual)."""
    return _pending


@contextlib.contextmanager
def judging(exercise_id: str, data: dict):
    global _pending
    saved, _pending = _pending, Judging(exercise_id, data)
    try:
        yield _pending
    finally:
        _pending = saved


class _StudentName:
    """What a name the student defines (``my_ring_all_reduce``) is in the judge: nothing."""

    def __init__(self, name: str):
        self.name = name


class _Names(dict):
    """The check cell's names: its own, the setup's imports, builtins; any other name is the
    student's (a :class:`_StudentName`)."""

    def __init__(self, module: dict):
        super().__init__()
        self._module = module

    def __missing__(self, name: str):
        if name in self._module or hasattr(builtins, name):
            raise KeyError(name)
        return _StudentName(name)


def setup_imports(source: str) -> str:
    """The top-level import statements of a setup cell (the judge runs only those)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    kept = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def judge(exercise_id: str, data: dict, points: float, check_source: str,
          setup_source: str = "") -> dict:
    """``{"passed", "points", "message"}``: the check cell ``check_source`` (the source
    notebook's) run against the record ``data``, after the imports of ``setup_source``."""
    module: dict = {"__name__": "__labs_judge__"}
    sink = io.StringIO()  # what the check prints while it runs stays here
    with judging(exercise_id, data) as waiting, contextlib.redirect_stdout(sink):
        try:
            exec(compile(setup_imports(setup_source), "<setup>", "exec"), module)
            exec(compile(check_source, "<check>", "exec"), module, _Names(module))
        except Exception as exc:  # noqa: BLE001 - a check cell that cannot run here
            if waiting.verdict is None:
                return refused(exercise_id, points, text(
                    "record.cell_failed", error=f"{type(exc).__name__}: {exc}"))
    if waiting.verdict is None:
        return refused(exercise_id, points, text("record.not_called"))
    return waiting.verdict


def refused(exercise_id: str, points: float, why: str) -> dict:
    """0 points: the record cannot be read, or does not follow the check (``why``)."""
    return {"passed": False, "points": 0.0,
            "message": text("grade.record_refused", exercise=catalog.label(exercise_id),
                            points=points, why=why)}


def missing(exercise_id: str, points: float) -> dict:
    """0 points: the check left no record (it did not run to the end)."""
    return {"passed": False, "points": 0.0,
            "message": text("grade.no_record", exercise=catalog.label(exercise_id),
                            points=points)}


def judge_file(exercise_id: str, path: Path, points: float, check_source: str,
               setup_source: str = "") -> dict:
    """:func:`judge` on the record file at ``path``; no file: the check did not run."""
    try:
        data = record.read(path)
    except FileNotFoundError:
        return missing(exercise_id, points)
    except (OSError, record.RecordError) as exc:
        return refused(exercise_id, points, str(exc))
    return judge(exercise_id, data, points, check_source, setup_source)
