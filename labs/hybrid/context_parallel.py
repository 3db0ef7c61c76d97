"""Context parallelism (CP): causal ring attention, written by hand over send/recv.

A long sequence is cut into ``c`` contiguous chunks, one per rank of the CP group; rank ``r``
holds the queries, keys and values of positions ``[r*T/c, (r+1)*T/c)``. Everything in a
transformer block except attention is per position, so only attention must see the other
chunks. Ring attention (Liu, Zaharia & Abbeel, "Ring Attention with Blockwise Transformers for
Near-Infinite Context", arXiv:2310.01889) moves the keys and values instead of the queries: in
each of ``c`` steps a rank attends its queries to the K/V block it holds, then passes that block
to the next rank of the ring (``r -> r+1``) and receives one from the previous rank. The
partial results are merged exactly with the *online softmax* (Milakov & Gimelshein, "Online
normalizer calculation for softmax", arXiv:1805.02867; the same trick as FlashAttention): keep
per query a running max ``m``, a running denominator ``l`` and an output scaled by them, and
rescale both by ``exp(m_old - m_new)`` whenever a larger score appears.

Causality decides what each step computes: the block of queries of chunk ``r`` against the
keys of chunk ``j`` is ``"full"`` when ``j < r`` (all earlier), ``"diagonal"`` when ``j == r``
(the usual triangular mask) and ``"skip"`` when ``j > r`` (all in the future). Rank 0 therefore
computes one block and rank ``c-1`` computes ``c``: plain contiguous chunks balance memory but
not work (Striped Attention, arXiv:2311.09431, and the "zigzag" layout of Llama 3's CP fix this
by giving each rank an early and a late piece).

The backward is FlashAttention-2's (Dao, arXiv:2307.08691, Alg. 2) around the ring: from the
saved log-sum-exp it recomputes each block's probabilities, adds ``dQ`` locally, and adds the
block's ``dK``/``dV`` into accumulators that travel with K/V and come home after a last hop.

Communication per rank (one K or one V block is ``S = B * n_head * T_local * head_dim`` elements
times the element size; :func:`ring_attention_traffic` is the formula's only home):

* forward: K and V sent ``c-1`` times (one packed ``kv`` message per step): ``2(c-1)S`` bytes;
* backward: K and V again ``c-1`` times, dK and dV ``c`` times (``c-1`` hops collecting the
  other ranks' contributions, one hop home): ``2(c-1)S + 2cS`` bytes.

The sends are posted before the step's compute (``batch_isend_irecv``), so on a real network the
transfer of the next block overlaps the current block's matmuls.

Usage (inside a launched function; shapes ``(B, n_head, T_local, head_dim)``)::

    q, k, v = (sequence_chunk(t, group=cp_group) for t in (q_full, k_full, v_full))
    counter = SendCounter()
    y = ring_attention(q, k, v, group=cp_group, counter=counter)  # my chunk of the output

Owns: ring attention by hand and its byte count. Must not: import the planner, the checks or the
grader; print; keep process groups in globals.
"""
from __future__ import annotations

import math

import torch
import torch.distributed as dist
from torch import Tensor

from labs.formulas.cost import ring_attention_traffic  # the formula lives in labs.formulas.cost; re-exported
from labs.messages import text

__all__ = ["ring_attention", "ring_forward", "sequence_chunk", "causal_block",
           "ring_attention_traffic"]


# --- the group and the ring -------------------------------------------------------------------

def _size_and_rank(group) -> tuple[int, int]:
    """(size, my index) in ``group``; (1, 0) without an initialised process group."""
    if not dist.is_initialized():
        return 1, 0
    return dist.get_world_size(group), dist.get_rank(group)


