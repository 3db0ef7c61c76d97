"""What a student sees when their code raises during a check, and what is kept for later.

A check that catches an exception from the student's code -- raised in this process, or on a
rank (``labs.RankError``, which brings the rank's traceback back as text) -- tells, first, where
it happened: the rank, the student's own line (the innermost frame that is not torch, the
standard library or the lab: :func:`labs.runtime.stacks.is_library`) with its source text,
and the exception, with torch's C++ context (``Exception raised from …``, ``frame #3: …``) cut.
The frames of the lab's checks and launcher, torch's and gloo's, are not shown; the full
traceback is kept (:func:`full_traceback`) and shown on demand by
``labs.exercises.last_traceback()``.

While a check runs the student's code on ranks, what the ranks print still streams into the
notebook, except torch's own log lines (``[W… ProcessGroupGloo.cpp:…] …``, :data:`NOISE`):
they are kept with the traceback of a failure instead (:func:`quiet_rank_logs`).

Owns: the student's line first, torch's noise cut, and the exceptions hidden from the student.
Must not: import the grader, a notebook's checks or torch; decide a verdict or print.
"""

from __future__ import annotations

import contextlib
import re
import sys
import traceback
from dataclasses import dataclass

from labs.exercises.errors import ExerciseFailed
from labs.messages import text as _t
from labs.runtime import stacks as _stacks

__all__ = ["NOISE", "Frame", "rank_error", "student_frame", "exception_text", "describe",
           "full_traceback", "quiet_rank_logs", "hidden_logs", "clear_hidden_logs"]

#: A log line of torch's C++ side (c10 / gloo / c10d), as ``[W1201 04:41:43.535 socket.cpp:55]``
#: or ``[W ProcessGroupGloo.cpp:727] Warning: …``, optionally after the launcher's ``[rank r] ``.
NOISE = re.compile(r"^(?:\[rank \d+\] )?\[[WEIF][^\]]*\.(?:cpp|cc|cu|h|hpp):\d+\]")
# Where torch's C++ exceptions start their C++ context; what follows is not for a student.
_CPP_CONTEXT = re.compile(r"^\s*(?:Exception raised from |frame #\d+|\(no backtrace available\))")
_TB_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_CHAIN = re.compile(r"^(?:The above exception was the direct cause of the following exception:"
                    r"|During handling of the above exception, another exception occurred:)\s*$")
_CARETS = re.compile(r"^\s*[\^~\-]+\s*$")
MAX_EXCEPTION_LINES = 6
MAX_HIDDEN_LINES = 200

_hidden: list[str] = []


@dataclass(frozen=True)
class Frame:
    """One frame of the student's code: where (``Cell In[5]`` or a short path), line, function,
    and the source text of the line ('' when unknown)."""
    place: str
    line: int
    func: str
    text: str

    def lines(self, indent: str = "    ") -> list[str]:
        where = dict(place=self.place, line=self.line, func=self.func)
        if not self.text:
            return [indent + _t("checks.frame", **where)]
        return [indent + _t("checks.frame_with_source", **where), f"{indent}    {self.text}"]


def _place(filename: str) -> str:
    """``Cell In[5]`` for a notebook cell of this kernel (as IPython names it), else a short
    path without the machine's folders."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        named = shell.compile.format_code_name(filename) if shell is not None else None
        if named:
            return " ".join(named)
    except Exception:  # noqa: BLE001 - no IPython, or another version: the short path
        pass
    return _stacks.short_path(filename)


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def rank_error(exc: BaseException):
    """The launcher's RankError in ``exc``'s chain (duck-typed: a ``rank`` and the rank's
    ``remote_traceback`` text or ``original`` exception), or None."""
    for e in _chain(exc):
        if getattr(e, "rank", None) is not None and (
                hasattr(e, "remote_traceback") or hasattr(e, "original")):
            return e
    return None


def _remote_text(remote) -> str:
    text = getattr(remote, "remote_traceback", None)
    return text if isinstance(text, str) else ""


def _parse_traceback_text(text: str) -> list[list[tuple[str, int, str, str]]]:
    """Blocks (one per chained exception, the last raised last) of frames
    ``(file, line, func, source)`` from a formatted traceback, outermost call first."""
    blocks: list[list[tuple[str, int, str, str]]] = [[]]
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _CHAIN.match(line.strip()):
            blocks.append([])
            continue
        m = _TB_FRAME.match(line)
        if not m:
            continue
        source = ""
        if i + 1 < len(lines):
            nxt = lines[i + 1]
            if nxt.startswith("    ") and not _TB_FRAME.match(nxt) and not _CARETS.match(nxt):
                source = nxt.strip()
        blocks[-1].append((m["file"], int(m["line"]), m["func"], source))
    return [b for b in blocks if b]


def _first_student(frames) -> Frame | None:
    """The innermost frame (of ``(file, line, func, source)``, outermost first) of the
    student's code."""
    for file, line, func, source in reversed(list(frames)):
        if not _stacks.is_library(file):
            return Frame(_place(file), line, func, (source or "").strip())
    return None


