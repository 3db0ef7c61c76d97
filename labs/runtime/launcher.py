"""Run a function on N ranks from a notebook, a test or a script: ``labs.launch``.

How it works, and why:
- Ranks are forked by a forkserver that imported torch once (``labs.runtime.rank``), so a warm
  launch costs a fork and a process-group join instead of a fresh ``import torch`` per rank.
  Plain fork from a Jupyter kernel can deadlock, spawn re-imports torch every time.
- The function and its arguments travel by value (cloudpickle), so functions and classes
  defined in a notebook cell work.
- Rendezvous is a FileStore in a fresh temporary folder: no ports to race for, no collision
  between two notebooks launching at the same time.
- Each rank writes fd 1 and 2 to files that this process tails, so what a rank prints
  (C++ included) appears here live, prefixed with ``[rank r]``.
- Any failure stops all ranks and raises one error about the rank that caused it; a hang ends
  after ``timeout`` seconds with the waiting ranks named and where they were stuck.
- Nothing outlives a launch: a rank leads its own process group and adopts orphans, so what it
  started ends with it; Ctrl-C is held while ranks are started or stopped (two quick interrupts
  cannot cut the clean-up short); folders of killed kernels are swept by the next launch.
- The forkserver's own faults (it died, it froze) are told as such, within ``timeout``.
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time

from labs.runtime import forkserver as _forkserver
from labs.runtime import processes as _processes
from labs.runtime import rank as _rank
from labs.runtime import stacks as _stacks
from labs.runtime.forkserver import shutdown, warm_up  # noqa: F401  (re-exported)
from labs.runtime.output import OutputTail
from labs.runtime.rank import cpu_count, device  # noqa: F401  (re-exported: labs.device())
from labs.runtime.errors import (HelperError, LaunchError, LaunchTimeoutError,  # noqa: F401
                                RankCrashedError, RankError)

__all__ = ["launch", "max_world_size", "available_memory_bytes", "cuda_device_count",
           "resolve_backend", "shutdown", "warm_up", "cpu_count", "device", "LaunchError",
           "RankError", "RankCrashedError", "LaunchTimeoutError", "HelperError", "BACKENDS",
           "MAX_TIMEOUT_S"]

BACKENDS = ("auto", "gloo", "nccl")
# Each CPU rank costs a Python process with torch loaded (forked, so much of it is shared
# copy-on-write); count this much per rank to stay well inside the machine.
RANK_MEMORY_BYTES = 250 * 2**20
FAILURE_GRACE_S = 0.3  # after a first failure, time to collect the others' errors
STOP_WAIT_S = 3.0  # after SIGKILL, time for the forkserver to report the ranks' exits
MAX_TIMEOUT_S = 24 * 3600.0


def launch(fn, world_size, args=(), kwargs=None, *, backend="auto", timeout=60.0):
    """Run ``fn(*args, **kwargs)`` on ``world_size`` processes and return their results.

    Each process is one rank with the default process group initialised
    (``torch.distributed.get_rank()`` works inside ``fn``); the return values come back as a
    list in rank order. ``labs.device()`` inside ``fn`` is the rank's device.

    backend: "auto" (nccl with one GPU per rank when there are enough CUDA devices, else
        gloo on CPU), "gloo" or "nccl".
    timeout: seconds the whole run may take; a collective waiting longer also fails.

    Example::

        def hello():
            import torch.distributed as dist
            return dist.get_rank() * 10

        labs.launch(hello, world_size=4)   # [0, 10, 20, 30]
    """
    backend = _check_arguments(fn, world_size, args, kwargs, backend, timeout)
    return _Run(fn, world_size, tuple(args), dict(kwargs or {}), backend, float(timeout),
                stream_out=sys.stdout, stream_err=sys.stderr).run()


# --- input checks ------------------------------------------------------------------------

def max_world_size() -> int:
    """The most CPU ranks this machine can run at once (override: LABS_MAX_WORLD_SIZE)."""
    override = os.environ.get("LABS_MAX_WORLD_SIZE", "").strip()
    if override:
        if not override.isdigit() or int(override) < 1:
            raise ValueError(f"LABS_MAX_WORLD_SIZE={override!r} is not a whole number of ranks: "
                             "set it to the most ranks to allow (for example 16), or unset it.")
        return int(override)
    by_cores = max(8, 4 * cpu_count())
    available = available_memory_bytes()
    by_memory = by_cores if available is None else max(2, available // RANK_MEMORY_BYTES)
    return int(min(by_cores, by_memory))


def available_memory_bytes() -> int | None:
    """Memory a new process can use: MemAvailable on Linux (free pages alone would miss the
    page cache the kernel gives back), else half of the physical memory; None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return None


