"""The communication of tensor parallelism: the conjugate autograd operators.

Megatron-LM (Shoeybi et al., arXiv:1909.08053, §3, Fig. 3) makes a tensor-parallel layer out of
ordinary local maths plus a pair of *conjugate* operators, named here, as in Megatron's
``megatron/core/tensor_parallel/mappings.py``, for what they do to a region:

=============================================  ======================  =======================
operator                                       forward                 backward
=============================================  ======================  =======================
``copy_to_tensor_parallel_region`` (f)         identity                all-reduce
``reduce_from_tensor_parallel_region`` (g)     all-reduce              identity
``scatter_to_tensor_parallel_region``          split (keep my chunk)   all-gather
``gather_from_tensor_parallel_region``         all-gather              split
``scatter_to_sequence_parallel_region``        split along sequence    all-gather
``gather_from_sequence_parallel_region``       all-gather (sequence)   reduce-scatter
``reduce_scatter_to_sequence_parallel_region`` reduce-scatter          all-gather
=============================================  ======================  =======================

Every operator takes the process group explicitly (``group=None``: the default group) and an
optional ``labs.collectives.CommCounter`` (the course's one counter, re-exported here); with one
rank in the group it returns its input unchanged, so single-process code just works. The maths
of the layers lives in :mod:`labs.tensor_parallel.layers`::

    counter = CommCounter()
    y = reduce_from_tensor_parallel_region(x @ w_shard.T, group=tp_group, counter=counter)
    counter.summary()   # {('forward', 'all_reduce'): (1, bytes), ...}

Owns: the conjugate operators (and the sequence-parallel ones), each counted. Must not: hold a
layer's maths (labs.tensor_parallel.layers), print, keep process groups in globals, or import the
checks or the grader.
"""
from __future__ import annotations

import time

import torch
import torch.distributed as dist
from torch import Tensor

from labs.collectives import CommCounter, CommEvent  # noqa: F401  (re-exported: the one counter)
from labs.messages import text

__all__ = ["CommEvent", "CommCounter", "CopyToTensorParallelRegion",
           "ReduceFromTensorParallelRegion", "ScatterToTensorParallelRegion",
           "GatherFromTensorParallelRegion", "GatherFromSequenceParallelRegion",
           "ReduceScatterToSequenceParallelRegion", "copy_to_tensor_parallel_region",
           "reduce_from_tensor_parallel_region", "scatter_to_tensor_parallel_region",
           "gather_from_tensor_parallel_region", "scatter_to_sequence_parallel_region",
           "gather_from_sequence_parallel_region", "reduce_scatter_to_sequence_parallel_region",
           "all_reduce", "all_gather_along", "reduce_scatter_along", "split_along"]


# --- the plain collectives (no autograd) -----------------------------------------------------

def _size(group) -> int:
    return dist.get_world_size(group) if dist.is_initialized() else 1


def all_reduce(x: Tensor, *, group=None, counter=None, phase="forward", label=None) -> Tensor:
    """Sum ``x`` over the group (a new tensor; ``x`` is not modified)."""
    if _size(group) == 1:
        return x
    start, out = time.perf_counter(), x.contiguous().clone()
    dist.all_reduce(out, group=group)
    if counter is not None:
        counter.record("all_reduce", phase, out, counter.label if label is None else label, start)
    return out


def split_along(x: Tensor, dim: int, *, group=None) -> Tensor:
    """This rank's chunk of ``x`` along ``dim`` (no communication); sizes must divide."""
    n = _size(group)
    if n == 1:
        return x
    if x.size(dim) % n:
        raise ValueError(text("tensor_parallel.split_dim", dim=dim, size=x.size(dim), n=n))
    return x.chunk(n, dim=dim)[dist.get_rank(group)].contiguous()


def all_gather_along(x: Tensor, dim: int, *, group=None, counter=None, phase="forward",
                     label=None) -> Tensor:
    """Concatenate every rank's ``x`` along ``dim``, in rank order."""
    n = _size(group)
    if n == 1:
        return x
    start = time.perf_counter()
    moved = x.movedim(dim, 0).contiguous()  # all_gather_single stacks along dim 0
    out = moved.new_empty((n * moved.size(0),) + moved.shape[1:])
    dist.all_gather_single(out, moved, group=group)
    if counter is not None:
        counter.record("all_gather", phase, out, counter.label if label is None else label, start)
    return out.movedim(0, dim)


