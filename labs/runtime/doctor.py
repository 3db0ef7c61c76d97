"""``python -m labs doctor`` (``make doctor``, the pre-workshop check): is this machine ready for
the course? Cores, memory, ports, real 2-, 4- and 8-rank launches and the time each took; says how
to fix what is wrong, and what to do when ranks do not run (fewer ranks, a hosted notebook).

Owns: the doctor's checks, its report and ``labs.environment``. Must not: change the machine (it
only reports and says how to fix), or import labs' course modules (models, parallelism packages,
planner, checks) or the grader: the runtime sits below the course (it reads labs.notebook.fonts
for the font line), or import torch before it has checked the temporary folder and the platform."""

from __future__ import annotations

import os
import platform
import socket
import sys
import time

from labs.notebook import fonts
from labs.messages import text
from labs.runtime import host
from labs.runtime import processes as _processes
from labs.runtime.errors import LaunchError
from labs.torch_versions import PINNED_TORCH, TORCH_RANGE, missing_torch_apis, torch_support

__all__ = ["doctor", "environment", "port_in_use", "loopback_port", "fallback"]

#: The rank counts the doctor launches: 2.5 and many cells run 2, 2.0-2.3 run 4, 2.4 runs 8.
LAUNCH_SIZES = (2, 4, 8)
#: Free memory the course needs (README: 4 GB free is enough; 2.4's 8 ranks peak near 1.1 GB).
MEMORY_NEEDED_GIB = 4
#: JupyterLab's default port (make lab) and torchrun's default rendezvous port (multi-machine).
JUPYTER_PORT, TORCHRUN_PORT = 8888, 29500
#: A warm launch slower than this is a slow machine: the 2-core test machine takes about 0.2 s
#: for 4 ranks and 0.4 s for 8 (measured, while busy), so this is five to ten times that.
SLOW_WARM_LAUNCH_S = 2.0

