"""Run All on several notebooks at once, each in its own kernel (issue 27): much of a course
notebook's run waits (kernel start, rank start-up, sleeps), so two or three kernels at once take
less time on 2 cores than one after the other.

``run_notebooks`` drives the kernels from this process; ``run_notebooks_apart`` from a process
of its own (``python -m tests.support.notebook_runs``), for runs beside other tests: nbclient
handles every kernel message in Python, and in a thread of the test process it held the GIL
so often that the tests beside it slowed 2.5 times (the planner's widget tests, measured on 2
cores: 21 s alone, 51 s beside the pre-layout notebooks in a thread, 18 s beside them in a
process of their own).

Owns: ``run_notebooks``, ``run_notebooks_apart``. Must not: assert anything (the tests do), or
import labs or grader.
"""
from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from tests.support import early

__all__ = ["run_notebooks", "run_notebooks_apart"]

ROOT = Path(__file__).resolve().parents[2]


def run_notebooks(paths, *, at_once: int, cwd, timeout: float = 300) -> dict:
    """Execute every notebook of ``paths`` (in that order, ``at_once`` at a time), each in a
    kernel started in ``cwd(path)`` with ``timeout`` seconds per cell, as nbclient does with
    ``allow_errors=False`` (a cell tagged ``raises-exception`` may raise): ``{path: the executed
    notebook, or the exception its run raised}``."""
    return asyncio.run(_run(list(paths), at_once, cwd, timeout))


def run_notebooks_apart(paths, *, at_once: int, cwd: Path, timeout: float = 300) -> dict:
    """:func:`run_notebooks` in a process of its own, every kernel started in ``cwd``; the
    process is started by :func:`tests.support.early.command` (in the background work, in its
    cgroup, with every kernel it starts). A run that raised gives a ``RuntimeError`` with what
    it said."""
    paths = list(paths)
    with tempfile.TemporaryDirectory(prefix="notebook-runs-") as out:
        proc = subprocess.run(early.command(
            [sys.executable, "-m", "tests.support.notebook_runs", "--out", out,
             "--at-once", str(at_once), "--cwd", str(cwd), "--timeout", str(timeout),
             *map(str, paths)]), capture_output=True, text=True, cwd=ROOT)
        runs = {}
        for i, path in enumerate(paths):
            executed, error = Path(out) / f"{i}.ipynb", Path(out) / f"{i}.error"
            if executed.exists():
                runs[path] = nbformat.read(str(executed), as_version=4)
            elif error.exists():
                runs[path] = RuntimeError(error.read_text(encoding="utf-8"))
            else:
                runs[path] = RuntimeError(f"the notebooks' process ended ({proc.returncode}) "
                                          f"before running {path.name}:\n{proc.stderr[-3000:]}")
        return runs


async def _run(paths: list, at_once: int, cwd, timeout: float) -> dict:
    from nbclient import NotebookClient

    gate = asyncio.Semaphore(max(1, at_once))

    async def one(path: Path):
        async with gate:
            nb = nbformat.read(str(path), as_version=4)
            # killed at the end, not asked to stop: a graceful stop after labs.launch waits 2.6 s
            await NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                 shutdown_kernel="immediate",
                                 resources={"metadata": {"path": str(cwd(path))}}).async_execute()
            return nb

    done = await asyncio.gather(*(one(p) for p in paths), return_exceptions=True)
    return dict(zip(paths, done))


def main(argv=None) -> None:
    """``python -m tests.support.notebook_runs --out DIR --at-once N --cwd DIR --timeout S
    PATH...``: the i-th notebook executed as ``DIR/i.ipynb``, or why it failed as ``DIR/i.error``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--at-once", type=int, required=True)
    parser.add_argument("--cwd", type=Path, required=True)
    parser.add_argument("--timeout", type=float, required=True)
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    runs = run_notebooks(args.paths, at_once=args.at_once, cwd=lambda _: args.cwd,
                         timeout=args.timeout)
    for i, path in enumerate(args.paths):
        if isinstance(runs[path], BaseException):
            (args.out / f"{i}.error").write_text(f"{type(runs[path]).__name__}: {runs[path]}",
                                                 encoding="utf-8")
        else:
            nbformat.write(runs[path], str(args.out / f"{i}.ipynb"))


if __name__ == "__main__":
    main()
