"""Figures of notebook 2.2: per-rank timelines and compute-vs-communication bars.

Small (7x3 inches, 80 dpi) with English labels (no CJK font is assumed), units on the axes.
Timelines take events ``(rank, what, start_s, end_s)`` as the rank bodies of
:mod:`labs.tensor_parallel.experiments` return them.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

__all__ = ["plot_timeline", "plot_compute_vs_comm"]

FIGSIZE, DPI = (7, 3), 80
COLORS = {"forward": "tab:blue", "backward": "tab:orange", "grad input": "tab:blue",
          "grad weight": "tab:orange", "all-reduce": "tab:red", "send": "tab:red",
          "recv": "tab:red", "compute": "tab:blue", "communication": "tab:red"}


def plot_timeline(events, *, title: str, lanes=None, row_prefix: str = "rank", figsize=FIGSIZE):
    """One row per rank (or per ``(rank, lane)`` when ``lanes`` maps a kind to a lane name),
    a bar per event, time in milliseconds. ``row_prefix`` names what the first field of an
    event is ("rank" by default). Returns the figure (closed in pyplot)."""
    events = list(events)
    rows = sorted({(e[0], lanes.get(e[1], e[1]) if lanes else "") for e in events})
    fig, ax = plt.subplots(figsize=figsize, dpi=DPI)
    seen = set()
    for rank, what, start, end in events:
        y = rows.index((rank, lanes.get(what, what) if lanes else ""))
        ax.barh(y, (end - start) * 1e3, left=start * 1e3, height=0.6,
                color=COLORS.get(what, "tab:gray"), edgecolor="black", linewidth=0.4,
                label=None if what in seen else what)
        seen.add(what)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{row_prefix} {r}" + (f" {lane}" if lane else "") for r, lane in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_compute_vs_comm(degrees, compute_s, comm_s, *, title: str, figsize=FIGSIZE):
    """Stacked bars per TP degree: compute and communication seconds per rank (ms), and the
    parallel efficiency T1 / (t * T_t) on a second axis."""
    fig, ax = plt.subplots(figsize=figsize, dpi=DPI)
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
    fig.tight_layout()
    plt.close(fig)
    return fig
