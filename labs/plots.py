"""Figures the notebooks draw: collectives before/after per rank, bandwidth vs message size.

Figures are small (about 7×3 inches at 80 dpi) so that the executed notebooks committed in
``solutions/`` stay small. Labels are English: the default matplotlib fonts have no CJK glyphs,
and a label drawn as empty boxes is worse than an English one; axes always carry units.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from labs.cost import bus_bandwidth

__all__ = ["plot_collective", "plot_bandwidth", "format_bytes"]

FIGSIZE = (7, 3)
DPI = 80


def format_bytes(n: float) -> str:
    """1024 -> '1 KB', 3 * 2**20 -> '3 MB' (binary units, as message sizes usually are)."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if abs(n) >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value == round(value) else f"{value:.3g} {unit}"
    return f"{n:.0f} B"


def _as_rows(tensors) -> np.ndarray:
    """Per-rank 1-D values (tensors or lists, any lengths) -> a NaN-padded (ranks, width) array."""
    rows = [np.asarray(t.detach().cpu().flatten() if hasattr(t, "detach") else t, dtype=float)
            .reshape(-1) for t in tensors]
    width = max((len(r) for r in rows), default=0)
    grid = np.full((len(rows), max(width, 1)), np.nan)
    for i, row in enumerate(rows):
        grid[i, : len(row)] = row
    return grid


def _label(value: float) -> str:
    if math.isnan(value):
        return ""
    return f"{value:.0f}" if value == round(value) and abs(value) < 1e5 else f"{value:.3g}"


def plot_collective(results, *, title: str, stages=("before", "after"), figsize=None):
    """One row per rank, one panel per stage: the values each rank holds, as labelled cells.

    Returns the figure (closed in pyplot, so a notebook shows it once as the cell's value).

    ``results`` is what ``labs.launch`` returned from a function that returns a tuple of
    tensors per rank, e.g. ``(before, after)``; ``stages`` names the tuple's entries. NaN (or a
    shorter tensor) draws an empty cell: "this rank holds nothing meaningful here".
    """
    per_stage = [_as_rows([r[k] for r in results]) for k in range(len(stages))]
    n_ranks = len(results)
    finite = np.concatenate([g[~np.isnan(g)] for g in per_stage]) if per_stage else np.zeros(1)
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if vmin == vmax:
        vmin, vmax = vmin - 1, vmax + 1
    widths = [g.shape[1] for g in per_stage]
    height = min(4.5, 1.0 + 0.45 * n_ranks)
    fig, axes = plt.subplots(1, len(stages), figsize=figsize or (FIGSIZE[0], height), dpi=DPI,
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    cmap = plt.get_cmap("Blues").with_extremes(bad="white")
    for ax, grid, stage in zip(axes[0], per_stage, stages):
        ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=vmin - 0.15 * (vmax - vmin),
                  vmax=vmax, aspect="auto")
        fontsize = 9 if grid.shape[1] <= 8 else 7 if grid.shape[1] <= 16 else 5
        for (i, j), value in np.ndenumerate(grid):
            dark = not math.isnan(value) and (value - vmin) > 0.6 * (vmax - vmin)
            ax.text(j, i, _label(value), ha="center", va="center", fontsize=fontsize,
                    color="white" if dark else "black")
        ax.set_xticks(np.arange(grid.shape[1] + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(n_ranks + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="0.75", linewidth=0.6)
        ax.tick_params(which="both", length=0)
        ax.set_yticks(range(n_ranks), [f"rank {r}" for r in range(n_ranks)], fontsize=8)
        ax.set_xticks([] if grid.shape[1] > 16 else range(grid.shape[1]))
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("element index", fontsize=8)
        ax.set_title(stage, fontsize=9)
        for spine in ax.spines.values():
            spine.set_visible(False)
    for ax in axes[0][1:]:
        ax.set_yticklabels([])
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _detached(fig)


def _bytes_axis(ax) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x)))
    ax.tick_params(axis="x", labelsize=7, rotation=45)
    ax.set_xlabel("message size", fontsize=8)


def plot_bandwidth(sizes_bytes, seconds: dict, *, title: str = "", world_size: int | None = None):
    """Time and bandwidth of each implementation against message size, log–log.

    ``seconds`` maps a name to the times measured at ``sizes_bytes``. The right panel is the
    algorithm bandwidth S/t in GB/s (10^9 bytes per second); with ``world_size`` it is the bus
    bandwidth S/t · 2(N-1)/N instead, as nccl-tests reports for all-reduce.
    """
    sizes = np.asarray(sizes_bytes, dtype=float)
    fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE, dpi=DPI)
    for name, times in seconds.items():
        times = np.asarray(times, dtype=float)
        left.plot(sizes, times * 1e3, marker="o", markersize=3, label=name)
        rate = bus_bandwidth(sizes, times, world_size) if world_size else sizes / times
        right.plot(sizes, rate / 1e9, marker="o", markersize=3, label=name)
    left.set_yscale("log")
    left.set_ylabel("time per all-reduce (ms)", fontsize=8)
    right.set_yscale("log")
    right.set_ylabel(("bus" if world_size else "algorithm") + " bandwidth (GB/s)", fontsize=8)
    for ax in (left, right):
        _bytes_axis(ax)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, which="major", color="0.85", linewidth=0.6)
    right.legend(fontsize=7, loc="lower right")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _detached(fig)


def _detached(fig):
    """Close ``fig`` in pyplot and return it: a notebook shows it once, as the cell's value
    (without the close, the inline backend would show it a second time)."""
    plt.close(fig)
    return fig
