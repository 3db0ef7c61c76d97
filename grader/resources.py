"""Resource limits per submission: memory, the size of /tmp and /dev/shm, processes, CPU time
per exercise, and the size of the outputs kept.

Each limit is held by the strongest means this machine offers, and the report says which did
not hold (:func:`weak`):

- memory of the kernel and everything it starts: a memory cgroup (v1 or delegated v2) of the
  submission when one can be created (files in its /tmp and /dev/shm are charged to it too);
  else the monitor, which sums the private resident memory of the tree's processes every
  0.25 s, and RLIMIT_DATA at the limit on every process (not beside a cgroup: see :func:`shim`).
- /tmp and /dev/shm: the sandbox's tmpfs of that size each (bwrap ``--size``). Without the
  sandbox only one file's size is bounded (RLIMIT_FSIZE): not held.
- processes (tasks: processes and threads): a pids cgroup when one can be created; else the
  monitor's count (a fast fork loop may overshoot before it is stopped), and, when not root,
  RLIMIT_NPROC at the user's current count plus the limit.
- CPU time per exercise (every process of the tree, children included): the cgroup's CPU
  accounting when there is one, else the tree's times read from /proc by the monitor.
- outputs kept per exercise: counted as the kernel sends them (the monitor's ``add_output``).

Past a limit the monitor (:mod:`grader.monitor`) kills the kernel and everything it started;
the runner then scores that exercise 0 with the limit as the reason and restarts the kernel,
as for a timeout.

Owns: the limits' defaults and parsing, the kernel's limiting shim, and the cgroups of one
submission. Must not: run notebooks, watch processes, judge, or write reports.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from grader import sandbox

__all__ = ["KINDS", "Limits", "parse_size", "human", "shown", "Cgroups", "cgroup_name",
           "remove", "remove_stale", "shim", "weak"]

KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3
KINDS = ("memory", "tmp", "processes", "cpu", "output")


@dataclass(frozen=True)
class Limits:
    """One submission's limits (bytes, tasks, CPU seconds per exercise, bytes per exercise)."""
    memory: int = 4 * GiB
    tmp: int = 1 * GiB
    processes: int = 1024
    cpu: float = 300.0
    output: int = 4 * MiB

    def as_dict(self) -> dict:
        return asdict(self)


_UNITS = {"": 1, "b": 1, "k": KiB, "kb": 1000, "kib": KiB, "m": MiB, "mb": 1000 ** 2,
          "mib": MiB, "g": GiB, "gb": 1000 ** 3, "gib": GiB}


def parse_size(value: str | int) -> int:
    """``"2G"``, ``"300MiB"``, ``"1MB"``, ``"65536"`` -> bytes (K/M/G are binary)."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", str(value))
    if not found or found.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {value!r} (e.g. 2G, 300M, 1MB)")
    size = int(float(found.group(1)) * _UNITS[found.group(2).lower()])
    if size <= 0:
        raise ValueError(f"a size must be positive: {value!r}")
    return size


def human(n: float) -> str:
    """Bytes as the reports write them: ``2 GiB``, ``300 MiB``, ``1.5 KiB``, ``512 B``."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{int(n)} B"


def shown(kind: str, limits: Limits) -> str:
    """The value of one limit as the reports write it."""
    value = getattr(limits, kind)
    if kind == "processes":
        return str(value)
    if kind == "cpu":
        return f"{value:g} s"
    return human(value)


# --- cgroups -----------------------------------------------------------------------------------

