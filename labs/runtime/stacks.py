"""Where the ranks of a timed-out launch were waiting, told briefly.

The launcher asks each waiting rank for its Python stack (faulthandler, most recent call first).
This module turns those raw dumps into what a student needs first: on which line of their own
code each rank stopped (with the line's text when the kernel still has the cell), whether the
rank was blocked in communication (a deadlock when every waiting rank is) or still running its
own code (a slow loop or an endless one), and the library frames below it with short paths
(``torch/distributed/distributed_c10d.py``, never the machine's install path).

Owns: parsing and telling the stacks. Must not: import torch, ask the ranks for their stacks (the
launcher does), or import labs' course modules (models, parallelism packages, planner, checks) or
the grader: the runtime sits below everything.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
from dataclasses import dataclass

from labs.messages import text

__all__ = ["Frame", "read_notes", "parse_stack", "short_path", "is_library", "is_communication",
           "first_user_frame", "describe_waiting"]

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_CELL = re.compile(r"/ipykernel_\d+/\d+\.py$")
#: The lab package's own folder (this process's copy of it: the grader's sandbox has its own).
_LAB = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_LAB_REAL = os.path.realpath(_LAB) + os.sep


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    func: str


def read_notes(run_dir: str, ranks) -> dict:
    """What each of ``ranks`` last said it was waiting for (``labs.runtime.rank.note``: the
    file ``rank<r>.note`` of the launch's folder), for those that said something."""
    notes = {}
    for r in ranks:
        try:
            with open(os.path.join(run_dir, f"rank{r}.note"), encoding="utf-8") as f:
                words = f.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if words:
            notes[r] = words
    return notes


def parse_stack(dump: str) -> list[Frame]:
    """The frames of a faulthandler dump, most recent call first (as faulthandler writes them)."""
    return [Frame(m["file"], int(m["line"]), m["func"]) for m in _FRAME.finditer(dump)]


def short_path(filename: str) -> str:
    """``torch/distributed/…`` for installed packages, ``labs/…`` for the lab, ``<cell>``
    for a notebook cell: no user name, temporary folder or virtual environment in messages."""
    if _CELL.search(filename) or filename.startswith("<ipython-input"):
        return "<cell>"
    for marker in ("site-packages/", "dist-packages/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    for lab in (_LAB, _LAB_REAL):
        if filename.startswith(lab):
            return "labs/" + filename[len(lab):]
    stdlib = sysconfig.get_paths()["stdlib"]
    if filename.startswith(stdlib + "/"):
        return filename[len(stdlib) + 1:]
    return filename.rsplit("/", 1)[-1]


def _lab_copy(filename: str) -> bool:
    """A frame of another copy of the lab (the grader's sandbox runs a private copy, whose
    tracebacks this process reads): a path ``…/labs/<file>`` whose ``<file>`` is one of this lab's
    own files. A test under tests/labs/ or a student's folder named labs is not (no such file)."""
    _, sep, rel = filename.replace("\\", "/").rpartition("/labs/")
    return bool(sep and rel) and os.path.isfile(os.path.join(_LAB, rel))


def is_library(filename: str) -> bool:
    """Frames of torch, the standard library, the lab (or a copy of it) or the import system:
    not the student's."""
    return (filename.startswith(("<frozen", "<labs:")) or "site-packages" in filename
            or "dist-packages" in filename or filename.startswith((_LAB, _LAB_REAL))
            or filename.startswith(sysconfig.get_paths()["stdlib"]) or _lab_copy(filename))


def is_communication(frames: list[Frame]) -> bool:
    """True when the innermost frame is inside torch.distributed (a collective, send or recv,
    or a work handle's wait): the rank is waiting for its peers, not computing."""
    return bool(frames) and "torch/distributed/" in frames[0].file.replace("\\", "/")


def first_user_frame(frames: list[Frame]) -> Frame | None:
    """The innermost frame of the student's own code (``frames`` most recent call first)."""
    return next((frame for frame in frames if not is_library(frame.file)), None)


def _user_line(frames: list[Frame]) -> str | None:
    frame = first_user_frame(frames)
    if frame is None:
        return None
    source = linecache.getline(frame.file, frame.line).strip()
    where = dict(path=short_path(frame.file), line=frame.line, func=frame.func)
    return (text("runtime.stack_frame_with_source", source=source, **where) if source
            else text("runtime.stack_frame", **where))


def describe_waiting(stacks: dict[int, str]) -> tuple[str, bool]:
    """``(text, all_in_communication)`` for the raw stacks of the waiting ranks.

    Ranks that stopped at the same place are told together; each group starts with the
    student's own line, then the library frames (innermost first) with short paths.
    """
    groups: dict[tuple, list[int]] = {}
    parsed = {rank: parse_stack(dump) for rank, dump in stacks.items()}
    for rank, frames in sorted(parsed.items()):
        key = tuple((short_path(f.file), f.line, f.func) for f in frames)
        groups.setdefault(key, []).append(rank)
    blocks = []
    for key, ranks in groups.items():
        frames = parsed[ranks[0]]
        who = (text("runtime.stack_one_rank", rank=ranks[0]) if len(ranks) == 1
               else text("runtime.stack_ranks", ranks=", ".join(map(str, ranks))))
        state = (text("runtime.stack_in_communication", func=frames[0].func)
                 if is_communication(frames) else text("runtime.stack_running"))
        lines = [text("runtime.stack_header", who=who, state=state)]
        user = _user_line(frames)
        if user:
            lines.append(text("runtime.stack_your_code", where=user))
        lines += ["  " + text("runtime.stack_frame", path=path, line=line, func=func)
                  for path, line, func in key[:6]]
        blocks.append("\n".join(lines))
    all_comm = bool(parsed) and all(is_communication(f) for f in parsed.values())
    return "\n".join(blocks), all_comm
