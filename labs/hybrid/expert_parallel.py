"""Expert parallelism (EP): a mixture-of-experts MLP whose experts live on different ranks.

A mixture-of-experts (MoE) layer replaces one MLP by ``E`` expert MLPs and a router (Shazeer et
al., "Outrageously Large Neural Networks", arXiv:1701.06538). The router, a linear layer and a
softmax, scores every expert for every token; the token goes to its ``top_k`` best experts and
the output is their outputs weighted by the router probabilities (the "gates"). With
``top_k=1`` this is the Switch Transformer's layer (Fedus, Zoph & Shazeer, arXiv:2101.03961);
the gates are the plain softmax probabilities of the chosen experts, not renormalised over the
top k (Mixtral renormalises; both are common). There is no capacity limit: no token is dropped,
so the parallel layer computes exactly what :class:`MoE` computes.

Expert parallelism (GShard, Lepikhin et al., arXiv:2006.16668) gives each of the ``n`` ranks of
an EP group ``E/n`` experts and its own tokens. Every rank routes its tokens, then:

1. **counts**: an ``all_to_all`` of how many tokens go to each expert (the splits of the next
   step are uneven and change every batch, so the receivers must learn them first);
2. **dispatch**: an ``all_to_all`` sends each token's activation to the rank holding its expert;
3. each rank runs its experts on what it received;
4. **combine**: the reverse ``all_to_all`` sends the results home, where they are weighted by the
   gates and added up per token.

The backward runs the two token ``all_to_all`` calls in reverse. The router is replicated: its
gradient, like any replicated weight's, is summed over the ranks by the data-parallel gradient
all-reduce (the EP ranks are data-parallel ranks for everything but the experts).

Bytes each rank sends follow from the routing: :func:`dispatch_matrix` says how many token rows
rank ``i`` sends to rank ``j``, :func:`expert_parallel_traffic` turns it into messages and bytes
(the formula's only home), and ``counter`` records what was really sent::

    moe = MoE(n_embd=16, n_hidden=32, n_experts=8, seed=0)          # same weights everywhere
    ep = ExpertParallelMoE.from_moe(moe, group=ep_group, counter=SendCounter())
    y = ep(x_mine)                                                   # (B, T, C) -> (B, T, C)

Owns: the MoE layer, its router and expert-parallel dispatch, and their byte counts. Must not:
import the planner, the checks or the grader; print; keep process groups in globals.
"""
from __future__ import annotations

import copy
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor, nn

from labs.formulas.cost import expert_parallel_traffic  # the formula lives in labs.formulas.cost; re-exported
from labs.messages import text
from labs.models import init_from_seed

__all__ = ["Expert", "MoE", "ExpertParallelMoE", "route", "dispatch_matrix",
           "expert_parallel_traffic"]


def _size_and_rank(group) -> tuple[int, int]:
    if not dist.is_initialized():
        return 1, 0
    return dist.get_world_size(group), dist.get_rank(group)


