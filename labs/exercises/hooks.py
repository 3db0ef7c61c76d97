"""One slot where code outside the course may stand between a check and the student's objects.

Owns: the interceptor slot that :func:`labs.exercises.checks.run_check` and
:func:`labs.exercises.ranks.run_on_ranks` consult, and nothing else. With no interceptor
installed (a student's notebook) a check runs as written. An interceptor is any object with
two methods:

- ``check(exercise_id, points, fn, args, kwargs, run)``: called instead of running the check;
  ``run(exercise_id, points, fn, args, kwargs)`` is the ordinary run (the check on ``args``,
  the verdict printed), which the interceptor may call with arguments of its own, or not at all;
- ``ranks(fn, world_size, args, launch)``: called instead of launching a rank body for a check;
  ``launch(args)`` is the ordinary launch.

Must not: know who installs an interceptor or what it does with what it sees (recording,
replaying: that is the grader's, outside ``labs``), import anything above
:mod:`labs.exercises.checks`, or touch files and the environment.
"""

from __future__ import annotations

import contextlib

__all__ = ["install", "installed", "intercepting"]

_interceptor = None


def install(interceptor) -> object:
    """Make ``interceptor`` (None: none) the one checks consult; the one it replaces."""
    global _interceptor
    previous, _interceptor = _interceptor, interceptor
    return previous


def installed():
    """The interceptor checks consult now, or None."""
    return _interceptor


@contextlib.contextmanager
def intercepting(interceptor):
    """``interceptor`` installed for the ``with`` block, the previous one restored after."""
    previous = install(interceptor)
    try:
        yield interceptor
    finally:
        install(previous)