def student_frame(exc: BaseException) -> Frame | None:
    """Where the student's own code raised ``exc``: on the rank for a RankError (from its
    traceback text), else from the traceback objects, latest exception of the chain first."""
    recorded = getattr(exc, "recorded_frame", None)  # replayed by the grader (record.py)
    if isinstance(recorded, Frame):
        return recorded
    remote = rank_error(exc)
    if remote is not None:
        for block in reversed(_parse_traceback_text(_remote_text(remote))):
            found = _first_student(block)
            if found is not None:
                return found
        return None
    for e in _chain(exc):
        frames = [(f.filename, f.lineno or 0, f.name, f.line or "")
                  for f in traceback.extract_tb(e.__traceback__)]
        found = _first_student(frames)
        if found is not None:
            return found
    return None


def _clean(text: str) -> str:
    """An exception's message without torch's C++ context, at most a few lines."""
    kept = []
    for line in text.strip().splitlines():
        if _CPP_CONTEXT.match(line) or NOISE.match(line.strip()):
            break
        kept.append(line.rstrip())
    while kept and not kept[-1].strip():
        kept.pop()
    if len(kept) > MAX_EXCEPTION_LINES:
        kept = kept[:MAX_EXCEPTION_LINES] + ["…"]
    return "\n".join(kept)


def exception_text(exc: BaseException) -> str:
    """``IndexError: tuple index out of range`` for the student's exception (the rank's own
    exception for a RankError), cleaned of C++ context."""
    remote = rank_error(exc)
    if remote is not None:
        original = getattr(remote, "original", None)
        if isinstance(original, BaseException):
            exc = original
        else:  # not picklable: the last lines of the rank's traceback text
            lines = _remote_text(remote).rstrip().splitlines()
            start = max((i for i, ln in enumerate(lines) if _TB_FRAME.match(ln)), default=-1)
            rest = [ln for ln in lines[start + 1:]
                    if not ln.startswith("    ") and not _CARETS.match(ln)]
            text = _clean("\n".join(rest))
            name = getattr(remote, "exc_type", None) or "Exception"
            head, _, tail = text.partition(":")
            if head.rsplit(".", 1)[-1] == name:  # "torch.distributed.DistBackendError: …"
                return f"{name}:{tail}" if tail else name
            return f"{name}: {text}" if text else name
    try:
        message = _clean(str(exc))
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails
        message = ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


#: The first line of an error's description: (in the student's code, on a rank, in a case) ->
#: its message.
_HEADLINES = {
    (True, False, False): "checks.your_code_raised",
    (True, False, True): "checks.your_code_raised_in_case",
    (True, True, False): "checks.your_code_raised_on_rank",
    (True, True, True): "checks.your_code_raised_on_rank_in_case",
    (False, False, False): "checks.error",
    (False, False, True): "checks.error_in_case",
    (False, True, False): "checks.error_on_rank",
    (False, True, True): "checks.error_on_rank_in_case",
}


def describe(exc: BaseException, case: str | None = None) -> tuple[str, bool]:
    """``(message, in_student_code)`` for an exception of the student's code (or of a rank).

    The message starts with the rank (if any) and the case, then the student's line, then the
    exception. An ExerciseFailed a rank raised (a forbidden collective, say) keeps its message.
    """
    remote = rank_error(exc)
    frame = student_frame(exc)
    original = getattr(remote, "original", None) if remote is not None else None
    if isinstance(original, ExerciseFailed):
        lines = [_t("checks.rank_check_failed_in_case", rank=remote.rank, case=case,
                      message=original) if case else
                 _t("checks.rank_check_failed", rank=remote.rank, message=original)]
        if frame:
            lines += frame.lines()
        return "\n".join(lines), frame is not None
    key = _HEADLINES[bool(frame), remote is not None, bool(case)]
    lines = [_t(key, rank=getattr(remote, "rank", None), case=case)]
    if frame:
        lines += frame.lines()
    lines.append("    " + exception_text(exc).replace("\n", "\n    "))
    return "\n".join(lines), frame is not None


def full_traceback(exc: BaseException) -> str:
    """Everything about ``exc``: its traceback with every frame (the rank's included, in a
    RankError's message), and the torch log lines hidden while the check ran."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    if _hidden:
        text += "\n\n" + _t("checks.hidden_logs") + "\n" + "\n".join(_hidden)
    return text


class _Filtered:
    """A stream that drops torch's log lines (keeping them in ``_hidden``), passing on the rest."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        kept = []
        for piece in str(text).splitlines(keepends=True):
            if NOISE.match(piece):
                if len(_hidden) < MAX_HIDDEN_LINES:
                    _hidden.append(piece.rstrip("\n"))
            else:
                kept.append(piece)
        if kept:
            self._stream.write("".join(kept))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def quiet_rank_logs():
    """While the ranks of a check run: their torch log lines are kept, not shown."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _Filtered(saved[0]), _Filtered(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def hidden_logs() -> list[str]:
    return list(_hidden)


def clear_hidden_logs() -> None:
    _hidden.clear()
