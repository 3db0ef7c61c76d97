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
  after ``timeout`` seconds (``labs.runtime.load``: at a busy machine's pace), naming the ranks.
- Nothing outlives a launch: a rank leads its own process group and adopts orphans, so what it
  started ends with it; Ctrl-C is held while ranks are started or stopped (two quick interrupts
  cannot cut the clean-up short); folders of killed kernels are swept by the next launch.
- The forkserver's own faults (it died, it froze) are told as such, within ``timeout``.
Owns ``labs.launch`` and watching the ranks. Must not: run inside a rank, fork by itself, import
torch at import time (``import labs`` imports this module), or import labs' course modules or the
grader (the runtime sits below everything).
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

from labs import messages
from labs.messages import text
from labs.runtime import forkserver as _forkserver
from labs.runtime import host as _host
from labs.runtime import load as _load, processes as _processes
from labs.runtime import stacks as _stacks
from labs.runtime.forkserver import shutdown, warm_up  # noqa: F401  (re-exported)
from labs.runtime.output import OutputTail
from labs.runtime.placement import cpu_count, device  # noqa: F401  (re-exported)
from labs.runtime.errors import (HelperError, LaunchError, LaunchTimeoutError,  # noqa: F401
                                RankCrashedError, RankError)

__all__ = ["launch", "max_world_size", "available_memory_bytes", "cuda_device_count",
           "resolve_backend", "shutdown", "warm_up", "cpu_count", "device", "LaunchError",
           "RankError", "RankCrashedError", "LaunchTimeoutError", "HelperError", "BACKENDS",
           "MAX_TIMEOUT_S"]

BACKENDS = ("auto", "gloo", "nccl")
# Each CPU rank costs a Python process with torch loaded (forked, much of it shared
# copy-on-write): count this much per rank to stay well inside the machine.
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
    timeout: seconds the whole run may take (counted at the pace a busy machine allows).

    Example::

        def hello():
            import torch.distributed as dist
            return dist.get_rank() * 10

        labs.launch(hello, world_size=4)   # [0, 10, 20, 30]
    """
    _host.require_supported_platform()
    backend = _check_arguments(fn, world_size, args, kwargs, backend, timeout)
    return _Run(fn, world_size, tuple(args), dict(kwargs or {}), backend, float(timeout),
                stream_out=sys.stdout, stream_err=sys.stderr).run()


# --- input checks ------------------------------------------------------------------------

def max_world_size() -> int:
    """The most CPU ranks this machine can run at once (override: LABS_MAX_WORLD_SIZE)."""
    override = os.environ.get("LABS_MAX_WORLD_SIZE", "").strip()
    if override:
        if not override.isdigit() or int(override) < 1:
            raise ValueError(text("runtime.max_world_size_not_a_number", value=override))
        return int(override)
    by_cores = max(8, 4 * cpu_count())
    available = available_memory_bytes()
    by_memory = by_cores if available is None else max(2, available // RANK_MEMORY_BYTES)
    return int(min(by_cores, by_memory))


def available_memory_bytes() -> int | None:
    """Memory a new process can use, within the container's limit (labs.runtime.host)."""
    return _host.available_memory_bytes()


def cuda_device_count() -> int:
    import torch
    try:
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001  (a broken driver counts as no GPU)
        return 0


def resolve_backend(backend: str, world_size: int) -> str:
    """Turn "auto" into "nccl" or "gloo"; refuse "nccl" without one GPU per rank."""
    if backend not in BACKENDS:
        raise ValueError(text("runtime.unknown_backend", backend=backend, backends=BACKENDS))
    gpus = cuda_device_count()
    if backend == "auto":
        return "nccl" if gpus >= world_size else "gloo"
    if backend == "nccl" and gpus < world_size:
        raise ValueError(text("runtime.nccl_too_few_gpus", world_size=world_size, gpus=gpus)
                         if gpus else text("runtime.nccl_no_gpus"))
    return backend


def _check_arguments(fn, world_size, args, kwargs, backend, timeout) -> str:
    if not callable(fn):
        raise TypeError(text("runtime.not_a_function", type=type(fn).__name__))
    if isinstance(world_size, bool) or not isinstance(world_size, int):
        raise TypeError(text("runtime.world_size_not_int", value=world_size))
    if world_size < 1:
        raise ValueError(text("runtime.world_size_too_small", world_size=world_size))
    if not isinstance(args, (tuple, list)):
        raise TypeError(text("runtime.args_not_tuple", type=type(args).__name__))
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(text("runtime.kwargs_not_dict", type=type(kwargs).__name__))
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(text("runtime.timeout_not_number", timeout=timeout))
    if not (0 < timeout <= MAX_TIMEOUT_S):  # also refuses nan and inf
        raise ValueError(text("runtime.timeout_out_of_range", timeout=timeout,
                              most=MAX_TIMEOUT_S))
    backend = resolve_backend(backend, world_size)
    if backend == "gloo" and world_size > max_world_size():
        raise ValueError(text("runtime.world_size_too_large", world_size=world_size,
                              cores=cpu_count(), most=max_world_size()))
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
            raise LaunchError(text("runtime.cannot_send_task",
                                   name=getattr(self.fn, "__name__", self.fn),
                                   exc_type=type(exc).__name__, exc=exc)) from None
        try:
            with open(self.path("task.pkl"), "wb") as f:
                f.write(payload)
        except OSError as exc:
            raise _processes.temp_folder_error(self.run_dir, exc) from None

    def _start(self):
        from labs.runtime import rank as _rank  # why here: it imports torch, `import labs` must not
        env = dict(os.environ)
        # The ranks speak the language of this launch (the notebook's, resolved now), not that
        # of the environment the forkserver was started with.
        env[messages.LANG_ENV] = messages.language()
        self.tails = []
        pace = _forkserver.start_pace()
        for rank in range(self.world_size):
            self.tails.append((
                OutputTail(self.path(f"rank{rank}.out"), f"[rank {rank}] ", self.stream_out),
                OutputTail(self.path(f"rank{rank}.err"), f"[rank {rank}] ", self.stream_err)))
            proc = _forkserver.RankProcess(
                target=_rank.rank_main, name=f"labs-rank{rank}", daemon=False,
                args=(self.run_dir, rank, self.world_size, self.backend, self.timeout,
                      os.getpid(), env))
            proc.start_limit = (pace, self.timeout)
            proc.start()
            self.procs.append(proc)
            if rank == 0:  # a cold helper imported torch first: that time is not the run's
                pace = _forkserver.start_pace()

    def _pump(self, final=False):
        for out, err in self.tails:
            out.pump(final)
            err.pump(final)

    def _supervise(self):
        start = time.monotonic()
        pace = _load.Pace(lambda: [p.pid for p in self.procs if p.pid])
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
            if pace.over(self.timeout):
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
        pid, status = _forkserver.SERVER.pid, _forkserver.SERVER.exit_status()
        if status is not None:
            self._stop_all()
            raise _forkserver.helper_ended(status, pid, "run")

    def _result(self, rank):
        try:
            with open(self.path(f"rank{rank}.result"), "rb") as f:
                return pickle.load(f)
        except Exception as exc:  # noqa: BLE001
            raise LaunchError(text("runtime.result_unloadable", rank=rank,
                                   world_size=self.world_size, exc_type=type(exc).__name__,
                                   exc=exc)) from None

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
        return ("\n".join(f"    {line}" for line in lines)
                or "    " + text("runtime.nothing_printed"))

    def _raise_failure(self, errors):
        ws = self.world_size
        primary = sorted((e for e in errors.values() if not e["secondary"]),
                         key=lambda e: e["time"])
        crashed = [r for r, p in enumerate(self.procs)
                   if r not in errors and r not in self.killed and p.exitcode not in (0, None)]

        def stopped(r):  # the closing line; none when the rank ran alone
            others = ", ".join(str(o) for o in range(ws) if o != r)
            return "\n" + text("runtime.others_stopped", others=others) if others else ""

        if not primary and self.helper_frozen is not None:
            raise _forkserver.helper_error(text("runtime.helper_frozen_during_run",
                                                pid=self.helper_frozen))
        if crashed or not primary:  # ranks that die without a word: a full disk, maybe
            _processes.require_free_space(os.path.dirname(self.run_dir))
        if primary:
            e = primary[0]
            original = None
            if e["original"] is not None:
                with contextlib.suppress(Exception):
                    original = pickle.loads(e["original"])
            if e["kind"] == "result":
                raise LaunchError(text("runtime.result_unsendable", rank=e["rank"],
                                       world_size=ws, message=e["message"]))
            raised = ("runtime.rank_raised_in_setup" if e["kind"] == "setup"
                      else "runtime.rank_raised")
            raise RankError(
                text(raised, rank=e["rank"], world_size=ws, message=e["message"]) + "\n\n"
                + text("runtime.traceback_on_rank", rank=e["rank"]) + "\n"
                + e["traceback"].rstrip() + stopped(e["rank"]),
                rank=e["rank"], exc_type=e["exc_type"], remote_traceback=e["traceback"],
                original=original)
        if crashed:
            r = crashed[0]
            code = self.procs[r].exitcode
            how = (text("runtime.rank_killed_by_signal", rank=r, world_size=ws,
                        signal=signal.Signals(-code).name) if code < 0
                   else text("runtime.rank_exited_with_code", rank=r, world_size=ws, code=code))
            raise RankCrashedError(f"{how}\n{self._tail(r)}{stopped(r)}", rank=r,
                                   exitcode=code)
        if errors:  # only secondary errors: a peer vanished or a collective timed out
            waiting = sorted(errors)
            first = errors[waiting[0]]
            raise LaunchTimeoutError(
                text("runtime.peers_failed", waiting=waiting, world_size=ws,
                     message=first["message"]) + "\n"
                + text("runtime.traceback_on_rank", rank=waiting[0]) + "\n"
                + first["traceback"].rstrip(),
                waiting=waiting, in_communication=True)
        raise LaunchError(text("runtime.no_results"))

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
            detail += "\n" + text("runtime.helper_also_frozen", pid=self.helper_frozen)
        why = text("runtime.hang_unknown" if not stacks else "runtime.hang_deadlock"
                   if in_communication else "runtime.hang_not_all_waiting")
        head = text("runtime.timed_out_some_finished" if finished else "runtime.timed_out",
                    elapsed=elapsed, timeout=self.timeout, waiting=waiting,
                    world_size=self.world_size, finished=finished)
        raise LaunchTimeoutError(
            f"{head}\n{why}\n{detail}",
            waiting=waiting, in_communication=in_communication if stacks else None,
            stacks={r: _stacks.parse_stack(dump) for r, dump in stacks.items()},
            notes=_stacks.read_notes(self.run_dir, waiting))

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