def reduce_scatter_along(x: Tensor, dim: int, *, group=None, counter=None, phase="forward",
                         label=None) -> Tensor:
    """Sum ``x`` over the group and keep this rank's chunk along ``dim``."""
    n = _size(group)
    if n == 1:
        return x
    if x.size(dim) % n:
        raise ValueError(text("tensor_parallel.reduce_scatter_dim", dim=dim, size=x.size(dim),
                              n=n))
    start = time.perf_counter()
    moved = x.movedim(dim, 0).contiguous()
    out = moved.new_empty((moved.size(0) // n,) + moved.shape[1:])
    dist.reduce_scatter_single(out, moved, group=group)
    if counter is not None:
        counter.record("reduce_scatter", phase, moved, counter.label if label is None else label,
                       start)
    return out.movedim(0, dim)


# --- the conjugate operators -----------------------------------------------------------------

class _Region(torch.autograd.Function):
    """Shared plumbing: remember group, counter, label and dim for the backward."""

    @staticmethod
    def _save(ctx, group, counter, dim=None):
        ctx.group, ctx.counter, ctx.dim = group, counter, dim
        ctx.label = counter.label if counter is not None else ""


class CopyToTensorParallelRegion(_Region):
    """forward: identity; backward: all-reduce (Megatron's f)."""

    @staticmethod
    def forward(ctx, x, group, counter):
        _Region._save(ctx, group, counter)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return all_reduce(grad, group=ctx.group, counter=ctx.counter, phase="backward",
                          label=ctx.label), None, None


class ReduceFromTensorParallelRegion(_Region):
    """forward: all-reduce; backward: identity (Megatron's g)."""

    @staticmethod
    def forward(ctx, x, group, counter):
        return all_reduce(x, group=group, counter=counter)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class ScatterToTensorParallelRegion(_Region):
    """forward: split along dim, keep my chunk; backward: all-gather along dim."""

    @staticmethod
    def forward(ctx, x, dim, group, counter):
        _Region._save(ctx, group, counter, dim)
        return split_along(x, dim, group=group)

    @staticmethod
    def backward(ctx, grad):
        return all_gather_along(grad, ctx.dim, group=ctx.group, counter=ctx.counter,
                                phase="backward", label=ctx.label), None, None, None


class GatherFromTensorParallelRegion(_Region):
    """forward: all-gather along dim; backward: split along dim."""

    @staticmethod
    def forward(ctx, x, dim, group, counter):
        _Region._save(ctx, group, counter, dim)
        return all_gather_along(x, dim, group=group, counter=counter)

    @staticmethod
    def backward(ctx, grad):
        return split_along(grad, ctx.dim, group=ctx.group), None, None, None


class GatherFromSequenceParallelRegion(_Region):
    """forward: all-gather along dim; backward: reduce-scatter along dim."""

    @staticmethod
    def forward(ctx, x, dim, group, counter):
        _Region._save(ctx, group, counter, dim)
        return all_gather_along(x, dim, group=group, counter=counter)

    @staticmethod
    def backward(ctx, grad):
        return reduce_scatter_along(grad, ctx.dim, group=ctx.group, counter=ctx.counter,
                                    phase="backward", label=ctx.label), None, None, None


class ReduceScatterToSequenceParallelRegion(_Region):
    """forward: reduce-scatter along dim; backward: all-gather along dim."""

    @staticmethod
    def forward(ctx, x, dim, group, counter):
        _Region._save(ctx, group, counter, dim)
        return reduce_scatter_along(x, dim, group=group, counter=counter)

    @staticmethod
    def backward(ctx, grad):
        return all_gather_along(grad, ctx.dim, group=ctx.group, counter=ctx.counter,
                                phase="backward", label=ctx.label), None, None, None


def copy_to_tensor_parallel_region(x: Tensor, *, group=None, counter=None) -> Tensor:
    """forward: identity; backward: all-reduce. Megatron's f, before a column-parallel layer."""
    return x if _size(group) == 1 else CopyToTensorParallelRegion.apply(x, group, counter)


def reduce_from_tensor_parallel_region(x: Tensor, *, group=None, counter=None) -> Tensor:
    """forward: all-reduce; backward: identity. Megatron's g, after a row-parallel layer."""
    return x if _size(group) == 1 else ReduceFromTensorParallelRegion.apply(x, group, counter)


def scatter_to_tensor_parallel_region(x: Tensor, *, dim: int = -1, group=None,
                                      counter=None) -> Tensor:
    """forward: split along dim (keep my chunk); backward: all-gather along dim."""
    return x if _size(group) == 1 else ScatterToTensorParallelRegion.apply(x, dim, group, counter)


def gather_from_tensor_parallel_region(x: Tensor, *, dim: int = -1, group=None,
                                       counter=None) -> Tensor:
    """forward: all-gather along dim; backward: split along dim (keep my chunk)."""
    return x if _size(group) == 1 else GatherFromTensorParallelRegion.apply(x, dim, group, counter)


def scatter_to_sequence_parallel_region(x: Tensor, *, dim: int = 1, group=None,
                                        counter=None) -> Tensor:
    """forward: split along the sequence dim; backward: all-gather along it (Korthikanti et al.,
    arXiv:2205.05198): enter the sequence-parallel region."""
    return scatter_to_tensor_parallel_region(x, dim=dim, group=group, counter=counter)


def gather_from_sequence_parallel_region(x: Tensor, *, dim: int = 1, group=None,
                                         counter=None) -> Tensor:
    """forward: all-gather along the sequence dim; backward: reduce-scatter (replaces f)."""
    if _size(group) == 1:
        return x
    return GatherFromSequenceParallelRegion.apply(x, dim, group, counter)


def reduce_scatter_to_sequence_parallel_region(x: Tensor, *, dim: int = 1, group=None,
                                               counter=None) -> Tensor:
    """forward: reduce-scatter along the sequence dim; backward: all-gather (replaces g)."""
    if _size(group) == 1:
        return x
    return ReduceScatterToSequenceParallelRegion.apply(x, dim, group, counter)
