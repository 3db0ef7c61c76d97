"""The DP × PP × TP device mesh: which rank holds which piece, and each dimension's groups.

Ranks are numbered with TP innermost, then PP, then DP outermost::

    rank = (dp_index * pp + pp_index) * tp + tp_index

so the ``tp`` ranks of one tensor-parallel group are consecutive -- the GPUs of one node,
joined by NVLink, carry the most frequent and largest messages (an all-reduce per layer,
forward and backward). Pipeline peers are ``tp`` ranks apart (neighbouring nodes: one
point-to-point activation per micro-batch), data-parallel peers ``pp * tp`` apart (one
gradient all-reduce per step, which overlaps with backward). Megatron-LM lays ranks out the
same way inside a node (PTD-P, Narayanan et al. 2021, arXiv:2104.04473, §3: tensor
parallelism within a server, pipeline and data parallelism across servers); its default
order (``tp-cp-ep-dp-pp``) puts pipeline outermost instead, which changes only which of DP
and PP crosses more nodes.

The layout itself -- the degrees, rank <-> coordinates, the ranks of each group -- is plain
arithmetic, declared once in :mod:`labs.parallel_dims` (:class:`MeshShape`, torchtitan's
``ParallelDims``; the planner reads the same declaration), so the notebook can draw and check
it before any rank starts; :func:`new_groups` creates the process groups on the ranks, and
:func:`device_mesh` the same layout as torch's ``DeviceMesh``. Groups are returned and passed
explicitly, never kept in globals.

Owns: the groups of each dimension on the ranks and the DeviceMesh. Must not: train, import the
planner, the checks or the grader, print, or keep process groups in globals (callers hold what
:func:`new_groups` returns).
"""

from __future__ import annotations

import labs
from labs.parallel_dims import DIMS, Coords, MeshShape, ParallelDims

__all__ = ["DIMS", "Coords", "MeshShape", "ParallelDims", "new_groups", "device_mesh",
           "probe_groups"]


def new_groups(shape: MeshShape) -> dict[str, object]:
    """Create the process groups of every dimension; return this rank's group per dimension.

    Collective: every rank of the default group calls it, with the same shape (torch requires
    all ranks to create every group, in the same order, even those they are not in).
    """
    import torch.distributed as dist

    shape.check(world_size=dist.get_world_size())
    rank, mine = dist.get_rank(), {}
    for dim in DIMS:
        for ranks in shape.group_ranks(dim):
            group = dist.new_group(ranks)
            if rank in ranks:
                mine[dim] = group
    return mine


def device_mesh(shape: MeshShape, device_type: str = "cpu"):
    """The same layout as torch's ``DeviceMesh`` with dimensions named ``dp``, ``pp``, ``tp``
    (for ``parallelize_module`` on ``mesh["tp"]``, ``fully_shard`` on ``mesh["dp"]``)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    shape.check(world_size=dist.get_world_size())
    return init_device_mesh(device_type, (shape.dp, shape.pp, shape.tp), mesh_dim_names=DIMS)


def probe_groups(shape: MeshShape) -> dict:
    """On a rank: create the groups of ``shape`` and all-reduce this rank's number over each.

    Every rank of a group must get the sum of exactly the ranks :meth:`MeshShape.peers` names --
    proof that the groups on the real ranks are the ones the arithmetic says. Returns
    ``{"rank", "coords", dim: {"peers", "sum"}}``.
    """
    # why here: a MeshShape is plain arithmetic; torch is for the ranks only
    import torch
    import torch.distributed as dist

    groups = new_groups(shape)
    rank = dist.get_rank()
    out = {"rank": rank, "coords": tuple(shape.coords(rank))}
    for dim in DIMS:
        value = torch.tensor([float(rank)], device=labs.device())
        dist.all_reduce(value, group=groups[dim])
        peers = shape.peers(rank, dim)
        if int(value.item()) != sum(peers):  # new_groups and MeshShape.peers disagree: a bug
            raise AssertionError(f"rank {rank}: the {dim} group summed to {int(value.item())}, "
                                 f"but its peers {peers} sum to {sum(peers)}")
        out[dim] = {"peers": peers, "sum": int(value.item())}
    return out
