"""What the launcher needs from the operating system, kept free of torch so that it works
even where torch cannot be imported (``python -m labs doctor`` uses it first).

- Ending a rank and everything it started: a rank leads its own process group and, on Linux,
  is a child subreaper, so a ``subprocess.Popen`` or a multiprocessing pool it started -- or
  a grandchild whose parent already exited -- stays findable from the rank's pid.
- Telling a running process from a finished one (a zombie counts as finished).
- The temporary folder: whether there is a usable one with room for run folders, and
  sweeping the run folders of launching processes that died (a killed or restarted kernel
  cannot clean up after itself; the next launch or ``labs.runtime.shutdown()`` does).

Owns: process groups of the OS, liveness and the temporary folder. Must not: import torch (the
doctor uses it where torch is missing), or import labs' course modules (models, parallelism
packages, planner, checks) or the grader: the runtime sits below everything.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import sys
import tempfile

from labs.messages import text
from labs.runtime.errors import LaunchError

__all__ = ["lead_own_group_and_adopt_orphans", "alive", "descendants", "kill_descendants",
           "kill_group", "kill_rank", "temp_folder", "require_free_space", "free_bytes",
           "temp_folder_error", "sweep_stale_folders", "HeldInterrupts", "interrupts_held",
           "MIN_FREE_BYTES"]

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
# A launch writes a few small files per rank (output, store, results); below this much free
# space, ranks would fail in obscure ways (a FileStore write failing inside C++).
MIN_FREE_BYTES = 16 * 2**20
RUN_PREFIX = "labs-launch-"       # + "<pid of the launching process>-<random>"
SERVER_PREFIX = "labs-mp-"        # the forkserver's socket folder, same naming


# --- processes ---------------------------------------------------------------------------

def lead_own_group_and_adopt_orphans() -> None:
    """Called first in a rank: its own process group, and (Linux) a subreaper, so that
    nothing it starts can slip out of reach when its parent exits."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        pass  # no /proc (macOS): ask the kernel instead
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _parent_pids() -> dict[int, int]:
    """pid -> parent pid of every process, from /proc (empty where there is no /proc)."""
    parents = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parents[int(name)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` in the process tree (Linux; [] elsewhere)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parent_pids().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def kill_descendants(pid: int) -> None:
    """SIGKILL everything below ``pid``; look again in case one forked meanwhile."""
    for _ in range(3):
        found = descendants(pid)
        if not found:
            return
        for child in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)


def kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` if it still has members (a rank's group is its pid)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pgid, signal.SIGKILL)


def kill_rank(pid: int) -> None:
    """End a running rank and everything it started.

    The rank is stopped first so that it cannot start more while its tree is walked; its
    descendants go before it, since after its death they would be adopted by init.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGSTOP)
    kill_descendants(pid)
    kill_group(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


# --- the temporary folder -----------------------------------------------------------------

def _how_to_fix() -> str:
    return text("runtime.temp_how_to_fix")


def temp_folder() -> str:
    """The folder for run folders; a LaunchError that says what to do if it is unusable."""
    try:
        root = tempfile.gettempdir()
    except FileNotFoundError as exc:
        raise LaunchError(text("runtime.no_temp_folder", reason=exc.strerror or exc,
                               fix=_how_to_fix())) from None
    require_free_space(root)
    return root


def require_free_space(folder: str) -> None:
    """A LaunchError naming ``folder`` if it has less than MIN_FREE_BYTES free."""
    free = free_bytes(folder)
    if free is not None and free < MIN_FREE_BYTES:
        raise LaunchError(text("runtime.temp_folder_full", folder=folder, free_mib=free / 2**20,
                               need_mib=MIN_FREE_BYTES // 2**20, fix=_how_to_fix()))


def free_bytes(path: str) -> int | None:
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def temp_folder_error(path: str, exc: OSError) -> LaunchError:
    """Turn an OSError while writing a run folder into an error that names the place."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return LaunchError(text("runtime.run_folder_full", path=path, fix=_how_to_fix()))
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return LaunchError(text("runtime.run_folder_not_writable", path=path, fix=_how_to_fix()))
    return LaunchError(text("runtime.run_folder_write_failed", path=path,
                            reason=exc.strerror or exc, fix=_how_to_fix()))


def sweep_stale_folders(root: str | None = None) -> list[str]:
    """Remove run and forkserver folders whose launching process is gone; return them.

    A folder's name carries the pid of the process that made it; a kernel killed in the
    middle of a launch leaves its folder (with the pickled arguments) behind.
    """
    try:
        root = root or tempfile.gettempdir()
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        prefix = next((p for p in (RUN_PREFIX, SERVER_PREFIX) if name.startswith(p)), None)
        if prefix is None:
            continue
        owner = name[len(prefix):].split("-", 1)[0]
        if not owner.isdigit() or int(owner) == os.getpid() or alive(int(owner)):
            continue
        path = os.path.join(root, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


# --- interrupts ----------------------------------------------------------------------------

class HeldInterrupts:
    """Counts the SIGINTs that arrived while held; ``deliver()`` acts on one as Python would."""

    def __init__(self, original=None):
        self.original = original
        self.count = 0

    def hold(self, signum, frame):
        self.count += 1

    def deliver(self) -> None:
        """Run the original SIGINT handler once for the held interrupts (normally: raise
        KeyboardInterrupt); nothing if none arrived or the original ignores SIGINT."""
        if not self.count:
            return
        self.count = 0
        handler = self.original
        if handler == signal.SIG_IGN:
            return
        if callable(handler):
            handler(signal.SIGINT, None)
        else:
            raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_held():
    """Hold Ctrl-C while the launcher starts, watches and stops ranks.

    A KeyboardInterrupt raised between two lines of the clean-up would leave ranks running
    and a run folder behind; two interrupts a few milliseconds apart did exactly that. Inside
    this block a SIGINT is only counted; the launcher calls ``deliver()`` where stopping is
    safe, and a SIGINT that arrived during the clean-up is delivered when the block ends.
    Only the main thread receives SIGINT in Python, so elsewhere this does nothing.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield HeldInterrupts(signal.default_int_handler)
        return
    held = HeldInterrupts(signal.getsignal(signal.SIGINT))
    signal.signal(signal.SIGINT, held.hold)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, held.original)
    held.deliver()