#: What doctor says of a torch that is not the tested one, by :func:`torch_support`.
_SUPPORT_KEYS = {"in_range": "doctor.torch_in_range", "too_old": "doctor.torch_too_old",
                 "too_new": "doctor.torch_too_new"}


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something holds ``host:port``: a connection to it succeeds, or it cannot be
    bound (as a server binds it, with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex((host, port)) == 0:
            return True
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def loopback_port() -> int:
    """A port the system gives on 127.0.0.1, as gloo's ranks and ``torchrun --standalone`` take
    one; raises OSError when no TCP socket can listen on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        return server.getsockname()[1]


def fallback(worked: set[int], slow: bool = False) -> list[str]:
    """The "What to do" lines for a machine where only the rank counts ``worked`` ran (of
    LAUNCH_SIZES), or where launches are ``slow``: fewer ranks where the notebooks allow it,
    else a hosted notebook. Empty when every count ran at speed."""
    if 8 in worked and not slow:
        return []
    lines = [text("doctor.fallback")]
    if 4 in worked and 8 not in worked:
        lines.append(text("doctor.fallback_no_8"))
    elif 2 in worked:
        lines.append(text("doctor.fallback_no_4"))
    lines += [text("doctor.fallback_hosted"), text("doctor.fallback_send")]
    return lines


def _memory_gib() -> float | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


class _Checkup:
    """What :func:`doctor` has found so far, and where it says it: the problems (each one fails
    the check), the notes (said before the verdict), the rank counts whose gloo launches worked
    and whether launches were slow (both for :func:`fallback`)."""

    def __init__(self, out):
        self.out = out
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.worked: set[int] = set()
        self.slow = False
        self.started = time.perf_counter()

    def say(self, line=""):
        print(line, file=self.out, flush=True)

    def verdict(self, launched=True) -> bool:
        """Say the problems (or that all is well), what to do when launches failed or were slow
        (only once ranks were ``launched``) and how long the check took; True when no problem."""
        self.say()
        if self.problems:
            self.say(text("doctor.problems"))
            for p in self.problems:
                self.say(f"- {p}")
        else:
            self.say(text("doctor.all_good"))
        lines = fallback(self.worked, self.slow) if launched else []
        if lines:
            self.say()
            for line in lines:
                self.say(line)
        self.say(text("doctor.took", seconds=time.perf_counter() - self.started))
        return not self.problems


def doctor(out=None) -> bool:
    """Print the environment, check the ports and run real 2-, 4- and 8-rank all-reduces, each
    timed; on trouble, say what to do (:func:`fallback`). True when all is well."""
    checkup = _Checkup(out or sys.stdout)
    # First, before torch: importing torch itself fails without a usable temporary folder.
    if not _check_temp_folder(checkup):
        return checkup.verdict(launched=False)
    _check_torch(checkup)
    _check_memory(checkup)
    _check_ports(checkup)
    if not _check_max_ranks(checkup):
        return checkup.verdict(launched=False)
    gpus = _check_gpus(checkup)
    _check_font(checkup)
    _check_launches(checkup, gpus)
    for note in checkup.notes:
        checkup.say(note)
    return checkup.verdict()


def _check_temp_folder(checkup: _Checkup) -> bool:
    """The temporary folder and its free space; False (a problem) when there is none."""
    try:
        root = _processes.temp_folder()
        checkup.say(text("doctor.temp_folder", root=root,
                         free=_processes.free_bytes(root) / 2**30))
    except LaunchError as exc:
        checkup.say(text("doctor.temp_folder_none"))
        checkup.problems.append(str(exc))
        return False
    return True


def _check_torch(checkup: _Checkup) -> None:
    """Python and torch: how this torch stands against the tested one, the APIs the notebooks
    need (each missing one a problem) and the backends (no gloo: a problem)."""
    import torch
    import torch.distributed as dist

    checkup.say(text("doctor.python", version=sys.version.split()[0],
                     platform=platform.platform()))
    checkup.say(text("doctor.torch", version=torch.__version__))
    support = torch_support(torch.__version__)
    low, high = (".".join(map(str, v)) for v in TORCH_RANGE)
    if support != "tested":
        checkup.say(text(_SUPPORT_KEYS[support], version=torch.__version__, pinned=PINNED_TORCH,
                         low=low, high=high))
    for name, notebooks in missing_torch_apis():
        checkup.problems.append(text("doctor.torch_api_missing", version=torch.__version__,
                                     name=name, notebooks=notebooks, pinned=PINNED_TORCH))
    gloo, nccl = dist.is_gloo_available(), dist.is_nccl_available()
    checkup.say(text("doctor.backends", gloo=text("doctor.yes" if gloo else "doctor.no"),
                     nccl=text("doctor.yes" if nccl else "doctor.no")))
    if not gloo:
        checkup.problems.append(text("doctor.no_gloo", pinned=PINNED_TORCH))


def _check_memory(checkup: _Checkup) -> None:
    """Cores, memory and free memory (a note when less than MEMORY_NEEDED_GIB is free)."""
    # why here: imports torch, only after doctor's temporary-folder check (torch needs one)
    from labs.runtime import launcher
    # why here: imports torch (as above)
    from labs.runtime import rank as _rank

    mem = _memory_gib()
    checkup.say(text("doctor.cpu_and_memory", cores=_rank.cpu_count(), memory=mem) if mem
                else text("doctor.cpu", cores=_rank.cpu_count()))
    free = launcher.available_memory_bytes()
    if free is not None:
        checkup.say(text("doctor.memory_free", free=free / 2**30, need=MEMORY_NEEDED_GIB))
        if free < MEMORY_NEEDED_GIB * 2**30:
            checkup.notes.append(text("doctor.memory_low", free=free / 2**30,
                                      need=MEMORY_NEEDED_GIB))


def _check_ports(checkup: _Checkup) -> None:
    """The ports line: the loopback interface (a problem when unusable), JupyterLab's and
    torchrun's default ports (a note when taken: both can use another)."""
    try:
        port = loopback_port()
    except OSError as exc:
        checkup.say(text("doctor.ports_no_loopback"))
        checkup.problems.append(text("doctor.loopback_failed", exc=exc))
        return
    states = []
    for number, note in ((JUPYTER_PORT, "doctor.jupyter_port_in_use"),
                         (TORCHRUN_PORT, "doctor.torchrun_port_in_use")):
        taken = port_in_use(number)
        states.append(text("doctor.port_in_use" if taken else "doctor.port_free"))
        if taken:
            checkup.notes.append(text(note, port=number, other=number + 1))
    checkup.say(text("doctor.ports", port=port, jupyter=JUPYTER_PORT, jupyter_state=states[0],
                     torchrun=TORCHRUN_PORT, torchrun_state=states[1]))


def _check_max_ranks(checkup: _Checkup) -> bool:
    """The most ranks this machine can launch; False (a problem) when it cannot launch any."""
    # why here: imports torch, only after doctor's temporary-folder check (torch needs one)
    from labs.runtime import launcher

    try:
        checkup.say(text("doctor.max_ranks", most=launcher.max_world_size()))
    except ValueError as exc:
        checkup.problems.append(str(exc))
        return False
    return True


def _check_gpus(checkup: _Checkup) -> int:
    """The GPUs torch sees, by name; returns how many."""
    import torch

    # why here: imports torch, only after doctor's temporary-folder check (torch needs one)
    from labs.runtime import launcher

    gpus = launcher.cuda_device_count()
    if gpus:
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(gpus))
        checkup.say(text("doctor.gpus", count=gpus, names=names))
    else:
        checkup.say(text("doctor.no_gpus"))
    return gpus


