"""What runs inside one rank: set up the process, run the user's function, report back.

This module is preloaded by the launcher's forkserver (it imports torch and torch.distributed
once; the forkserver preloads torch._dynamo beside it), so a warm launch only forks and joins
the process group. The kernel imports it too (the launcher's helpers), without torch._dynamo.
It is also used by the torchrun entry (``python -m labs run module:function``).

Owns: a rank's setup, running the function and reporting back. Must not: start or watch other ranks
(the launcher does), or import labs' course modules (models, parallelism packages, planner, checks)
or the grader: the runtime sits below everything.
"""

from __future__ import annotations

import contextlib
import datetime
import faulthandler
import linecache
import os
import signal
import sys
import threading
import time
import traceback
from typing import NoReturn

import cloudpickle
import torch
import torch.distributed as dist

from labs.messages import text
from labs.runtime import load as _load
from labs.runtime import processes as _processes
from labs.runtime.placement import cpu_count, device, threads_per_rank  # noqa: F401  (re-exported)

__all__ = ["cpu_count", "threads_per_rank", "device", "setup_rank", "rank_main",
           "exit_rank", "note"]

#: Where this rank leaves its note (:func:`note`); None outside a launched rank.
_note_path: str | None = None

# Messages of collectives that failed only because another rank went away first.
SECONDARY_ERROR_MARKERS = (
    "Connection closed by peer",
    "Connection reset by peer",
    "Broken pipe",
    "Connection refused",
    "ECONNRESET",
    "Read error",
    "Socket closed",
    "Timed out waiting",
    "Socket Timeout",
    "timed out",
)


def setup_rank(*, backend: str, rank: int, world_size: int, local_rank: int,
               local_world_size: int, timeout: float, store=None) -> None:
    """Pick the device, share the CPU threads and initialise the default process group."""
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        os.environ["LABS_DEVICE"] = f"cuda:{local_rank}"
    else:
        os.environ["LABS_DEVICE"] = "cpu"
        if sys.platform.startswith("linux"):
            # Ranks of one launch talk over loopback: no dependence on hostname resolution.
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(threads_per_rank(local_world_size))
    kwargs = dict(backend=backend, timeout=datetime.timedelta(seconds=timeout))
    if store is not None:
        kwargs.update(store=store, rank=rank, world_size=world_size)
    if backend == "nccl":
        kwargs["device_id"] = torch.device("cuda", local_rank)
    dist.init_process_group(**kwargs)


def _to_cpu(value):
    """Move tensors in a (nested) return value to the CPU so the caller can load them."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_to_cpu(v) for v in value)
    if type(value) is dict:
        return {k: _to_cpu(v) for k, v in value.items()}
    return value


def note(words: str | None) -> None:
    """Leave (or, with None, clear) this rank's note: one line on what it is waiting for now,
    which the launcher shows if the run times out (a deadlock then names the pending operation
    of every rank). A no-op outside a rank launched by ``labs.launch``."""
    if _note_path is None:
        return
    with contextlib.suppress(OSError):
        if words is None:
            os.unlink(_note_path)
        else:
            _write_atomic(_note_path, words.encode("utf-8", "replace"))


def _write_atomic(path: str, payload: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(payload)
    os.replace(tmp, path)


def _user_traceback(exc: BaseException) -> str:
    """The traceback from the user's function down, without the launcher's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _safe_str(exc: BaseException) -> str:
    """str(exc), even for an exception whose __str__ itself raises."""
    try:
        return str(exc)
    except Exception as inner:  # noqa: BLE001
        return text("runtime.str_failed", type=type(inner).__name__)


def _report_error(run_dir: str, rank: int, exc: BaseException, kind: str = "exception") -> None:
    trace = _user_traceback(exc)
    message = f"{type(exc).__name__}: {_safe_str(exc)}"
    try:
        original = cloudpickle.dumps(exc)
    except Exception:
        original = None
    secondary = any(m in message for m in SECONDARY_ERROR_MARKERS)
    record = dict(rank=rank, kind=kind, exc_type=type(exc).__name__, message=message,
                  traceback=trace, time=time.time(), secondary=secondary, original=original)
    _write_atomic(os.path.join(run_dir, f"rank{rank}.error"), cloudpickle.dumps(record))


