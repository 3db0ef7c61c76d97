"""Context parallelism (ring attention) and expert parallelism (all-to-all MoE) on real ranks.

Each parallel result is compared with one process on the same seeded tensors: ring attention
with full causal attention (output and the gradients of q, k, v), the expert-parallel MoE with
the single-process MoE (output, loss, router and expert gradients). Counted bytes must equal the
formulas. float32 tolerances are torch.testing's defaults: the blocks add the same numbers in
another order, so results are close, not bit-identical.
"""
from __future__ import annotations

import pytest
import torch
from matplotlib.patches import FancyArrowPatch
from torch.testing import assert_close

import labs
from labs.hybrid.context_parallel import (causal_block, ring_attention, ring_attention_traffic,
                                          sequence_chunk)
from labs.hybrid.expert_parallel import (MoE, dispatch_matrix, expert_parallel_traffic)
from labs.hybrid.plots_cp_ep import plot_all_to_all, plot_ring
from labs.models import causal_attention
from labs.notebook.plots import format_bytes
from tests.support.messages import pattern, said

pytestmark = pytest.mark.numerics

TIMEOUT = 60
B, N_HEAD, T, HEAD_DIM = 2, 3, 16, 8
N_EMBD, N_HIDDEN, MOE_BATCH, MOE_T = 8, 16, 8, 4


def _attention_inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, N_HEAD, T, HEAD_DIM, generator=g) for _ in range(4)]  # q, k, v, dy


def _full_attention(q, k, v, dy):
    q, k, v = (t.clone().requires_grad_() for t in (q, k, v))
    y = causal_attention(q, k, v)
    y.backward(dy)
    return y.detach(), q.grad, k.grad, v.grad


# --- context parallelism ----------------------------------------------------------------------

def _ring_rank(q, k, v, dy, group_ranks):
    """Rank body: ring attention on my chunk of the sequence; returns y, dq, dk, dv, traffic."""
    import torch.distributed as dist

    from labs.hybrid.send_counter import SendCounter
    groups = [dist.new_group(ranks) for ranks in group_ranks]  # every rank creates every group
    group = next(g for g, ranks in zip(groups, group_ranks) if dist.get_rank() in ranks)
    index = next(i for i, ranks in enumerate(group_ranks) if dist.get_rank() in ranks)
    q, k, v, dy = (sequence_chunk(t[index].to(labs.device()), group=group)
                   for t in (q, k, v, dy))  # t[index]: each group its own sequences
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    counter = SendCounter()
    y = ring_attention(q, k, v, group=group, counter=counter)
    y.backward(dy)
    return [t.cpu() for t in (y.detach(), q.grad, k.grad, v.grad)], counter.summary()


