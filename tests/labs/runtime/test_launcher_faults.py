"""The launcher under what real kernels do to it: processes a rank starts, interrupts at any
moment, a helper (forkserver) that dies or freezes, killed kernels, threads, odd errors, a
full or unwritable temporary folder. Each test here failed before its fix (issue 12).

The messages are checked in English (LABS_LANG=en); a few in Chinese too, the course default."""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch.distributed as dist

import labs
from labs import messages
from labs.messages import text
from tests.support.messages import found_in, opening, pattern, said
from labs.runtime import forkserver as _forkserver
from labs.runtime import launcher
from labs.runtime import processes as _processes
from test_launcher import (ROOT, WRITE_PID, interrupt_sleeping_cell, launcher_tmpdirs,
                           record_pid, recorded_pids, run_script, wait_for_pids,
                           wait_until_gone, write_pid)

pytestmark = [pytest.mark.slow, pytest.mark.leaves_a_core]  # tests/support/early.py


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """The launcher's messages in English, here and in what this test starts."""
    monkeypatch.setenv(messages.LANG_ENV, "en")


def signal_helper_once_ranks_run(pid_dir, n: int, signum) -> threading.Thread:
    """A started thread that sends ``signum`` to the forkserver once ``n`` ranks recorded
    their pids in ``pid_dir``."""
    server = _forkserver.SERVER.pid

    def send():
        if len(wait_for_pids(pid_dir, n)) == n:
            os.kill(server, signum)

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def quick():
    return dist.get_rank()


# --- processes a rank starts end with the launch ----------------------------------------

def start_children_then(pid_dir, then):
    """Start a sleeping subprocess, a pool of two workers and a process in a new session;
    record all their pids; then return, raise or hang."""
    import subprocess as sp
    rank = dist.get_rank()
    popen = sp.Popen(["sleep", "120"])
    detached = sp.Popen(["sleep", "120"], start_new_session=True)
    pool = multiprocessing.get_context("fork").Pool(2)
    pool.apply_async(time.sleep, (120,))
    pids = [popen.pid, detached.pid] + [w.pid for w in pool._pool]
    write_pid(pid_dir, f"children{rank}.pid", " ".join(map(str, pids)))
    dist.barrier()
    if then == "raise":
        raise RuntimeError("planted failure after starting children")
    if then == "hang" and rank == 1:
        time.sleep(120)
    return rank


def children_pids(pid_dir) -> list[int]:
    return [int(p) for f in Path(pid_dir).glob("children*.pid") for p in f.read_text().split()]


@pytest.mark.parametrize("then", ["return", "raise", "hang"])
def test_processes_started_by_a_rank_end_with_the_launch(tmp_path, then):
    with contextlib.suppress(labs.LaunchError):
        # 4 s (it was 8, the hang waits it out): every child recorded in time, each of 3 tries
        # with three busy loops beside it
        labs.launch(start_children_then, 2, args=(str(tmp_path), then), timeout=4)
    pids = children_pids(tmp_path)
    assert len(pids) == 2 * 4
    assert wait_until_gone(pids, 3) == []


# --- interrupts at any moment -------------------------------------------------------------

INTERRUPT_LOOP = """
    import os, random, signal, sys, tempfile, threading, time
    import labs
    from labs.runtime import forkserver as _forkserver
    from labs.runtime import processes as _processes

    def sleeper():
        time.sleep(60)

    def quick():
        return 1

    assert labs.launch(quick, 2) == [1, 1]  # warm: the helper is running
    server = _forkserver.SERVER.pid
    rng = random.Random(int(sys.argv[1]))
    for i in range(int(sys.argv[2])):
        first, gap = rng.uniform(0.0, 0.4), rng.uniform(0.0, 0.02)

        def interrupt_twice():
            time.sleep(first)
            os.killpg(0, signal.SIGINT)  # like Ctrl-C in a terminal or Jupyter: the group
            time.sleep(gap)
            os.killpg(0, signal.SIGINT)

        t = threading.Thread(target=interrupt_twice)
        t.start()
        try:
            try:
                labs.launch(sleeper, 4, timeout=60)
                raise SystemExit(f"iteration {i}: the launch was not interrupted")
            except KeyboardInterrupt:
                pass
            t.join()
        except KeyboardInterrupt:
            t.join()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            ranks = [p for p in _processes.descendants(server) if _processes.alive(p)]
            if not ranks:
                break
            time.sleep(0.02)
        assert not ranks, f"iteration {i} ({first:.3f}+{gap:.3f} s): ranks {ranks} still run"
        folders = [n for n in os.listdir(tempfile.gettempdir())
                   if n.startswith(f"labs-launch-{os.getpid()}-")]
        assert not folders, f"iteration {i}: run folders left: {folders}"
        assert _forkserver.SERVER.pid == server and _processes.alive(server), (
            f"iteration {i} ({first:.3f}+{gap:.3f} s): the helper was killed")
        assert labs.launch(quick, 2) == [1, 1], f"iteration {i}: the next launch failed"
    print("ALL OK")
"""


