"""Is the planner tuned to its own table? Leave-some-out over the published rows of
:mod:`labs.planner.calibration` (issue 39).

The planner fits nothing: each constant of :class:`~labs.planner.types.Efficiency` comes from a
source. This module asks what fitting would have bought. Two constants are the least pinned by
their sources -- ``other_kernels`` (an assumption) and ``overlap_slowdown`` (a measured mean
whose spread is wide) -- so they are the ones a tuner would turn: for each split of the rows,
the grid value with the smallest median |error| on the rows kept is chosen, and the rows left
out are estimated with it. Held-out errors close to the in-sample ones, and refitted values
close to the sourced ones, say that the table does not set the constants; the sourced
constants' own errors on the same held-out rows are reported beside them::

    from labs.planner import holdout
    holdout.leave_out(k=5, splits=20)        # random splits of 5 rows held out
    holdout.leave_family_out()               # each paper (or recipe) held out in turn

Owns: the splits, the refit on a grid and the held-out errors. Must not: change the planner's
constants (it only passes an ``Efficiency`` to :func:`~labs.planner.calibration.table`),
import the widget or the grader, or print.
"""
from __future__ import annotations

import random
import statistics
from dataclasses import replace

from labs.planner import calibration
from labs.planner.types import Efficiency

__all__ = ["GRID", "family", "errors_on_grid", "leave_out", "leave_family_out"]

#: The constants refitted and the values tried (the sourced ones included).
GRID = {"other_kernels": (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5),
        "overlap_slowdown": (0.0, 0.1, 0.189, 0.3, 0.4)}


def family(run: calibration.Run) -> str:
    """The paper or recipe a row comes from: the first word of its name (PTD-P, ZeRO-3,
    MT-NLG, BLOOM, LLaMA-65B, GPT-3, Nemotron-4, BloombergGPT, Llama)."""
    return run.name.split()[0]


def errors_on_grid(runs=calibration.RUNS, grid=GRID) -> dict:
    """{(other_kernels, overlap_slowdown): [error of each row]} over the grid (each table is
    estimated once; the splits only pick rows)."""
    out = {}
    for ok in grid["other_kernels"]:
        for slow in grid["overlap_slowdown"]:
            eff = replace(Efficiency(), other_kernels=ok, overlap_slowdown=slow)
            out[(ok, slow)] = [r.error for r in calibration.table(runs, eff)]
    return out


def _fit(errors: dict, rows: list) -> tuple:
    """The grid point with the smallest median |error| over ``rows`` (then the smallest
    worst)."""
    def score(key):
        kept = [abs(errors[key][i]) for i in rows]
        return statistics.median(kept), max(kept)
    return min(errors, key=score)


def _report(errors: dict, splits: list, n: int) -> dict:
    sourced = (Efficiency().other_kernels, Efficiency().overlap_slowdown)
    held, held_sourced, inside, fits = [], [], [], []
    for out in splits:
        kept = [i for i in range(n) if i not in out]
        key = _fit(errors, kept)
        fits.append(key)
        held += [abs(errors[key][i]) for i in out]
        held_sourced += [abs(errors[sourced][i]) for i in out]
        inside.append(statistics.median(abs(errors[key][i]) for i in kept))
    return {"held_out_median": statistics.median(held), "held_out_worst": max(held),
            "sourced_held_out_median": statistics.median(held_sourced),
            "sourced_held_out_worst": max(held_sourced),
            "in_sample_median": statistics.median(inside), "fits": fits,
            "splits": len(splits)}


def leave_out(k: int = 5, splits: int = 20, seed: int = 0, runs=calibration.RUNS,
              grid=GRID, errors: dict | None = None) -> dict:
    """``splits`` random draws (seeded) of ``k`` rows held out: the pooled median and worst
    |error| of the held-out rows under the constants refitted on the others, the same rows
    under the sourced constants, the refits' median in-sample error and the values chosen."""
    errors = errors or errors_on_grid(runs, grid)
    rng = random.Random(seed)
    n = len(runs)
    return _report(errors, [set(rng.sample(range(n), k)) for _ in range(splits)], n)


def leave_family_out(runs=calibration.RUNS, grid=GRID, errors: dict | None = None) -> dict:
    """Each :func:`family` held out in turn (a whole paper unseen by the refit)."""
    errors = errors or errors_on_grid(runs, grid)
    names = [family(r) for r in runs]
    splits = [{i for i, f in enumerate(names) if f == name} for name in dict.fromkeys(names)]
    return _report(errors, splits, len(runs))
