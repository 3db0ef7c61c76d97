"""Figures of notebook 2.3 (pipeline parallelism): Gantt timelines, bubble vs theory, memory.

Measured and simulated timelines are the same :class:`labs.notebook.timeline.Timeline` and are drawn by
the same function, :func:`labs.notebook.plots.plot_timeline` (re-exported here with
``plot_timelines``); every figure's title names the mode that made it (simulated, real compute,
or fixed-time). Size, dpi, colours and number format come from :mod:`labs.notebook.plots`; labels,
legends and the default titles are the messages ``pipeline.fig_*`` (:func:`labs.notebook.plots.label`:
the notebook's language, English without a CJK font), axes with units. Titles, labels and modes
the caller passes are drawn as given. Legends sit outside the axes, on the right, so they never
cover a point.

Owns: 2.3's figures. Must not: communicate or import torch, compute a formula (labs.formulas.cost), or print.
"""
from __future__ import annotations

import numpy as np

from labs.formulas.cost import bubble_fraction
from labs.notebook.plots import (finish, format_number, label, mode_label, plot_timeline,
                         plot_timelines, subplots)

__all__ = ["plot_timeline", "plot_timelines", "plot_bubble", "plot_memory", "plot_bars", "plot_xy",
           "subplots"]


def _legend_outside(ax, **kwargs) -> None:
    """The legend to the right of the axes, top-aligned: it covers no data whatever the values."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize=7, **kwargs)


def plot_bubble(measured: dict, *, mode: str, title: str | None = None, v: int = 1,
                figsize=None):
    """Measured idle share (mean over ranks, min-max as error bar) against (p-1)/(v·m+p-1).

    measured: {p: {m: [idle share of each rank]}}. ``title``: default "pipeline bubble vs
    theory" (in the figures' language).
    """
    title = label("pipeline.fig_bubble_title") if title is None else title
    formula = "pipeline.fig_formula" if v == 1 else "pipeline.fig_formula_interleaved"
    fig, ax = subplots(figsize=figsize)
    for i, (p, by_m) in enumerate(sorted(measured.items())):
        ms = sorted(by_m)
        grid = np.geomspace(min(ms), max(ms), 100)
        color = f"C{i}"
        ax.plot(grid, [bubble_fraction(p, x, v) for x in grid], color=color, lw=1,
                label=label(formula, p=p))
        mean = [np.mean(by_m[m]) for m in ms]
        low = [mean[k] - min(by_m[m]) for k, m in enumerate(ms)]
        high = [max(by_m[m]) - mean[k] for k, m in enumerate(ms)]
        ax.errorbar(ms, mean, yerr=[low, high], fmt="o", color=color, ms=4, capsize=2,
                    label=label("pipeline.fig_measured_p", p=p))
    ax.set_xscale("log", base=2)
    ax.set_xlabel(label("pipeline.fig_microbatches"))
    ax.set_ylabel(label("pipeline.fig_idle_share"))
    ax.set_title(f"{title} [{mode_label(mode)}]", fontsize=9)
    _legend_outside(ax)
    return finish(fig)


def plot_memory(peaks: dict, *, ylabel: str | None = None, title: str | None = None,
                mode: str | None = None, figsize=None):
    """Grouped bars: {schedule name: [peak per rank]}. Defaults (in the figures' language):
    ylabel "peak in-flight micro-batches", title "activations held per rank", mode "measured"."""
    ylabel = label("pipeline.fig_peak_in_flight") if ylabel is None else ylabel
    title = label("pipeline.fig_memory_title") if title is None else title
    mode = label("pipeline.fig_measured") if mode is None else mode
    fig, ax = subplots(figsize=figsize)
    names = list(peaks)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = peaks[name]
        xs = np.arange(len(values)) + (i - (len(names) - 1) / 2) * width
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, labels=[format_number(v) for v in values], fontsize=7)
    ax.set_xticks(range(len(peaks[names[0]])), [f"rank {r}" for r in range(len(peaks[names[0]]))])
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode_label(mode)}]", fontsize=9)
    ax.margins(y=0.15)  # room above the tallest bar for its value
    _legend_outside(ax)
    return finish(fig)


def plot_bars(values: dict, *, ylabel: str, title: str, mode: str, figsize=None):
    """One bar per entry of {label: value}."""
    fig, ax = subplots(figsize=figsize or (5, 2.6))
    bars = ax.bar(list(values), list(values.values()), color=[f"C{i}" for i in range(len(values))])
    ax.bar_label(bars, labels=[format_number(v) for v in values.values()], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode_label(mode)}]", fontsize=9)
    return finish(fig)


def plot_xy(xs, series: dict, *, xlabel: str, ylabel: str, title: str, mode: str,
            logx: bool = True, ax=None, figsize=None):
    """Lines with markers: {label: ys}. With ``ax`` draws into it and returns None."""
    own = ax is None
    if own:
        fig, ax = subplots(figsize=figsize)
    for name, ys in series.items():
        ax.plot(xs, ys, "o-", ms=4, label=name)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode_label(mode)}]", fontsize=9)
    _legend_outside(ax)
    if own:
        return finish(fig)
    return None