def _watchdog(parent_pid: int, hard_deadline: float) -> None:
    """End this rank (and all it started) if the launching process is gone -- a killed or
    restarted kernel -- or the hard deadline passed."""
    while True:
        time.sleep(0.5)
        if not _processes.alive(parent_pid):
            _processes.kill_descendants(os.getpid())
            os._exit(70)
        if time.time() > hard_deadline:
            _processes.kill_descendants(os.getpid())
            os._exit(71)


def _redirect_output(run_dir: str, rank: int) -> None:
    """Send fd 1 and 2 (Python and C++ output alike) to files the launcher tails."""
    for fd, name in ((1, "out"), (2, "err")):
        target = os.open(os.path.join(run_dir, f"rank{rank}.{name}"),
                         os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)


def rank_main(run_dir: str, rank: int, world_size: int, backend: str, timeout: float,
              parent_pid: int, env: dict) -> None:
    """Entry point of one launched rank (runs in a process forked by the forkserver)."""
    _processes.lead_own_group_and_adopt_orphans()
    _redirect_output(run_dir, rank)
    global _note_path
    _note_path = os.path.join(run_dir, f"rank{rank}.note")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher stops ranks, not Ctrl-C
    stack_file = open(os.path.join(run_dir, f"rank{rank}.stack"), "w")
    faulthandler.register(signal.SIGUSR1, file=stack_file, all_threads=False)
    os.environ.clear()
    os.environ.update(env)
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                      LOCAL_WORLD_SIZE=str(world_size))
    # torch read TORCH_DISTRIBUTED_DEBUG when the forkserver imported it: read it again now.
    dist.set_debug_level_from_env()
    # the launcher counts its timeout at the machine's pace: at most MAX_STRETCH x on the clock
    timeout *= _load.MAX_STRETCH
    threading.Thread(target=_watchdog, args=(parent_pid, time.time() + timeout + 30),
                     daemon=True).start()
    try:
        with open(os.path.join(run_dir, "task.pkl"), "rb") as f:
            fn, args, kwargs, source_lines = cloudpickle.load(f)
        # Source of notebook cells, so tracebacks show the lines of the student's code.
        for filename, lines in source_lines.items():
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
        store = dist.FileStore(os.path.join(run_dir, "store"), world_size)
        setup_rank(backend=backend, rank=rank, world_size=world_size, local_rank=rank,
                   local_world_size=world_size, timeout=timeout, store=store)
    except BaseException as exc:  # noqa: BLE001  (report anything, then stop)
        _report_error(run_dir, rank, exc, kind="setup")
        _exit(1)
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001
        _report_error(run_dir, rank, exc)
        _exit(1)
    try:
        payload = cloudpickle.dumps(_to_cpu(result))
    except Exception as exc:  # noqa: BLE001
        _report_error(run_dir, rank, exc, kind="result")
        _exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    _write_atomic(os.path.join(run_dir, f"rank{rank}.result"), payload)
    # Stay in the group until every rank is done: a rank that left early would turn another
    # rank's unmatched recv into a "connection closed" error instead of the hang it is.
    release = os.path.join(run_dir, "release")
    while not os.path.exists(release):
        time.sleep(0.005)
    exit_rank(0)


def exit_rank(code: int = 0) -> NoReturn:
    """End a rank that is done (of labs.launch, torchrun or mp.spawn): destroy the process
    group, then leave through :func:`_exit` (flush, end what the rank started, ``os._exit``).

    Why not return and let Python exit: after a training run, the gloo backend's worker threads
    (``pt_gloo_runloop``) outlive ``destroy_process_group`` (something still holds the group),
    and such a thread may still be dropping the last collective's tensors, which needs the GIL.
    If the interpreter is finalizing by then, CPython ends that thread with a forced unwind that
    C++ turns into ``std::terminate``: the rank dies with SIGABRT ("terminate called without an
    active exception") after it has finished its work. Measured with torch 2.13 on CPU: about
    one two-node torchrun run in 36 (the same crash as pytorch/pytorch#179291). ``os._exit``
    skips the finalization; everything the rank owes the world (its output, the group's
    teardown) is done before it.
    """
    try:
        if dist.is_initialized():
            dist.destroy_process_group()
    finally:
        _exit(code)


def _exit(code: int) -> NoReturn:
    """Leave the rank, ending first every process it started (a Popen, a pool's workers)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    _processes.kill_descendants(os.getpid())
    os._exit(code)