def _experts_per_rank(n_experts: int, ep_size: int) -> int:
    if n_experts % ep_size:
        raise ValueError(text("hybrid.ep_spread", n_experts=n_experts, ep_size=ep_size,
                              example=ep_size * max(1, n_experts // ep_size)))
    return n_experts // ep_size


# --- the single-process layer -----------------------------------------------------------------

class Expert(nn.Module):
    """One expert: a small MLP, ``C -> n_hidden -> C`` with GELU."""

    def __init__(self, n_embd: int, n_hidden: int) -> None:
        super().__init__()
        self.fc = nn.Linear(n_embd, n_hidden)
        self.proj = nn.Linear(n_hidden, n_embd)

    def forward(self, x: Tensor) -> Tensor:
        return self.proj(F.gelu(self.fc(x)))  # (n, C) -> (n, H) -> (n, C)


def route(router_logits: Tensor, top_k: int) -> tuple[Tensor, Tensor]:
    """Gates and chosen experts of each token: (N, E) logits -> (N, k) probabilities, (N, k) ids."""
    probs = F.softmax(router_logits, dim=-1)  # (N, E), each row sums to 1
    return probs.topk(top_k, dim=-1)  # (N, k) gates, (N, k) expert ids, best first


class MoE(nn.Module):
    """Mixture-of-experts MLP on one process, the reference: ``(B, T, C) -> (B, T, C)``.

    Weights come from ``seed`` (:func:`labs.models.init_from_seed`): every rank can build the
    same layer. ``router`` has no bias; ``experts[e]`` is an :class:`Expert`. Every expert runs,
    also on zero tokens, so an expert no token chose gets a zero gradient (not None).
    """

    def __init__(self, n_embd: int, n_hidden: int, n_experts: int, *, top_k: int = 1,
                 seed: int = 0) -> None:
        super().__init__()
        if not 1 <= top_k <= n_experts:
            raise ValueError(text("hybrid.top_k", top_k=top_k, n_experts=n_experts))
        self.n_experts, self.top_k = n_experts, top_k
        with torch.device("meta"):
            self.router = nn.Linear(n_embd, n_experts, bias=False)
            self.experts = nn.ModuleList(Expert(n_embd, n_hidden) for _ in range(n_experts))
        init_from_seed(self, seed, weight_std=lambda weight: weight.size(1) ** -0.5)

    def routing(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(B, T, C) -> gates (N, k) and chosen experts (N, k), N = B*T tokens."""
        return route(self.router(x.reshape(-1, x.size(-1))), self.top_k)  # (N, C) @ (C, E)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.shape
        flat = x.reshape(B * T, C)  # (N, C), one row per token
        gates, chosen = self.routing(x)  # (N, k) each
        out = torch.zeros_like(flat)  # (N, C)
        for e, expert in enumerate(self.experts):
            token, slot = (chosen == e).nonzero(as_tuple=True)  # the (token, choice) pairs of e
            # runs even on no tokens, like the parallel layer: an unused expert's gradient is 0
            weighted = gates[token, slot, None] * expert(flat[token])  # (n_e, 1) * (n_e, C)
            out = out.index_add(0, token, weighted)  # each token sums its k experts
        return out.view(B, T, C)


# --- all_to_all with autograd -----------------------------------------------------------------

def _all_to_all(x: Tensor, out_splits: list, in_splits: list, *, group, counter, kind, phase):
    """Rows ``x[in_splits[j] block]`` go to rank j; returns what the ranks sent me, by rank."""
    _, rank = _size_and_rank(group)
    out = x.new_empty((sum(out_splits),) + tuple(x.shape[1:]))
    dist.all_to_all_single(out, x.contiguous(), output_split_sizes=out_splits,
                           input_split_sizes=in_splits, group=group)
    if counter is not None:  # only rows that leave this rank cross a link
        row_bytes = math.prod(x.shape[1:]) * x.element_size()
        counter.add(kind, (sum(in_splits) - in_splits[rank]) * row_bytes, phase=phase)
    return out


class _AllToAll(torch.autograd.Function):
    """forward: all_to_all with the given splits; backward: the reverse all_to_all."""

    @staticmethod
    def forward(ctx, x, out_splits, in_splits, group, counter, kind):
        ctx.splits, ctx.group, ctx.counter, ctx.kind = (out_splits, in_splits), group, counter, kind
        return _all_to_all(x, out_splits, in_splits, group=group, counter=counter, kind=kind,
                           phase="forward")

    @staticmethod
    def backward(ctx, grad):
        out_splits, in_splits = ctx.splits
        return (_all_to_all(grad, in_splits, out_splits, group=ctx.group, counter=ctx.counter,
                            kind=ctx.kind, phase="backward"), None, None, None, None, None)


# --- the expert-parallel layer ----------------------------------------------------------------

class ExpertParallelMoE(nn.Module):
    """The experts of a :class:`MoE` spread over the EP ``group``: rank r of n holds experts
    ``r*E/n ... (r+1)*E/n - 1`` and a copy of the router. ``forward`` takes this rank's own
    tokens ``(B, T, C)`` and returns their outputs, equal to ``MoE.forward`` on them.

    Build it with :meth:`from_moe` so that it starts from the reference's weights. ``counter``:
    any object with ``add(kind, nbytes, phase=...)``; kinds "counts", "dispatch", "combine",
    one entry per all_to_all (see :func:`expert_parallel_traffic`).
    """

    def __init__(self, router: nn.Linear, experts: nn.ModuleList, *, n_experts: int, top_k: int,
                 group=None, counter=None) -> None:
        super().__init__()
        size, rank = _size_and_rank(group)
        if len(experts) != _experts_per_rank(n_experts, size):
            raise ValueError(text("hybrid.ep_experts_per_rank", rank=rank, got=len(experts),
                                  n_experts=n_experts, size=size, want=n_experts // size))
        self.router, self.experts = router, experts
        self.n_experts, self.top_k, self.group, self.counter = n_experts, top_k, group, counter
        self.first_expert = rank * len(experts)  # global id of experts[0]

    @classmethod
    def from_moe(cls, moe: MoE, *, group=None, counter=None) -> "ExpertParallelMoE":
        """Copy the router and this rank's experts out of ``moe`` (which is left untouched)."""
        size, rank = _size_and_rank(group)
        per_rank = _experts_per_rank(moe.n_experts, size)
        mine = moe.experts[rank * per_rank:(rank + 1) * per_rank]
        return cls(copy.deepcopy(moe.router), copy.deepcopy(mine), n_experts=moe.n_experts,
                   top_k=moe.top_k, group=group, counter=counter)

    @property
    def expert_ids(self) -> list[int]:
        """Global ids of the experts this rank holds."""
        return list(range(self.first_expert, self.first_expert + len(self.experts)))

    def forward(self, x: Tensor) -> Tensor:
        size, _ = _size_and_rank(self.group)
        local, k = len(self.experts), self.top_k
        B, T, C = x.shape
        flat = x.reshape(B * T, C)  # (N, C)
        gates, chosen = route(self.router(flat), k)  # (N, k) each
        # Sort the (token, choice) pairs by expert: experts of rank j are consecutive ids, so
        # the pairs for rank j become one contiguous block, as all_to_all_single wants.
        order = torch.argsort(chosen.reshape(-1), stable=True)  # (N*k,)
        pair_token, pair_gate = order // k, gates.reshape(-1)[order]  # (N*k,) each
        send_counts = torch.bincount(chosen.reshape(-1), minlength=self.n_experts)  # (E,)
        send_counts = send_counts.view(size, local)  # (n, E/n): [j, i] pairs for rank j's expert i
        if size == 1:
            recv_counts, received = send_counts, flat[pair_token]  # (1, E), (N*k, C)
        else:
            # 1. counts: recv_counts[j, i] = pairs rank j sends to my expert i
            recv_counts = _all_to_all(send_counts, [1] * size, [1] * size,  # a row per rank
                                      group=self.group, counter=self.counter, kind="counts",
                                      phase="forward").view(size, local)  # (n, E/n)
            # 2. dispatch: rows arrive grouped by sender, then by my expert
            received = _AllToAll.apply(flat[pair_token], recv_counts.sum(1).tolist(),
                                       send_counts.sum(1).tolist(), self.group, self.counter,
                                       "dispatch")  # (M, C), M = tokens for my experts
        # 3. my experts on what arrived: local expert of each received row
        row_expert = torch.arange(local, device=x.device).repeat(size)  # (n*E/n,)
        row_expert = row_expert.repeat_interleave(recv_counts.reshape(-1))  # (M,)
        results = torch.zeros_like(received)  # (M, C)
        for i, expert in enumerate(self.experts):
            # Every expert runs, even on zero rows: that keeps ``results`` in the autograd graph,
            # so this rank joins the backward all_to_all of combine even when no token came
            # (skipping it would leave the other ranks waiting forever).
            rows = (row_expert == i).nonzero().squeeze(1)  # (m_i,)
            results = results.index_add(0, rows, expert(received[rows]))  # (m_i, C)
        if size > 1:
            # 4. combine: the reverse all_to_all sends each result back to its token's rank
            results = _AllToAll.apply(results, send_counts.sum(1).tolist(),
                                      recv_counts.sum(1).tolist(), self.group, self.counter,
                                      "combine")  # (N*k, C), in the sorted pair order
        out = torch.zeros_like(flat).index_add(0, pair_token, pair_gate[:, None] * results)  # (N, C)
        return out.view(B, T, C)


# --- who sends how much -----------------------------------------------------------------------

def dispatch_matrix(chosen_per_rank, n_experts: int) -> Tensor:
    """Token rows rank i dispatches to rank j: ``(n, n)``, from each rank's chosen experts.

    ``chosen_per_rank[i]`` is rank i's ``(N_i, k)`` expert ids (:func:`route`'s second output,
    or :meth:`MoE.routing` on rank i's tokens); the EP size n is ``len(chosen_per_rank)``.
    """
    n = len(chosen_per_rank)
    per_rank = _experts_per_rank(n_experts, n)
    rows = [torch.bincount(c.reshape(-1).cpu() // per_rank, minlength=n)
            for c in chosen_per_rank]
    return torch.stack(rows)  # (n, n)