def _own(controller: str) -> str | None:
    """This process's cgroup path in the v1 hierarchy of ``controller`` ("" for v2), or None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(",") or (controller == "" and names == ""):
            return path
    return None


def _made(folder: Path) -> bool:
    try:
        folder.mkdir()
        return True
    except OSError:
        return False


def _write(path: Path, value) -> bool:
    try:
        path.write_text(str(value))
        return True
    except OSError:
        return False


class Cgroups:
    """The cgroups of one submission (memory, pids, CPU accounting), where they can be made."""

    def __init__(self, name: str, limits: Limits):
        self.dirs: dict[str, Path] = {}
        self.v2 = False
        cap = limits.memory  # the tmpfs' pages are charged to it too
        if Path("/sys/fs/cgroup/cgroup.controllers").is_file():  # a pure v2 machine
            self._try("v2", Path("/sys/fs/cgroup"), _own(""), name,
                      {"memory.max": cap, "pids.max": limits.processes})
        else:
            for kind, controller, settings in (
                    ("memory", "memory", {"memory.limit_in_bytes": cap}),
                    ("processes", "pids", {"pids.max": limits.processes}),
                    ("cpu", "cpuacct", {})):
                self._try(kind, Path("/sys/fs/cgroup") / controller, _own(controller), name,
                          settings)

    def _try(self, kind: str, root: Path, own: str | None, name: str, settings: dict) -> None:
        folder = root / (own or "").lstrip("/") / name
        if own is None or not root.is_dir() or not _made(folder):
            return
        written = {file: _write(folder / file, value) for file, value in settings.items()}
        if kind != "v2":
            if all(written.values()):
                self.dirs[kind] = folder
            else:
                self._remove(folder)
            return
        self.v2 = True
        for part, file in (("memory", "memory.max"), ("processes", "pids.max"),
                           ("cpu", "cpu.stat")):
            if written.get(file, (folder / file).is_file()):
                self.dirs[part] = folder
        if not self.dirs:
            self._remove(folder)

    @property
    def procs(self) -> list[str]:
        """The ``cgroup.procs`` files a new kernel writes its pid to."""
        return sorted({str(folder / "cgroup.procs") for folder in self.dirs.values()})

    def _read(self, kind: str, file: str) -> str:
        try:
            return (self.dirs[kind] / file).read_text()
        except (KeyError, OSError):
            return ""

    def _field(self, kind: str, file: str, key: str) -> int:
        for line in self._read(kind, file).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
                return int(parts[1])
        return 0

    def members(self) -> list[int] | None:
        """The processes in the submission's cgroups (None without a cgroup)."""
        for folder in self.dirs.values():
            try:
                return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                continue
        return None

    def events(self) -> tuple[int, int]:
        """(processes killed at the memory cgroup's limit, forks refused at the pids cgroup's
        limit) so far: an exercise hit a limit when one grew while it ran."""
        return (self._field("memory", "memory.events" if self.v2 else "memory.oom_control",
                            "oom_kill"),
                self._field("processes", "pids.events", "max"))

    def cpu_seconds(self) -> float | None:
        if "cpu" not in self.dirs:
            return None
        if self.v2:
            return self._field("cpu", "cpu.stat", "usage_usec") / 1e6
        raw = self._read("cpu", "cpuacct.usage").strip()
        return int(raw) / 1e9 if raw.isdigit() else None

    @staticmethod
    def _remove(folder: Path) -> None:
        """Remove one cgroup: kill what is left in it and reap it (a zombie keeps it busy)."""
        for _ in range(100):
            try:
                folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                try:
                    for pid in (folder / "cgroup.procs").read_text().split():
                        sandbox.kill_tree(int(pid))
                except (OSError, ValueError):
                    pass
                sandbox.reap()
                time.sleep(0.05)

    def close(self) -> None:
        for folder in dict.fromkeys(self.dirs.values()):
            self._remove(folder)


def cgroup_name(grader_pid: int, token: str) -> str:
    """The cgroups' name of one submission: the grading process's pid, then the kernel's mark."""
    return f"labs-grade-{grader_pid}-{token}"


def _roots() -> list[Path]:
    return [Path("/sys/fs/cgroup") / c / (_own(c) or "/").lstrip("/")
            for c in ("memory", "pids", "cpuacct", "")]


def remove(name: str) -> None:
    """Remove the cgroups called ``name`` that a worker left (the grader's safety net)."""
    for root in _roots():
        if (root / name).is_dir():
            Cgroups._remove(root / name)  # noqa: SLF001 - the same removal


def remove_stale() -> None:
    """Remove the cgroups of earlier graders that were killed (``labs-grade-<pid>-*`` whose
    grading process is gone); a running grader's are kept."""
    for root in _roots():
        try:
            folders = [f for f in root.glob("labs-grade-*-*") if f.is_dir()]
        except OSError:
            continue
        for folder in folders:
            pid = folder.name.split("-")[2]
            if not pid.isdigit():
                continue
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                Cgroups._remove(folder)  # noqa: SLF001 - the same removal
            except PermissionError:  # another user's grader, alive
                pass


# --- the kernel's shim -------------------------------------------------------------------------

#: Put in front of the kernel's command: joins the cgroups, sets the rlimits, then execs.
SHIM = ("import json,os,resource,sys\n"
        "c=json.loads(sys.argv[1])\n"
        "for p in c['procs']:\n"
        " try:\n  with open(p,'w') as f:f.write(str(os.getpid()))\n"
        " except OSError:pass\n"
        "for n,v in c['rlimits']:\n"
        " try:resource.setrlimit(getattr(resource,n),(v,v))\n"
        " except (OSError,ValueError):pass\n"
        "os.execvp(sys.argv[2],sys.argv[2:])")


def _user_tasks() -> int:
    uid, total = os.getuid(), 0
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == uid:
                total += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return total


def shim(limits: Limits, cgroups: Cgroups, mode: str) -> list[str]:
    """The command prefix that limits the kernel (and, inherited, all it starts)."""
    # A process's data segment only where no memory cgroup holds the whole tree: under both, a
    # kernel that holds memory while its ranks start aborts in glibc ("cannot allocate memory
    # for thread-local data") -- a death no report can name -- where the cgroup would have
    # killed one process and counted it (issue 40: the memory limit is named).
    rlimits = [] if "memory" in cgroups.dirs else [("RLIMIT_DATA", int(limits.memory))]
    if mode != "bwrap":
        rlimits.append(("RLIMIT_FSIZE", int(limits.tmp)))
    if "processes" not in cgroups.dirs and os.geteuid() != 0:
        rlimits.append(("RLIMIT_NPROC", _user_tasks() + int(limits.processes)))
    config = json.dumps({"procs": cgroups.procs, "rlimits": rlimits})
    return [sys.executable, "-c", SHIM, config]


def weak(mode: str, cgroups: Cgroups) -> list[str]:
    """The limits that do not fully hold here: ``tmp`` without the sandbox, ``memory`` and
    ``processes`` without their cgroup (then only polled, and a fast burst may overshoot)."""
    out = []
    if "memory" not in cgroups.dirs:
        out.append("memory")
    if mode != "bwrap":
        out.append("tmp")
    if "processes" not in cgroups.dirs:
        out.append("processes")
    return out