def test_double_interrupts_at_random_moments_leave_nothing_behind():
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(INTERRUPT_LOOP), "12", "16"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          start_new_session=True)  # its own group: the SIGINTs stay there
    assert proc.returncode == 0 and "ALL OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


def test_double_interrupt_in_a_jupyter_kernel(tmp_path):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
    try:
        def run(code, timeout=120):
            reply = kc.execute_interactive(code, timeout=timeout, output_hook=lambda m: None)
            return reply["content"]

        assert run("import labs, time, os, torch.distributed as dist\n"
                   "assert labs.launch(lambda: 1, 2) == [1, 1]")["status"] == "ok"
        pid_dir = tmp_path / "pids"
        pid_dir.mkdir()
        interrupt_sleeping_cell(km, kc, pid_dir, interrupts=2, gap_s=0.01)
        again = run("print(labs.launch(lambda: 2, 4))")
        if again["status"] == "aborted":  # ipykernel dropped it unrun, still aborting after the
            again = run("print(labs.launch(lambda: 2, 4))")  # interrupt (seen on a loaded box)
        assert again["status"] == "ok", again
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# --- the helper (forkserver) dies or freezes ----------------------------------------------

def sleeper(pid_dir):
    record_pid(pid_dir)
    time.sleep(60)


def test_helper_killed_mid_run_is_told_truthfully_and_ranks_stop(tmp_path):
    labs.launch(quick, 2)
    server = _forkserver.SERVER.pid
    killer = signal_helper_once_ranks_run(tmp_path, 2, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(launcher.HelperError) as info:
        labs.launch(sleeper, 2, args=(str(tmp_path),), timeout=60)
    killer.join()
    assert time.monotonic() - start < 20
    message = str(info.value)
    found_in(message, "runtime.helper_killed_during_run", pid=server, signal="SIGKILL")
    assert "SIGKILL" in message and "exited with code 255" not in message
    assert wait_until_gone(recorded_pids(tmp_path), 2) == []
    assert labs.launch(quick, 2) == [0, 1]  # a fresh helper
    assert _forkserver.SERVER.pid != server


def test_frozen_helper_cannot_block_past_the_timeout():
    labs.launch(quick, 2)
    server = _forkserver.SERVER.pid
    os.kill(server, signal.SIGSTOP)
    try:
        start = time.monotonic()
        with pytest.raises(launcher.HelperError, match=pattern("runtime.helper_no_answer")):
            labs.launch(quick, 2, timeout=2)
        assert time.monotonic() - start < 2 + 5
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGCONT)
    assert not _processes.alive(server)  # it was ended, not left frozen
    assert labs.launch(quick, 2) == [0, 1]


def test_a_helper_slowed_by_a_busy_machine_is_not_taken_for_a_frozen_one(monkeypatch):
    """A rank's start counts at the pace the machine allows the helper (labs.runtime.load): here
    the machine is full (16 tasks ready to run on its cores, the helper one of them, so each
    second counts 1/8) and the helper is held for 1.5 s -- 0.19 s counted, within 1 s."""
    from labs.runtime import load as _load

    labs.launch(quick, 2)
    server = _forkserver.SERVER.pid
    monkeypatch.setattr(_load, "machine_runnable", lambda: 16)
    monkeypatch.setattr(_load, "runnable", lambda pids: 1 if list(pids) else 0)
    monkeypatch.setattr(_load, "_cores", lambda: 2)
    os.kill(server, signal.SIGSTOP)
    later = threading.Timer(1.5, os.kill, (server, signal.SIGCONT))
    later.start()
    try:
        assert labs.launch(quick, 2, timeout=1) == [0, 1]
    finally:
        later.join()
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGCONT)
    assert _forkserver.SERVER.pid == server  # the same helper: it was not stopped


