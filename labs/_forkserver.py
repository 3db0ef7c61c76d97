"""Starting rank processes fast, and shipping notebook code to them.

A forkserver imports torch once (it preloads ``labs._rank``); every launch then forks ranks
from it, which costs milliseconds instead of a fresh ``import torch`` per rank. Functions
travel by value with cloudpickle, keeping their file name so that a rank's traceback can show
the notebook cell's source lines.
"""

from __future__ import annotations

import collections
import contextlib
import io
import linecache
import multiprocessing as mp
import os
import types
from multiprocessing import popen_forkserver, spawn

import cloudpickle

_CONTEXT = None


def context():
    """The forkserver context, with torch preloaded in the server (started on first use)."""
    global _CONTEXT
    if _CONTEXT is None:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["labs._rank"])
        _CONTEXT = ctx
    return _CONTEXT


class _Popen(popen_forkserver.Popen):
    """Forkserver Popen that does not re-import the caller's ``__main__`` in the rank.

    The function travels by value, so the rank never needs ``__main__``; re-running a script's
    top level (or a notebook kernel's launcher) in every rank would be slow and surprising.
    """

    def _launch(self, process_obj):
        real = spawn.get_preparation_data

        def without_main(name):
            data = real(name)
            data.pop("init_main_from_name", None)
            data.pop("init_main_from_path", None)
            return data

        spawn.get_preparation_data = without_main
        try:
            super()._launch(process_obj)
        finally:
            spawn.get_preparation_data = real


class RankProcess(mp.context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


def warm_up() -> None:
    """Start the forkserver now (importing torch there), so the first launch is fast."""
    context()
    from multiprocessing import forkserver
    forkserver.ensure_running()


def shutdown() -> None:
    """Stop the forkserver (the next launch starts a fresh one)."""
    from multiprocessing import forkserver
    server = forkserver._forkserver
    if server._forkserver_pid is not None:
        with contextlib.suppress(OSError):
            os.close(server._forkserver_alive_fd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server._forkserver_pid, 0)
        server._forkserver_pid = None
        server._forkserver_alive_fd = None
        server._forkserver_address = None



# --- shipping code to the ranks -----------------------------------------------------------

def _code_reduce_keeping_filename(code):
    """cloudpickle's reduction of a code object, with the real file name kept.

    cloudpickle >= 3 renames every shipped function's file to "<dynamic-code>"; keeping the
    name lets a rank's traceback point at the notebook cell or script line that failed.
    """
    reducer, args = _CLOUDPICKLE_CODE_REDUCE(code)
    args = tuple(code.co_filename if a == "<dynamic-code>" else a for a in args)
    return reducer, args


_CLOUDPICKLE_CODE_REDUCE = getattr(cloudpickle.cloudpickle, "_code_reduce", None)


class _Pickler(cloudpickle.Pickler):
    if _CLOUDPICKLE_CODE_REDUCE is not None:
        dispatch_table = collections.ChainMap(
            {types.CodeType: _code_reduce_keeping_filename}, cloudpickle.Pickler.dispatch_table)


def dumps(obj) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer).dump(obj)
    return buffer.getvalue()


def notebook_sources(fn) -> dict:
    """Source lines of notebook cells (linecache entries with no file), for rank tracebacks."""
    sources = {}
    for filename, entry in list(linecache.cache.items()):
        if len(entry) == 4 and entry[1] is None and not os.path.exists(filename):
            sources[filename] = entry[2]
    return sources
