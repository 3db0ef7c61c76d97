"""The framework every exercise check uses.

A check compares the student's function with the lab's reference on several cases, some of
them hidden (generated inside the check, never printed), and says in plain words, in the
notebook's language (:mod:`labs.messages`, catalog ``checks``), what is wrong. It is wrapped
by :func:`graded` (or called through :func:`run_check`), which prints the verdict once and
re-raises, so the notebook cell errors and the graders see the failure::

    @graded("ex2_0_ring_all_reduce")  # its points: the declaration's
    def check_ring_allreduce(student_fn):
        with case(msg("checks_2_0.case_ranks_length", n=1, world_size=4, length=8)):
            compare_tensors(expected, student_fn(x), what=text("checks_2_0.what_result"), rank=1)
        for k, x in enumerate(hidden_inputs()):
            with case(msg("checks.case_hidden", n=k + 1), hidden=True):
                ...

A label is text or a :class:`Message` (:func:`msg`: a key and its fields, formatted when it is
shown), so module-level case tables stay in the language of the moment.

What the student sees. The verdict names the exercise as the notebook does (``练习 n``, from
:mod:`labs.exercises.catalog`; the id, the cell's ``grade_id``, stays what graders use) and is
printed once, on stdout: a first line ``❌ 练习 n 未通过（0/k 分）：…`` (the grader keeps it and
the indented lines after it), then what to do, pointing to a hint (``练习 n · 提示 k``). When
the student's code raised -- here or on a rank -- the verdict starts with the rank, the
student's own line (its cell, line number, function and source text) and the exception
(:mod:`labs.exercises.feedback`); the lab's own frames, torch's and gloo's are left out. The
exception then raised is shown by IPython as one short line that does not repeat the verdict
(``_render_traceback_``), so "Run All" goes on past the cell (tagged ``raises-exception``)
and the cell still counts as failed; ``str()`` of the exception is the message without the
verdict's first words, for tests and scripts.

The full traceback, on demand. A failure caused by an exception keeps everything -- every
frame of the checks, the launcher and torch, the rank's traceback, the torch/gloo log lines the
ranks printed while the check ran -- in the exception's ``full_traceback`` attribute, and
``labs.exercises.last_traceback()`` prints that of the last failed check (the verdict says so
in its last line). With the environment variable ``LABS_FULL_TRACEBACK=1`` the error output
of every failed check shows it as well.

torch is imported lazily, so plain-Python checks stay cheap.

Owns: the verdict, the comparisons, ``@graded`` and the last failure kept for ``explain()``.
Must not: import the grader, a notebook's checks module, the planner widget, or a parallelism
package; print anything but the verdict and the explanation.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import warnings
from typing import Any, Callable

from labs.exercises import catalog, feedback, hooks, offlimits
from labs.exercises.errors import FULL_TRACEBACK_ENV, ExerciseFailed, ExerciseIncomplete
from labs.messages import LANGUAGES, Message, lazy, text
# the comparisons live in labs.exercises.compare; every check imports them from here
from labs.exercises.compare import assert_close, assert_equal, compare_tensors  # noqa: F401

__all__ = [
    "ExerciseIncomplete",
    "ExerciseFailed",
    "run_check",
    "graded",
    "case",
    "compare_tensors",
    "assert_close",
    "assert_equal",
    "last_traceback",
    "FULL_TRACEBACK_ENV",
    "Message",
    "msg",
    "stub_markers",
]

# Old module attributes, now their messages: STUB_MARKER (text("checks.stub_marker"), the
# prefix of every generated stub's message) and TRACEBACK_NOTE (text("checks.traceback_note"),
# the last line of a verdict whose failure has a full traceback to show).
_MOVED = {"STUB_MARKER": "checks.stub_marker", "TRACEBACK_NOTE": "checks.traceback_note"}

_last: dict = {"exercise": None, "text": None}
_warnings: list = []  # what torch warned on the ranks during the check running now, once each


def warned(lines) -> None:
    """Keep the warnings the ranks gave (labs.exercises.trace collects them), to show each once
    after the verdict instead of once per rank and case."""
    for line in lines:
        if line not in _warnings and len(_warnings) < 20:
            _warnings.append(line)


def __getattr__(name: str):  # deprecated aliases, not a language mechanism
    if name in _MOVED:
        warnings.warn(f"{__name__}.{name} is deprecated: use labs.messages.text({_MOVED[name]!r})",
                      DeprecationWarning, stacklevel=2)
        return text(_MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def stub_markers() -> tuple[str, ...]:
    """The stub marker in every language: a stub of either edition is detected."""
    return tuple(text("checks.stub_marker", lang=lang) for lang in LANGUAGES)


# Lazy messages (case labels built at import time, shown later in the language of the moment)
# are labs.messages.Message; msg is kept as the checks' short name for them.
msg = lazy


def _failure(message: str, like: BaseException | None = None, **attrs) -> ExerciseFailed:
    """An ExerciseFailed with ``message``, keeping the kind and full traceback of ``like``."""
    failed = ExerciseFailed(message)
    for name in ("kind", "full_traceback"):
        if like is not None and name in vars(like):
            setattr(failed, name, vars(like)[name])
    for name, value in attrs.items():
        setattr(failed, name, value)
    return failed


def _chain(exc: BaseException | None):
    """``exc``, its cause/context chain, and what a launcher error wraps (``.original``)."""
    seen = set()
    todo = [exc]
    while todo:
        exc = todo.pop(0)
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        original = getattr(exc, "original", None)
        todo += [original if isinstance(original, BaseException) else None,
                 exc.__cause__, exc.__context__]


def _is_incomplete(exc: BaseException) -> bool:
    """True if ``exc`` comes from an unfinished stub.

    Errors coming back from other processes (``labs.launch``) may carry the remote traceback
    only as text, so the messages are searched as well.
    """
    markers = stub_markers()
    return any(isinstance(e, (NotImplementedError, ExerciseIncomplete))
               or any(m in str(e) for m in markers) or "NotImplementedError" in str(e)
               for e in _chain(exc))


def _stub_rest(message: str) -> str | None:
    """What a stub's message (of either edition) says after its marker, or None."""
    for lang in LANGUAGES:  # the marker, then a colon (": ", "："): every stub message's start
        found = re.search(re.escape(text("checks.stub_marker", lang=lang)) + r"[^\w\s]\s*",
                          message)
        if found:
            rest = message[found.end():].splitlines()[0].strip()
            if rest.endswith(('")', "')")):  # found in the stub's source line, not its message
                rest = rest[:-2]
            return rest
    return None


