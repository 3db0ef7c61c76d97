"""Where a submission's kernel runs: a bubblewrap sandbox, or (fallback) its own session.

``bwrap`` (Linux, Debian package ``bubblewrap``) gives each kernel: a read-only view of the
system; the course repository hidden (a tmpfs over it) except the Python environment, read-only;
a private, read-only copy of the course code (``labs/``, and the grader's ``grader/`` for the
recorder it injects) first on ``PYTHONPATH``; its own copy of
the submission as the only writable folder; a private ``/tmp``; no network but its own loopback
(``--unshare-net``: gloo between the ranks of ``labs.launch`` still works on 127.0.0.1); its own
PID namespace (``--unshare-pid``: everything the kernel starts dies with it); the solutions,
the submissions folder and the grader's output folder hidden. Where bwrap is missing or cannot
create namespaces, the fallback starts the kernel through a small shim in its own session with
a private copy of the course code, and nothing is hidden (the report says so). The sandbox's
/tmp and /dev/shm are tmpfs of the size :mod:`grader.resources` asks for (``--size``).

Either way :func:`kill_marked` and :func:`kill_orphans` end every process the kernel started:
the kernel's environment carries a random marker that all its children inherit, and the
grader's processes are child subreapers (Linux), so that a process started with
``start_new_session=True`` whose parent died is reparented to the grader, not to init.

Owns: the kernel's command prefix, the course copy, and ending processes. Must not: read or
run notebooks, or decide anything about a submission.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["MODES", "MARK_ENV", "bwrap_available", "choose", "kernel_prefix", "course_root",
           "copy_course", "set_subreaper", "children", "kill_marked", "kill_orphans",
           "kill_tree", "reap"]

MODES = ("auto", "bwrap", "none")
MARK_ENV = "LABS_GRADE_MARK"
# The fallback's shim: the kernel's parent, so that killing its parent ends this shim only.
# Both it and the kernel die with their parent (PR_SET_PDEATHSIG, Linux).
SHIM = ("import ctypes,os,signal,subprocess,sys\n"
        "def d(parent):\n"
        " try:ctypes.CDLL(None).prctl(1,9,0,0,0)\n"
        " except Exception:pass\n"
        # the parent may have died before prctl: then no signal will come, so go now
        " if os.getppid()!=parent:os._exit(1)\n"
        "d(PARENT);signal.signal(signal.SIGINT,signal.SIG_IGN)\n"
        "me=os.getpid()\n"
        "p=subprocess.Popen(sys.argv[1:],preexec_fn=lambda:d(me))\n"
        "signal.signal(signal.SIGTERM,lambda *a:p.kill());sys.exit(p.wait())")

_probe: dict[str, tuple[bool, str]] = {}


def bwrap_available() -> tuple[bool, str]:
    """(usable, why not): bwrap is installed and can create the namespaces the sandbox uses."""
    if "bwrap" in _probe:
        return _probe["bwrap"]
    exe = shutil.which("bwrap")
    if not sys.platform.startswith("linux"):
        found = (False, f"not Linux ({sys.platform})")
    elif exe is None:
        found = (False, "bwrap not installed (apt-get install bubblewrap)")
    else:
        try:
            proc = subprocess.run(
                [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                 "--size", str(64 * 1024 * 1024), "--tmpfs", "/tmp",
                 *python_binds([]), "--unshare-pid", "--unshare-net", "--die-with-parent", "--",
                 sys.executable,
                 "-c", "import socket;s=socket.socket();s.bind(('127.0.0.1',0));s.listen();"
                       "socket.create_connection(s.getsockname()).close()"],
                capture_output=True, text=True, timeout=30)
            found = (proc.returncode == 0,
                     (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1])
        except (OSError, subprocess.SubprocessError) as exc:
            found = (False, f"{type(exc).__name__}: {exc}")
    _probe["bwrap"] = found
    return found


def choose(mode: str) -> tuple[str, str]:
    """The sandbox to use for ``--sandbox mode``: ("bwrap" or "none", a reason when none).
    Raises RuntimeError for ``bwrap`` when it is not usable."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode {mode!r}: one of {', '.join(MODES)}")
    if mode == "none":
        return "none", "--sandbox none"
    ok, why = bwrap_available()
    if ok:
        return "bwrap", ""
    if mode == "bwrap":
        raise RuntimeError(f"bwrap sandbox not usable: {why}")
    return "none", why


