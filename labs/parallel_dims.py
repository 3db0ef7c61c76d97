"""The degrees of one layout -- data (dp), pipeline (pp) and tensor (tp) parallelism --
declared once, as torchtitan's ``ParallelDims`` declares them: :mod:`labs.hybrid.mesh` builds
the process groups from it, :func:`labs.hybrid.three_d.hybrid_step` runs on it, and the
planner's layout (:class:`labs.planner.types.Config`) hands its degrees to it and checks them
with its rules.

Chapter 2.4 calls the class :class:`MeshShape` (the name its outputs print);
:data:`ParallelDims` is the same class. Ranks are numbered with TP innermost, then PP, then
DP outermost (why: :mod:`labs.hybrid.mesh`)::

    rank = (dp_index * pp + pp_index) * tp + tp_index

A layout can run when every degree is a whole number >= 1 (:func:`is_degree`; 1: the
dimension is not used), the degrees multiply to the number of ranks (:meth:`MeshShape.fills`),
tp divides the attention heads and the key/value heads (:meth:`MeshShape.splits_heads`) and
every pipeline stage has a layer (:meth:`MeshShape.fits_layers`). Each reader words a broken
rule its own way: the constructor and :meth:`MeshShape.check` in chapter 2.4's terms
(``hybrid.mesh_*`` messages), :func:`labs.planner.types.check_layout` in the planner's.

Owns: the degrees, their rules, rank <-> coordinates and the ranks of each dimension's groups
(plain arithmetic). Must not: import torch, create process groups, import the planner, the
hybrid package, the checks or the grader, or print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from labs.messages import text

__all__ = ["DIMS", "Coords", "MeshShape", "ParallelDims", "is_degree"]

DIMS = ("dp", "pp", "tp")  # outermost to innermost


class Coords(NamedTuple):
    dp: int
    pp: int
    tp: int


def is_degree(value) -> bool:
    """Whether ``value`` can be a parallel degree: a whole number >= 1 (``True`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class MeshShape:
    """Degrees of data, pipeline and tensor parallelism; ``dp * pp * tp`` ranks in all.

    Example::

        shape = MeshShape(dp=2, pp=2, tp=2)
        shape.coords(5)                  # Coords(dp=1, pp=0, tp=1)
        shape.rank(dp=1, pp=0, tp=1)     # 5
        shape.group_ranks("tp")          # [[0, 1], [2, 3], [4, 5], [6, 7]]
    """

    dp: int = 1
    pp: int = 1
    tp: int = 1

    def __post_init__(self):
        for dim in DIMS:
            value = getattr(self, dim)
            if not is_degree(value):
                raise ValueError(text("hybrid.mesh_degree", dim=dim, value=value))

    @classmethod
    def filling(cls, world_size: int, *, pp: int = 1, tp: int = 1) -> "MeshShape":
        """The layout of ``world_size`` ranks with these pp and tp: data parallelism takes the
        rest, ``world_size / (pp * tp)`` (torchtitan's ``dp_shard=-1``; pp·tp divides it)."""
        return cls(dp=world_size // (pp * tp), pp=pp, tp=tp)

    @property
    def world_size(self) -> int:
        return self.dp * self.pp * self.tp

    @property
    def non_data_parallel_size(self) -> int:
        """Ranks of one data-parallel replica: ``pp * tp``."""
        return self.pp * self.tp

    @property
    def dp_enabled(self) -> bool:
        return self.dp > 1

    @property
    def pp_enabled(self) -> bool:
        return self.pp > 1

    @property
    def tp_enabled(self) -> bool:
        return self.tp > 1

    def sizes(self) -> dict[str, int]:
        return {dim: getattr(self, dim) for dim in DIMS}

    def fills(self, world_size: int) -> bool:
        """Whether the degrees multiply to ``world_size``: every rank has one place."""
        return self.world_size == world_size

    def splits_heads(self, n_heads: int, n_kv_heads: int | None = None) -> bool:
        """Whether tp divides the attention heads (and the key/value heads, if given): each
        tensor-parallel rank holds whole heads."""
        return n_heads % self.tp == 0 and (n_kv_heads is None or n_kv_heads % self.tp == 0)

    def fits_layers(self, n_layers: int) -> bool:
        """Whether every pipeline stage gets at least one of ``n_layers`` layers."""
        return self.pp <= n_layers

    def coords(self, rank: int) -> Coords:
        """The (dp, pp, tp) position of ``rank``."""
        if not 0 <= rank < self.world_size:
            raise ValueError(text("hybrid.mesh_rank_outside", rank=rank,
                                  world_size=self.world_size, dp=self.dp, pp=self.pp,
                                  tp=self.tp))
        rest, tp_index = divmod(rank, self.tp)
        dp_index, pp_index = divmod(rest, self.pp)
        return Coords(dp_index, pp_index, tp_index)

    def rank(self, *, dp: int, pp: int, tp: int) -> int:
        """The rank at position (dp, pp, tp): the inverse of :meth:`coords`."""
        for dim, index in zip(DIMS, (dp, pp, tp)):
            if not 0 <= index < getattr(self, dim):
                raise ValueError(text("hybrid.mesh_index_outside", dim=dim, index=index,
                                      last=getattr(self, dim) - 1))
        return (dp * self.pp + pp) * self.tp + tp

    def group_ranks(self, dim: str) -> list[list[int]]:
        """Every group of dimension ``dim``: the ranks that differ only in that coordinate."""
        if dim not in DIMS:
            raise ValueError(text("hybrid.mesh_unknown_dim", dim=dim, choices=DIMS))
        groups: dict[tuple, list[int]] = {}
        for r in range(self.world_size):
            c = self.coords(r)._asdict()
            c.pop(dim)
            groups.setdefault(tuple(c.values()), []).append(r)
        return list(groups.values())

    def peers(self, rank: int, dim: str) -> list[int]:
        """The ranks in ``rank``'s group of dimension ``dim`` (``rank`` included)."""
        return next(g for g in self.group_ranks(dim) if rank in g)

    def check(self, *, world_size: int | None = None, n_heads: int | None = None,
              n_layers: int | None = None) -> "MeshShape":
        """Raise a ValueError that says what would work if this layout cannot run."""
        if world_size is not None and not self.fills(world_size):
            raise ValueError(text("hybrid.mesh_world_size", dp=self.dp, pp=self.pp, tp=self.tp,
                                  ranks=self.world_size, world_size=world_size,
                                  example=_suggest(world_size)))
        if n_heads is not None and not self.splits_heads(n_heads):
            ok = [t for t in range(1, n_heads + 1) if n_heads % t == 0]
            raise ValueError(text("hybrid.mesh_tp_heads", tp=self.tp, n_heads=n_heads, ok=ok))
        if n_layers is not None and not self.fits_layers(n_layers):
            raise ValueError(text("hybrid.mesh_pp_layers", pp=self.pp, n_layers=n_layers))
        return self


#: torchtitan's name for the same declaration (torchtitan/distributed/parallel_dims.py).
ParallelDims = MeshShape


def _suggest(world_size: int) -> str:
    tp = 2 if world_size % 2 == 0 else 1
    pp = 2 if (world_size // tp) % 2 == 0 else 1
    return f"dp={world_size // (tp * pp)}, pp={pp}, tp={tp}"
