"""Tensor parallelism (labs.tensor_parallel: comm, layers, model, dtensor) against the full model.

Real ranks on gloo (labs.launch). Every check compares with the single-process reference on the
same seeded data: logits, loss, every gradient (each shard equals the matching slice of the full
gradient), and the weights after one SGD step. Tolerances are labs.numerics' float32 policy (the
loss, a Python float, too): the sharded matmuls and all-reduces add the same numbers in another
order, so results are close, not bit-identical.
"""
from __future__ import annotations

import pytest
import torch

import labs
from labs.data import get_batch
from labs.models import TinyGPT, TinyGPTConfig
from labs.numerics import assert_close
from labs.reference import train_reference
from labs.tensor_parallel import ColumnParallelLinear, ParallelMLP, shard, unshard
from labs.tensor_parallel.model import ParallelTinyGPT, validate_tp_layout
from labs.messages import text
from tests.support.messages import found_in, said

pytestmark = pytest.mark.numerics

CONFIG = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=2, n_head=4, n_embd=32)
BATCH, LR, TIMEOUT = 4, 0.1, 60


def _train_one_step(config, sequence_parallel):
    """Rank body: one SGD step of the TP model; returns loss, logits, grads, weights, counts."""
    from labs.tensor_parallel.model import sync_sequence_parallel_grads
    from labs.tensor_parallel.comm import CommCounter

    counter = CommCounter()
    model = ParallelTinyGPT(TinyGPT(config, seed=0), counter=counter,
                            sequence_parallel=sequence_parallel)
    # SGD, not Adam: Adam's first step is lr * g / (|g| + eps), so for gradients that are zero in
    # exact arithmetic (the key bias: softmax ignores it) rounding noise picks the sign of a
    # full-size update, and no tolerance would hold. SGD keeps the tolerance of the gradients.
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = get_batch(0, BATCH, config.block_size)
    logits, loss = model(x, y)
    loss.backward()
    sync_sequence_parallel_grads(model, counter=counter)
    layout = {n: (getattr(p, "tp_dim", None), getattr(p, "tp_stride", 1))
              for n, p in model.named_parameters()}
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    opt.step()
    weights = {n: p.detach().clone() for n, p in model.named_parameters()}
    return loss.item(), logits.detach(), layout, grads, weights, counter.summary()


def _expected(full, dim, stride, rank, tp):
    return full if dim is None else shard(full, dim, rank, tp, stride=stride)


@pytest.fixture(scope="module")
def reference():
    model = TinyGPT(CONFIG, seed=0)
    x, y = get_batch(0, BATCH, CONFIG.block_size)
    with torch.no_grad():
        logits, _ = model(x, y)
    result = train_reference(model, lambda step: get_batch(step, BATCH, CONFIG.block_size),
                             steps=1, lr=LR, optimizer="sgd")
    return logits, result


@pytest.mark.parametrize("tp, sequence_parallel", [(2, False), (4, False), (2, True), (4, True)])
def test_tp_model_equals_reference(reference, tp, sequence_parallel):
    logits_ref, ref = reference
    results = labs.launch(_train_one_step, tp, args=(CONFIG, sequence_parallel),
                          backend="gloo", timeout=TIMEOUT)
    for rank, (loss, logits, layout, grads, weights, _) in enumerate(results):
        assert_close(loss, ref.losses[0], msg=f"rank {rank} loss")
        assert_close(logits, logits_ref, msg=f"rank {rank} logits")
        assert set(grads) == set(ref.grads_of_last_step)
        for name, (dim, stride) in layout.items():
            assert_close(grads[name], _expected(ref.grads_of_last_step[name], dim, stride, rank, tp),
                         msg=f"rank {rank} gradient of {name}")
            assert_close(weights[name], _expected(ref.state_dict[name], dim, stride, rank, tp),
                         msg=f"rank {rank} weight of {name} after the step")


