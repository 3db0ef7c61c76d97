"""Figures of notebook 2.1 (data parallel): loss curves, bytes through the busiest rank,
memory bars, compute vs communication. Labelled with units, in the figures' language
(:func:`labs.notebook.plots.label`; the axis labels and titles the notebook passes stay as given); size,
dpi and number format come from :mod:`labs.notebook.plots`. Legends sit outside the axes, on the right,
where they cover no curve or bar.

Owns: 2.1's figures. Must not: compute or measure what it draws, import torch, print, or import the
checks or the grader."""
from __future__ import annotations

import math

import numpy as np

from labs.notebook.plots import finish, format_number, label, subplots

__all__ = ["plot_curves", "plot_busiest_rank_bytes", "plot_stacked_bars"]


def _legend(ax) -> None:
    """The legend outside the axes, right of them: it covers none of the data."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)


def _finish(fig, ax, title):
    ax.tick_params(labelsize=7)
    ax.grid(True, color="0.88", linewidth=0.6)
    if title:
        ax.set_title(title, fontsize=9)
    return finish(fig)  # shown once, as the cell's value


def plot_curves(curves: dict, *, xlabel: str, ylabel: str, title: str = "", logy=False,
                x: dict | None = None, styles: dict | None = None):
    """One line per entry of ``curves`` (name -> values); ``x`` maps a name to its x values
    (default 0, 1, ...). Values that are inf/NaN (a diverged run) end the line with an 'x'."""
    fig, ax = subplots()
    for name, values in curves.items():
        values = np.asarray(values, dtype=float)
        xs = np.asarray(x[name] if x and name in x else np.arange(len(values)), dtype=float)
        ok = np.isfinite(values) & (values < 1e6)
        end = int(np.argmin(ok)) if not ok.all() else len(values)
        style = (styles or {}).get(name, {})
        line, = ax.plot(xs[:end], values[:end], label=name, linewidth=1.2, **style)
        if end < len(values):
            ax.plot(xs[max(end - 1, 0)], values[max(end - 1, 0)], "x", color=line.get_color(),
                    markersize=8)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    _legend(ax)
    return _finish(fig, ax, title)


def plot_busiest_rank_bytes(world_sizes, measured: dict, formulas: dict, *, title: str = ""):
    """Measured bytes (markers) and formulas (dashed lines) against the number of ranks."""
    fig, ax = subplots()
    for (name, values), color in zip(measured.items(), ("C0", "C1", "C2", "C3")):
        ax.plot(world_sizes, np.asarray(values) / 2**20, "o", color=color,
                label=label("data_parallel.fig_measured", name=name))
        formula = formulas.get(name)
        if formula is not None:
            ax.plot(world_sizes, np.asarray(formula) / 2**20, "--", color=color, linewidth=1,
                    label=label("data_parallel.fig_formula", name=name))
    ax.set_xticks(list(world_sizes))
    ax.set_xlabel(label("data_parallel.fig_number_of_ranks"), fontsize=8)
    ax.set_ylabel(label("data_parallel.fig_bytes_sent_received"), fontsize=8)
    _legend(ax)
    return _finish(fig, ax, title)


# The parts of labs.formulas.memory's model states (ModelStates.as_dict), named in the figures' language;
# any other part is drawn as the caller named it.
_PARTS = {"params": "data_parallel.part_params", "grads": "data_parallel.part_grads",
          "master_params": "data_parallel.part_master_params",
          "optimizer_states": "data_parallel.part_optimizer_states"}


# One colour per part, the same in every figure of the notebook (a part a figure lacks keeps its
# colour free instead of passing it on to the next part); parts named by the caller take C4, C5, ..
_COLORS = {"params": "C0", "grads": "C1", "master_params": "C2", "optimizer_states": "C3"}


def _part_label(part: str) -> str:
    return label(_PARTS[part]) if part in _PARTS else part


def plot_stacked_bars(bars: dict, *, ylabel: str, title: str = "", scale: float = 1.0,
                      logy: bool = False):
    """Stacked bars: ``bars`` maps a bar label to ``{part: value}`` (values divided by scale).

    The model-state parts keep one colour each across figures (``_COLORS``); ``logy`` draws a
    log axis, for bars that differ by orders of magnitude (a linear axis hides the small one).
    Long bar labels are wrapped after their commas so that neighbours do not overlap."""
    fig, ax = subplots()
    labels = list(bars)
    parts = [p for p in dict.fromkeys(k for b in bars.values() for k in b) if p != "total"]
    others = iter(f"C{i}" for i in range(len(_COLORS), 10))
    bottom = np.zeros(len(labels))
    for part in parts:
        values = np.array([bars[label].get(part, 0.0) for label in labels], dtype=float) / scale
        color = _COLORS.get(part) or next(others)
        if not values.any():
            continue
        ax.bar(labels, values, bottom=bottom, label=_part_label(part), width=0.6, color=color)
        bottom += values
    top = bottom.max() if len(bottom) else 1.0
    for i, total in enumerate(bottom):
        y = total * 1.08 if logy else total + 0.01 * top
        ax.text(i, y, format_number(total), ha="center", va="bottom", fontsize=7)
    if logy and top > 0 and math.isfinite(top):
        ax.set_yscale("log")
        smallest = min(v for b in bars.values() for k, v in b.items() if k != "total" and v > 0)
        ax.set_ylim(smallest / scale / 3, top * 3)
    else:
        ax.set_ylim(0, top * 1.15 if top > 0 and math.isfinite(top) else 1)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    widest = max((max(len(line) for line in str(name).splitlines()) for name in labels), default=0)
    if widest * len(labels) > 70:  # about the characters that fit side by side at 7 pt
        ax.set_xticks(range(len(labels)), [str(name).replace(", ", ",\n") for name in labels])
    _legend(ax)
    return _finish(fig, ax, title)