def cuda_device_count() -> int:
    import torch
    try:
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001  (a broken driver counts as no GPU)
        return 0


def resolve_backend(backend: str, world_size: int) -> str:
    """Turn "auto" into "nccl" or "gloo"; refuse "nccl" without one GPU per rank."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is not one of {BACKENDS}: use 'auto' to let "
                         "the launcher choose, 'gloo' for CPU or 'nccl' for GPUs.")
    gpus = cuda_device_count()
    if backend == "auto":
        return "nccl" if gpus >= world_size else "gloo"
    if backend == "nccl" and gpus < world_size:
        raise ValueError(
            f"backend='nccl' needs one CUDA GPU per rank: world_size={world_size} but this "
            f"machine has {gpus} CUDA device(s). Use backend='gloo' (CPU), backend='auto', "
            f"or world_size <= {gpus}." if gpus else
            "backend='nccl' needs CUDA GPUs and this machine has none. Use backend='gloo' "
            "(runs on CPU) or backend='auto'.")
    return backend


def _check_arguments(fn, world_size, args, kwargs, backend, timeout) -> str:
    if not callable(fn):
        raise TypeError(f"labs.launch needs a function to run, got {type(fn).__name__}: "
                        "pass the function itself, e.g. labs.launch(train, 4), not train().")
    if isinstance(world_size, bool) or not isinstance(world_size, int):
        raise TypeError(f"world_size must be an int, got {world_size!r}.")
    if world_size < 1:
        raise ValueError(f"world_size={world_size}: a run needs at least one rank "
                         "(world_size >= 1).")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"args must be a tuple of positional arguments, got "
                        f"{type(args).__name__}: write args=(x,) for one argument.")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict, got {type(kwargs).__name__}.")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout={timeout!r}: give the seconds the run may take, as a number.")
    if not (0 < timeout <= MAX_TIMEOUT_S):  # also refuses nan and inf
        raise ValueError(f"timeout={timeout!r}: give the seconds the run may take, > 0 and at "
                         f"most {MAX_TIMEOUT_S:.0f} (one day); a hung run must end some time.")
    backend = resolve_backend(backend, world_size)
    if backend == "gloo" and world_size > max_world_size():
        raise ValueError(
            f"world_size={world_size} is too many CPU ranks for this machine "
            f"({cpu_count()} cores): at most {max_world_size()} run here. Use a smaller "
            "world_size (the course uses 2, 4 or 8), or set LABS_MAX_WORLD_SIZE to raise "
            "the limit.")
    return backend


class _Run:
    def __init__(self, fn, world_size, args, kwargs, backend, timeout, *, stream_out,
                 stream_err):
        self.fn, self.world_size, self.args, self.kwargs = fn, world_size, args, kwargs
        self.backend, self.timeout = backend, timeout
        self.stream_out, self.stream_err = stream_out, stream_err
        self.procs = []
        self.killed = set()  # ranks this launcher stopped (not crashes of their own)
        self.helper_frozen = None  # pid of a forkserver that stopped answering

    def path(self, name):
        return os.path.join(self.run_dir, name)

    def run(self):
        with _processes.interrupts_held() as interrupts:
            self.interrupts = interrupts
            _processes.sweep_stale_folders()
            root = _processes.temp_folder()
            try:
                self.run_dir = tempfile.mkdtemp(prefix=f"{_processes.RUN_PREFIX}{os.getpid()}-",
                                                dir=root)
            except OSError as exc:
                raise _processes.temp_folder_error(root, exc) from None
            try:
                self._write_task()
                self._start()
                return self._supervise()
            finally:
                self._stop_all()
                shutil.rmtree(self.run_dir, ignore_errors=True)

    def _write_task(self):
        try:
            payload = _forkserver.dumps((self.fn, self.args, self.kwargs,
                                         _forkserver.notebook_sources(self.fn)))
        except Exception as exc:  # noqa: BLE001
            raise LaunchError(
                f"labs.launch could not send {getattr(self.fn, '__name__', self.fn)!r} and its "
                f"arguments to the ranks ({type(exc).__name__}: {exc}). Objects such as open "
                "files, locks, sockets or process groups cannot travel: create them inside "
                "the function instead.") from None
        try:
            with open(self.path("task.pkl"), "wb") as f:
                f.write(payload)
        except OSError as exc:
            raise _processes.temp_folder_error(self.run_dir, exc) from None

    def _start(self):
        env = dict(os.environ)
        self.tails = []
        deadline = time.monotonic() + self.timeout
        for rank in range(self.world_size):
            self.tails.append((
                OutputTail(self.path(f"rank{rank}.out"), f"[rank {rank}] ", self.stream_out),
                OutputTail(self.path(f"rank{rank}.err"), f"[rank {rank}] ", self.stream_err)))
            proc = _forkserver.RankProcess(
                target=_rank.rank_main, name=f"labs-rank{rank}", daemon=False,
                args=(self.run_dir, rank, self.world_size, self.backend, self.timeout,
                      os.getpid(), env))
            proc.start_deadline = deadline
            proc.start()
            self.procs.append(proc)
            if rank == 0:  # a cold helper imported torch first: that time is not the run's
                deadline = max(deadline, time.monotonic() + self.timeout)

    def _pump(self, final=False):
        for out, err in self.tails:
            out.pump(final)
            err.pump(final)

    def _supervise(self):
        start = time.monotonic()
        deadline = start + self.timeout
        first_failure = None
        released = False
        while True:
            self.interrupts.deliver()  # a Ctrl-C stops the run here (the caller cleans up)
            self._pump()
            codes = [p.exitcode for p in self.procs]
            if 255 in codes:  # what a rank gets when the forkserver reporting it died
                self._check_helper()
            failed = [r for r, c in enumerate(codes) if c not in (None, 0)] + [
                r for r in range(self.world_size) if os.path.exists(self.path(f"rank{r}.error"))]
            if failed and first_failure is None:
                first_failure = time.monotonic()
            done = [r for r in range(self.world_size)
                    if os.path.exists(self.path(f"rank{r}.result"))]
            if not failed and len(done) == self.world_size and not released:
                open(self.path("release"), "w").close()
                released = True
            if all(c is not None for c in codes):
                break
            if released and not any(_processes.alive(p.pid) for p in self.procs):
                break  # all gone, only their exit codes are late (a frozen forkserver)
            if first_failure is not None and time.monotonic() - first_failure > FAILURE_GRACE_S:
                break
            if time.monotonic() > deadline:
                if released:  # results are in, ranks are only slow to leave
                    break
                return self._timed_out(time.monotonic() - start)
            multiprocessing.connection.wait([p.sentinel for p in self.procs], timeout=0.01)
        self._stop_all()
        self._pump(final=True)
        errors = self._errors()
        # Once a frozen forkserver is killed, every exit code reads 255: they are not the ranks'.
        bad_exit = self.helper_frozen is None and any(p.exitcode not in (0, None)
                                                      for p in self.procs)
        if errors or bad_exit or not released:
            self._raise_failure(errors)
        return [self._result(r) for r in range(self.world_size)]

    def _check_helper(self):
        """Raise if the forkserver died: the ranks' exit codes (255) are then its, not theirs."""
        pid = _forkserver.SERVER.pid
        what = _forkserver.SERVER.exit_status()
        if what is not None:
            self._stop_all()
            raise _forkserver.helper_error(f"{what} during the run", pid)

    def _result(self, rank):
        try:
            with open(self.path(f"rank{rank}.result"), "rb") as f:
                return pickle.load(f)
        except Exception as exc:  # noqa: BLE001
            raise LaunchError(
                f"rank {rank} of {self.world_size} returned a value that cannot be loaded in "
                f"this process ({type(exc).__name__}: {exc}). Its type must be importable "
                "here: return tensors, numbers, strings, or lists/tuples/dicts of them.") from None

    def _errors(self):
        errors = {}
        for rank in range(self.world_size):
            path = self.path(f"rank{rank}.error")
            if os.path.exists(path):
                with open(path, "rb") as f:
                    errors[rank] = pickle.load(f)
        return errors

    def _stop_all(self):
        """SIGKILL every rank still running, with all it started; wait (bounded) for the exit
        codes. A forkserver that cannot report them is frozen: end it, a new one starts next."""
        for rank, proc in enumerate(self.procs):
            if proc.exitcode is None:
                self.killed.add(rank)
                _processes.kill_rank(proc.pid)
        until = time.monotonic() + STOP_WAIT_S
        for proc in self.procs:
            proc.join(timeout=max(0.0, until - time.monotonic()))
        if any(p.exitcode is None for p in self.procs):
            self.helper_frozen = _forkserver.SERVER.pid
            _forkserver.SERVER.kill()
        for proc in self.procs:  # what a crashed rank left in its process group
            _processes.kill_group(proc.pid)

    def _tail(self, rank, n=10):
        out, err = self.tails[rank]
        lines = (out.lines + err.lines)[-n:]
        return "\n".join(f"    {line}" for line in lines) or "    (nothing)"

    def _raise_failure(self, errors):
        ws = self.world_size
        primary = sorted((e for e in errors.values() if not e["secondary"]),
                         key=lambda e: e["time"])
        crashed = [r for r, p in enumerate(self.procs)
                   if r not in errors and r not in self.killed and p.exitcode not in (0, None)]
        others = lambda r: ", ".join(str(o) for o in range(ws) if o != r) or "none"  # noqa: E731
        if not primary and self.helper_frozen is not None:
            raise _forkserver.helper_error("stopped answering during the run, so it was stopped",
                                           self.helper_frozen)
        if crashed or not primary:  # ranks that die without a word: a full disk, maybe
            _processes.require_free_space(os.path.dirname(self.run_dir))
        if primary:
            e = primary[0]
            original = None
            if e["original"] is not None:
                with contextlib.suppress(Exception):
                    original = pickle.loads(e["original"])
            if e["kind"] == "result":
                raise LaunchError(
                    f"rank {e['rank']} of {ws} returned a value that cannot be sent back to "
                    f"the caller ({e['message']}). Return tensors, numbers, strings, or "
                    "lists/tuples/dicts of them.")
            where = " while setting up the process group" if e["kind"] == "setup" else ""
            raise RankError(
                f"rank {e['rank']} of {ws} raised {e['message']}{where}\n\n"
                f"--- traceback on rank {e['rank']} ---\n{e['traceback'].rstrip()}\n"
                f"--- the other ranks ({others(e['rank'])}) were stopped ---",
                rank=e["rank"], exc_type=e["exc_type"], remote_traceback=e["traceback"],
                original=original)
        if crashed:
            r = crashed[0]
            code = self.procs[r].exitcode
            how = (f"was killed by signal {signal.Signals(-code).name}" if code < 0
                   else f"exited with code {code}")
            raise RankCrashedError(
                f"rank {r} of {ws} {how} without a Python exception (a crash in C++, "
                f"os._exit or a signal). The last lines it printed:\n{self._tail(r)}\n"
                f"--- the other ranks ({others(r)}) were stopped ---", rank=r, exitcode=code)
        if errors:  # only secondary errors: a peer vanished or a collective timed out
            waiting = sorted(errors)
            first = errors[waiting[0]]
            raise LaunchTimeoutError(
                f"ranks {waiting} of {ws} failed waiting for a peer: {first['message']}\n"
                f"--- traceback on rank {waiting[0]} ---\n{first['traceback'].rstrip()}",
                waiting=waiting, in_communication=True)
        raise LaunchError("the ranks ended without returning results (killed from outside?)")

    def _timed_out(self, elapsed):
        waiting = [r for r, p in enumerate(self.procs)
                   if p.exitcode is None and not os.path.exists(self.path(f"rank{r}.result"))]
        finished = [r for r in range(self.world_size)
                    if os.path.exists(self.path(f"rank{r}.result"))]
        stacks = self._dump_stacks(waiting)
        self._stop_all()
        self._pump(final=True)
        detail, in_communication = _stacks.describe_waiting(stacks)
        if self.helper_frozen is not None:
            detail += (f"\n(The launcher's helper process, pid {self.helper_frozen}, had also "
                       "stopped answering; it was stopped and the next launch starts a new one.)")
        if not stacks:
            why = ("A rank blocked in a collective or a recv that no other rank matches hangs: "
                   "check that every rank calls the same collectives in the same order, and that "
                   "each recv has a matching send. If the work is just slow, pass a larger "
                   "timeout=.")
        elif in_communication:
            why = ("Every waiting rank was blocked in communication, waiting for a peer that never "
                   "came (a deadlock): check that every rank calls the same collectives in the "
                   "same order, and that each recv has a matching send.")
        else:
            why = ("Not every rank was waiting for a peer: a rank still running its own code "
                   "was either slow (pass a larger timeout=) or in an endless loop.")
        raise LaunchTimeoutError(
            f"timed out after {elapsed:.1f} s (timeout={self.timeout:g}): ranks {waiting} of "
            f"{self.world_size} were still running"
            + (f"; ranks {finished} had finished" if finished else "") + f".\n{why}\n" + detail,
            waiting=waiting, in_communication=in_communication if stacks else None,
            stacks={r: _stacks.parse_stack(text) for r, text in stacks.items()})

    def _dump_stacks(self, ranks):
        """Ask the waiting ranks for their Python stacks (faulthandler on SIGUSR1)."""
        for r in ranks:
            with contextlib.suppress(ProcessLookupError, OSError):
                os.kill(self.procs[r].pid, signal.SIGUSR1)
        time.sleep(0.2)
        stacks = {}
        for r in ranks:
            with contextlib.suppress(OSError):
                with open(self.path(f"rank{r}.stack")) as f:
                    lines = f.read().splitlines()
                # Keep the frames above the launcher's own (multiprocessing, labs.runtime.rank).
                cut = next((i for i, ln in enumerate(lines)
                            if "multiprocessing" in ln or "labs/runtime/rank.py" in ln), len(lines))
                stacks[r] = "\n".join(lines[:cut])
        return stacks
