"""Rank sizing honours container limits: cgroup v2 and v1 CPU quotas and memory limits, read from
synthetic cgroup files (labs.runtime.host), and Windows gets one sentence instead of a raw error."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from labs import messages
from labs.runtime import doctor, host, launcher, rank
from labs.runtime.errors import LaunchError

GIB = 2**30


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content + "\n")
    return root


def _v2(root: Path, cpu_max: str = "max 100000", memory_max: str = "max",
        current: int = 0, inactive: int = 0, meminfo_gib: int = 64) -> Path:
    return _write(root, {
        "proc/self/cgroup": "0::/",
        "proc/meminfo": f"MemTotal: {128 * GIB // 1024} kB\nMemAvailable: {meminfo_gib * GIB // 1024} kB",
        "sys/fs/cgroup/cgroup.controllers": "cpu memory",
        "sys/fs/cgroup/cpu.max": cpu_max,
        "sys/fs/cgroup/memory.max": memory_max,
        "sys/fs/cgroup/memory.current": str(current),
        "sys/fs/cgroup/memory.stat": f"anon 1\ninactive_file {inactive}\nactive_file 5",
    })


def _v1(root: Path, quota: int = -1, period: int = 100000, limit: int = 9223372036854771712,
        usage: int = 0, inactive: int = 0, cgroup_path: str = "/docker/abc123") -> Path:
    return _write(root, {
        "proc/self/cgroup": (f"12:memory:{cgroup_path}\n4:cpu,cpuacct:{cgroup_path}\n"
                             f"3:cpuset:{cgroup_path}\n1:name=systemd:{cgroup_path}"),
        "proc/meminfo": f"MemAvailable: {64 * GIB // 1024} kB",
        # inside a container the host's path is not there: the limits sit at the mount point
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": str(quota),
        "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": str(period),
        "sys/fs/cgroup/memory/memory.limit_in_bytes": str(limit),
        "sys/fs/cgroup/memory/memory.usage_in_bytes": str(usage),
        "sys/fs/cgroup/memory/memory.stat": f"cache 7\ntotal_inactive_file {inactive}",
    })


def test_v2_cpu_quota(tmp_path):
    assert host.cpu_quota(_v2(tmp_path, cpu_max="150000 100000")) == 1.5
    assert host.cpu_quota(_v2(tmp_path, cpu_max="max 100000")) is None


def test_v2_cpu_quota_cuts_the_core_count(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert host.cpu_count(_v2(tmp_path / "a", cpu_max="200000 100000")) == 2
    assert host.cpu_count(_v2(tmp_path / "b", cpu_max="50000 100000")) == 1
    assert host.cpu_count(_v2(tmp_path / "c", cpu_max="max 100000")) == 16
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert host.cpu_count(_v2(tmp_path / "d", cpu_max="800000 100000")) == 2


def test_v2_nested_cgroup_takes_the_tightest_limit(tmp_path):
    root = _v2(tmp_path, cpu_max="400000 100000")
    _write(root, {"proc/self/cgroup": "0::/user.slice/job", "sys/fs/cgroup/user.slice/job/cpu.max":
                  "max 100000", "sys/fs/cgroup/user.slice/cpu.max": "300000 100000"})
    assert host.cpu_quota(root) == 3.0


def test_v2_memory_limit(tmp_path):
    root = _v2(tmp_path, memory_max=str(4 * GIB), current=3 * GIB, inactive=GIB)
    assert host.memory_limit(root) == (4 * GIB, 2 * GIB)  # the inactive page cache is reclaimable
    assert host.available_memory_bytes(root) == 2 * GIB  # not the host's 64 GiB
    assert host.memory_limit(_v2(tmp_path / "none", memory_max="max")) is None
    assert host.available_memory_bytes(tmp_path / "none") == 64 * GIB


def test_v1_cpu_quota_and_no_quota(tmp_path):
    assert host.cpu_quota(_v1(tmp_path / "a", quota=250000, period=100000)) == 2.5
    assert host.cpu_quota(_v1(tmp_path / "b", quota=-1)) is None


def test_v1_memory_limit_and_unlimited(tmp_path):
    root = _v1(tmp_path / "a", limit=2 * GIB, usage=GIB + 512 * 2**20, inactive=512 * 2**20)
    assert host.memory_limit(root) == (2 * GIB, GIB)
    assert host.available_memory_bytes(root) == GIB
    assert host.memory_limit(_v1(tmp_path / "b")) is None  # 9223372036854771712: no limit


def test_v1_cgroup_found_at_its_own_path(tmp_path):
    root = _v1(tmp_path, quota=-1)
    _write(root, {"sys/fs/cgroup/cpu,cpuacct/docker/abc123/cpu.cfs_quota_us": "100000",
                  "sys/fs/cgroup/cpu,cpuacct/docker/abc123/cpu.cfs_period_us": "100000"})
    assert host.cpu_quota(root) == 1.0


def test_no_cgroup_files_means_no_limit(tmp_path):
    assert host.cpu_quota(tmp_path) is None and host.memory_limit(tmp_path) is None
    assert host.available_memory_bytes(tmp_path) is None


def test_the_launcher_sizes_ranks_from_the_container(tmp_path, monkeypatch):
    root = _v2(tmp_path, cpu_max="100000 100000", memory_max=str(GIB))
    real_cpu, real_mem = host.cpu_count, host.available_memory_bytes
    monkeypatch.setattr(host, "cpu_count", lambda root_=root: real_cpu(root_))
    monkeypatch.setattr(host, "available_memory_bytes", lambda root_=root: real_mem(root_))
    monkeypatch.delenv("LABS_MAX_WORLD_SIZE", raising=False)
    monkeypatch.delenv("LABS_THREADS_PER_RANK", raising=False)
    assert rank.cpu_count() == 1
    assert rank.threads_per_rank(4) == 1
    assert launcher.available_memory_bytes() == GIB
    assert launcher.max_world_size() == GIB // launcher.RANK_MEMORY_BYTES  # 4, not 8 or more


@pytest.mark.parametrize("lang", messages.LANGUAGES)
@pytest.mark.parametrize("attribute, value", [("platform", "win32"), ("name", "nt")])
def test_windows_gets_one_sentence(monkeypatch, lang, attribute, value):
    monkeypatch.setenv(messages.LANG_ENV, lang)
    monkeypatch.setattr(sys if attribute == "platform" else os, attribute, value)
    expected = messages.text("runtime.windows")
    assert "WSL2" in expected and "Codespaces" in expected and expected.count("\n") == 0
    with pytest.raises(LaunchError) as launched:
        launcher.launch(print, 2)
    with pytest.raises(LaunchError) as setup_cell:
        doctor.environment(world_size=2)
    monkeypatch.undo()
    assert str(launched.value) == str(setup_cell.value) == expected