def sequence_chunk(x: Tensor, *, group=None, dim: int = 2) -> Tensor:
    """My contiguous chunk of the sequence dimension ``dim`` (default 2: ``(B, nh, T, hs)``)."""
    size, rank = _size_and_rank(group)
    if x.size(dim) % size:
        raise ValueError(text("hybrid.cp_split", length=x.size(dim), size=size,
                              example=x.size(dim) // size * size or size))
    return x.chunk(size, dim=dim)[rank].contiguous()


def causal_block(query_chunk: int, key_chunk: int) -> str:
    """How the causal mask cuts the block (queries of one chunk, keys of another)."""
    if key_chunk < query_chunk:
        return "full"  # every key is earlier than every query
    return "diagonal" if key_chunk == query_chunk else "skip"  # skip: all keys in the future


def _pass_to_next(buffer: Tensor, *, group, tag: int, counter, kind: str, phase: str):
    """Send ``buffer`` to the next rank of the ring and receive the previous rank's into a new
    tensor; returns ``(received, requests)``: wait on the requests before reading it."""
    size, rank = _size_and_rank(group)
    world = group if group is not None else dist.group.WORLD
    nxt = dist.get_global_rank(world, (rank + 1) % size)
    prev = dist.get_global_rank(world, (rank - 1) % size)
    received = torch.empty_like(buffer)
    requests = dist.batch_isend_irecv([dist.P2POp(dist.isend, buffer, nxt, group, tag),
                                       dist.P2POp(dist.irecv, received, prev, group, tag)])
    if counter is not None:
        counter.add(kind, buffer.numel() * buffer.element_size(), phase=phase)
    return received, requests


def _wait(requests) -> None:
    for request in requests:
        request.wait()


# --- the maths of one block -------------------------------------------------------------------

def _block_scores(q: Tensor, k: Tensor, kind: str) -> Tensor:
    """Scaled scores of one block, the future masked with -inf on the diagonal block."""
    # (B, nh, Tq, hs) x (B, nh, hs, Tk) -> (B, nh, Tq, Tk)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if kind == "diagonal":
        t = q.size(-2)
        future = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(diagonal=1)  # (Tq, Tk)
        scores = scores.masked_fill(future, float("-inf"))
    return scores


def ring_forward(q: Tensor, k: Tensor, v: Tensor, group=None, counter=None):
    """One causal ring-attention forward on this rank: my queries against every K/V block as it
    travels the ring, merged with the online softmax. Returns (output, log-sum-exp)."""
    size, rank = _size_and_rank(group)
    kv = torch.stack([k, v])  # (2, B, nh, T, hs): one message per step carries both
    out = torch.zeros_like(q)  # (B, nh, T, hs), sum of exp(score - row_max) * v so far
    row_max = q.new_full(q.shape[:-1] + (1,), float("-inf"))  # (B, nh, T, 1), m
    row_sum = q.new_zeros(q.shape[:-1] + (1,))  # (B, nh, T, 1), l = sum of exp(score - m)
    for step in range(size):
        pending = None
        if step < size - 1:  # start the next block's transfer before computing this one
            pending = _pass_to_next(kv, group=group, tag=0, counter=counter, kind="kv",
                                    phase="forward")
        kind = causal_block(rank, (rank - step) % size)  # step 0 holds my own block
        if kind != "skip":
            scores = _block_scores(q, kv[0], kind)  # (B, nh, T, Tk)
            new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))  # (B, nh, T, 1)
            # finite from step 0 on: the diagonal block always lets a query see itself
            probs = torch.exp(scores - new_max)  # (B, nh, T, Tk), unnormalised; masked -> 0
            rescale = torch.exp(row_max - new_max)  # (B, nh, T, 1); 0 at step 0 (m = -inf)
            row_sum = row_sum * rescale + probs.sum(dim=-1, keepdim=True)
            out = out * rescale + probs @ kv[1]  # (B, nh, T, Tk) x (B, nh, Tk, hs) -> (B, nh, T, hs)
            row_max = new_max
        if pending is not None:
            kv, requests = pending
            _wait(requests)
    out = out / row_sum  # (B, nh, T, hs): now the softmax-weighted average of v
    return out, row_max + torch.log(row_sum)  # log-sum-exp (B, nh, T, 1): all backward needs


