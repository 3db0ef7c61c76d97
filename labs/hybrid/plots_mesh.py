"""The DP × PP × TP mesh, visible: which rank sits where, which ranks talk, over which link.

:func:`draw_mesh` draws the ranks of a :class:`~labs.hybrid.mesh.MeshShape` as a grid: one
column block per data-parallel replica, one row per pipeline stage, one cell per
tensor-parallel rank. Each cell carries its rank and its ``(dp, pp, tp)`` coordinates; a red
outline joins the ranks of one TP group, green arrows go from stage to stage (PP), cells of
one DP group share a fill colour, and dashed grey boxes are the servers ("nodes") that hold
``gpus_per_node`` consecutive ranks each.

:func:`link_table` says which link each dimension's messages use on a real cluster, as data:
a dimension whose every group stays inside one node uses NVLink, otherwise InfiniBand --
computed from the groups' rank ranges (:meth:`MeshShape.group_ranks`) and ``gpus_per_node``,
never assumed from the dimension's name. The bandwidths and their sources come from
:func:`labs.hardware.links`. Why the order TP (innermost), PP, DP (outermost) puts the
heaviest traffic on the fastest link: Narayanan et al. 2021 (PTD-P, arXiv:2104.04473, §3.2-3.3
and Takeaway #1: tensor parallelism up to the GPUs of one server, pipeline parallelism across
servers); Shoeybi et al. 2019 (Megatron-LM, arXiv:1909.08053, §3: two all-reduces forward and
two backward per transformer layer)::

    from labs.hybrid.mesh import MeshShape
    from labs.hybrid.plots_mesh import draw_mesh, link_table

    shape = MeshShape(dp=2, pp=2, tp=2)
    for row in link_table(shape, gpus_per_node=4):
        print(row["dim"], row["degree"], row["link"], row["bandwidth"] / 1e9, "GB/s")
    draw_mesh(shape, gpus_per_node=4)            # the figure (closed; a notebook shows it once)

Owns: the mesh figure and the link table. Must not: communicate, hold a GPU or link number
(labs.hardware owns them), or print.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
from matplotlib.transforms import blended_transform_factory

from labs.hardware import links
from labs.hybrid.mesh import MeshShape
from labs.messages import text
from labs.notebook.plots import DPI, FIGSIZE, GREY, RED, finish, label

__all__ = ["DEFAULT_GPUS_PER_NODE", "REASONS", "GROUP_COLORS", "nodes_of", "link_table",
           "draw_mesh"]

DEFAULT_GPUS_PER_NODE = 8  # DGX/HGX A100, H100, H200 and DGX-1: 8 GPUs per server

# One line per dimension: what it sends and how often (innermost first), as the key of its
# message (text(REASONS[dim]) in the notebook's language).
REASONS = {"tp": "hybrid.why_tp", "pp": "hybrid.why_pp", "dp": "hybrid.why_dp"}
GROUP_COLORS = {"tp": RED, "pp": "#55A868", "dp": "#8172B2", "node": GREY}

_CELL_W, _CELL_H = 0.84, 0.62  # a cell, in grid units (cells are 1 apart, blocks 1.6 apart)
_BLOCK_GAP = 0.6


def _gpus_per_node(gpus_per_node: int | None) -> int:
    g = DEFAULT_GPUS_PER_NODE if gpus_per_node is None else gpus_per_node
    if isinstance(g, bool) or not isinstance(g, int) or g < 1:
        raise ValueError(text("hybrid.gpus_per_node", value=gpus_per_node))
    return g


def nodes_of(shape: MeshShape, gpus_per_node: int | None = None) -> list[list[int]]:
    """The ranks of each node: consecutive runs of ``gpus_per_node`` ranks (the last may be
    shorter), as a launcher fills servers one after another."""
    g = _gpus_per_node(gpus_per_node)
    return [list(range(start, min(start + g, shape.world_size)))
            for start in range(0, shape.world_size, g)]


def link_table(shape: MeshShape, gpus_per_node: int | None = None,
               gpu: str = "A100-80GB") -> list[dict]:
    """One dict per dimension, innermost first (tp, pp, dp)::

        dim, degree, link ("NVLink" / "InfiniBand"; None when degree is 1: nothing to send),
        bandwidth (bytes/s per GPU per direction; None when degree is 1), inside_node (every
        group of this dimension within one node), groups, groups_crossing (how many groups
        span two or more nodes), why (what the dimension sends), source (of the bandwidth)

    A dimension uses NVLink when every one of its groups lies inside one node, InfiniBand as
    soon as one group crosses nodes (that group's collective runs at the slower link's pace).
    """
    g = _gpus_per_node(gpus_per_node)
    available = links(gpu)
    rows = []
    for dim in ("tp", "pp", "dp"):
        groups = shape.group_ranks(dim)
        crossing = sum(len({r // g for r in group}) > 1 for group in groups)
        degree = getattr(shape, dim)
        link = None if degree == 1 else available["intra" if crossing == 0 else "inter"]
        rows.append(dict(dim=dim, degree=degree, link=link and link.name,
                         bandwidth=link and link.bandwidth, inside_node=crossing == 0,
                         groups=len(groups), groups_crossing=crossing,
                         why=text(REASONS[dim] if degree > 1 else "hybrid.why_none"),
                         source=link.source if link else ""))
    return rows


# --- drawing --------------------------------------------------------------------------------

def _xy(shape: MeshShape, rank: int) -> tuple[float, float]:
    """Centre of ``rank``'s cell: x = replica block offset + TP index, y = PP stage (down)."""
    d, p, t = shape.coords(rank)
    return d * (shape.tp + _BLOCK_GAP) + t, p


