"""The errors ``labs.launch`` raises: one clear error about the rank that caused a failure."""

from __future__ import annotations

__all__ = ["LaunchError", "RankError", "RankCrashedError", "LaunchTimeoutError", "HelperError"]


class LaunchError(RuntimeError):
    """A launched run failed; the message says which rank and why."""


class RankError(LaunchError):
    """A rank raised an exception (attributes: rank, exc_type, remote_traceback, original)."""

    def __init__(self, message, *, rank, exc_type, remote_traceback, original=None):
        super().__init__(message)
        self.rank = rank
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback
        self.original = original


class RankCrashedError(LaunchError):
    """A rank died without a Python exception (a signal, os._exit, a crash in C++)."""

    def __init__(self, message, *, rank, exitcode):
        super().__init__(message)
        self.rank = rank
        self.exitcode = exitcode


class LaunchTimeoutError(LaunchError, TimeoutError):
    """The run did not finish within ``timeout``: ``waiting`` lists the ranks still blocked."""

    def __init__(self, message, *, waiting):
        super().__init__(message)
        self.waiting = waiting


class HelperError(LaunchError):
    """The launcher's helper process (the forkserver that starts ranks) died or froze."""
