"""The errors ``labs.launch`` raises: one clear error about the rank that caused a failure.

Owns: the exception classes. Must not: import torch or any labs module, or hold launch logic."""

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
    """The run did not finish within ``timeout``: ``waiting`` lists the ranks still blocked.

    ``stacks`` maps each waiting rank to its frames (``labs.runtime.stacks.Frame``, innermost
    first) when they could be read; ``in_communication`` is True when every waiting rank was
    blocked in torch.distributed (ranks waiting on each other: a deadlock), False when some
    rank was still running its own code (slow or endless work), None when unknown. ``notes``
    maps a waiting rank to the line it left on what it was waiting for
    (``labs.runtime.rank.note``: a check's tracer names the pending operation).
    """

    def __init__(self, message, *, waiting, stacks=None, in_communication=None, notes=None):
        super().__init__(message)
        self.waiting = waiting
        self.stacks = stacks or {}
        self.in_communication = in_communication
        self.notes = notes or {}


class HelperError(LaunchError):
    """The launcher's helper process (the forkserver that starts ranks) died or froze."""