def _incomplete_message(exc: BaseException) -> str:
    if isinstance(exc, ExerciseIncomplete):
        return str(exc)
    for e in _chain(exc):
        rest = _stub_rest(str(e))
        if rest is not None:
            return text("checks.stub_not_written", rest=rest)
    return text("checks.stub_not_finished", first_line=_first_line(exc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _student_error(exc: BaseException, case_name: str | None = None) -> ExerciseFailed:
    """ExerciseFailed for an exception of the student's code (here or on a rank): the rank,
    the student's line and the exception first (labs.exercises.feedback)."""
    message, in_student_code = feedback.describe(exc, case_name)
    kind = "error"
    original = getattr(feedback.rank_error(exc), "original", None)
    if isinstance(original, ExerciseFailed) and (not in_student_code or "kind" in vars(original)):
        kind = vars(original).get("kind", "wrong")  # a check's own test on the rank
    return _failure(message, kind=kind, full_traceback=feedback.full_traceback(exc))


def _verdict_exception(exc: BaseException) -> ExerciseFailed | ExerciseIncomplete:
    """What a failed check raises: ``exc`` itself if it is one of ours, else one describing it."""
    if isinstance(exc, (ExerciseFailed, ExerciseIncomplete)):
        return exc
    remote = feedback.rank_error(exc)
    if remote is not None and isinstance(getattr(remote, "original", None), ExerciseFailed):
        return _student_error(exc)
    if _is_incomplete(exc):
        return ExerciseIncomplete(_incomplete_message(exc))
    return _student_error(exc)


def _what_to_do(exercise_id: str, exc: BaseException) -> str | None:
    """The verdict's advice line: what to do next, and which hint to open (never the last)."""
    if isinstance(exc, ExerciseIncomplete):
        return None  # the stub's own message already points to the hints
    kind = getattr(exc, "kind", "wrong")
    number = catalog.hint(exercise_id, kind)
    hint = (text("checks.hint_pointer", exercise=catalog.label(exercise_id), number=number)
            if number else "")
    if kind == "error":
        return text("checks.todo_fix_error", hint=hint).rstrip()
    return text("checks.todo_hint", hint=hint) if hint else None


def run_check(exercise_id: str, points: int | float, fn: Callable[..., Any], *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` as the check of ``exercise_id``; print the verdict, once.

    Returns what ``fn`` returns. Re-raises on failure (as ExerciseIncomplete or ExerciseFailed,
    ``announced``: IPython then shows one short line instead of repeating the verdict) so the
    cell errors. An interceptor installed in :mod:`labs.exercises.hooks` (the grader's) is
    handed the check instead, with this ordinary run to call.
    """
    __tracebackhide__ = True  # noqa: F841  (IPython/pytest hide this frame)
    # the course's own answers refused while the student's objects run (labs.exercises.offlimits)
    args = offlimits.guarded(args, exercise_id)
    interceptor = hooks.installed()
    if interceptor is not None:
        return interceptor.check(exercise_id, points, fn, args, kwargs, _run)
    return _run(exercise_id, points, fn, args, kwargs)


def _run(exercise_id: str, points, fn: Callable[..., Any], args: tuple, kwargs: dict):
    """The check on ``args``, its verdict printed (see :func:`run_check`)."""
    __tracebackhide__ = True  # noqa: F841
    name = catalog.label(exercise_id)
    feedback.clear_hidden_logs()
    _warnings.clear()
    try:
        result = fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        final = _verdict_exception(exc)
        print("\n".join(verdict_lines(exercise_id, points, final)), flush=True)
        _show_warnings()
        final.announced = True
        _last.update(exercise=name, text=final.full_traceback)
        if final is exc:
            raise
        raise final from exc
    finally:
        feedback.clear_hidden_logs()
    print(text("checks.verdict_passed", exercise=name, points=points), flush=True)
    _show_warnings()
    return result


def _show_warnings() -> None:
    if _warnings:
        print(text("checks.warned_once", warnings="\n    ".join(_warnings)), flush=True)
        _warnings.clear()


def verdict_lines(exercise_id: str, points, final: BaseException) -> list[str]:
    """The lines a failed check prints: the verdict, the advice, the traceback note."""
    name = catalog.label(exercise_id)
    if isinstance(final, ExerciseIncomplete):
        lines = [text("checks.verdict_incomplete", exercise=name, message=final)]
    else:
        lines = [text("checks.verdict_failed", exercise=name, points=points, message=final)]
    advice = _what_to_do(exercise_id, final)
    if advice:
        lines.append(advice)
    if getattr(final, "full_traceback", None):
        lines.append(text("checks.traceback_note"))
    return lines


def last_traceback(file=None) -> None:
    """Print the full traceback of the last failed check (every frame, the rank's traceback,
    the torch/gloo log lines hidden while it ran)."""
    out = sys.stdout if file is None else file
    if not _last["text"]:
        why = (text("checks.last_not_an_exception", exercise=_last["exercise"])
               if _last["exercise"] else text("checks.last_none"))
        print(why, file=out)
        return
    print(text("checks.last_header", exercise=_last["exercise"]) + "\n" + _last["text"], file=out)


def graded(exercise_id: str, points: int | float | None = None):
    """Decorator form of :func:`run_check`: calling the decorated check runs it graded.

    A declared exercise's points come from its declaration (labs/exercises/text.py); points
    given here must agree with it. An undeclared id (a test's own check) takes ``points`` (1)."""
    declared = catalog.lookup(exercise_id)
    if declared is not None and points is not None and points != declared.points:
        raise ValueError(text("exercises.points_disagree", exercise_id=exercise_id,
                              declared=declared.points, points=points))
    points = declared.points if declared is not None else (1 if points is None else points)

    def decorate(check: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(check)
        def wrapper(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841
            return run_check(exercise_id, points, check, *args, **kwargs)

        wrapper.exercise_id = exercise_id
        wrapper.points = points
        return wrapper

    return decorate


@contextlib.contextmanager
def case(label: "str | Message", *, hidden: bool = False):
    """Name the case being checked, so a failure says which one.

    ``label`` is text or a :class:`Message` (formatted now, in the language of the moment).
    ``hidden=True`` marks a case whose inputs are not shown; the label should not reveal them,
    and one that does not start as ``checks.case_hidden`` does ("Hidden case 2: ...") gets
    "(hidden case)" after it.
    Errors raised by the student's code inside the case become ExerciseFailed naming the
    rank, the student's line and the case; NotImplementedError passes through (the exercise is
    unfinished, not wrong).
    """
    __tracebackhide__ = True  # noqa: F841
    name = str(label)
    if hidden and not _says_hidden(name):
        name = text("checks.case_hidden_suffix", label=name)
    try:
        yield
    except ExerciseFailed as exc:
        raise _failure(text("checks.case_failed", case=name, message=exc), like=exc) from None
    except (ExerciseIncomplete, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        remote = feedback.rank_error(exc)
        if remote is not None and isinstance(getattr(remote, "original", None), ExerciseFailed):
            raise _student_error(exc, name) from exc
        if _is_incomplete(exc):
            raise
        raise _student_error(exc, name) from exc


def _says_hidden(label: str) -> bool:
    """Whether a case's label already says it is hidden: it starts as the label
    ``checks.case_hidden`` does, up to its number ("Hidden case ", in any language)."""
    starts = (text("checks.case_hidden", lang=lang, n="\0").partition("\0")[0]
              for lang in LANGUAGES)
    return any(label.casefold().startswith(start.casefold()) for start in starts)