def course_root() -> Path:
    """The folder holding the ``labs`` package the grader runs (the course repository)."""
    return Path(__file__).resolve().parents[1]


def copy_course(dst: Path) -> Path:
    """A private copy of the course code: ``dst/labs`` and ``dst/grader`` (the recorder the
    kernel imports at start; no caches). Returns ``dst``."""
    for package in ("labs", "grader"):
        shutil.copytree(Path(__file__).resolve().parents[1] / package, dst / package,
                        symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dst


def _under(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
        return True
    except ValueError:
        return False


def python_binds(hidden: list[Path]) -> list[str]:
    """bwrap arguments that keep this Python (its environment and base installation) readable
    when it lives under /tmp (a fresh tmpfs in the sandbox: a course cloned into /tmp) or under
    a hidden folder (a .venv inside the course)."""
    binds: list[str] = []
    for env in dict.fromkeys([Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]):
        if _under(env, Path("/tmp")) or any(_under(env, h) for h in hidden):
            binds += ["--ro-bind", str(env), str(env)]
    return binds


def kernel_prefix(mode: str, *, workdir: Path, course: Path, ipc: Path,
                  hide: list[Path], tmp_size: int | None = None) -> list[str]:
    """The command put in front of the kernel's own command line; ``tmp_size``: the bytes of
    the sandbox's /tmp and of its /dev/shm (each), else the system's default (half the RAM)."""
    if mode == "none":
        return [sys.executable, "-c", SHIM.replace("PARENT", str(os.getpid()))]
    workdir, course, ipc = workdir.resolve(), course.resolve(), ipc.resolve()
    size = ["--size", str(int(tmp_size))] if tmp_size else []
    args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            *size, "--tmpfs", "/tmp", *size, "--tmpfs", "/dev/shm", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    root = course_root()
    hidden = []
    for path in [root, *hide]:
        path = Path(path).resolve()
        if path == Path("/") or _under(path, Path("/tmp")) or not path.is_dir():
            continue
        if any(_under(path, h) for h in hidden):
            continue
        hidden.append(path)
    for path in hidden:
        args += ["--tmpfs", str(path)]
    args += python_binds(hidden)  # the Python environment stays readable
    args += ["--bind", str(workdir), str(workdir), "--ro-bind", str(course), str(course),
             "--bind", str(ipc), str(ipc), "--chdir", str(workdir), "--"]
    return args


# --- processes ---------------------------------------------------------------------------------

def set_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux prctl)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _pids() -> list[int]:
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return int(data[data.rindex(b")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def children(pid: int) -> list[int]:
    return [p for p in _pids() if _ppid(p) == pid]


def _descendants(pid: int) -> list[int]:
    table = {p: _ppid(p) for p in _pids()}
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in table.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap() -> None:
    """Reap every child of this process that has ended (its zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and all its descendants (repeated while new ones appear)."""
    for _ in range(20):
        victims = [pid, *_descendants(pid)] if pid else []
        alive = [p for p in victims if os.path.exists(f"/proc/{p}")]
        if not alive:
            return
        for p in alive:
            _kill(p)
        time.sleep(0.02)
        reap()


def _marked(token: str) -> list[int]:
    needle = f"{MARK_ENV}={token}".encode()
    found = []
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def kill_marked(token: str) -> int:
    """SIGKILL every process whose environment carries the marker ``token``; how many."""
    total = 0
    for _ in range(20):
        pids = _marked(token)
        if not pids:
            break
        total += len(pids)
        for pid in pids:
            _kill(pid)
        time.sleep(0.02)
        reap()
    return total


def kill_orphans(keep: set[int]) -> None:
    """Kill the children of this process that are not in ``keep`` (orphans a subreaper
    inherited), with their descendants."""
    for pid in children(os.getpid()):
        if pid not in keep:
            kill_tree(pid)
    reap()
