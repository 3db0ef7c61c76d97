"""What the host gives the ranks: CPU cores and memory within container limits, and whether this
platform can run ranks at all.

Owns: reading the calling process's container limits from cgroup v2 (``cpu.max``,
``memory.max`` and ``memory.current``) and cgroup v1 (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``,
``memory.limit_in_bytes`` and ``memory.usage_in_bytes``), next to ``sched_getaffinity`` and
``/proc/meminfo``; every reader takes a ``root`` folder that stands for ``/``, so tests pass
synthetic cgroup files. Also the one-sentence refusal on Windows (WSL2, Codespaces or a hosted
notebook instead of a raw error from the forkserver).

Must not: import torch, or decide how many ranks or threads to use (``labs.runtime.rank`` and
``labs.runtime.launcher`` do, from the numbers here).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

from labs.messages import text
from labs.runtime.errors import LaunchError

__all__ = ["cpu_quota", "cpu_count", "memory_limit", "available_memory_bytes",
           "require_supported_platform"]

# cgroup v1 writes "no limit" as a huge page-aligned number (2**63 rounded down to a page).
_UNLIMITED = 2**60


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, ValueError):
        return None


def _cgroup_dirs(root: Path, controller: str) -> list[Path]:
    """The folders holding this process's cgroup settings for ``controller`` ("cpu" or
    "memory"), innermost first, up to the mount point (a limit on any of them applies)."""
    lines = (_read(root / "proc/self/cgroup") or "").splitlines()
    mounts = root / "sys/fs/cgroup"
    found: list[tuple[Path, str]] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "" and parts[0] == "0":  # cgroup v2: one unified hierarchy
            hybrid = not (mounts / "cgroup.controllers").exists() and (mounts / "unified").is_dir()
            found.append((mounts / "unified" if hybrid else mounts, path))
        elif controller in controllers.split(","):  # cgroup v1: one hierarchy per controller
            for name in (controllers, controller, "cpu,cpuacct" if controller == "cpu" else ""):
                if name and (mounts / name).is_dir():
                    found.append((mounts / name, path))
                    break
    dirs: list[Path] = []
    for mount, path in found:
        relative = Path(path.lstrip("/"))
        # In a container the path names the host's cgroup, but the container sees its own at
        # the mount point: try the path and its parents, then the mount point itself.
        for candidate in [relative, *relative.parents]:
            folder = mount / candidate
            if folder.is_dir() and folder not in dirs:
                dirs.append(folder)
    return dirs


def cpu_quota(root: str | os.PathLike = "/") -> float | None:
    """The CPUs the container may use (e.g. 1.5), or None when there is no CPU limit."""
    quotas = []
    for folder in _cgroup_dirs(Path(root), "cpu"):
        v2 = _read(folder / "cpu.max")
        if v2:
            quota, _, period = v2.partition(" ")
            if quota != "max" and quota.isdigit() and period.isdigit() and int(period) > 0:
                quotas.append(int(quota) / int(period))
            continue
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if quota and period and quota.lstrip("-").isdigit() and period.isdigit():
            if int(quota) > 0 and int(period) > 0:
                quotas.append(int(quota) / int(period))
    return min(quotas) if quotas else None


def cpu_count(root: str | os.PathLike = "/") -> int:
    """CPU cores this process may use: its affinity mask, cut to the container's CPU quota
    (rounded down, at least 1)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    quota = cpu_quota(root)
    if quota is not None:
        cores = min(cores, max(1, math.floor(quota + 1e-9)))
    return max(1, cores)


def _stat(folder: Path, key: str) -> int:
    for line in (_read(folder / "memory.stat") or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def memory_limit(root: str | os.PathLike = "/") -> tuple[int, int] | None:
    """(limit, in use) in bytes for the container's memory, or None when it has no limit.
    "In use" leaves out the inactive page cache the kernel reclaims (as ``docker stats``)."""
    best = None
    for folder in _cgroup_dirs(Path(root), "memory"):
        limit, usage, cache = _read(folder / "memory.max"), _read(folder / "memory.current"), \
            _stat(folder, "inactive_file")
        if limit is None:  # cgroup v1
            limit, usage = _read(folder / "memory.limit_in_bytes"), \
                _read(folder / "memory.usage_in_bytes")
            cache = _stat(folder, "total_inactive_file")
        if not limit or not limit.isdigit() or int(limit) >= _UNLIMITED:
            continue
        used = max(0, int(usage) - cache) if usage and usage.isdigit() else 0
        if best is None or int(limit) - used < best[0] - best[1]:
            best = (int(limit), used)
    return best


def available_memory_bytes(root: str | os.PathLike = "/") -> int | None:
    """Memory a new process can use: MemAvailable on Linux (free pages alone would miss the
    page cache the kernel gives back), at most what the container's limit leaves; else half of
    the physical memory; None if unknown."""
    available = None
    for line in (_read(Path(root) / "proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            available = int(line.split()[1]) * 1024
    if available is None and Path(root) == Path("/"):
        try:
            available = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
        except (ValueError, OSError, AttributeError):
            available = None
    limited = memory_limit(root)
    if limited is not None:
        left = max(0, limited[0] - limited[1])
        available = left if available is None else min(available, left)
    return available


def require_supported_platform() -> None:
    """Refuse Windows in one sentence (ranks need fork, Unix sockets and POSIX signals)."""
    if os.name == "nt" or sys.platform == "win32":
        raise LaunchError(text("runtime.windows"))
