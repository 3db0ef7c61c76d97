"""The grader's verdict on one exercise, decided in the grader's process from the record the
student's kernel handed back (:mod:`grader.record`, written by :mod:`grader.recorder`).

The exercise's check cell -- the instructor's, from the source notebook -- runs here again, after
the imports of the source's setup cell, with every name the student defines standing for a
placeholder. The judge's interceptor (:mod:`labs.exercises.hooks`) is handed the graded check
when the cell calls it, and runs it against the record (:class:`Replayer`): each call of a
student object, and each launch of ranks with one, returns what the record says came back; the
hidden cases (from the instructor's secret, :mod:`labs.exercises.secret`), the references, the
comparisons and the points are this process's own. The message is the verdict the notebook
shows. Nothing of the student's runs here, and nothing is unpickled.

Owns: replaying a record and the verdict dicts (``{"passed", "points", "message"}``). Must not:
run the student's code, start processes, or write to the process-wide ``sys.stdout`` (what the
check cell prints goes to a buffer handed to the cell as its ``print``; other threads of the
grader keep printing their progress).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import io
from pathlib import Path

from labs.exercises import catalog, checks, hooks
from labs.messages import text

from grader import record

__all__ = ["Placeholder", "Replayer", "Judging", "judging", "pending", "judge", "judge_file",
           "missing", "refused", "setup_imports"]


class Placeholder:
    """One argument of a check while the grader replays it: there is no student object here."""

    def __init__(self, index: int, session: "Replayer"):
        self._index, self._session = index, session

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._session.call(self, args, kwargs)

    def __getattr__(self, name):
        raise record.RecordError(record.why("record.attribute", name=name))


class Replayer:
    """The grader's side: a check run whose student events come from a record."""

    def __init__(self, exercise_id: str, n_args: int, data: dict):
        if not isinstance(data, dict) or data.get("version") != record.VERSION:
            raise record.RecordError(record.why("record.version"))
        if data.get("exercise") != exercise_id:
            raise record.RecordError(record.why("record.other_exercise", got=data.get("exercise"),
                                   wanted=exercise_id))
        if data.get("args") != n_args or not isinstance(data.get("events"), list):
            raise record.RecordError(record.why("record.arguments"))
        self.exercise_id = exercise_id
        self.args = tuple(Placeholder(i, self) for i in range(n_args))
        self.events = data["events"]
        self.position = 0

    def _next(self, **expected) -> dict:
        if self.position >= len(self.events):
            raise record.RecordError(record.why("record.ends_early", n=self.position + 1))
        event = self.events[self.position]
        self.position += 1
        if not isinstance(event, dict) or any(event.get(k) != v for k, v in expected.items()):
            raise record.RecordError(record.why("record.wrong_event", n=self.position,
                                                 expected=expected))
        return event

    def _outcome(self, event: dict):
        if "raised" in event:
            raise record.decode_exception(event["raised"])
        if "result" not in event:
            raise record.RecordError(record.why("record.no_outcome", n=self.position))
        value = record.decode(event["result"])
        return iter(value) if event.get("iterator") else value  # a generator, run once (recorder)

    def call(self, arg: Placeholder, args, kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._outcome(self._next(kind="call", arg=arg._index))

    def ranks(self, fn, world_size: int, args, run):
        result = self._outcome(self._next(kind="ranks", body=record.body_name(fn),
                                          world_size=int(world_size)))
        if not isinstance(result, list) or len(result) != int(world_size):
            raise record.RecordError(record.why("record.per_rank", n=self.position))
        return result

    def finished(self) -> None:
        """Raise RecordError if the record holds events the check did not ask for."""
        if self.position != len(self.events):
            raise record.RecordError(record.why("record.extra_events",
                                                 n=len(self.events) - self.position))


class Judging:
    """The judge's interceptor (:mod:`labs.exercises.hooks`) while the check cell of
    ``exercise_id`` runs: it replays the graded check against ``data``; what it decided."""

    def __init__(self, exercise_id: str, data: dict):
        self.exercise_id, self.data = exercise_id, data
        self.verdict: dict | None = None
        self._replayer: Replayer | None = None

    def check(self, exercise_id: str, points, fn, args: tuple, kwargs: dict, run) -> None:
        """Handed the graded check instead of running it on the student's objects."""
        if exercise_id != self.exercise_id or self.verdict is not None:
            return None  # another exercise's check in the same cell: not judged here
        try:
            replayer = Replayer(exercise_id, len(args), self.data)
        except record.RecordError as exc:
            self.verdict = refused(exercise_id, points, str(exc))
            return None
        checks.feedback.clear_hidden_logs()
        self._replayer = replayer
        try:
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
            self._replayer = None
            checks.feedback.clear_hidden_logs()
        self.verdict = {"passed": True, "points": float(points),
                        "message": text("checks.verdict_passed",
                                        exercise=catalog.label(exercise_id), points=points)}
        return None

    def ranks(self, fn, world_size, args, launch):
        """A launch with a student's object among ``args`` returns what the record says."""
        if self._replayer is not None and record.contains(args, Placeholder):
            return self._replayer.ranks(fn, world_size, args, launch)
        return launch(args)


def _record_error(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, record.RecordError):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def pending() -> Judging | None:
    """The judge waiting for a check (None in a notebook: checks run as usual)."""
    interceptor = hooks.installed()
    return interceptor if isinstance(interceptor, Judging) else None


@contextlib.contextmanager
def judging(exercise_id: str, data: dict):
    """A :class:`Judging` installed as the checks' interceptor for the ``with`` block."""
    with hooks.intercepting(Judging(exercise_id, data)) as waiting:
        yield waiting


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
    sink = io.StringIO()  # what the check cell prints stays here (sys.stdout is not swapped:
    # the grader's other threads print their progress meanwhile)
    module: dict = {"__name__": "__labs_judge__",
                    "print": functools.partial(_print, sink)}
    with judging(exercise_id, data) as waiting:
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


def _print(sink, *values, file=None, **options) -> None:
    """The check cell's ``print``: to ``sink`` unless it names a file of its own."""
    builtins.print(*values, file=sink if file is None else file, **options)


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
