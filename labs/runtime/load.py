"""Time limits that are fair on a busy machine: time counted at the pace the machine allowed.

A launch's timeout (and the grader's limit on an exercise) is there to stop what hangs, not
to punish honest work on a machine that is busy with something else (another submission
graded beside it, a student's browser, a CPU hog). So a limit is counted on a :class:`Pace`:
each moment counts ``1 / stretch`` of itself, where :func:`stretch` is how much slower the
watched processes go because others compete for the cores. Processes that wait (a deadlock, a
sleep) are stretched by nothing, so a hang is still stopped on time; a clock deadline of
:data:`MAX_STRETCH` times the limit bounds everything.

Owns: reading the run queue (``/proc``) and the pace. Must not: import torch or anything of labs
above the runtime; kill or decide anything (the launcher and the grader do).
"""

from __future__ import annotations

import os
import time

__all__ = ["MAX_STRETCH", "machine_runnable", "runnable", "stretch", "Pace"]

MAX_STRETCH = 8.0  # a limit counts at most this many times the clock's time
_EVERY = 0.1  # seconds between two looks at the run queue


def machine_runnable() -> int | None:
    """Runnable tasks on the machine now (``/proc/loadavg``'s fourth field, less the reader)."""
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            return max(0, int(f.read().split()[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return None


def runnable(pids) -> int:
    """How many of ``pids`` are running or ready to run now (state R)."""
    count = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                count += f.read().rsplit(b")", 1)[1].split()[0] == b"R"
        except (OSError, IndexError):
            continue
    return count


def stretch(ours: int, machine: int | None, cores: int) -> float:
    """How much slower ``ours`` runnable tasks go when the machine has ``machine`` runnable in
    all on ``cores`` cores than they would alone: alone they get min(ours, cores) cores, here
    their share cores·ours/machine. 1 when they wait or the machine is not full; at most
    :data:`MAX_STRETCH`."""
    if not ours or machine is None or machine <= cores:
        return 1.0
    machine = max(machine, ours)
    alone, here = min(ours, cores), cores * ours / machine
    return max(1.0, min(MAX_STRETCH, alone / here))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


class Pace:
    """Seconds since it started, each counted at the pace the machine allowed ``pids()``'s
    processes (a callable: the processes change); :meth:`spent` is cheap to call often."""

    def __init__(self, pids):
        self.pids, self.cores = pids, _cores()
        self.start = self.last = time.monotonic()
        self.counted = 0.0

    def spent(self) -> float:
        now = time.monotonic()
        if now - self.last >= _EVERY:
            self.counted += (now - self.last) / stretch(runnable(self.pids()), machine_runnable(),
                                                        self.cores)
            self.last = now
        return self.counted + (now - self.last)

    def over(self, limit: float) -> bool:
        """Past ``limit`` counted at the machine's pace, or past MAX_STRETCH x it on the clock."""
        return self.spent() > limit or time.monotonic() - self.start > limit * MAX_STRETCH
