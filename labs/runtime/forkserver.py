"""Starting rank processes fast, and shipping notebook code to them.

A forkserver imports torch once (it preloads ``labs.runtime.rank``); every launch then forks ranks
from it, which costs milliseconds instead of a fresh ``import torch`` per rank. Functions
travel by value with cloudpickle, keeping their file name so that a rank's traceback can show
the notebook cell's source lines.

The course runs its own forkserver instance (not multiprocessing's global one), so nothing in
``multiprocessing`` is changed for other code in the same kernel. The server never sees a
Ctrl-C: a terminal or Jupyter sends SIGINT to the kernel's whole process group, and a server
killed in the middle of forking a rank would break every later launch; the launcher stops
ranks itself. Each request waits for the server only for the launch's timeout, counted at the
pace the machine allows the server (labs.runtime.load): a frozen server cannot block a launch
past its timeout, and a server slowed by a busy machine is not taken for a frozen one (on 2 busy
cores, 2.0's deadlock demo, ``timeout=3``, lost its ranks' start to that clock).

Owns: the one server per kernel (its only process state), shipping code to it and the rank processes
it forks. Must not: import torch in the kernel (only the server preloads it), run the user's
function (labs.runtime.rank), or import labs' course modules (models, parallelism packages, planner,
checks) or the grader: the runtime sits below everything.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import linecache
import multiprocessing as mp
import multiprocessing.connection
import os
import select
import shutil
import signal
import tempfile
import threading
import time
import types
from multiprocessing import forkserver, popen_forkserver, process, reduction, spawn, util

from labs.messages import sentences, text
from labs.runtime import load as _load, processes as _processes
from labs.runtime.errors import HelperError

__all__ = ["SERVER", "PRELOAD", "preload", "RankProcess", "start_pace", "helper_error",
           "helper_ended", "warm_up", "shutdown", "dumps", "notebook_sources"]

# The first module shields the server from Ctrl-C, the second imports torch. Then what the
# ranks would each import again, paid here once (about 0.4 s) instead of in every rank:
# - what the code above the runtime registers (:func:`preload`: the exercises' checks, whose
#   rank bodies every check launch runs), and what those bodies import (the ZeRO-1 check:
#   labs.data_parallel and torch.distributed.optim, which compiles TorchScript on import: about
#   0.5 CPU-s per rank, twenty ranks per check);
# - torch._dynamo, which DDP and torch.optim import lazily (about a second; not in the kernel).
# Imports only: nothing here starts a thread or computes (the ranks are forked from it).
PRELOAD = ["labs.runtime.forkserver_preload", "labs.runtime.rank", "labs.collectives",
           "labs.data", "labs.reference", "labs.data_parallel.zero_stages",
           "labs.tensor_parallel.model", "torch.distributed.optim", "torch._dynamo"]


def preload(*modules: str) -> None:
    """Have the forkserver import ``modules`` too (before ``torch._dynamo``), from its next
    start: a package above the runtime names what its rank bodies need (imports only)."""
    for name in modules:
        if name not in PRELOAD:
            PRELOAD.insert(len(PRELOAD) - 1, name)


COLD_START_S = 120.0  # time the server may take to import torch on a slow laptop
_SLICE = 0.1  # seconds between two looks at a start's time limit


def helper_error(problem: str) -> HelperError:
    """The error about the helper process: ``problem`` (a sentence that names it), then what
    became of the launch and what to do."""
    return HelperError(sentences(problem, text("runtime.helper_restart")))


#: How the helper ended (:meth:`_ForkServer.exit_status`) and when it was seen -> its sentence.
_ENDED = {("killed", "run"): "runtime.helper_killed_during_run",
          ("killed", "start"): "runtime.helper_killed_while_starting",
          ("ended", "run"): "runtime.helper_ended_during_run",
          ("ended", "start"): "runtime.helper_ended_while_starting"}


def helper_ended(status: tuple, pid, when: str) -> HelperError:
    """The error for a helper that ended: ``status`` from :meth:`_ForkServer.exit_status`,
    seen ``when`` ("run": during a run, "start": while starting a rank)."""
    how, signal_name = status
    return helper_error(text(_ENDED[how, when], pid=pid, signal=signal_name))


class _ForkServer(forkserver.ForkServer):
    """multiprocessing's ForkServer, one instance for the course, with torch preloaded."""

    def __init__(self):
        super().__init__()
        self._preload_modules = list(PRELOAD)
        self.started_at = None  # while it has not forked a rank yet: it may be importing torch

    @property
    def pid(self):
        return self._forkserver_pid

    def ensure_running(self):
        _use_own_socket_folder()
        before = self._forkserver_pid
        if before is None:
            self._preload_modules = list(PRELOAD)
        try:
            with _interrupts_blocked():  # the server is born with SIGINT blocked
                super().ensure_running()
        except ChildProcessError:  # another part of the kernel reaped our server: forget it
            self.forget()
            with _interrupts_blocked():
                super().ensure_running()
        if self._forkserver_pid != before:
            self.started_at = time.monotonic()
        return self.started_at

    def exit_status(self):
        """None while the server runs; else how it ended (and it is forgotten): ``("killed",
        signal name)``, or ``("ended", None)`` (it exited, or is no longer ours to run)."""
        pid = self._forkserver_pid
        if pid is None:
            return "ended", None
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, None
        if not done:
            return None
        self.forget()
        if status is not None and os.WIFSIGNALED(status):
            return "killed", signal.Signals(os.WTERMSIG(status)).name
        return "ended", None

    def kill(self):
        """End a server that stopped answering; the next launch starts a new one."""
        pid = self._forkserver_pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.forget()

    def forget(self):
        with contextlib.suppress(OSError, TypeError):
            os.close(self._forkserver_alive_fd)
        with contextlib.suppress(OSError, TypeError):
            os.unlink(self._forkserver_address)
        self._forkserver_pid = self._forkserver_alive_fd = self._forkserver_address = None
        self.started_at = None

    def stop(self):
        """Ask the server to exit (closing its 'alive' pipe) and wait for it."""
        pid = self._forkserver_pid
        if pid is not None:
            with contextlib.suppress(OSError):
                os.close(self._forkserver_alive_fd)
            self._forkserver_alive_fd = None
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self.forget()


