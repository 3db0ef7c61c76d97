"""The watch over one kernel's tree while an exercise runs: memory (the cgroup's, else the
private resident memory summed over every process), processes and threads, CPU time (the cgroup's accounting, else /proc), the sandbox's
/tmp and /dev/shm, and the outputs the kernel sent. Past a limit of :mod:`grader.resources` it
records which (``tripped``) and kills the kernel and everything it started.

Owns: reading /proc and the cgroups' counters for one kernel, and stopping it. Must not: start
kernels, run cells, decide a grade, or write reports.
"""

from __future__ import annotations

import os
import re
import signal
import threading

from grader import sandbox
from grader.resources import KiB, MiB, Cgroups, Limits
from labs.runtime.load import Pace

__all__ = ["POLL", "Monitor", "tree", "error_kind"]

POLL = 0.1  # seconds between two looks at the kernel's tree (its cgroups' counters)
SLOW_POLL = 0.25  # the same without cgroups: the whole of /proc is read each time

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree(root: int) -> list[int]:
    """Every descendant of ``root`` (not ``root`` itself)."""
    table = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        parent = sandbox._ppid(int(pid))  # noqa: SLF001 - the sandbox's /proc reader
        if parent is not None:
            table.setdefault(parent, []).append(int(pid))
    found, frontier = [], [root]
    while frontier:
        kids = table.get(frontier.pop(), [])
        found += kids
        frontier += kids
    return found


def _stat(pid: int) -> tuple[float, int]:
    """(CPU seconds of the process, its threads)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK, int(fields[17])
    except (OSError, ValueError, IndexError):
        return 0.0, 0



_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _private(pid: int) -> int:
    """The process's resident memory that is not shared with files (its heap, stacks, tensors):
    ``/proc/PID/statm``'s resident minus shared pages, cheap to read (a PSS is not: smaps_rollup
    walks the whole address space, tens of milliseconds for a process that imported torch)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            fields = f.read().split()
        return max(0, int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _tmp_full(pids: list[int], limits: Limits) -> bool:
    """Is the sandbox's /tmp or /dev/shm full (seen through a sandboxed process's root)?"""
    for pid in pids:  # a process outside the sandbox sees the machine's /tmp: too large
        for folder in ("tmp", "dev/shm"):
            try:
                st = os.statvfs(f"/proc/{pid}/root/{folder}")
            except OSError:
                continue
            size = st.f_blocks * st.f_frsize
            if 0 < size <= limits.tmp + MiB and st.f_bavail * st.f_frsize < 2 * st.f_frsize + 64 * KiB:
                return True
    return False


def error_kind(outputs: list) -> str | None:
    """The limit an error output names: MemoryError (RLIMIT_DATA), a full disk or too large a
    file (the tmpfs, RLIMIT_FSIZE), or None."""
    for out in outputs:
        if out.get("output_type") != "error":
            continue
        if out.get("ename") == "MemoryError":
            return "memory"
        if re.search(r"\[Errno (27|28)\]", str(out.get("evalue", ""))):
            return "tmp"
    return None


class Monitor:
    """Watches one kernel's tree while an exercise (or the setup) runs; stops it past a limit."""

    def __init__(self, limits: Limits, cgroups: Cgroups, token: str, mode: str):
        self.limits, self.cgroups, self.token, self.mode = limits, cgroups, token, mode
        self.tripped: str | None = None
        self.output_bytes = 0
        self._base = 0.0
        self._events = (0, 0)
        self._cpu_limit = limits.cpu
        self._dead_cpu = 0.0
        self._seen: dict[int, float] = {}
        self._active = False
        self._wall = float("inf")  # the exercise's wall-time limit, counted at the load's pace
        self._pace: Pace | None = None
        self._pids: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="limits")
        self._thread.start()

    # the tree's CPU time: the cgroup's, else live processes plus those that ended meanwhile
    def _cpu(self, pids: list[int]) -> float:
        cg = self.cgroups.cpu_seconds()
        if cg is not None:
            return cg
        now = {pid: _stat(pid)[0] for pid in pids}
        self._dead_cpu += sum(t for pid, t in self._seen.items() if pid not in now)
        self._seen = now
        return self._dead_cpu + sum(now.values())

    def begin(self, cpu: bool = True, wall: float | None = None) -> None:
        """Watch from now; ``wall``: the wall-time limit, each moment counted 1/stretch of
        itself (grader.limits.stretch: another submission's load does not use it up)."""
        with self._lock:
            self._wall = float("inf") if wall is None else wall
            self._pace = Pace(lambda: self._pids)
            self._cpu_limit = self.limits.cpu if cpu else float("inf")
            self.tripped, self.output_bytes = None, 0
            members = self.cgroups.members()
            self._base = self._cpu(tree(os.getpid()) if members is None else members)
            self._events = self.cgroups.events()
            self._active = True

    def end(self, outputs: list | None = None) -> str | None:
        """Stop watching; the limit hit since :meth:`begin` (``outputs``: the cells' outputs)."""
        self.check()
        with self._lock:
            self._active = False
            if self.tripped is None and outputs is not None:
                self.tripped = error_kind(outputs)
            return self.tripped

    def add_output(self, nbytes: int) -> bool:
        """Count ``nbytes`` of output; False once past the limit (the kernel is then stopped)."""
        self.output_bytes += nbytes
        if self.output_bytes > self.limits.output:
            self._trip("output")
            return False
        return True

    def _over(self) -> str | None:
        cg, lim = self.cgroups, self.limits
        pids = cg.members()
        pids = tree(os.getpid()) if pids is None else pids
        killed, refused = (now - then for now, then in zip(cg.events(), self._events))
        if killed or ("memory" not in cg.dirs and sum(_private(p) for p in pids) > lim.memory):
            return "memory"
        if refused or ("processes" not in cg.dirs
                       and sum(_stat(p)[1] for p in pids) > lim.processes):
            return "processes"
        if self._cpu(pids) - self._base > self._cpu_limit:
            return "cpu"
        self._pids = pids
        if self._pace is not None and self._pace.spent() > self._wall:
            return "time"
        if self.mode == "bwrap" and _tmp_full(pids, lim):
            return "tmp"
        return None

    def check(self) -> None:
        with self._lock:
            if not self._active or self.tripped:
                return
            kind = self._over()
        if kind:
            self._trip(kind)

    def _trip(self, kind: str) -> None:
        with self._lock:
            if self.tripped is None:
                self.tripped = kind
        for _ in range(3):  # the cgroup's members first: a fork loop's thousand are found at once
            for pid in self.cgroups.members() or []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        sandbox.kill_marked(self.token)
        for pid in tree(os.getpid()):
            sandbox.kill_tree(pid)

    def _loop(self) -> None:
        watched = {"memory", "processes", "cpu"} <= set(self.cgroups.dirs)
        while not self._stop.wait(POLL if watched else SLOW_POLL):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - a /proc race never stops the watch
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
