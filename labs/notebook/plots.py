"""The course's figure style, and the figures several notebooks share.

Style, in one place for every figure of every package: 7×3 inches at 110 dpi (770×330 pixels,
readable on a laptop screen at 100 % zoom; the executed notebooks in ``solutions/`` stay a few
MiB), one palette (:data:`COLORS`: blue forward, orange backward, green weight gradient,
red communication), one way to print a number on a figure
(:func:`format_number`: 8, 0.273, 641.0 -- not 641.031 or 1.28e+03) and a size
(:func:`format_bytes`). Labels, titles and legends are messages (:mod:`labs.messages`, area
``plots``) in the notebook's language; Chinese needs the CJK font that :mod:`labs.notebook.fonts`
registers on import, and without one the figures fall back to their English labels
(:func:`label`). Axes always carry units; legends sit where they cover no data
(tests/support/figure_checks.py checks every course figure for overlaps and missing glyphs).

Shared figures: collectives before/after per rank and bandwidth vs message size (2.0), and the
one timeline plot (:func:`plot_timeline`, :func:`plot_timelines`) that draws any
:class:`labs.notebook.timeline.Timeline`: layer-wise model parallelism (2.2), pipeline schedules
simulated or measured (2.3), hybrid steps (2.4).

Owns: the style (size, dpi, colours, number format), labels in the figures' language and the shared
figures. Must not: compute a formula (it calls labs.formulas.cost), communicate, print, or import a
parallelism package, the checks or the grader.
"""

from __future__ import annotations

import math
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from labs.notebook import fonts
from labs.formulas.cost import bus_bandwidth
from labs.messages import text
from labs.notebook.timeline import REAL_COMPUTE, SIMULATED, Timeline

__all__ = ["FIGSIZE", "DPI", "COLORS", "label", "mode_label", "format_number", "format_bytes",
           "subplots", "finish", "plot_collective", "plot_bandwidth", "plot_timeline",
           "plot_timelines"]

# --- style ---------------------------------------------------------------------------------

FIGSIZE = (7, 3)  # inches
DPI = 110
BLUE, ORANGE, RED, GREY = "#4C72B0", "#DD8452", "#C44E52", "#8C8C8C"
GREEN = "#55A868"  # the weight gradient W of a split backward (zero-bubble pipelines)
COLORS = {"F": BLUE, "B": ORANGE, "W": GREEN, "forward": BLUE, "backward": ORANGE, "compute": BLUE,
          "grad input": BLUE, "grad weight": ORANGE, "send": RED, "recv": RED, "all-reduce": RED,
          "communication": RED, "send-recv": "#8172B2"}

fonts.setup()


def label(key: str, /, **values) -> str:
    """The figure text ``key`` (a message of :mod:`labs.messages`, ``area.name``) in the
    language figures are drawn in (:func:`labs.notebook.fonts.plot_language`: the notebook's, or English
    when there is no CJK font)."""
    return text(key, lang=fonts.plot_language(), **values)


def format_number(value: float) -> str:
    """A number as a figure shows it: whole numbers as integers (8, 16384), others with three
    significant digits (0.273, 12.3), and one decimal from 100 on (641.0, 1282.1), never in
    exponent form below 10^5. NaN is an empty label."""
    value = float(value)
    if math.isnan(value):
        return ""
    if value == round(value) and abs(value) < 1e5:
        return f"{value:.0f}"
    if 100 <= abs(value) < 1e5:
        return f"{value:.1f}"
    return f"{value:.3g}"


def subplots(nrows: int = 1, ncols: int = 1, *, figsize=None, **kwargs):
    """``plt.subplots`` in the course's style (size and dpi)."""
    return plt.subplots(nrows, ncols, figsize=figsize or FIGSIZE, dpi=DPI, **kwargs)


def finish(fig):
    """Lay ``fig`` out, close it in pyplot and return it: a notebook shows it once, as the
    cell's value (without the close, the inline backend would show it a second time)."""
    fig.tight_layout()
    plt.close(fig)
    return fig


