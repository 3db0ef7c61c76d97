"""Tensor parallelism, Megatron-style: the maths of the layers (communication: ``comm``).

Megatron-LM (Shoeybi et al., arXiv:1909.08053, §3) splits each weight matrix of a transformer
across the ``t`` ranks of a tensor-parallel group:

- :class:`ColumnParallelLinear`: ``Y = X A`` with ``A = [A_1 ... A_t]`` split by columns (output
  features). Every rank needs the whole ``X`` and computes its slice ``Y_r = X A_r``; no
  communication forward. Megatron's ``f`` sits in front: identity forward, all-reduce backward.
- :class:`RowParallelLinear`: ``A`` split by rows (input features), ``X = [X_1 ... X_t]`` split by
  columns; ``Y = sum_r X_r A_r`` is a sum of partial products: ``g`` all-reduces it forward
  (identity backward); the bias is added once, after the sum.
- :class:`ParallelMLP`: column then row, so GELU runs on a local slice and the whole MLP costs one
  all-reduce forward and one backward. :class:`ParallelSelfAttention` does the same with heads:
  q/k/v column-parallel (each rank gets whole heads), the output projection row-parallel.

Layers are built from the full layers (``from_linear``), so the parallel model starts identical to
the reference; :func:`shard` is the one function that cuts a full tensor into a rank's piece, and a
sharded parameter carries ``tp_dim`` / ``tp_stride`` so tests can cut the full gradient the same
way. Groups are passed explicitly (``group=None``: the default group)::

    mlp = ParallelMLP(full_block.mlp, group=tp_group)          # same weights, split
    y = mlp(x)                                                 # == full_block.mlp(x)

Owns: shard / unshard and the parallel layers. Must not: call a collective itself (comm's operators
do, counted), print, keep process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import Tensor, nn

import labs
from labs.messages import text
from labs.models import causal_attention
from labs.tensor_parallel.comm import (
    _size,
    copy_to_tensor_parallel_region,
    gather_from_sequence_parallel_region,
    gather_from_tensor_parallel_region,
    reduce_from_tensor_parallel_region,
    reduce_scatter_to_sequence_parallel_region,
    scatter_to_tensor_parallel_region,
)

__all__ = ["shard", "unshard", "ColumnParallelLinear", "RowParallelLinear", "ParallelMLP",
           "ParallelSelfAttention", "scope"]


def _rank(group) -> int:
    import torch.distributed as dist
    return dist.get_rank(group) if _size(group) > 1 else 0


def shard(full: Tensor, dim: int, rank: int, world_size: int, *, stride: int = 1) -> Tensor:
    """Rank ``rank``'s piece of ``full`` along ``dim`` (a copy).

    ``stride`` > 1: ``full`` is ``stride`` blocks side by side along ``dim`` (the fused q, k, v of
    ``c_attn`` is stride 3) and the rank takes its chunk of every block, so it gets whole heads
    of q, of k and of v.
    """
    if full.size(dim) % (stride * world_size):
        raise ValueError(text("tensor_parallel.shard_dim", dim=dim, size=full.size(dim),
                              stride=stride, world_size=world_size,
                              multiple=stride * world_size))
    blocks = full.chunk(stride, dim=dim)
    return torch.cat([b.chunk(world_size, dim=dim)[rank] for b in blocks], dim=dim).clone()


def unshard(shards: list[Tensor], dim: int, *, stride: int = 1) -> Tensor:
    """The inverse of :func:`shard`: the full tensor from every rank's piece, in rank order."""
    pieces = [s.chunk(stride, dim=dim) for s in shards]  # per rank: its chunk of each block
    return torch.cat([torch.cat([p[b] for p in pieces], dim=dim) for b in range(stride)], dim=dim)


def _sharded(tensor: Tensor, dim: int, stride: int = 1) -> nn.Parameter:
    param = nn.Parameter(tensor)
    param.tp_dim, param.tp_stride = dim, stride  # how to cut the full tensor into this one
    return param


def scope(counter, label: str):
    """``counter.layer(label)`` when there is a counter, else nothing."""
    return counter.layer(label) if counter is not None and label else contextlib.nullcontext()


