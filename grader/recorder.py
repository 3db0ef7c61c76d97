"""The grader's recorder, inside the student's kernel: what the student's code handed back to
each check, written as a record (:mod:`grader.record`) for the judge.

Owns: :class:`Recorder` (the events of one check run), :class:`StudentArg` (a student's object
as the check sees it while recording) and :func:`install`, which puts the recorder in the
checks' interceptor slot (:mod:`labs.exercises.hooks`). The grader's runner injects it at
kernel start (``--IPKernelApp.exec_lines``, :mod:`grader.runner`); with :data:`RECORDS_ENV`
unset a check runs exactly as in a notebook. Must not: decide a verdict (the judge does, in the
grader's process), import the rest of the grader (only this module and :mod:`grader.record`
are needed in the kernel), or print anything of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Callable

from grader import record
from labs.exercises import hooks
from labs.exercises import ranks as _ranks  # noqa: F401 - for its effect: it registers the preloads

__all__ = ["RECORDS_ENV", "StudentArg", "Recorder", "Interceptor", "install", "current"]

RECORDS_ENV = record.RECORDS_ENV

_session: "Recorder | None" = None


class StudentArg:
    """One argument of a check, as the check sees it while recording: calling it calls the
    student's object and records what came back; attributes are the object's own."""

    def __init__(self, index: int, target: Any, session: "Recorder"):
        self._index, self._target, self._session = index, target, session

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._session.call(self, args, kwargs)

    def __getattr__(self, name):
        return getattr(self._target, name)


def unwrap(value):
    """``value`` with every :class:`StudentArg` replaced by the student's own object."""
    if isinstance(value, StudentArg):
        return value._target
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


class Recorder:
    """The events of one check run in the student's kernel."""

    def __init__(self, exercise_id: str, targets: tuple):
        self.exercise_id = exercise_id
        self.args = tuple(StudentArg(i, t, self) for i, t in enumerate(targets))
        self.events: list[dict] = []

    def _run(self, event: dict, work: Callable):
        """Append ``event``, do ``work()``, and record what it returned or raised."""
        __tracebackhide__ = True  # noqa: F841
        self.events.append(event)
        try:
            result = work()
            items = list(result) if isinstance(result, Iterator) else None  # run a generator once
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            event["raised"] = record.encode_exception(exc)
            raise
        if items is not None:  # the check gets an iterator of its items, so does the judge
            event["iterator"], event["result"] = True, record.encode(items)
            return iter(items)
        event["result"] = record.encode(result)
        return result

    def call(self, arg: StudentArg, args, kwargs):
        __tracebackhide__ = True  # noqa: F841
        return self._run({"kind": "call", "arg": arg._index},
                         lambda: arg._target(*unwrap(args), **unwrap(kwargs)))

    def ranks(self, fn, world_size: int, args, run: Callable):
        return self._run({"kind": "ranks", "body": record.body_name(fn),
                          "world_size": int(world_size)}, lambda: run(unwrap(args)))

    def as_dict(self, outcome: str) -> dict:
        return {"version": record.VERSION, "exercise": self.exercise_id, "args": len(self.args),
                "events": self.events, "outcome": outcome}


def current() -> "Recorder | None":
    """The recorder of the check running now, or None."""
    return _session


class Interceptor:
    """The checks' interceptor in the kernel (:mod:`labs.exercises.hooks`): each check with
    positional arguments only, while the grader asks for records, runs on :class:`StudentArg`
    wrappers and leaves its record; the check itself runs and prints as in a notebook."""

    def check(self, exercise_id, points, fn, args, kwargs, run):
        __tracebackhide__ = True  # noqa: F841
        global _session
        if record.record_path(exercise_id) is None or kwargs:
            return run(exercise_id, points, fn, args, kwargs)
        recorder = Recorder(exercise_id, args)  # the grader decides from this record
        saved, _session = _session, recorder
        outcome = "raised"
        try:
            result = run(exercise_id, points, fn, recorder.args, kwargs)
            outcome = "passed"
            return result
        finally:
            _session = saved
            record.write(exercise_id, recorder.as_dict(outcome))

    def ranks(self, fn, world_size, args, launch):
        session = _session
        if session is not None and record.contains(args, StudentArg):
            return session.ranks(fn, world_size, args, launch)
        return launch(args)


def install() -> None:
    """Put the recorder in the checks' interceptor slot (at kernel start). Returns None, so that
    the kernel's start line shows and binds nothing. The checks' rank-body modules are imported
    here too (at the top), so that the forkserver of this kernel preloads them."""
    hooks.install(Interceptor())