def test_helper_frozen_mid_run_still_returns_within_the_timeout(tmp_path):
    labs.launch(quick, 2)
    server = _forkserver.SERVER.pid

    def short(pid_dir):
        record_pid(pid_dir)
        time.sleep(1.0)
        return dist.get_rank()

    t = signal_helper_once_ranks_run(tmp_path, 2, signal.SIGSTOP)
    start = time.monotonic()
    try:
        assert labs.launch(short, 2, args=(str(tmp_path),), timeout=10) == [0, 1]
    finally:
        t.join()
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGCONT)
    assert time.monotonic() - start < 10 + 5
    assert labs.launch(quick, 2) == [0, 1]


KILLED_KERNEL = """
    import os, time, labs, torch.distributed as dist
    def sleeper(pid_dir):
        write_pid(pid_dir, f"{{dist.get_rank()}}.pid", str(os.getpid()))
        time.sleep(120)
    labs.launch(sleeper, 2, args=({pid_dir!r},), timeout=120)
"""


def test_killed_kernel_leaves_no_run_or_socket_folder_after_next_launch(tmp_path):
    root = Path(tempfile.gettempdir())
    pymp_before = set(root.glob("pymp-*"))
    proc = subprocess.Popen([sys.executable, "-c", "import os\n" + WRITE_PID + textwrap.dedent(
                                KILLED_KERNEL.format(pid_dir=str(tmp_path)))],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pids = wait_for_pids(tmp_path, 2)
        assert len(pids) == 2
        left = set(root.glob(f"labs-launch-{proc.pid}-*")) | set(root.glob(f"labs-mp-{proc.pid}-*"))
        assert len(left) == 2  # its run folder (pickled arguments) and its socket folder
    finally:
        proc.kill()
        proc.wait()
    assert wait_until_gone(pids, 5) == []  # the ranks noticed their launcher is gone
    assert all(p.exists() for p in left)
    labs.launch(quick, 2)  # the next launch sweeps what the dead one left
    assert not any(p.exists() for p in left)
    assert set(root.glob("pymp-*")) <= pymp_before


def test_shutdown_also_sweeps_folders_of_dead_launchers(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"labs-launch-{dead.pid}-"))
    (stale / "task.pkl").write_bytes(b"pickled arguments")
    mine = Path(tempfile.mkdtemp(prefix=f"labs-launch-{os.getpid()}-"))
    try:
        launcher.shutdown()
        assert not stale.exists() and mine.exists()  # only folders of dead processes go
    finally:
        mine.rmdir()


# --- no global side effects ---------------------------------------------------------------

THREADS = """
    import multiprocessing as mp, threading
    from multiprocessing import forkserver, spawn
    import labs, torch.distributed as dist

    original = spawn.get_preparation_data
    def work(k):
        return k * 10 + dist.get_rank()
    results, errors = {}, []
    def one(k):
        try:
            results[k] = labs.launch(work, 2, args=(k,), timeout=60)
        except BaseException as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=one, args=(k,)) for k in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors, errors
    assert results == {k: [k * 10, k * 10 + 1] for k in range(4)}, results
    assert spawn.get_preparation_data is original, "multiprocessing left patched"
    assert forkserver._forkserver._preload_modules == ["__main__"], "global forkserver changed"
    with mp.get_context("spawn").Pool(1) as pool:
        assert pool.map(abs, [-1, -2]) == [1, 2]
    print("ALL OK")
"""


def test_launches_from_threads_leave_multiprocessing_as_it_was():
    proc = run_script(THREADS, timeout=180)
    assert proc.returncode == 0 and "ALL OK" in proc.stdout, proc.stdout + proc.stderr[-3000:]


# --- every error names its cause and its place ----------------------------------------------

@pytest.mark.parametrize("timeout", [math.inf, 1e15, math.nan, -1])
def test_timeouts_that_cannot_end_are_refused(timeout):
    with pytest.raises(ValueError, match=pattern("runtime.timeout_out_of_range", most=86400)):
        labs.launch(quick, 2, timeout=timeout)


def test_bad_rank_limit_variable_is_named(monkeypatch):
    monkeypatch.setenv("LABS_MAX_WORLD_SIZE", "abc")
    with pytest.raises(ValueError, match=pattern("runtime.max_world_size_not_a_number", value="abc")):
        labs.launch(quick, 2)


def _explode():
    raise ImportError("this class exists only on the ranks")


class LoadsNowhere:
    def __reduce__(self):
        return (_explode, ())


def returns_unloadable():
    return LoadsNowhere() if dist.get_rank() == 1 else "fine"


