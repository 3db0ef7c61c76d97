"""Figures of notebook 2.3 (pipeline parallelism): Gantt timelines, bubble vs theory, memory.

Measured and simulated timelines are the same :class:`labs.timeline.Timeline` and are drawn by
the same function, :func:`labs.plots.plot_timeline` (re-exported here with
``plot_timelines``); every figure's title names the mode that made it (simulated, real compute,
or fixed-time). Size, dpi, colours and number format come from :mod:`labs.plots`; English labels
(no CJK font is assumed), axes with units.
"""
from __future__ import annotations

import numpy as np

from labs.cost import bubble_fraction
from labs.plots import finish, format_number, plot_timeline, plot_timelines, subplots

__all__ = ["plot_timeline", "plot_timelines", "plot_bubble", "plot_memory", "plot_bars", "plot_xy",
           "subplots"]

def plot_bubble(measured: dict, *, mode: str, title: str = "pipeline bubble vs theory",
                v: int = 1, figsize=None):
    """Measured idle share (mean over ranks, min-max as error bar) against (p-1)/(v·m+p-1).

    measured: {p: {m: [idle share of each rank]}}.
    """
    fig, ax = subplots(figsize=figsize)
    for i, (p, by_m) in enumerate(sorted(measured.items())):
        ms = sorted(by_m)
        grid = np.geomspace(min(ms), max(ms), 100)
        color = f"C{i}"
        ax.plot(grid, [bubble_fraction(p, x, v) for x in grid], color=color, lw=1,
                label=f"formula (p-1)/(m+p-1), p={p}")
        mean = [np.mean(by_m[m]) for m in ms]
        low = [mean[k] - min(by_m[m]) for k, m in enumerate(ms)]
        high = [max(by_m[m]) - mean[k] for k, m in enumerate(ms)]
        ax.errorbar(ms, mean, yerr=[low, high], fmt="o", color=color, ms=4, capsize=2,
                    label=f"measured, p={p}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("micro-batches m")
    ax.set_ylabel("idle share of the step")
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    ax.legend(fontsize=7)
    return finish(fig)


def plot_memory(peaks: dict, *, ylabel: str = "peak in-flight micro-batches",
                title: str = "activations held per rank", mode: str = "measured", figsize=None):
    """Grouped bars: {schedule name: [peak per rank]}."""
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
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    ax.legend(fontsize=7)
    return finish(fig)


def plot_bars(values: dict, *, ylabel: str, title: str, mode: str, figsize=None):
    """One bar per entry of {label: value}."""
    fig, ax = subplots(figsize=figsize or (5, 2.6))
    bars = ax.bar(list(values), list(values.values()), color=[f"C{i}" for i in range(len(values))])
    ax.bar_label(bars, labels=[format_number(v) for v in values.values()], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    return finish(fig)


def plot_xy(xs, series: dict, *, xlabel: str, ylabel: str, title: str, mode: str,
            logx: bool = True, ax=None, figsize=None):
    """Lines with markers: {label: ys}. With ``ax`` draws into it and returns None."""
    own = ax is None
    if own:
        fig, ax = subplots(figsize=figsize)
    for label, ys in series.items():
        ax.plot(xs, ys, "o-", ms=4, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    ax.legend(fontsize=7)
    if own:
        return finish(fig)
    return None