def _box(ax, x0, y0, x1, y1, pad, top=None, **style) -> Rectangle:
    """A rectangle around the cells whose centres span (x0, y0) .. (x1, y1); ``top``: a
    larger padding above (room for a label), ``pad`` elsewhere."""
    top = pad if top is None else top
    return ax.add_patch(Rectangle((x0 - _CELL_W / 2 - pad, y0 - _CELL_H / 2 - top),
                                  x1 - x0 + _CELL_W + 2 * pad, y1 - y0 + _CELL_H + pad + top,
                                  fill=False, **style))


def _node_pieces(shape: MeshShape, ranks: list[int]) -> list[tuple[int, int]]:
    """A node's ranks as (first, last) rank pairs that each draw as one rectangle: whole rows
    of one replica block together, otherwise one piece per row."""
    pieces, block = [], shape.pp * shape.tp
    for d in sorted({r // block for r in ranks}):
        mine = [r for r in ranks if r // block == d]
        first, last = mine[0], mine[-1]
        if first % shape.tp == 0 and (last + 1) % shape.tp == 0:
            pieces.append((first, last))
            continue
        for row in sorted({r // shape.tp for r in mine}):
            in_row = [r for r in mine if r // shape.tp == row]
            pieces.append((in_row[0], in_row[-1]))
    return pieces


def _draw_cells(ax, shape: MeshShape, fontsize: float) -> None:
    palette = plt.get_cmap("tab20" if shape.pp * shape.tp > 10 else "Pastel1")
    for r in range(shape.world_size):
        x, y = _xy(shape, r)
        c = shape.coords(r)
        position = c.pp * shape.tp + c.tp  # the same in every replica: one DP group
        face = palette(position % palette.N) if shape.dp > 1 else "#dbe9f6"
        ax.add_patch(Rectangle((x - _CELL_W / 2, y - _CELL_H / 2), _CELL_W, _CELL_H,
                               facecolor=face, edgecolor="0.35", linewidth=0.6, alpha=0.9,
                               gid=f"rank{r}", label=f"rank {r} {tuple(c)}"))
        ax.text(x, y, f"{r}\n({c.dp},{c.pp},{c.tp})", ha="center", va="center",
                fontsize=fontsize, linespacing=1.1)


def _draw_groups(ax, shape: MeshShape) -> None:
    if shape.tp > 1:  # one outline per TP group (a row of a replica block)
        for group in shape.group_ranks("tp"):
            (x0, y), (x1, _) = _xy(shape, group[0]), _xy(shape, group[-1])
            _box(ax, x0, y, x1, y, 0.05, edgecolor=GROUP_COLORS["tp"], linewidth=1.4)
    if shape.pp > 1:  # arrows stage -> next stage, in every pipeline
        for group in shape.group_ranks("pp"):
            for a, b in zip(group, group[1:]):
                (xa, ya), (xb, yb) = _xy(shape, a), _xy(shape, b)
                ax.add_patch(FancyArrowPatch((xa, ya + _CELL_H / 2), (xb, yb - _CELL_H / 2),
                                             arrowstyle="-|>", mutation_scale=8, lw=1.2,
                                             color=GROUP_COLORS["pp"], shrinkA=1, shrinkB=1))


def _draw_nodes(ax, shape: MeshShape, gpus_per_node: int) -> None:
    for n, ranks in enumerate(nodes_of(shape, gpus_per_node)):
        for i, (first, last) in enumerate(_node_pieces(shape, ranks)):
            (x0, y0), (x1, y1) = _xy(shape, first), _xy(shape, last)
            x0, x1 = min(x0, x1), max(x0, x1)
            if y1 > y0:  # whole rows: the block's full width
                x0 = _xy(shape, first - first % shape.tp)[0]
                x1 = x0 + shape.tp - 1
            _box(ax, x0, y0, x1, y1, 0.1, top=0.24, edgecolor=GROUP_COLORS["node"],
                 linewidth=1.0, linestyle="--")
            if i == 0:  # in the box's top strip, above the TP outlines
                ax.text(x0 - _CELL_W / 2 - 0.06, y0 - _CELL_H / 2 - 0.07,
                        label("hybrid.mesh_node", n=n),
                        fontsize=5.5, color="0.3", va="bottom", ha="left")


def _pp_hop_inside(shape: MeshShape, gpus_per_node: int) -> bool:
    """Whether some stage boundary (rank r of stage s to its stage s+1 peer) stays in one node."""
    return any(shape.rank(dp=c.dp, pp=c.pp, tp=c.tp) // gpus_per_node
               == shape.rank(dp=c.dp, pp=c.pp + 1, tp=c.tp) // gpus_per_node
               for c in map(shape.coords, range(shape.world_size)) if c.pp + 1 < shape.pp)


def _legend(ax, shape: MeshShape, table: list[dict], gpus_per_node: int, gpu: str) -> None:
    handles = []
    for row in table:
        dim = row["dim"]
        if row["degree"] == 1:
            entry = label("hybrid.mesh_legend_unused", dim=dim.upper())
        else:
            key = "hybrid.mesh_legend_inside" if row["inside_node"] else "hybrid.mesh_legend_across"
            if dim == "pp" and not row["inside_node"] and _pp_hop_inside(shape, gpus_per_node):
                key = "hybrid.mesh_legend_pp_mixed"
            entry = label(key, dim=dim.upper(), degree=row["degree"],
                          link=row["link"], bandwidth=row["bandwidth"] / 1e9,
                          why=label(REASONS[dim]))
        if dim == "tp":
            handles.append(Patch(facecolor="none", edgecolor=GROUP_COLORS["tp"], label=entry))
        elif dim == "pp":
            handles.append(Line2D([], [], color=GROUP_COLORS["pp"], marker=">", label=entry))
        else:
            if shape.dp > 1:
                entry = label("hybrid.mesh_legend_dp_group", entry=entry)
            handles.append(Patch(facecolor=plt.get_cmap("Pastel1")(0), edgecolor="0.35",
                                 label=entry))
    handles.append(Patch(facecolor="none", edgecolor=GROUP_COLORS["node"], linestyle="--",
                         label=label("hybrid.mesh_legend_node", gpus_per_node=gpus_per_node,
                                     gpu=gpu)))
    # below the grid, from the figure's left edge (x in figure, y in axes coordinates): the
    # longest line fits the figure's width, in either language
    under = blended_transform_factory(ax.figure.transFigure, ax.transAxes)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.01, -0.02),
              bbox_transform=under, fontsize=6, frameon=False, handlelength=1.6)


def draw_mesh(shape: MeshShape, *, gpus_per_node: int | None = None, gpu: str = "A100-80GB",
              ax=None):
    """The ranks of ``shape`` on a grid, their groups, their nodes and the link each dimension
    uses (the legend is :func:`link_table`). Returns the figure, closed in pyplot.

    Layout: column block d = data-parallel replica d, row p = pipeline stage p, column t =
    tensor-parallel rank t. Each cell is one patch whose ``gid`` is ``"rank{r}"``.
    """
    g = _gpus_per_node(gpus_per_node)
    table = link_table(shape, g, gpu)
    if ax is None:
        height = 1.5 + 0.55 * shape.pp
        fig, ax = plt.subplots(figsize=(FIGSIZE[0], height), dpi=DPI)
    else:
        fig = ax.figure
    cells = shape.world_size
    _draw_cells(ax, shape, fontsize=7 if shape.tp * shape.dp <= 8 else 5.5 if cells <= 16 else 4.5)
    _draw_groups(ax, shape)
    _draw_nodes(ax, shape, g)
    width = shape.dp * shape.tp + (shape.dp - 1) * _BLOCK_GAP
    for d in range(shape.dp):  # replica titles
        x = d * (shape.tp + _BLOCK_GAP) + (shape.tp - 1) / 2
        ax.text(x, -0.6, label("hybrid.mesh_replica", d=d) if shape.dp > 1
                else label("hybrid.mesh_one_replica"), ha="center", va="bottom", fontsize=7)
    ax.set_xlim(-0.75, width - 0.25)
    ax.set_ylim(shape.pp - 0.35, -0.95)  # stage 0 on top
    ax.set_yticks(range(shape.pp), [label("hybrid.stage_tick", stage=p) for p in range(shape.pp)],
                  fontsize=7)
    ax.set_xticks([])
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(label("hybrid.mesh_title", ranks=shape.world_size, dp=shape.dp, pp=shape.pp,
                       tp=shape.tp), fontsize=9)
    _legend(ax, shape, table, g, gpu)
    return finish(fig)