class ColumnParallelLinear(nn.Module):
    """``Y_r = f(X) A_r + b_r``: the weight split by output features (rows of ``weight``).

    forward: identity (f) then a local matmul, output sharded on the last dim; backward:
    all-reduce of the input gradient. ``gather_output=True`` all-gathers the output (used for
    the vocabulary-parallel ``lm_head``). ``sequence_parallel=True``: the input arrives split
    along the sequence and is all-gathered instead (backward: reduce-scatter).
    ``stride``: see :func:`shard` (3 for a fused q/k/v weight). The shard is created on
    ``device`` (default: this rank's, ``labs.device()``).
    """

    def __init__(self, in_features: int, out_features: int, *, bias: bool = True, group=None,
                 gather_output: bool = False, sequence_parallel: bool = False, stride: int = 1,
                 counter=None, device=None) -> None:
        super().__init__()
        tp = _size(group)
        if out_features % (tp * stride):
            raise ValueError(text("tensor_parallel.column_out_features_stride" if stride > 1
                                  else "tensor_parallel.column_out_features", tp=tp,
                                  out_features=out_features, stride=stride,
                                  divides=out_features // stride))
        self.group, self.counter, self.tp = group, counter, tp
        self.gather_output, self.sequence_parallel = gather_output, sequence_parallel
        device = labs.device() if device is None else device
        self.weight = _sharded(torch.empty(out_features // tp, in_features, device=device), 0,
                               stride)
        self.bias = (_sharded(torch.zeros(out_features // tp, device=device), 0, stride)
                     if bias else None)

    @classmethod
    def from_linear(cls, linear: nn.Linear, *, group=None, stride: int = 1, **kwargs):
        """This rank's column shard of a full ``nn.Linear`` (weights copied, not shared)."""
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None,
                    group=group, stride=stride, **kwargs)
        rank, tp = _rank(group), layer.tp
        with torch.no_grad():
            layer.weight.copy_(shard(linear.weight, 0, rank, tp, stride=stride))
            if layer.bias is not None:
                layer.bias.copy_(shard(linear.bias, 0, rank, tp, stride=stride))
        return layer

    def forward(self, x: Tensor) -> Tensor:
        kw = dict(group=self.group, counter=self.counter)
        if self.sequence_parallel:
            x = gather_from_sequence_parallel_region(x, dim=1, **kw)  # (B, T/t, C) -> (B, T, C)
        else:
            x = copy_to_tensor_parallel_region(x, **kw)  # f: identity fwd, all-reduce bwd
        y = F.linear(x, self.weight, self.bias)  # (B, T, in) x (in, out/t) -> (B, T, out/t)
        if self.gather_output:
            y = gather_from_tensor_parallel_region(y, dim=-1, **kw)  # (B, T, out)
        return y


class RowParallelLinear(nn.Module):
    """``Y = g(sum_r X_r A_r) + b``: the weight split by input features (columns of ``weight``).

    forward: local matmul on this rank's slice of the input, then all-reduce (g), then the
    (replicated) bias; backward: identity. ``input_is_parallel=False`` first splits a full
    input (backward: all-gather). ``sequence_parallel=True``: reduce-scatter along the sequence
    instead of all-reduce (backward: all-gather). Created on ``device`` (default:
    ``labs.device()``).
    """

    def __init__(self, in_features: int, out_features: int, *, bias: bool = True, group=None,
                 input_is_parallel: bool = True, sequence_parallel: bool = False,
                 counter=None, device=None) -> None:
        super().__init__()
        tp = _size(group)
        if in_features % tp:
            raise ValueError(text("tensor_parallel.row_in_features", tp=tp,
                                  in_features=in_features))
        self.group, self.counter, self.tp = group, counter, tp
        self.input_is_parallel, self.sequence_parallel = input_is_parallel, sequence_parallel
        device = labs.device() if device is None else device
        self.weight = _sharded(torch.empty(out_features, in_features // tp, device=device), 1)
        self.bias = nn.Parameter(torch.zeros(out_features, device=device)) if bias else None
        if self.bias is not None and sequence_parallel:
            self.bias.sequence_parallel = True  # its gradient sees only my part of the sequence

    @classmethod
    def from_linear(cls, linear: nn.Linear, *, group=None, **kwargs):
        """This rank's row shard of a full ``nn.Linear``; the bias is replicated."""
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None,
                    group=group, **kwargs)
        with torch.no_grad():
            layer.weight.copy_(shard(linear.weight, 1, _rank(group), layer.tp))
            if layer.bias is not None:
                layer.bias.copy_(linear.bias)
        return layer

    def forward(self, x: Tensor) -> Tensor:
        kw = dict(group=self.group, counter=self.counter)
        if not self.input_is_parallel:
            x = scatter_to_tensor_parallel_region(x, dim=-1, **kw)  # (B, T, in) -> (B, T, in/t)
        partial = F.linear(x, self.weight)  # (B, T, in/t) x (in/t, out) -> (B, T, out), a partial sum
        if self.sequence_parallel:
            y = reduce_scatter_to_sequence_parallel_region(partial, dim=1, **kw)  # (B, T/t, out)
        else:
            y = reduce_from_tensor_parallel_region(partial, **kw)  # g: all-reduce fwd, identity bwd
        return y if self.bias is None else y + self.bias  # bias added once, after the sum


class ParallelMLP(nn.Module):
    """The GPT MLP, column then row: GELU on local slices, one all-reduce forward, one backward."""

    def __init__(self, mlp: nn.Module, *, group=None, counter=None,
                 sequence_parallel: bool = False, label: str = "mlp") -> None:
        super().__init__()
        kw = dict(group=group, counter=counter, sequence_parallel=sequence_parallel)
        self.c_fc = ColumnParallelLinear.from_linear(mlp.c_fc, **kw)  # (C -> 4C/t)
        self.gelu = nn.GELU()
        self.c_proj = RowParallelLinear.from_linear(mlp.c_proj, **kw)  # (4C/t -> C), all-reduce
        self.counter, self.label = counter, label

    def forward(self, x: Tensor) -> Tensor:
        with scope(self.counter, self.label):
            return self.c_proj(self.gelu(self.c_fc(x)))  # (B, T, C) -> (B, T, 4C/t) -> (B, T, C)


class ParallelSelfAttention(nn.Module):
    """Causal self-attention with the heads split: each rank runs n_head/t whole heads.

    q/k/v (``c_attn``) is column-parallel with stride 3 (my heads of q, of k, of v); attention
    needs no communication, since heads are independent; ``c_proj`` is row-parallel.
    """

    def __init__(self, attn: nn.Module, *, group=None, counter=None,
                 sequence_parallel: bool = False, label: str = "attn") -> None:
        super().__init__()
        tp = _size(group)
        if attn.n_head % tp:
            raise ValueError(text("tensor_parallel.heads_not_divisible", tp=tp, n_head=attn.n_head,
                                  divisors=[d for d in range(1, attn.n_head + 1)
                                            if attn.n_head % d == 0]))
        kw = dict(group=group, counter=counter, sequence_parallel=sequence_parallel)
        self.n_local_heads, self.head_size = attn.n_head // tp, attn.n_embd // attn.n_head
        self.c_attn = ColumnParallelLinear.from_linear(attn.c_attn, stride=3, **kw)
        self.c_proj = RowParallelLinear.from_linear(attn.c_proj, **kw)
        self.counter, self.label = counter, label

    def forward(self, x: Tensor) -> Tensor:
        with scope(self.counter, self.label):
            qkv = self.c_attn(x)  # (B, T, 3C/t): my heads' q, k, v side by side
            B, T, _ = qkv.shape
            nh, hs = self.n_local_heads, self.head_size
            q, k, v = qkv.split(nh * hs, dim=2)  # 3 x (B, T, C/t)
            q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh/t, T, hs)
            k = k.view(B, T, nh, hs).transpose(1, 2)  # (B, nh/t, T, hs)
            v = v.view(B, T, nh, hs).transpose(1, 2)  # (B, nh/t, T, hs)
            y = causal_attention(q, k, v)  # (B, nh/t, T, hs): no communication, heads independent
            y = y.transpose(1, 2).contiguous().view(B, T, nh * hs)  # (B, T, C/t)
            return self.c_proj(y)  # (B, T, C) after the all-reduce
