"""A stated rule ("do not call X") checked where the grader can see it: on a rank.

A function exercise is called by its check in the notebook's process; a profile hook there
(:func:`labs.exercises.routes.entered` / :func:`~labs.exercises.routes.borrowed`) would see
what the student's function calls, but the grader's judge replays the check from a record of
what the student's code returned, and a hook in the replay sees nothing. So :func:`called`
runs the student's function once more on ONE rank, on the check's own arguments, under the
hooks, and returns the names of the forbidden functions it reached: a launch's result is
recorded and replayed like every other, so the notebook's verdict and the grader's agree.

Owns: that one-rank preflight. Must not: judge the answers (the check compares them as usual,
in the notebook's process), import the grader, or print.
"""

from __future__ import annotations

from labs.exercises import routes
from labs.exercises.ranks import run_on_ranks

__all__ = ["called"]


def _preflight_on_rank(student_fn, calls, modules, functions):
    """Rank body: every call of ``calls`` under the hooks; its errors are the real run's to
    report, so they are ignored here."""
    with routes.borrowed(modules) as seen, routes.entered(functions) as named:
        for args, kwargs in calls:
            try:
                student_fn(*args, **kwargs)
            except Exception:  # noqa: BLE001 (reported by the check's own run)
                pass
    return list(seen) + [name for name in named if name not in seen]


def called(student_fn, calls, *, modules=(), functions=()) -> list:
    """Names of the functions of ``modules`` (any function of theirs, however reached) and of
    ``functions`` ((file fragment, name) pairs) that ``student_fn`` reaches on ``calls``
    (``[(args, kwargs), ...]``); empty when it keeps the rule."""
    (names,) = run_on_ranks(_preflight_on_rank, 1, (student_fn, list(calls), tuple(modules),
                                                      tuple(functions)))
    return names