SERVER = _ForkServer()
_SERVER_FOLDER_LOCK = threading.Lock()


def _use_own_socket_folder() -> None:
    """Give multiprocessing a temporary folder named after this process, if it has none yet.

    The server's socket lives in multiprocessing's temporary folder, which is removed at a
    normal exit; a killed kernel leaves it behind. Named ``labs-mp-<pid>-…`` (instead of
    ``pymp-…``), the next launch can tell that its owner is gone and sweep it.
    """
    with _SERVER_FOLDER_LOCK:
        config = process.current_process()._config
        if config.get("tempdir") is None:
            folder = tempfile.mkdtemp(prefix=f"{_processes.SERVER_PREFIX}{os.getpid()}-")
            util.Finalize(None, shutil.rmtree, args=(folder,), kwargs={"ignore_errors": True},
                          exitpriority=-100)
            config["tempdir"] = folder


@contextlib.contextmanager
def _interrupts_blocked():
    """Block SIGINT in this thread, so a process started here is born with it blocked."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Popen(popen_forkserver.Popen):
    """Starts one rank through :data:`SERVER`, waiting for it only for its time limit.

    Unlike multiprocessing's own, the rank does not re-import the caller's ``__main__``: the
    function travels by value, and re-running a script's top level (or a notebook kernel's
    launcher) in every rank would be slow and surprising.
    """

    def _launch(self, process_obj):
        # taken off the process before it is pickled for the server (a pace is not sent)
        pace, limit = process_obj.__dict__.pop("start_limit", (None, COLD_START_S))
        pace, limit = pace or start_pace(), min(limit, COLD_START_S)
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_name", None)
        prep_data.pop("init_main_from_path", None)
        buf = io.BytesIO()
        mp.context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            mp.context.set_spawning_popen(None)
        cold_since = SERVER.ensure_running()
        # a new server imports torch before it can fork: it has COLD_START_S to do it
        warm_from = -1.0 if cold_since is None else cold_since + COLD_START_S

        def expired():
            return time.monotonic() > warm_from and pace.over(limit)

        server_pid = SERVER.pid
        try:
            self.sentinel, w = SERVER.connect_to_new_process(self._fds)
        except (OSError, EOFError) as exc:
            SERVER.kill()
            raise helper_error(text("runtime.helper_refused", pid=server_pid,
                                    exc_type=type(exc).__name__, exc=exc)) from None
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        payload = buf.getbuffer()
        os.set_blocking(w, False)
        try:
            while payload:
                if select.select([], [w], [], _SLICE)[1]:
                    payload = payload[os.write(w, payload):]
                elif expired():
                    raise TimeoutError
            while not multiprocessing.connection.wait([self.sentinel], _SLICE):
                if expired():
                    raise TimeoutError
            self.pid = forkserver.read_signed(self.sentinel)
            SERVER.started_at = None  # it answered: warm from now on
        except TimeoutError:
            SERVER.kill()
            raise helper_error(text("runtime.helper_no_answer", pid=server_pid)) from None
        except (OSError, EOFError):
            status = SERVER.exit_status()
            SERVER.kill()
            if status is not None:
                raise helper_ended(status, server_pid, "start") from None
            raise helper_error(text("runtime.helper_closed_connection", pid=server_pid)) from None
        finally:
            os.close(w)


def start_pace() -> _load.Pace:
    """A clock for starting ranks: the seconds counted at the pace the machine allows the
    server (a frozen server does not run, so its time counts in full)."""
    return _load.Pace(lambda: [SERVER.pid] if SERVER.pid else [])


class RankProcess(mp.context.ForkServerProcess):
    # start_limit: (a start_pace(), the seconds a start may take on it), set by the launcher
    # before start(); a start never waits for more than COLD_START_S counted seconds
    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


def warm_up() -> None:
    """Start the forkserver now (importing torch there), so the first launch is fast."""
    SERVER.ensure_running()


def shutdown() -> None:
    """Stop the forkserver (the next launch starts a fresh one) and sweep run folders that
    killed kernels left behind."""
    SERVER.stop()
    _processes.sweep_stale_folders()


# --- shipping code to the ranks -----------------------------------------------------------

def _code_reduce_keeping_filename(code):
    """cloudpickle's reduction of a code object, with the real file name kept.

    cloudpickle >= 3 renames every shipped function's file to "<dynamic-code>"; keeping the
    name lets a rank's traceback point at the notebook cell or script line that failed.
    """
    import cloudpickle
    reducer, args = cloudpickle.cloudpickle._code_reduce(code)
    args = tuple(code.co_filename if a == "<dynamic-code>" else a for a in args)
    return reducer, args


@functools.cache
def _pickler():
    """cloudpickle's Pickler keeping code objects' file names, made on the first launch:
    ``import labs`` must work before cloudpickle is installed (a hosted notebook's first cell
    imports ``labs.notebook.hosted`` to install it) and stays cheap without it."""
    import cloudpickle

    class Pickler(cloudpickle.Pickler):
        if hasattr(cloudpickle.cloudpickle, "_code_reduce"):
            dispatch_table = collections.ChainMap(
                {types.CodeType: _code_reduce_keeping_filename}, cloudpickle.Pickler.dispatch_table)
    return Pickler


def dumps(obj) -> bytes:
    buffer = io.BytesIO()
    _pickler()(buffer).dump(obj)
    return buffer.getvalue()


def notebook_sources(fn) -> dict:
    """Source lines of notebook cells (linecache entries with no file), for rank tracebacks."""
    sources = {}
    for filename, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is None and not os.path.exists(filename):
            sources[filename] = entry[2]
    return sources