def format_bytes(n: float) -> str:
    """1024 -> '1 KiB', 3 * 2**20 -> '3 MiB': the course's sizes are binary (KiB, MiB, GiB);
    bandwidths are decimal (GB/s = 10^9 bytes/s), as nccl-tests and the datasheets give them."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
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


def plot_collective(results, *, title: str, stages=None, figsize=None):
    """One row per rank, one panel per stage: the values each rank holds, as labelled cells.

    Returns the figure (closed in pyplot, so a notebook shows it once as the cell's value).

    ``results`` is what ``labs.launch`` returned from a function that returns a tuple of
    tensors per rank, e.g. ``(before, after)``; ``stages`` names the tuple's entries (default:
    "before", "after" in the figures' language). NaN (or a shorter tensor) draws an empty cell:
    "this rank holds nothing meaningful here".
    """
    if stages is None:
        stages = (label("plots.stage_before"), label("plots.stage_after"))
    per_stage = [_as_rows([r[k] for r in results]) for k in range(len(stages))]
    n_ranks = len(results)
    finite = np.concatenate([g[~np.isnan(g)] for g in per_stage]) if per_stage else np.zeros(1)
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if vmin == vmax:
        vmin, vmax = vmin - 1, vmax + 1
    widths = [g.shape[1] for g in per_stage]
    height = min(4.5, 1.0 + 0.45 * n_ranks)
    fig, axes = subplots(1, len(stages), figsize=figsize or (FIGSIZE[0], height),
                         gridspec_kw={"width_ratios": widths}, squeeze=False)
    cmap = plt.get_cmap("Blues").with_extremes(bad="white")
    for ax, grid, stage in zip(axes[0], per_stage, stages):
        ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=vmin - 0.15 * (vmax - vmin),
                  vmax=vmax, aspect="auto")
        fontsize = 9 if grid.shape[1] <= 8 else 7 if grid.shape[1] <= 16 else 5
        for (i, j), value in np.ndenumerate(grid):
            dark = not math.isnan(value) and (value - vmin) > 0.6 * (vmax - vmin)
            ax.text(j, i, format_number(value), ha="center", va="center", fontsize=fontsize,
                    color="white" if dark else "black")
        ax.set_xticks(np.arange(grid.shape[1] + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(n_ranks + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="0.75", linewidth=0.6)
        ax.tick_params(which="both", length=0)
        ax.set_yticks(range(n_ranks), [f"rank {r}" for r in range(n_ranks)], fontsize=8)
        ax.set_xticks([] if grid.shape[1] > 16 else range(grid.shape[1]))
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel(label("plots.element_index"), fontsize=8)
        ax.set_title(stage, fontsize=9)
        for spine in ax.spines.values():
            spine.set_visible(False)
    for ax in axes[0][1:]:
        ax.set_yticklabels([])
    fig.suptitle(title, fontsize=10)
    return finish(fig)


def _bytes_axis(ax) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(LogLocator(base=4))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x)))
    ax.tick_params(axis="x", labelsize=7, rotation=45)
    ax.set_xlabel(label("plots.message_size"), fontsize=8)


def plot_bandwidth(sizes_bytes, seconds: dict, *, title: str = "", world_size: int | None = None):
    """Time and bandwidth of each implementation against message size, log–log.

    ``seconds`` maps a name to the times measured at ``sizes_bytes``. The right panel is the
    algorithm bandwidth S/t in GB/s (10^9 bytes per second); with ``world_size`` it is the bus
    bandwidth S/t · 2(N-1)/N instead, as nccl-tests reports for all-reduce.
    """
    sizes = np.asarray(sizes_bytes, dtype=float)
    fig, (left, right) = subplots(1, 2)
    for name, times in seconds.items():
        times = np.asarray(times, dtype=float)
        left.plot(sizes, times * 1e3, marker="o", markersize=3, label=name)
        rate = bus_bandwidth(sizes, times, world_size) if world_size else sizes / times
        right.plot(sizes, rate / 1e9, marker="o", markersize=3, label=name)
    left.set_yscale("log")
    left.set_ylabel(label("plots.time_per_all_reduce"), fontsize=8)
    right.set_yscale("log")
    right.set_ylabel(label("plots.bus_bandwidth" if world_size else "plots.algorithm_bandwidth"),
                     fontsize=8)
    for ax in (left, right):
        _bytes_axis(ax)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(True, which="major", color="0.85", linewidth=0.6)
    # upper left of the time panel: the times grow with the size, so that corner stays empty
    left.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=10)
    return finish(fig)


# --- timelines -----------------------------------------------------------------------------

def _time_unit(timeline: Timeline) -> tuple[float, str]:
    """Seconds per unit of the time axis, and the axis label's message."""
    forward = timeline.info.get("forward_s", 0.0)
    forward = max(forward) if isinstance(forward, (list, tuple)) else forward
    return (1.0, "plots.time_units") if forward >= 0.5 else (1e-3, "plots.time_ms")


# The modes and kinds of event that labs names (labs.notebook.timeline), drawn in the figures' language;
# any other mode or kind is drawn as its maker wrote it.
_MODES = {REAL_COMPUTE: "plots.mode_real_compute", SIMULATED: "plots.mode_simulated"}
_KINDS = {"forward": "plots.kind_forward", "backward": "plots.kind_backward",
          "compute": "plots.kind_compute", "communication": "plots.kind_communication",
          "grad input": "plots.kind_grad_input", "grad weight": "plots.kind_grad_weight",
          "W": "plots.kind_grad_weight", "idle": "plots.kind_idle"}


def mode_label(mode: str) -> str:
    """A timeline mode as a figure title shows it: the modes labs names (real compute,
    simulated) in the figures' language, any other text as its maker wrote it."""
    for name, key in _MODES.items():
        mode = mode.replace(name, label(key))
    return mode


def _kind_text(kind: str) -> str:
    return label(_KINDS[kind]) if kind in _KINDS else kind


def _draw_timeline(ax, timeline: Timeline, title: str, show_idle: bool | None) -> None:
    unit, unit_key = _time_unit(timeline)
    rows = timeline.n_ranks
    stages = [e.stage for row in timeline.events for e in row if e.stage is not None]
    n_stages = timeline.info.get("n_stages") or 1 + max(stages, default=0)
    chunks = max(1, -(-n_stages // rows))  # model chunks per rank (interleaved 1F1B)
    t0, t1 = timeline.span()
    legend = set()
    for r, events in enumerate(timeline.events):
        for e in events:
            later_chunk = (e.stage // rows) / (chunks - 1) if chunks > 1 and e.stage is not None \
                else 0.0
            width = (e.end - e.start) / unit
            named = e.kind not in ("F", "B") and e.kind not in legend  # F/B: the text says
            legend.add(e.kind)
            ax.barh(r, width, left=e.start / unit, height=0.8, color=COLORS.get(e.kind, GREY),
                    alpha=1.0 - 0.5 * later_chunk, edgecolor="white", linewidth=0.5,
                    label=_kind_text(e.kind) if named else None)
            if e.mb is not None and width > (t1 - t0) / unit / 60:
                ax.text((e.start + e.end) / 2 / unit, r, str(e.mb), ha="center", va="center",
                        fontsize=7, color="white")
    labels = timeline.row_labels()
    if show_idle if show_idle is not None else timeline.rows is None:
        labels = [label("plots.row_idle", row=row, idle=idle)
                  for row, idle in zip(labels, timeline.idle_fraction())]
    ax.set_yticks(range(rows), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(label(unit_key))
    mode = mode_label(timeline.mode)
    ax.set_title(f"{title} [{mode}]".strip() if mode else title, fontsize=9)
    if legend - {"F", "B"}:  # outside the axes, right of the bars: it covers none of them
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, borderaxespad=0)


def plot_timeline(timeline: Timeline, *, title: str = "", show_idle: bool | None = None,
                  figsize=None):
    """A Gantt chart of any :class:`~labs.notebook.timeline.Timeline`: one row per rank (or lane), a bar
    per event coloured by kind (blue forward, orange backward, green weight gradient W when the
    backward is split, red communication), the number
    on a bar is its micro-batch, lighter bars are later model chunks (interleaved 1F1B). Rows
    that are ranks also show their idle share. The title names the timeline's mode."""
    fig, ax = subplots(figsize=figsize)
    _draw_timeline(ax, timeline, title, show_idle)
    return finish(fig)


def plot_timelines(timelines: Sequence[Timeline], titles: Sequence[str], *, figsize=None,
                   sharex: bool = True):
    """Several timelines stacked, on one time axis (so their lengths compare)."""
    height = 1.1 + 1.0 * sum(t.n_ranks for t in timelines) / 2
    fig, axes = subplots(len(timelines), 1, figsize=figsize or (FIGSIZE[0], height),
                         sharex=sharex, squeeze=False)
    for ax, timeline, title in zip(axes[:, 0], timelines, titles):
        _draw_timeline(ax, timeline, title, None)
    return finish(fig)