class _RingAttention(torch.autograd.Function):
    """forward: :func:`ring_forward` (online softmax over the K/V blocks visiting on the ring);
    backward: FA-2's recomputation, with dK/dV travelling alongside K/V and a last hop home."""

    @staticmethod
    def forward(ctx, q, k, v, group, counter):
        out, log_sum_exp = ring_forward(q, k, v, group, counter)
        ctx.save_for_backward(q, k, v, out, log_sum_exp)
        ctx.group, ctx.counter = group, counter
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        q, k, v, out, log_sum_exp = ctx.saved_tensors
        group, counter = ctx.group, ctx.counter
        size, rank = _size_and_rank(group)
        scale = 1.0 / math.sqrt(q.size(-1))
        grad_out = grad_out.contiguous()  # (B, nh, T, hs)
        # D_i = sum_j P_ij dP_ij = rowsum(dO * O): the softmax backward's subtracted term
        delta = (grad_out * out).sum(dim=-1, keepdim=True)  # (B, nh, T, 1)
        grad_q = torch.zeros_like(q)  # (B, nh, T, hs)
        kv = torch.stack([k, v])  # (2, B, nh, T, hs), the visiting block
        grad_kv = torch.zeros_like(kv)  # (2, B, nh, T, hs), dK and dV of the visiting block
        for step in range(size):
            pending_kv = None
            if step < size - 1:
                pending_kv = _pass_to_next(kv, group=group, tag=0, counter=counter, kind="kv",
                                           phase="backward")
            kind = causal_block(rank, (rank - step) % size)
            if kind != "skip":
                k_blk, v_blk = kv[0], kv[1]  # (B, nh, Tk, hs) each
                scores = _block_scores(q, k_blk, kind)  # (B, nh, T, Tk)
                probs = torch.exp(scores - log_sum_exp)  # P, recomputed: (B, nh, T, Tk)
                grad_kv[1] += probs.transpose(-2, -1) @ grad_out  # dV: (B, nh, Tk, T) x (B, nh, T, hs)
                grad_probs = grad_out @ v_blk.transpose(-2, -1)  # dP: (B,nh,T,hs)x(B,nh,hs,Tk)
                grad_scores = probs * (grad_probs - delta)  # dS: (B, nh, T, Tk)
                grad_q += (grad_scores @ k_blk) * scale  # (B,nh,T,Tk) x (B,nh,Tk,hs) -> (B,nh,T,hs)
                grad_kv[0] += (grad_scores.transpose(-2, -1) @ q) * scale  # dK: (B,nh,Tk,T)x(B,nh,T,hs)
            if size > 1:  # the accumulators move every step, the last time back to their owner
                grad_kv, grad_requests = _pass_to_next(grad_kv, group=group, tag=1,
                                                       counter=counter, kind="dkv",
                                                       phase="backward")
                if pending_kv is not None:
                    kv, requests = pending_kv
                    _wait(requests)
                _wait(grad_requests)
        return grad_q, grad_kv[0], grad_kv[1], None, None


def ring_attention(q: Tensor, k: Tensor, v: Tensor, *, group=None, counter=None) -> Tensor:
    """Causal attention of my sequence chunk over the whole sequence of the CP ``group``.

    q, k, v: ``(B, n_head, T_local, head_dim)``, this rank's contiguous chunk (chunk ``r`` on
    group rank ``r``, see :func:`sequence_chunk`); returns my chunk of the output, same shape,
    equal (up to rounding) to the matching rows of full causal attention on one process, and
    differentiable in q, k and v. ``group=None``: the default group (or one process when
    torch.distributed is not initialised); a one-rank group sends nothing. ``counter``: any
    object with ``add(kind, nbytes, phase=...)`` such as :class:`~labs.hybrid.send_counter.
    SendCounter`; what it receives is :func:`ring_attention_traffic`.
    """
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(text("hybrid.cp_shapes", q=tuple(q.shape), k=tuple(k.shape),
                              v=tuple(v.shape)))
    return _RingAttention.apply(q, k, v, group, counter)
