"""Figures of notebook 2.2: compute-vs-communication bars per TP degree, and timelines.

Timelines (layer-wise model parallelism, the overlapped backward) are :class:`labs.notebook.timeline.Timeline`
and are drawn by :func:`labs.notebook.plots.plot_timeline`, re-exported here. Size, dpi, colours and
number format come from :mod:`labs.notebook.plots`; labels and legends are the messages
``tensor_parallel.fig_*`` (:func:`labs.notebook.plots.label`: the notebook's language, English without a
CJK font), units on the axes.

Owns: 2.2's figures. Must not: communicate, measure, or print.
"""
from __future__ import annotations

from matplotlib.transforms import offset_copy

from labs.notebook.plots import COLORS, finish, label, plot_timeline, subplots

__all__ = ["plot_timeline", "plot_compute_vs_comm"]


def plot_compute_vs_comm(degrees, compute_s, comm_s, *, title: str, figsize=None):
    """Stacked bars per TP degree: compute and communication seconds per rank (ms), and the
    parallel efficiency T1 / (t * T_t) on a second axis. One legend, outside the axes on the
    right, so it covers neither the bars nor the efficiency line."""
    fig, ax = subplots(figsize=figsize)
    labels = [f"TP={t}" for t in degrees]
    ax.bar(labels, [c * 1e3 for c in compute_s], color=COLORS["compute"],
           label=label("plots.kind_compute"))
    ax.bar(labels, [c * 1e3 for c in comm_s], bottom=[c * 1e3 for c in compute_s],
           color=COLORS["communication"], label=label("tensor_parallel.fig_communication"))
    ax.set_ylabel(label("tensor_parallel.fig_step_time"))
    ax.set_title(title)
    steps = [a + b for a, b in zip(compute_s, comm_s)]
    twin = ax.twinx()
    twin.plot(labels, [steps[0] / (t * s) for t, s in zip(degrees, steps)], "ko-",
              label=label("tensor_parallel.fig_efficiency_legend"))
    twin.set_ylim(0, 1.1)
    twin.set_ylabel(label("tensor_parallel.fig_efficiency"))
    handles = [h for a in (ax, twin) for h in a.get_legend_handles_labels()[0]]
    names = [n for a in (ax, twin) for n in a.get_legend_handles_labels()[1]]
    # right of the efficiency axis' label, a fixed distance from the axes whatever their width
    beside = offset_copy(ax.transAxes, fig=fig, x=0.65, y=0, units="inches")
    twin.legend(handles, names, loc="upper left", bbox_to_anchor=(1, 1), bbox_transform=beside,
                borderaxespad=0, fontsize=8)
    return finish(fig)