# 4 ranks on 2 cores: make test only (issue 27: make check <= 3 min keeps cp 1 and 2)
@pytest.mark.parametrize("cp", [1, 2, pytest.param(4, marks=pytest.mark.slow)])
def test_ring_attention_equals_full_attention(cp):
    q, k, v, dy = _attention_inputs()
    expected = _full_attention(q, k, v, dy)
    stacked = [t.unsqueeze(0) for t in (q, k, v, dy)]  # one group: index 0
    results = labs.launch(_ring_rank, cp, args=(*stacked, [list(range(cp))]), backend="gloo",
                          timeout=TIMEOUT)
    block_bytes = B * N_HEAD * (T // cp) * HEAD_DIM * 4
    for rank, (tensors, traffic) in enumerate(results):
        for name, got, full in zip(("output", "dq", "dk", "dv"), tensors, expected):
            assert_close(got, full.chunk(cp, dim=2)[rank], msg=lambda m: f"rank {rank} {name}: {m}")
        assert traffic == ring_attention_traffic(block_bytes, cp)
    if cp > 1:  # forward 2(c-1)S; backward 2(c-1)S + 2cS
        forward = ring_attention_traffic(block_bytes, cp)[("forward", "kv")][1]
        assert forward == 2 * (cp - 1) * block_bytes


def test_ring_attention_on_two_subgroups():
    """Two CP groups of 2 on 4 ranks ([0, 1] and [2, 3]), each on its own sequences: the ring
    uses group ranks, not global ranks."""
    inputs = [_attention_inputs(seed) for seed in (1, 2)]
    stacked = [torch.stack([inputs[0][i], inputs[1][i]]) for i in range(4)]
    results = labs.launch(_ring_rank, 4, args=(*stacked, [[0, 1], [2, 3]]), backend="gloo",
                          timeout=TIMEOUT)
    for rank, (tensors, _) in enumerate(results):
        expected = _full_attention(*inputs[rank // 2])
        for got, full in zip(tensors, expected):
            assert_close(got, full.chunk(2, dim=2)[rank % 2])


def test_ring_attention_without_process_group_matches_numerical_gradient():
    """One process, no torch.distributed: the hand-written backward against finite differences."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
               for _ in range(3))
    assert_close(ring_attention(q, k, v), causal_attention(q, k, v))
    assert torch.autograd.gradcheck(lambda a, b, c: ring_attention(a, b, c), (q, k, v))


def test_causal_blocks():
    assert [causal_block(2, j) for j in range(4)] == ["full", "full", "diagonal", "skip"]
    assert ring_attention_traffic(100, 1) == {}
    assert ring_attention_traffic(100, 4) == {("forward", "kv"): (3, 600),
                                              ("backward", "kv"): (3, 600),
                                              ("backward", "dkv"): (4, 800)}


# --- expert parallelism -----------------------------------------------------------------------

DEAD = {4: [1, 3], 8: [1, 2, 6]}  # experts no token chooses (top_k=1)


def _uneven_moe(n_experts, top_k):
    """A seeded MoE whose router never picks the DEAD experts when top_k=1: their router row is
    expert 0's minus 5 on feature 0, and every token has feature 0 >= 1 (see _moe_tokens)."""
    moe = MoE(N_EMBD, N_HIDDEN, n_experts, top_k=top_k, seed=0)
    with torch.no_grad():
        for e in DEAD[n_experts]:
            moe.router.weight[e] = moe.router.weight[0]
            moe.router.weight[e, 0] -= 5.0
    return moe


def _moe_tokens():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(MOE_BATCH, MOE_T, N_EMBD, generator=g)
    x[..., 0] = x[..., 0].abs() + 1.0
    return x, torch.randn(MOE_BATCH, MOE_T, N_EMBD, generator=g)


def _loss(y, target):
    return ((y - target) ** 2).sum() / (MOE_BATCH * MOE_T)  # summed over ranks: the full loss


def _expert_grads(experts, ids):
    return {e: {n: p.grad.cpu() for n, p in ex.named_parameters()} for e, ex in zip(ids, experts)}


def _moe_rank(n_experts, top_k, x, target):
    import torch.distributed as dist

    from labs.hybrid.expert_parallel import ExpertParallelMoE, route
    from labs.hybrid.send_counter import SendCounter
    group, counter = dist.group.WORLD, SendCounter()
    ep = ExpertParallelMoE.from_moe(_uneven_moe(n_experts, top_k).to(labs.device()),
                                    group=group, counter=counter)
    x, target = (t.chunk(dist.get_world_size(group))[dist.get_rank(group)].to(labs.device())
                 for t in (x, target))  # my tokens: a slice of the batch
    x.requires_grad_()  # as inside a model: the layers below want this gradient
    y = ep(x)
    loss = _loss(y, target)
    loss.backward()
    router_grad = ep.router.weight.grad.clone()
    dist.all_reduce(router_grad, group=group)  # the data-parallel sync of a replicated weight
    chosen = route(ep.router(x.reshape(-1, N_EMBD)), top_k)[1]
    return (y.detach().cpu(), loss.item(), router_grad.cpu(),
            _expert_grads(ep.experts, ep.expert_ids), counter.summary(), chosen.detach().cpu(),
            x.grad.cpu())


# (4, 8, 1): 4 ranks on 2 cores, make test only (issue 27); make check keeps (4, 8, 2)
@pytest.mark.parametrize("ep_size, n_experts, top_k", [
    (1, 4, 1), (2, 4, 1), (4, 4, 1), pytest.param(4, 8, 1, marks=pytest.mark.slow), (4, 8, 2)])
def test_expert_parallel_moe_equals_reference(ep_size, n_experts, top_k):
    x, target = _moe_tokens()
    moe = _uneven_moe(n_experts, top_k)
    x_ref = x.clone().requires_grad_()
    y_ref = moe(x_ref)
    loss_ref = _loss(y_ref, target)
    loss_ref.backward()
    chosen_ref = moe.routing(x)[1]
    per_expert = torch.bincount(chosen_ref.reshape(-1), minlength=n_experts)
    if top_k == 1:  # the routing is as uneven as intended: some experts get nothing
        assert per_expert[DEAD[n_experts]].sum() == 0 and per_expert.max() > per_expert.sum() / 4

    results = labs.launch(_moe_rank, ep_size, args=(n_experts, top_k, x, target),
                          backend="gloo", timeout=TIMEOUT)
    chosen = [r[5] for r in results]
    assert torch.equal(torch.cat(chosen), chosen_ref), "the ranks routed differently"
    assert_close(torch.cat([r[0] for r in results]), y_ref.detach())
    assert_close(torch.tensor(sum(r[1] for r in results)), loss_ref.detach())
    assert_close(torch.cat([r[6] for r in results]), x_ref.grad)  # the gradient of the tokens
    matrix = dispatch_matrix(chosen, n_experts)
    reference_grads = _expert_grads(moe.experts, range(n_experts))
    held = {}
    for rank, (_, _, router_grad, expert_grads, traffic, _, _) in enumerate(results):
        assert_close(router_grad, moe.router.weight.grad, msg=lambda m: f"rank {rank}: {m}")
        held.update(expert_grads)
        assert traffic == expert_parallel_traffic(matrix, rank, row_bytes=N_EMBD * 4,
                                                  n_experts=n_experts)
    assert sorted(held) == list(range(n_experts))  # each expert on exactly one rank
    for e, grads in held.items():
        for name, grad in grads.items():
            assert_close(grad, reference_grads[e][name], msg=lambda m: f"expert {e} {name}: {m}")
            if top_k == 1 and e in DEAD[n_experts]:  # nobody chose it: a zero gradient
                assert not grad.any(), (e, name)


# --- bad input --------------------------------------------------------------------------------

def _bad_inputs_rank():
    import torch.distributed as dist

    from labs.hybrid.expert_parallel import ExpertParallelMoE
    messages = []
    try:
        sequence_chunk(torch.zeros(1, 1, 10, 2), group=dist.group.WORLD)
    except ValueError as exc:
        messages.append(str(exc))
    try:
        ExpertParallelMoE.from_moe(MoE(4, 8, 6), group=dist.group.WORLD)
    except ValueError as exc:
        messages.append(str(exc))
    return messages


@pytest.fixture
def english(monkeypatch):
    """Messages in English (the words these tests match); the launched ranks inherit it."""
    monkeypatch.setenv("LABS_LANG", "en")


def test_bad_input_gives_clear_errors(english):
    for messages in labs.launch(_bad_inputs_rank, 4, backend="gloo", timeout=TIMEOUT):
        assert len(messages) == 2
        assert "length 10" in messages[0] and "multiple of the CP size 4" in messages[0]
        assert "6 experts" in messages[1] and "multiple of the EP size" in messages[1]
    with pytest.raises(ValueError, match="one shape"):
        ring_attention(torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 4, 3), torch.zeros(1, 1, 4, 2))
    with pytest.raises(ValueError, match="top_k"):
        MoE(4, 8, 2, top_k=3)
    with pytest.raises(ValueError) as info:
        dispatch_matrix([torch.zeros(3, 1, dtype=torch.long)] * 4, 6)
    said(info.value, "hybrid.ep_spread", n_experts=6, ep_size=4)  # a multiple of the EP size


# --- figures ----------------------------------------------------------------------------------

def _arrows(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


@pytest.mark.parametrize("cp", [1, 2, 4])
def test_plot_ring(english, cp):
    fig = plot_ring(cp, block_bytes=1024)
    assert len(_arrows(fig)) == (cp if cp > 1 else 0)
    assert sum(t.startswith("rank ") for t in _texts(fig)) == cp
    if cp > 1:
        forward = format_bytes(2 * (cp - 1) * 1024)
        assert sum(f"fwd {forward}" in t for t in _texts(fig)) == cp


def test_plot_all_to_all(english):
    matrix = torch.tensor([[3, 2, 0, 0], [0, 1, 0, 4], [0, 2, 5, 0], [1, 0, 0, 0]])
    fig = plot_all_to_all(matrix, row_bytes=32, n_experts=4)
    assert len(_arrows(fig)) == 4  # the non-zero entries off the diagonal
    assert sorted(t for t in _texts(fig) if " tok" in t) == sorted(
        f"{n} tok\n{format_bytes(n * 32)}" for n in (2, 4, 2, 1))
    assert sum(t.startswith("rank ") for t in _texts(fig)) == 4


# --- the notebook's rank functions ------------------------------------------------------------

def test_notebook_checks_compare_with_one_process_and_count_bytes():
    from labs.hybrid.verify_cp_ep import check_expert_parallel, check_ring_attention

    ring = labs.launch(check_ring_attention, 4, kwargs=dict(seq_len=32), timeout=TIMEOUT)
    block = 2 * 4 * 8 * 16 * 4  # batch · heads · (32 / 4 tokens) · head_dim · 4 bytes
    assert [r["block_bytes"] for r in ring] == [block] * 4
    assert [r["traffic"] for r in ring] == [ring_attention_traffic(block, 4)] * 4
    assert [r["tokens"] for r in ring] == [(0, 8), (8, 16), (16, 24), (24, 32)]
    moe = labs.launch(check_expert_parallel, 4, args=(8, 2), timeout=TIMEOUT)
    assert [r["experts"] for r in moe] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    matrix = dispatch_matrix([r["chosen"] for r in moe], 8)
    assert int(matrix.sum()) == 8 * 4 * 2  # every token to top_k = 2 experts
    for r in moe:
        assert r["traffic"] == expert_parallel_traffic(matrix, r["rank"], row_bytes=16 * 4,
                                                       n_experts=8)
        assert r["loss"] == pytest.approx(r["reference_loss"], rel=1e-5)


def test_errors_and_figures_in_chinese(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    zh = dict(lang="zh")
    with pytest.raises(ValueError) as info:
        ring_attention(torch.zeros(1, 1, 4, 2), torch.zeros(1, 1, 4, 3), torch.zeros(1, 1, 4, 2))
    said(info.value, "hybrid.cp_shapes", **zh)  # q, k and v of the same shape
    with pytest.raises(ValueError) as info:
        dispatch_matrix([torch.zeros(3, 1, dtype=torch.long)] * 4, 6)
    said(info.value, "hybrid.ep_spread", **zh, n_experts=6, ep_size=4)
    fig = plot_ring(2, block_bytes=1024)
    arrow = pattern("hybrid.ring_arrow", **zh, forward=format_bytes(2 * 1024))
    assert sum(bool(arrow.fullmatch(t)) for t in _texts(fig)) == 2
