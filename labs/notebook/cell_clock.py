"""How long a notebook's cells ran: the sum of each cell's own run time, not the wall time since
the first cell (which counts the reader's pauses: 207 s of reading for 25 s of cells).

The setup cell starts the clock, the closing cell prints it::

    CLOCK = cell_clock.start()
    ...
    print(f"notebook ran in {CLOCK.seconds():.0f} s")

In a Jupyter kernel it adds up the spans between IPython's ``pre_run_cell`` and
``post_run_cell`` events (the cell that starts it counts from the moment it is called, the cell
that reads it up to that moment). Outside IPython (a script) there are no cells, and it falls
back to the time since :func:`start`. Owns only this clock: prints nothing, imports nothing of
labs.

Must not: print or import anything of labs.
"""
from __future__ import annotations

import time

__all__ = ["CellClock", "start"]


class CellClock:
    """Seconds spent running cells since :func:`start` (see the module docstring)."""

    def __init__(self, shell=None, clock=time.perf_counter):
        self._clock = clock
        self._shell = shell
        self._done = 0.0
        self._running_since: float | None = clock()  # the cell that starts the clock
        if shell is not None:
            shell.events.register("pre_run_cell", self._pre)
            shell.events.register("post_run_cell", self._post)

    def _pre(self, *_):
        self._running_since = self._clock()

    def _post(self, *_):
        if self._running_since is not None:
            self._done += self._clock() - self._running_since
        self._running_since = None

    def seconds(self) -> float:
        """Cells' own run time so far, the running cell included up to now."""
        running = 0.0 if self._running_since is None else self._clock() - self._running_since
        return self._done + running

    def stop(self) -> None:
        """Stop listening to the kernel's events (a second :func:`start` replaces this clock)."""
        if self._shell is not None:
            for name, fn in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
                try:
                    self._shell.events.unregister(name, fn)
                except ValueError:
                    pass
            self._shell = None


_current: CellClock | None = None


def start() -> CellClock:
    """A new clock for this notebook (re-running the setup cell restarts it)."""
    global _current
    if _current is not None:
        _current.stop()
    try:
        from IPython import get_ipython  # optional: only inside a kernel
        shell = get_ipython()
    except ImportError:
        shell = None
    _current = CellClock(shell)
    return _current
