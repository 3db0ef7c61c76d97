"""Figures of notebook 2.2: compute-vs-communication bars per TP degree, and timelines.

Timelines (layer-wise model parallelism, the overlapped backward) are :class:`labs.timeline.Timeline`
and are drawn by :func:`labs.plots.plot_timeline`, re-exported here. Size, dpi, colours and
number format come from :mod:`labs.plots`; English labels (no CJK font is assumed), units on the
axes.
"""
from __future__ import annotations

from labs.plots import COLORS, finish, plot_timeline, subplots

__all__ = ["plot_timeline", "plot_compute_vs_comm"]


def plot_compute_vs_comm(degrees, compute_s, comm_s, *, title: str, figsize=None):
    """Stacked bars per TP degree: compute and communication seconds per rank (ms), and the
    parallel efficiency T1 / (t * T_t) on a second axis."""
    fig, ax = subplots(figsize=figsize)
    labels = [f"TP={t}" for t in degrees]
    ax.bar(labels, [c * 1e3 for c in compute_s], color=COLORS["compute"], label="compute")
    ax.bar(labels, [c * 1e3 for c in comm_s], bottom=[c * 1e3 for c in compute_s],
           color=COLORS["communication"], label="communication (incl. waiting)")
    ax.set_ylabel("time per step per rank (ms)")
    ax.set_title(title)
    steps = [a + b for a, b in zip(compute_s, comm_s)]
    twin = ax.twinx()
    twin.plot(labels, [steps[0] / (t * s) for t, s in zip(degrees, steps)], "ko-",
              label="efficiency T1/(t*Tt)")
    twin.set_ylim(0, 1.1)
    twin.set_ylabel("parallel efficiency")
    ax.legend(loc="upper left", fontsize=8)
    twin.legend(loc="upper right", fontsize=8)
    return finish(fig)
