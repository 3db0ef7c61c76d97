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
from labs.exercises import offlimits, trace
from labs.exercises import checks
from labs.exercises.checks import ExerciseFailed
from labs.exercises.checks import case as named
from labs.messages import joined, text
from labs.runtime import forkserver as _forkserver
from labs.runtime import stacks as _stacks

__all__ = ["CHECK_TIMEOUT", "run_on_ranks", "check_cases", "as_number"]

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
    return joined((text("checks.ranks_stuck_at", ranks=joined(ranks), where=where)
                   for where, ranks in places.items()), "clauses")


def run_on_ranks(fn, world_size, args=(), *, timeout=None, deadlock="checks.deadlock"):
    """``labs.launch`` with the check's timeout (default CHECK_TIMEOUT); hangs and crashes
    become ExerciseFailed. ``deadlock``: the key of the advice a deadlock gets (the default
    speaks of send/recv; an exercise with collectives only gives its own)."""
    interceptor = _hooks.installed()
    if interceptor is not None:  # the grader's (labs.exercises.hooks): it may record the launch
        return interceptor.ranks(fn, world_size, args,
                                 lambda plain: _launch(fn, world_size, plain, timeout, deadlock))
    return _launch(fn, world_size, args, timeout, deadlock)


#: Seconds that cap every check's launch (``python -m grader.mutants`` sets it from what the
#: reference answer took, so that a mutant that deadlocks costs seconds, not half a minute).
TIMEOUT_CAP_ENV = "LABS_CHECK_TIMEOUT"


def _launch(fn, world_size, args, timeout, deadlock="checks.deadlock"):
    import os

    timeout = CHECK_TIMEOUT if timeout is None else timeout
    cap = os.environ.get(TIMEOUT_CAP_ENV, "").strip()
    if cap:
        timeout = min(timeout, float(cap))

    try:
        with _feedback.quiet_rank_logs():
            return labs.launch(fn, world_size, args=args, backend="gloo", timeout=timeout)
    except labs.LaunchTimeoutError as exc:
        pending = _pending(exc.notes)
        if pending:
            message = text("checks.deadlock_pending", world_size=world_size, timeout=timeout,
                           pending=pending)
        else:
            where = _where_stuck(exc.stacks)
            why = text("checks.timeout_not_deadlock" if exc.in_communication is False
                       else deadlock)
            message = text("checks.still_running_at" if where else "checks.still_running",
                           world_size=world_size, timeout=timeout, waiting=list(exc.waiting),
                           where=where, why=why)
        failed = _failed(message, exc, "timeout")
        for note in exc.notes.values():  # which case it was (labs.exercises.trace's notes)
            if note.startswith("case "):
                failed.add_note(_CASE_TAG + note[5:].split(" ", 1)[0])
        raise failed from None
    except labs.RankCrashedError as exc:
        raise _failed(text("checks.rank_crashed", rank=exc.rank, exitcode=exc.exitcode),
                      exc, "error") from None


def _pending(notes: dict) -> str:
    """'rank 0 waits for #5 recv from rank 1 (16 B); …' from the notes of the waiting ranks
    (labs.exercises.trace): empty when no rank was blocked in an operation."""
    said = []
    for rank, note in sorted(notes.items()):
        what = note.split(" · ", 1)[1] if " · " in note else (
            note if note.startswith("#") else "")
        if what:
            said.append(text("checks.rank_waits_for", rank=rank, what=what))
    return joined(said, "clauses")


def _failed(message, launch_error, kind):
    """ExerciseFailed of ``kind`` keeping the launcher's full report for last_traceback()."""
    failed = ExerciseFailed(message)
    failed.kind = kind
    failed.full_traceback = _feedback.full_traceback(launch_error)
    return failed


def as_number(value, what):
    """Accept any ``numbers.Real`` (int, float, Fraction, numpy scalars) and 0-d tensors/arrays,
    as a float (an int stays an int); anything else is a wrong type."""
    import numbers

    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, int, float)):
        value = int(value) if isinstance(value, numbers.Integral) else float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExerciseFailed(text("checks.not_a_number", what=what, got_type=type(value).__name__,
                                  got=repr(value)))
    return value


# --- many cases, one launch per world size --------------------------------------------------

#: How a rank tags the exception of the case it was running (a note: it survives pickling, and
#: a remote traceback shows it).
_CASE_TAG = "labs-case:"


def _cases_on_rank(exercise_id, body, student, cases):
    """Rank body: ``body(student, case, run)`` for every case; ``run(fn, *args)`` calls the
    student's code under the tracer and the off-limits guard (labs.exercises.trace,
    labs.exercises.offlimits). Returns ``[{"value": ..., "trace": data}]``, one per case."""
    import torch.distributed as dist

    out = []
    for k, c in enumerate(cases):
        record = trace.Trace(rank=dist.get_rank())

        def run(fn, *args, _record=record, _k=k, **kwargs):
            with trace.watching(_record, note=f"case {_k}"), offlimits.forbidden(exercise_id):
                return fn(*args, **kwargs)

        try:
            value = body(student, c, run)
        except BaseException as exc:
            exc.add_note(f"{_CASE_TAG}{k}")
            raise
        out.append({"value": value, "trace": record.as_data()})
    return out


def _failing_case(exc, n: int) -> int:
    """Which of ``n`` cases a launch failed in (its rank's tag or note; the first if unknown)."""
    import re

    found = []
    for error in (exc, getattr(exc, "original", None)):
        found += [str(x) for x in getattr(error, "__notes__", ()) or ()]
    found.append(str(getattr(exc, "remote_traceback", "") or ""))
    for words in found:
        m = re.search(_CASE_TAG + r"(\d+)", words)
        if m and int(m[1]) < n:
            return int(m[1])
    return 0


def check_cases(exercise_id, student, cases, body, judge, *, timeout=None,
                deadlock="checks.deadlock"):
    """Run ``body`` (a module-level function of the checks: ``body(student, case, run)``) for
    every case on ``case.world_size`` ranks -- the cases of one world size in one launch, in
    order -- then ``judge(case, values, traces)`` (one value and one trace per rank) inside
    ``case(case.label, hidden=case.hidden)``. A launch that fails names the case it failed in.
    ``timeout``: seconds for one case (default CHECK_TIMEOUT); a launch of k cases gets k/2 s
    more."""
    batches: dict = {}
    for c in (cases() if callable(cases) else cases):
        batches.setdefault(c.world_size, []).append(c)
    for world_size, batch in batches.items():
        try:
            limit = (CHECK_TIMEOUT if timeout is None else timeout) + 0.5 * len(batch)
            results = run_on_ranks(_cases_on_rank, world_size,
                                   (exercise_id, body, student, batch), timeout=limit,
                                   deadlock=deadlock)
        except Exception as exc:  # noqa: BLE001 - said in the case it happened in
            failed = batch[_failing_case(exc, len(batch))]
            with named(failed.label, hidden=failed.hidden):
                raise
        for k, c in enumerate(batch):
            with named(c.label, hidden=c.hidden):
                per_rank = [results[r][k] for r in range(world_size)]
                for r in per_rank:
                    checks.warned(r["trace"]["warnings"])
                judge(c, [r["value"] for r in per_rank], [r["trace"] for r in per_rank])