def _check_font(checkup: _Checkup) -> None:
    """The CJK font of the figures (none: a line only, the figures fall back to English)."""
    font = fonts.font_file()
    checkup.say(text("doctor.font", family=fonts.FAMILY, path=font) if font
                else text("doctor.font_missing", family=fonts.FAMILY))


def _check_launches(checkup: _Checkup, gpus: int) -> None:
    """Real all-reduces: gloo on each of LAUNCH_SIZES ranks, nccl on 1, 2, 4 and 8 as far as
    there are GPUs. A rank count that does not fit, fails or sums wrong is a problem."""
    # why here: imports torch, only after doctor's temporary-folder check (torch needs one)
    from labs.runtime import launcher

    checks = [("gloo", n) for n in LAUNCH_SIZES] + [("nccl", n) for n in (1, 2, 4, 8) if n <= gpus]
    for backend, n in checks:
        if backend == "gloo" and n > launcher.max_world_size():
            checkup.problems.append(text("doctor.ranks_do_not_fit", n=n))
            continue
        try:
            _check_all_reduce(checkup, backend, n)
        except Exception as exc:  # noqa: BLE001
            checkup.say(text("doctor.all_reduce_failed", backend=backend, n=n,
                             exc_type=type(exc).__name__))
            checkup.problems.append(text("doctor.all_reduce_raised", backend=backend, n=n,
                                         exc=exc, tmpdir=os.environ.get("TMPDIR", "/tmp")))


def _check_all_reduce(checkup: _Checkup, backend: str, n: int) -> None:
    """Launch an all-reduce on ``n`` ranks twice, say both times and check the sum. A gloo count
    that sums right has worked; a slow warm launch is a note (the first one only)."""
    # why here: imports torch, only after doctor's temporary-folder check (torch needs one)
    from labs.runtime import examples, launcher

    times = []
    for _ in range(2):  # the first launch may start the forkserver (cold)
        start = time.perf_counter()
        got = launcher.launch(examples.all_reduce_demo, n, backend=backend, timeout=120)
        times.append(time.perf_counter() - start)
    expected = float(n * (n + 1) // 2)
    ok = all(g == expected for g in got)
    checkup.say(text("doctor.all_reduce_ok" if ok else "doctor.all_reduce_wrong",
                     backend=backend, n=n, got=got[0], expected=expected, cold=times[0],
                     warm=times[1]))
    if not ok:
        checkup.problems.append(text("doctor.all_reduce_gave_wrong", backend=backend, n=n,
                                     got=got, expected=expected, pinned=PINNED_TORCH))
    elif backend == "gloo":
        checkup.worked.add(n)
        if times[1] > SLOW_WARM_LAUNCH_S and not checkup.slow:
            checkup.slow = True
            checkup.notes.append(text("doctor.launches_slow", n=n, warm=times[1],
                                      limit=SLOW_WARM_LAUNCH_S))


def environment(world_size: int, backend: str = "auto", out=None) -> str:
    """The environment cell of every notebook: what this run will use, in one short block.

    Returns the backend ("gloo" or "nccl") that ``labs.launch`` will pick for ``world_size``.
    """
    host.require_supported_platform()  # before torch: one sentence on Windows, not a raw error
    import torch

    # why here: imports torch, only after the platform check above (one sentence on Windows)
    from labs.runtime import launcher
    # why here: imports torch (as above)
    from labs.runtime import rank as _rank

    out = out or sys.stdout
    chosen = launcher.resolve_backend(backend, world_size)
    gpus = launcher.cuda_device_count()
    if chosen == "nccl":
        devices = ", ".join(f"cuda:{i}" for i in range(world_size))
    else:
        devices = text("doctor.environment_cpu_devices", world_size=world_size,
                       threads=_rank.threads_per_rank(world_size))
    print(text("doctor.environment", torch=torch.__version__, python=sys.version.split()[0],
               cores=_rank.cpu_count(), gpus=gpus), file=out)
    print(text("doctor.environment_uses", world_size=world_size, backend=chosen,
               devices=devices), file=out)
    return chosen