def test_result_that_cannot_be_loaded_names_the_rank():
    with pytest.raises(labs.LaunchError, match=pattern("runtime.result_unloadable", rank=1, world_size=2,
                                                       exc_type="ImportError")):
        labs.launch(returns_unloadable, 2)


class StrRaises(Exception):
    def __str__(self):
        raise RuntimeError("str() is broken too")


def raises_odd_exception():
    if dist.get_rank() == 0:
        raise StrRaises()
    dist.barrier()


def test_exception_whose_str_raises_is_still_that_ranks_exception():
    with pytest.raises(labs.RankError) as info:
        labs.launch(raises_odd_exception, 2, timeout=30)
    assert info.value.rank == 0 and info.value.exc_type == "StrRaises"
    found_in(info.value, "runtime.rank_raised", rank=0, world_size=2, message="StrRaises")


def test_in_chinese_the_rank_and_the_launcher_both_say_it_in_chinese(monkeypatch):
    monkeypatch.setenv(messages.LANG_ENV, "zh")
    with pytest.raises(labs.RankError) as info:
        labs.launch(raises_odd_exception, 2, timeout=30)
    message = str(info.value)
    zh = dict(lang="zh")
    raised = text("runtime.rank_raised", **zh, rank=0, world_size=2, message="StrRaises: " + text(
        "runtime.str_failed", **zh, type="RuntimeError"))
    assert message.startswith(raised), message  # the launcher's words, then the rank's
    assert text("runtime.others_stopped", **zh, others=1) in message


def test_nearly_full_temp_folder_is_named_before_starting(monkeypatch):
    monkeypatch.setattr(_processes, "free_bytes", lambda path: 2**20)
    for lang in ("en", "zh"):
        monkeypatch.setenv(messages.LANG_ENV, lang)
        with pytest.raises(labs.LaunchError) as info:
            labs.launch(quick, 2)
        fix = said(info.value, "runtime.temp_folder_full", lang=lang,
                   folder=tempfile.gettempdir(), free_mib=1.0)["fix"]
        assert fix, info.value  # what to do: make room there, or another TMPDIR


@contextlib.contextmanager
def tmpfs(path: Path, options: str):
    """A small tmpfs at ``path`` (root on Linux only; skipped where it cannot be mounted)."""
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                             capture_output=True).returncode == 0 if os.geteuid() == 0 else False
    if not mounted:
        pytest.skip("needs root to mount a small tmpfs (CI runs as root)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_full_temp_folder_is_named(tmp_path, monkeypatch):
    with tmpfs(tmp_path / "full", "size=256k") as folder:
        with contextlib.suppress(OSError):  # fill it up
            with open(folder / "filler", "wb") as f:
                while True:
                    f.write(b"\0" * 65536)
        monkeypatch.setattr(tempfile, "tempdir", str(folder))
        with pytest.raises(labs.LaunchError, match=pattern("runtime.temp_folder_full", folder=folder)):
            labs.launch(quick, 2)  # refused before starting: too little free space
        monkeypatch.setattr(_processes, "MIN_FREE_BYTES", 0)
        with pytest.raises(labs.LaunchError) as info:
            labs.launch(quick, 2)  # the write itself fails
        where = found_in(info.value, "runtime.run_folder_full")
        assert where["path"].startswith(str(folder)), where


def test_read_only_temp_folder_is_named(tmp_path, monkeypatch):
    with tmpfs(tmp_path / "ro", "size=64m,ro") as folder:
        monkeypatch.setattr(tempfile, "tempdir", str(folder))
        with pytest.raises(labs.LaunchError) as info:
            labs.launch(quick, 2)
        where = found_in(info.value, "runtime.run_folder_not_writable")
        assert where["path"].startswith(str(folder)), where


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_doctor_reports_a_missing_temp_folder_instead_of_crashing(monkeypatch, lang):
    monkeypatch.setenv(messages.LANG_ENV, lang)
    proc = run_script("""
        import sys, tempfile
        tempfile._candidate_tempdir_list = lambda: ["/nonexistent-labs-tmp"]
        tempfile.tempdir = None
        from labs.runtime.doctor import doctor
        sys.exit(0 if doctor() else 1)
    """)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    none, problems = (text(key, lang=lang) for key in ("doctor.temp_folder_none", "doctor.problems"))
    problem = opening("runtime.no_temp_folder", lang=lang)
    assert f"{none}\n\n{problems}\n- {problem}" in proc.stdout, proc.stdout
    assert "TMPDIR" in proc.stdout
