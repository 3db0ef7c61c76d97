"""What a failed check raises: :class:`ExerciseIncomplete` (the stub is still there) and
:class:`ExerciseFailed` (a wrong answer, an error of the student's code, a timeout), and how
IPython shows them (one short line once the verdict was printed).

Owns: the two exception classes (re-exported by :mod:`labs.exercises.checks`, their public
home) and :data:`FULL_TRACEBACK_ENV`. Must not: import any other module of
:mod:`labs.exercises` (the checks and the feedback both import this one: no circle).
"""

from __future__ import annotations

import os

from labs.messages import text

__all__ = ["FULL_TRACEBACK_ENV", "ExerciseIncomplete", "ExerciseFailed"]

#: Set to 1 to see the full traceback of a failed check in its error output.
FULL_TRACEBACK_ENV = "LABS_FULL_TRACEBACK"


class _ShortTraceback:
    """How IPython shows a check's exception (``_render_traceback_``).

    Once :func:`labs.exercises.checks.run_check` has printed the verdict (``announced``), one short line that does
    not repeat it: the cell is marked failed and the verdict is read once. An exception raised
    outside a graded check shows its message. ``full_traceback`` (str or None) keeps
    everything about the exception that caused it; ``kind`` is "wrong" (a wrong answer),
    "error" (the student's code raised) or "timeout" (the ranks did not finish).
    ename/evalue, which graders read, are the class name and ``str()``.
    """

    kind = "wrong"
    full_traceback: str | None = None
    announced = False
    SHORT_KEY = "checks.short_failed"  # the message of the short line

    def _render_traceback_(self) -> list[str]:
        lines: list[str] = []
        if self.full_traceback and os.environ.get(FULL_TRACEBACK_ENV, "").strip() not in ("", "0"):
            lines = self.full_traceback.splitlines() + [""]
        short = text(self.SHORT_KEY) if self.announced else str(self)
        return lines + [f"{type(self).__name__}: {short}"]


class ExerciseIncomplete(_ShortTraceback, Exception):
    """The student's code still raises NotImplementedError (the stub was not replaced)."""

    SHORT_KEY = "checks.short_incomplete"


class ExerciseFailed(_ShortTraceback, AssertionError):
    """The student's code ran but gave a wrong answer; the message says what is wrong."""
