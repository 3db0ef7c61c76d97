"""Context and expert parallelism checked against one process, as rank functions for the notebook.

Each function runs on every rank of ``labs.launch`` (the whole world is the CP or EP group),
computes its part on seeded inputs, computes the single-process reference itself, compares them
with :func:`labs.numerics.assert_close` (raising on a mismatch) and returns what it checked plus
the bytes it sent::

    labs.launch(check_ring_attention, 4, timeout=60)          # CP on 4 ranks
    labs.launch(check_expert_parallel, 4, args=(8,), timeout=60)  # 8 experts on 4 ranks

Owns: these rank bodies and their references. Must not: hold CP or EP code (their modules own it),
print, keep process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

import torch
import torch.distributed as dist

import labs
from labs.hybrid.context_parallel import ring_attention, sequence_chunk
from labs.hybrid.expert_parallel import ExpertParallelMoE, MoE, route
from labs.hybrid.send_counter import SendCounter
from labs.models import causal_attention
from labs.messages import text
from labs.numerics import assert_close

__all__ = ["check_ring_attention", "check_expert_parallel"]


def _max_diff(a, b) -> float:
    return (a.float() - b.float()).abs().max().item()


def check_ring_attention(batch: int = 2, heads: int = 4, seq_len: int = 64, head_dim: int = 16,
                         seed: int = 0, group=None) -> dict:
    """On a rank of the CP group: causal ring attention on this rank's chunk of the sequence
    equals the same rows of full attention on one process (output and dq, dk, dv)."""
    group = group or dist.group.WORLD
    g = torch.Generator().manual_seed(seed)
    q, k, v, dy = (torch.randn(batch, heads, seq_len, head_dim, generator=g) for _ in range(4))
    full = [t.clone().requires_grad_() for t in (q, k, v)]
    y_full = causal_attention(*full)
    y_full.backward(dy)
    rank, size = dist.get_rank(group), dist.get_world_size(group)
    mine = [sequence_chunk(t.to(labs.device()), group=group) for t in (q, k, v, dy)]
    q_, k_, v_ = (t.requires_grad_() for t in mine[:3])
    counter = SendCounter()
    y = ring_attention(q_, k_, v_, group=group, counter=counter)
    y.backward(mine[3])
    diffs = {}
    for name, got, ref in (("output", y.detach(), y_full.detach()), ("dq", q_.grad, full[0].grad),
                           ("dk", k_.grad, full[1].grad), ("dv", v_.grad, full[2].grad)):
        ref = ref.chunk(size, dim=2)[rank]
        assert_close(got.cpu(), ref, msg=f"rank {rank} {name}")
        diffs[name] = _max_diff(got.cpu(), ref)
    return {"rank": rank, "tokens": (rank * seq_len // size, (rank + 1) * seq_len // size),
            "max_diff": diffs, "sent_bytes": counter.sent, "traffic": counter.summary(),
            "block_bytes": q_.numel() * q_.element_size()}


def check_expert_parallel(n_experts: int = 8, top_k: int = 2, hidden: int = 16, ffn: int = 32,
                          batch: int = 8, seq_len: int = 4, seed: int = 0, group=None) -> dict:
    """On a rank of the EP group: the expert-parallel MoE on this rank's tokens (experts spread
    over the group, tokens routed with all-to-all) equals the single-process MoE -- output,
    loss, the tokens' gradient, the router's (all-reduced) and each local expert's gradients."""
    group = group or dist.group.WORLD
    rank, size = dist.get_rank(group), dist.get_world_size(group)
    g = torch.Generator().manual_seed(seed + 1)
    x, target = (torch.randn(batch, seq_len, hidden, generator=g) for _ in range(2))
    moe = MoE(hidden, ffn, n_experts, top_k=top_k, seed=seed)
    x_ref = x.clone().requires_grad_()
    loss_ref = ((moe(x_ref) - target) ** 2).sum() / (batch * seq_len)
    loss_ref.backward()
    counter = SendCounter()
    ep = ExpertParallelMoE.from_moe(MoE(hidden, ffn, n_experts, top_k=top_k, seed=seed)
                                    .to(labs.device()), group=group, counter=counter)
    x_mine, t_mine = (t.chunk(size)[rank].to(labs.device()) for t in (x, target))
    x_mine.requires_grad_()
    y = ep(x_mine)
    loss = ((y - t_mine) ** 2).sum() / (batch * seq_len)
    loss.backward()
    router_grad = ep.router.weight.grad.clone()
    dist.all_reduce(router_grad, group=group)  # a replicated weight: data-parallel sync
    loss_sum = loss.detach().clone()
    dist.all_reduce(loss_sum, group=group)
    with torch.no_grad():
        y_ref_mine = moe(x.chunk(size)[rank])
    assert_close(y.detach().cpu(), y_ref_mine, msg=text("hybrid.rank_output", rank=rank))
    assert_close(loss_sum.cpu(), loss_ref.detach(), msg="loss")
    assert_close(x_mine.grad.cpu(), x_ref.grad.chunk(size)[rank],
                 msg=text("hybrid.token_grads", rank=rank))
    assert_close(router_grad.cpu(), moe.router.weight.grad, msg=text("hybrid.router_grads"))
    for e, expert in zip(ep.expert_ids, ep.experts):
        for name, p in expert.named_parameters():
            ref = dict(moe.experts[e].named_parameters())[name].grad
            assert_close(p.grad.cpu(), ref, msg=text("hybrid.expert_grad", expert=e, name=name))
    chosen = route(ep.router(x_mine.detach().reshape(-1, hidden)), top_k)[1]
    return {"rank": rank, "experts": list(ep.expert_ids), "chosen": chosen.cpu(),
            "loss": loss_sum.item(), "reference_loss": loss_ref.item(),
            "sent_bytes": counter.sent, "traffic": counter.summary(), "row_bytes": hidden * 4}
