"""Figures of notebook 2.3 (pipeline parallelism): Gantt timelines, bubble vs theory, memory.

Measured and simulated timelines are the same ``Timeline`` data and are drawn by the same
function; every figure's title names the mode that made it (simulated, real compute, or
fixed-time). Small figures (about 7×3 in at 80 dpi), English labels (no CJK font is assumed),
axes with units.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from labs.cost import bubble_fraction
from labs.pipeline.schedules import B, F
from labs.pipeline.simulator import Timeline

__all__ = ["plot_timeline", "plot_timelines", "plot_bubble", "plot_memory", "plot_bars"]

FIGSIZE = (7, 3)
DPI = 80
COLORS = {F: "#4C72B0", B: "#DD8452"}


def _draw(ax, timeline: Timeline, title: str, unit: float, unit_name: str) -> None:
    n_stages = timeline.info.get("n_stages") or 1 + max(
        (e[2] for rank in timeline.events for e in rank), default=0)
    p = timeline.n_ranks
    chunks = max(1, -(-n_stages // p))
    t0, t1 = timeline.span()
    for r, events in enumerate(timeline.events):
        for kind, mb, stage, start, end in events:
            alpha = 1.0 - 0.5 * (stage // p) / (chunks - 1) if chunks > 1 else 1.0
            ax.barh(r, (end - start) / unit, left=start / unit, height=0.8,
                    color=COLORS.get(kind, "grey"), alpha=alpha, edgecolor="white", linewidth=0.5)
            width = (end - start) / unit
            if width > (t1 - t0) / unit / 60:
                ax.text((start + end) / 2 / unit, r, str(mb), ha="center", va="center",
                        fontsize=7, color="white")
    idle = timeline.idle_fraction()
    ax.set_yticks(range(p), [f"rank {r}\nidle {idle[r]:.0%}" for r in range(p)], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit_name})")
    ax.set_title(title, fontsize=9)


def _unit(timeline: Timeline) -> tuple[float, str]:
    forward = timeline.info.get("forward_s", 0.0)
    forward = max(forward) if isinstance(forward, (list, tuple)) else forward
    return (1.0, "units, t_F = 1") if forward >= 0.5 else (1e-3, "ms")


def plot_timeline(timeline: Timeline, *, title: str = "", figsize=None):
    """A Gantt chart: one row per rank, blue = forward, orange = backward, the number is the
    micro-batch; lighter bars are later model chunks (interleaved). Returns the figure."""
    fig, ax = plt.subplots(figsize=figsize or FIGSIZE, dpi=DPI)
    _draw(ax, timeline, f"{title} [{timeline.mode}]".strip(), *_unit(timeline))
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_timelines(timelines: Sequence[Timeline], titles: Sequence[str], *, figsize=None,
                   sharex: bool = True):
    """Several timelines stacked, on one time axis (so their lengths compare)."""
    n = len(timelines)
    fig, axes = plt.subplots(n, 1, figsize=figsize or (7, 1.1 + 1.0 * sum(
        t.n_ranks for t in timelines) / 2), dpi=DPI, sharex=sharex, squeeze=False)
    for ax, timeline, title in zip(axes[:, 0], timelines, titles):
        _draw(ax, timeline, f"{title} [{timeline.mode}]", *_unit(timeline))
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_bubble(measured: dict, *, mode: str, title: str = "pipeline bubble vs theory",
                v: int = 1, figsize=None):
    """Measured idle share (mean over ranks, min-max as error bar) against (p-1)/(v·m+p-1).

    measured: {p: {m: [idle share of each rank]}}.
    """
    fig, ax = plt.subplots(figsize=figsize or FIGSIZE, dpi=DPI)
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
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_memory(peaks: dict, *, ylabel: str = "peak in-flight micro-batches",
                title: str = "activations held per rank", mode: str = "measured", figsize=None):
    """Grouped bars: {schedule name: [peak per rank]}."""
    fig, ax = plt.subplots(figsize=figsize or FIGSIZE, dpi=DPI)
    names = list(peaks)
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = peaks[name]
        xs = np.arange(len(values)) + (i - (len(names) - 1) / 2) * width
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, fmt="%g", fontsize=7)
    ax.set_xticks(range(len(peaks[names[0]])), [f"rank {r}" for r in range(len(peaks[names[0]]))])
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_bars(values: dict, *, ylabel: str, title: str, mode: str, figsize=None, fmt="%.3g"):
    """One bar per entry of {label: value}."""
    fig, ax = plt.subplots(figsize=figsize or (5, 2.6), dpi=DPI)
    bars = ax.bar(list(values), list(values.values()), color=[f"C{i}" for i in range(len(values))])
    ax.bar_label(bars, fmt=fmt, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_xy(xs, series: dict, *, xlabel: str, ylabel: str, title: str, mode: str,
            logx: bool = True, ax=None, figsize=None):
    """Lines with markers: {label: ys}. With ``ax`` draws into it and returns None."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=figsize or FIGSIZE, dpi=DPI)
    for label, ys in series.items():
        ax.plot(xs, ys, "o-", ms=4, label=label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} [{mode}]", fontsize=9)
    ax.legend(fontsize=7)
    if own:
        fig.tight_layout()
        plt.close(fig)
        return fig
    return None