def test_communication_counts_match_the_formulas():
    """Per block: 2 all-reduces of B*T*C floats forward, 2 backward; lm_head: one all-gather of
    the logits forward, the all-reduce of its input gradient backward."""
    results = labs.launch(_train_one_step, 2, args=(CONFIG, False), backend="gloo",
                          timeout=TIMEOUT)
    summary = results[0][5]
    activation = BATCH * CONFIG.block_size * CONFIG.n_embd * 4
    logits = BATCH * CONFIG.block_size * CONFIG.vocab_size * 4
    L = CONFIG.n_layer
    assert summary == {("forward", "all_reduce"): (2 * L, 2 * L * activation),
                       ("forward", "all_gather"): (1, logits),
                       ("backward", "all_reduce"): (2 * L + 1, (2 * L + 1) * activation)}


def _dtensor_vs_hand(tp):
    """Rank body: one block three ways (full, hand-written TP, DTensor TP), forward + backward."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh

    from labs.tensor_parallel.dtensor import DTensorBlock, local_grad, local_value
    from labs.tensor_parallel.model import ParallelBlock

    full = TinyGPT(CONFIG, seed=0).transformer.h[0]
    hand = ParallelBlock(full)
    dt = DTensorBlock(full, init_device_mesh("cpu", (tp,)))
    x = torch.randn(BATCH, CONFIG.block_size, CONFIG.n_embd, generator=torch.Generator().manual_seed(1))
    out = {}
    for name, module in (("full", full), ("hand", hand), ("dtensor", dt)):
        xi = x.clone().requires_grad_()
        y = module(xi)
        y.pow(2).sum().backward()  # any scalar of the output; the same on every rank
        out[name] = (y.detach(), xi.grad,
                     {n: local_grad(p) for n, p in module.named_parameters()},
                     {n: local_value(p).detach() for n, p in module.named_parameters()})
    layout = {n: (getattr(p, "tp_dim", None), getattr(p, "tp_stride", 1))
              for n, p in hand.named_parameters()}
    return dist.get_rank(), out, layout


@pytest.mark.parametrize("tp", [2, 4])
def test_dtensor_layers_agree_with_hand_written_and_full(tp):
    for rank, out, layout in labs.launch(_dtensor_vs_hand, tp, args=(tp,), backend="gloo",
                                         timeout=TIMEOUT):
        y_full, gx_full, g_full, _ = out["full"]
        for impl in ("hand", "dtensor"):
            y, gx, grads, values = out[impl]
            assert_close(y, y_full, msg=f"{impl} output")
            assert_close(gx, gx_full, msg=f"{impl} input grad")
            for name, (dim, stride) in layout.items():
                expected = _expected(g_full[name], dim, stride, rank, tp)
                assert_close(grads[name], expected, msg=f"{impl} grad of {name}")
        for name in layout:  # both hold the same local shard
            assert_close(out["hand"][3][name], out["dtensor"][3][name], msg=name)


def _conjugate_pair():
    """Rank body on 4 ranks, two TP groups {0,1} {2,3} passed explicitly."""
    import torch.distributed as dist

    from labs.tensor_parallel.comm import (CommCounter, copy_to_tensor_parallel_region,
                                           reduce_from_tensor_parallel_region)
    from labs.tensor_parallel.model import tensor_parallel_group

    group, rank = tensor_parallel_group(2), dist.get_rank()
    counter = CommCounter()
    x = torch.full((3,), float(rank + 1), requires_grad=True)
    f = copy_to_tensor_parallel_region(x, group=group, counter=counter)
    g = reduce_from_tensor_parallel_region(x * 1.0, group=group, counter=counter)
    ((rank + 1) * f).sum().backward()  # d/dx of f-part: sum over the group of (r+1)
    return f.detach(), g.detach(), x.grad, counter.summary()


def test_conjugate_operators_on_explicit_groups():
    results = labs.launch(_conjugate_pair, 4, backend="gloo", timeout=TIMEOUT)
    for rank, (f, g, grad, summary) in enumerate(results):
        pair = (1, 2) if rank < 2 else (3, 4)  # rank + 1 of the two ranks in my group
        assert_close(f, torch.full((3,), float(rank + 1)))  # identity forward
        assert_close(g, torch.full((3,), float(sum(pair))))  # all-reduce forward
        assert_close(grad, torch.full((3,), float(sum(pair))))  # all-reduce backward
        assert summary == {("forward", "all_reduce"): (1, 12), ("backward", "all_reduce"): (1, 12)}


def test_single_rank_layers_are_the_full_layers():
    """With one rank (no process group) every collective returns its input: the TP MLP is the MLP."""
    block = TinyGPT(CONFIG, seed=0).transformer.h[0]
    x = torch.randn(2, 5, CONFIG.n_embd)
    assert torch.equal(ParallelMLP(block.mlp)(x), block.mlp(x))  # the same kernels: bit-exact
    head = ColumnParallelLinear.from_linear(block.mlp.c_fc, gather_output=True)
    assert torch.equal(head(x), block.mlp.c_fc(x))


def test_shard_and_unshard_are_inverse():
    w = torch.arange(48.0).view(12, 4)
    for stride in (1, 3):
        pieces = [shard(w, 0, r, 2, stride=stride) for r in range(2)]
        assert torch.equal(unshard(pieces, 0, stride=stride), w)  # moves data only: exact
    assert shard(w, 0, 1, 2, stride=3)[:2].tolist() == w[2:4].tolist()  # rank 1: its q rows first


@pytest.mark.parametrize("change, tp, world, words", [
    (dict(n_head=4), 3, None, ["3", "n_head=4"]),
    (dict(n_embd=30, n_head=2), 4, None, ["4", "n_head=2"]),
    (dict(n_embd=36, n_head=6), 4, None, ["4", "n_head=6"]),
    (dict(n_embd=32, n_head=2), 4, None, ["4", "n_head=2"]),
    (dict(n_embd=24, n_head=2, vocab_size=97), 2, None, ["2", "vocab_size=97"]),
    (dict(), 2, 3, ["world size 3", "groups of 2"]),
])
def test_bad_layouts_name_the_numbers(change, tp, world, words, monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    config = TinyGPTConfig(**{**dict(vocab_size=96, block_size=16, n_layer=1, n_head=4,
                                     n_embd=32), **change})
    with pytest.raises(ValueError) as info:
        validate_tp_layout(config, tp, world_size=world)
    for word in words:
        assert word in str(info.value)


def test_width_not_divisible_is_named(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    config = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=1, n_head=1, n_embd=30)
    with pytest.raises(ValueError) as info:
        validate_tp_layout(config, 4)
    message = str(info.value)
    found_in(message, "tensor_parallel.layout_problem", lang="en", tp=4, name="n_head", value=1)
    found_in(message, "tensor_parallel.layout_problem", lang="en", tp=4, name="n_embd", value=30)
    assert message.endswith(" " + text("tensor_parallel.layout_divide_each", lang="en"))


def test_layout_errors_in_the_notebooks_language(monkeypatch):
    """The same errors in the Chinese edition: Chinese, with the same numbers and names."""
    monkeypatch.setenv("LABS_LANG", "zh")
    config = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=1, n_head=1, n_embd=30)
    with pytest.raises(ValueError) as info:
        validate_tp_layout(config, 4)
    message = str(info.value)
    found_in(message, "tensor_parallel.layout_problem", tp=4, name="n_head", value=1,
             why=text("tensor_parallel.why_heads"))
    found_in(message, "tensor_parallel.layout_problem", tp=4, name="n_embd", value=30,
             why=text("tensor_parallel.why_channels"))
    assert message.endswith(text("tensor_parallel.layout_divide_each"))
    with pytest.raises(ValueError) as info:
        validate_tp_layout(TinyGPTConfig(vocab_size=96, block_size=16, n_layer=1, n_head=4,
                                         n_embd=32), 2, world_size=3)
    said(info.value, "tensor_parallel.world_not_divisible", world_size=3, tp=2)
    with pytest.raises(ValueError) as info:
        shard(torch.zeros(8, 2), 0, 0, 2, stride=3)
    said(info.value, "tensor_parallel.shard_dim", size=8, dim=0, stride=3, world_size=2, multiple=6)


def _world_3_tp_2():
    from labs.tensor_parallel.model import tensor_parallel_group
    tensor_parallel_group(2)


def test_world_size_the_layout_cannot_use(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")  # the ranks speak the launching process's language
    with pytest.raises(labs.RankError) as info:
        labs.launch(_world_3_tp_2, 3, backend="gloo", timeout=TIMEOUT)
    found_in(info.value, "tensor_parallel.world_groups", lang="en", world=3, tp=2, divisors=[1, 3])
