"""Who talks to whom in context parallelism (a ring) and expert parallelism (all-to-all).

Ranks are drawn as nodes on a circle, messages as arrows labelled with the bytes they carry;
the byte counts come from the formulas of :mod:`labs.hybrid.context_parallel` and
:mod:`labs.hybrid.expert_parallel`, the same ones the tests check against the counters. Figures
are small and returned closed (a notebook shows each once, as the cell's value).

Owns: these two figures. Must not: communicate, compute byte counts of its own (the formulas are the
CP/EP modules'), or print.
"""
from __future__ import annotations

import math

import math

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch

from labs.hybrid.context_parallel import ring_attention_traffic
from labs.hybrid.expert_parallel import expert_parallel_traffic
from labs.messages import joined, text
from labs.notebook.fonts import plot_language
from labs.notebook.plots import DPI, format_bytes, label

__all__ = ["plot_ring", "plot_all_to_all"]

FIGSIZE = (5.2, 4.8)  # room for both labels of a pair of ranks, in Chinese too
NODE_RADIUS = 0.22
CURVE = 0.18  # arc3 bend: the arrows i -> j and j -> i do not overlap
CURVE_ACROSS = 0.34  # across the middle: the crossing pairs' labels land apart


def _positions(n: int) -> list[tuple[float, float]]:
    """Node centres on the unit circle, rank 0 on top, clockwise."""
    return [(math.sin(2 * math.pi * i / n), math.cos(2 * math.pi * i / n)) for i in range(n)]


def _draw_nodes(ax, labels: list[str]) -> list[Circle]:
    nodes = []
    for (x, y), text in zip(_positions(len(labels)), labels):
        nodes.append(ax.add_patch(Circle((x, y), NODE_RADIUS, facecolor="#dbe9f6",
                                         edgecolor="#1f77b4")))
        ax.text(x, y, text, ha="center", va="center", fontsize=8)
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.45, 1.45)
    ax.set_aspect("equal")
    ax.axis("off")
    return nodes


def _draw_arrow(ax, source: Circle, target: Circle, label: str, color: str) -> None:
    """A bent arrow between two nodes (clipped at their rims) with its label at the bend.

    An arrow across the middle (between opposite ranks of 4) bends more (``CURVE_ACROSS``), so
    that the labels of the two crossing pairs do not all land on the centre."""
    (x1, y1), (x2, y2) = source.center, target.center
    across = math.hypot((x1 + x2) / 2, (y1 + y2) / 2) < NODE_RADIUS
    rad = CURVE_ACROSS if across else CURVE
    ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), connectionstyle=f"arc3,rad={rad}",
                                 arrowstyle="-|>", mutation_scale=12, color=color, lw=1.4,
                                 patchA=source, patchB=target, shrinkA=2, shrinkB=2))
    # arc3 puts the control point at mid + rad * (dy, -dx); a quadratic curve passes half way
    mx, my = (x1 + x2) / 2 + rad * (y2 - y1) / 2, (y1 + y2) / 2 - rad * (x2 - x1) / 2
    ax.text(mx, my, label, ha="center", va="center", fontsize=7, color=color,
            bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"))


def _finish(fig, ax, title: str, note: str):
    ax.set_title(title, fontsize=9)
    ax.text(0, -1.42, note, ha="center", va="bottom", fontsize=7, color="0.3")
    fig.tight_layout()
    plt.close(fig)
    return fig


def plot_ring(cp_size: int, *, block_bytes: int, figsize=FIGSIZE):
    """Ring attention over ``cp_size`` ranks: one arrow per link ``r -> r+1``, labelled with the
    bytes one rank sends over it in the forward and the backward pass.

    ``block_bytes``: bytes of one local K (or V) block, ``B*nh*T_local*hs*element_size``.
    Each node says how many causal blocks the rank computes (rank r: r+1), the load imbalance
    of contiguous chunks. Returns the figure.
    """
    if cp_size < 1:
        raise ValueError(text("hybrid.cp_size", cp_size=cp_size))
    traffic = ring_attention_traffic(block_bytes, cp_size)
    forward = sum(b for (phase, _), (_, b) in traffic.items() if phase == "forward")
    backward = sum(b for (phase, _), (_, b) in traffic.items() if phase == "backward")
    fig, ax = plt.subplots(figsize=figsize, dpi=DPI)
    nodes = _draw_nodes(ax, [label("hybrid.ring_node_many" if r else "hybrid.ring_node_one",
                                   rank=r, blocks=r + 1) for r in range(cp_size)])
    if cp_size > 1:
        for r in range(cp_size):
            _draw_arrow(ax, nodes[r], nodes[(r + 1) % cp_size],
                        label("hybrid.ring_arrow", forward=format_bytes(forward),
                              backward=format_bytes(backward)), "#d62728")
    note = (label("hybrid.ring_note_alone") if cp_size == 1 else
            label("hybrid.ring_note", moves=cp_size - 1, cp_size=cp_size,
                  block=format_bytes(block_bytes)))
    return _finish(fig, ax, label("hybrid.ring_title", cp_size=cp_size), note)


def plot_all_to_all(matrix, *, row_bytes: int | None = None, n_experts: int | None = None,
                    figsize=FIGSIZE):
    """Expert-parallel dispatch: an arrow ``i -> j`` for every pair of ranks that exchange tokens,
    labelled with the rows (and, given ``row_bytes`` and ``n_experts``, the bytes) rank i sends.

    ``matrix`` is :func:`~labs.hybrid.expert_parallel.dispatch_matrix` (rows rank i sends rank
    j). The combine step sends the same amounts back along reversed arrows. Each node says how
    many of its rows stay home. Returns the figure.
    """
    n = matrix.size(0)
    fig, ax = plt.subplots(figsize=figsize, dpi=DPI)
    nodes = _draw_nodes(ax, [label("hybrid.a2a_node", rank=i, keeps=int(matrix[i, i]))
                             for i in range(n)])
    for i in range(n):
        for j in range(n):
            rows = int(matrix[i, j])
            if i == j or rows == 0:
                continue
            arrow = (label("hybrid.a2a_arrow", rows=rows) if row_bytes is None else
                     label("hybrid.a2a_arrow_bytes", rows=rows,
                           size=format_bytes(rows * row_bytes)))
            _draw_arrow(ax, nodes[i], nodes[j], arrow, "#2ca02c")
    note = label("hybrid.a2a_note")
    if row_bytes is not None and n_experts is not None and n > 1:
        sent = [sum(b for (p, _), (_, b) in expert_parallel_traffic(
            matrix, i, row_bytes=row_bytes, n_experts=n_experts).items() if p == "forward")
            for i in range(n)]
        note = label("hybrid.a2a_note_bytes", note=note,
                     sent=joined(map(format_bytes, sent), "comma", lang=plot_language()))
    return _finish(fig, ax, label("hybrid.a2a_title", ep_size=n), note)
