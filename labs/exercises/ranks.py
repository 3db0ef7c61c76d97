"""Running a student's code on real ranks for a check, and reading what comes back.

A check must never hang a notebook: every launch has a short timeout, and a hang or a crash
becomes an ExerciseFailed that says, in the notebook's language, which ranks were stuck and
on which line of the student's code (a loop still running is a timeout, ranks waiting on each
other a deadlock). An exception on a rank comes back as ``labs.RankError``, which :func:`labs.exercises.checks.case`
and :func:`~labs.exercises.checks.run_check` turn into the student's line first. torch's own
log lines printed by the ranks are kept out of the notebook while a check runs
(:func:`labs.exercises.feedback.quiet_rank_logs`); each failure keeps the launcher's full report
(``full_traceback``, ``labs.exercises.last_traceback()``).

Owns: a check's launch on ranks and the translation of a hang or crash into ExerciseFailed.
Must not: import the grader, judge a result, print, or launch without a timeout.
"""

from __future__ import annotations

from pathlib import Path

import labs
from labs.exercises import feedback as _feedback
from labs.exercises import hooks as _hooks
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from labs.runtime import forkserver as _forkserver
from labs.runtime import stacks as _stacks

__all__ = ["CHECK_TIMEOUT", "run_on_ranks", "as_number"]

CHECK_TIMEOUT = 20.0  # seconds per launch; a correct solution needs well under one
#: The checks whose rank bodies the launches run: the forkserver imports them once, not each rank.
#: Every ``*_checks`` module of this package, found by name, so a new one needs no entry here.
CHECK_MODULES = tuple(f"labs.exercises.{path.stem}"
                      for path in sorted(Path(__file__).parent.glob("*_checks.py")))
_forkserver.preload(*CHECK_MODULES)


def _where_stuck(stacks: dict) -> str:
    """'rank 0、1 停在 my_ring_all_reduce 第 12 行；…' (en: 'rank 0, 1 stuck at line 12 of
    my_ring_all_reduce; …') from a LaunchTimeoutError's frames."""
    places: dict = {}
    for rank, frames in sorted(stacks.items()):
        frame = _stacks.first_user_frame(frames)
        if frame is not None:
            places.setdefault(text("checks.stuck_line", func=frame.func, line=frame.line),
                              []).append(str(rank))
    return text("checks.clause_separator").join(
        text("checks.ranks_stuck_at", ranks=text("checks.list_separator").join(ranks), where=where)
        for where, ranks in places.items())


def run_on_ranks(fn, world_size, args=(), *, timeout=None, deadlock="checks.deadlock"):
    """``labs.launch`` with the check's timeout (default CHECK_TIMEOUT); hangs and crashes
    become ExerciseFailed. ``deadlock``: the key of the advice a deadlock gets (the default
    speaks of send/recv; an exercise with collectives only gives its own)."""
    interceptor = _hooks.installed()
    if interceptor is not None:  # the grader's (labs.exercises.hooks): it may record the launch
        return interceptor.ranks(fn, world_size, args,
                                 lambda plain: _launch(fn, world_size, plain, timeout, deadlock))
    return _launch(fn, world_size, args, timeout, deadlock)


def _launch(fn, world_size, args, timeout, deadlock="checks.deadlock"):
    timeout = CHECK_TIMEOUT if timeout is None else timeout

    try:
        with _feedback.quiet_rank_logs():
            return labs.launch(fn, world_size, args=args, backend="gloo", timeout=timeout)
    except labs.LaunchTimeoutError as exc:
        where = _where_stuck(exc.stacks)
        why = text("checks.timeout_not_deadlock" if exc.in_communication is False
                   else deadlock)
        message = text("checks.still_running_at" if where else "checks.still_running",
                       world_size=world_size, timeout=timeout, waiting=list(exc.waiting),
                       where=where, why=why)
        raise _failed(message, exc, "timeout") from None
    except labs.RankCrashedError as exc:
        raise _failed(text("checks.rank_crashed", rank=exc.rank, exitcode=exc.exitcode),
                      exc, "error") from None


def _failed(message, launch_error, kind):
    """ExerciseFailed of ``kind`` keeping the launcher's full report for last_traceback()."""
    failed = ExerciseFailed(message)
    failed.kind = kind
    failed.full_traceback = _feedback.full_traceback(launch_error)
    return failed


def as_number(value, what):
    """Accept ints, floats and 0-d tensors/arrays; anything else is a wrong type."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExerciseFailed(text("checks.not_a_number", what=what, got_type=type(value).__name__,
                                  got=repr(value)))
    return value
