"""The grader's time limits, derived from how long the source notebook's own cells took.

Without ``--cell-timeout``, each exercise (its cells and its check) and the setup cell get
``FLOOR + FACTOR x`` the seconds the same cells of the source notebook took when it was executed
(the execution times Jupyter records in each cell's metadata), at most the cap
(``DEFAULT_CELL_TIMEOUT`` of :mod:`grader.submission`, or ``--timeout`` when shorter). A
step whose source cells carry no timing gets the cap. So a hung cell costs about half a minute
instead of five, while an honest solution keeps a wide margin: the floor covers the launcher's
cold start (its first launch imports torch once more) and a loaded machine; the factor a
solution ten times slower than the course's. ``--cell-timeout`` sets one fixed limit instead.

Fair under load: a wall-time limit counts the time the machine had for the kernel, not the
clock (labs.runtime.load, as the launcher counts its timeouts). While an exercise runs, each
moment counts ``1 / stretch`` of itself, where ``stretch`` is how much slower the kernel's
runnable processes go because others (another submission graded beside it, anything else on
the machine) compete for the cores; a kernel that waits (a deadlock, a sleep) is stretched by
nothing. CPU time is limited separately
(grader.resources). So an honest submission graded beside a CPU hog gets the points it gets
alone; a hung one is stopped as before.

Owns: reading the recorded run times, deriving the limits and the load's stretch. Must not: run
anything.
"""

from __future__ import annotations

from datetime import datetime

from labs.runtime import load

__all__ = ["FLOOR", "FACTOR", "MAX_STRETCH", "cell_seconds", "derive", "stretch"]

FLOOR = 30.0  # seconds every step gets on top of the scaled source time
FACTOR = 10.0  # times the source's own time
# the load's stretch of a wall-time limit: the launcher's rule (labs.runtime.load)
MAX_STRETCH, stretch = load.MAX_STRETCH, load.stretch


def cell_seconds(cell) -> float | None:
    """Seconds the cell took when its notebook was executed (``metadata.execution``), or None."""
    timing = cell.get("metadata", {}).get("execution")
    if not isinstance(timing, dict):
        return None
    try:
        start = datetime.fromisoformat(str(timing["iopub.execute_input"]).replace("Z", "+00:00"))
        end = datetime.fromisoformat(str(timing["shell.execute_reply"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    seconds = (end - start).total_seconds()
    return seconds if seconds >= 0 else None


def _limit(cells, cap: float) -> float:
    times = [cell_seconds(cell) for cell in cells]
    if not times or any(t is None for t in times):
        return cap
    return min(cap, FLOOR + FACTOR * sum(times))


def derive(source, steps: dict, cap: float) -> dict:
    """``{"setup": seconds, grade_id: seconds, ...}`` for the source notebook ``source`` whose
    own plan (:func:`grader.sources.plan` of the source itself) is ``steps``."""
    limits = {"setup": _limit([source.cells[i] for i in steps["setup"]], cap)}
    for exercise in steps["exercises"]:
        limits[exercise["grade_id"]] = _limit([source.cells[i] for i in exercise["cells"]], cap)
    return limits

