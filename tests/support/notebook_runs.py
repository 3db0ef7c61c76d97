"""Run All on several notebooks at once, each in its own kernel (issue 27): much of a course
notebook's run waits (kernel start, rank start-up, sleeps), so two or three kernels at once take
less time on 2 cores than one after the other.

Owns: ``run_notebooks``. Must not: assert anything (the tests do), or import labs or grader at
import (a prefixed run takes the grader's public ``prefixed_kernel_manager``).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import nbformat

__all__ = ["run_notebooks"]


def run_notebooks(paths, *, at_once: int, cwd, timeout: float = 300, prefix=()) -> dict:
    """Execute every notebook of ``paths`` (in that order, ``at_once`` at a time), each in a
    kernel started in ``cwd(path)`` with ``timeout`` seconds per cell, as nbclient does with
    ``allow_errors=False`` (a cell tagged ``raises-exception`` may raise): ``{path: the executed
    notebook, or the exception its run raised}``. ``prefix``: words put before the kernel's
    command (tests/support/early.py's move into a cgroup)."""
    return asyncio.run(_run(list(paths), at_once, cwd, timeout, list(prefix)))


async def _run(paths: list, at_once: int, cwd, timeout: float, prefix: list) -> dict:
    from nbclient import NotebookClient

    extra = {}
    if prefix:  # the grader's own prefixed kernel manager (its sandbox shim goes the same way)
        from grader.runner import prefixed_kernel_manager

        extra = {"kernel_manager_class": prefixed_kernel_manager(prefix)}

    gate = asyncio.Semaphore(max(1, at_once))

    async def one(path: Path):
        async with gate:
            nb = nbformat.read(str(path), as_version=4)
            # killed at the end, not asked to stop: a graceful stop after labs.launch waits 2.6 s
            await NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                 shutdown_kernel="immediate",
                                 resources={"metadata": {"path": str(cwd(path))}},
                                 **extra).async_execute()
            return nb

    done = await asyncio.gather(*(one(p) for p in paths), return_exceptions=True)
    return dict(zip(paths, done))
