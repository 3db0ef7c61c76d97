"""Rank bodies that check the tensor-parallel code against the full model, for the notebook.

Each rank builds the full TinyGPT from the same seed (no broadcast needed), runs the parallel
version next to it on the same batch and returns the largest differences, after
``labs.numerics.assert_close`` has passed for every tensor (the float32 policy: the shards add
the same numbers in another order, so results are close, not bit-identical)::

    labs.launch(tp_step_vs_full, 2, args=(config, 8))   # [{'logits': 1e-7, ...}, ...]

Owns: these rank bodies. Must not: hold TP code of its own (layers, model, dtensor), print, keep
process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

import copy

import torch
import torch.distributed as dist

import labs
from labs.data import get_batch
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig
from labs.numerics import assert_close
from labs.tensor_parallel.dtensor import DTensorBlock, local_grad
from labs.tensor_parallel.model import ParallelBlock, ParallelTinyGPT, local_shards
from labs.tensor_parallel.model import sync_sequence_parallel_grads

__all__ = ["tp_step_vs_full", "dtensor_vs_hand"]


def _max_diff(expected: dict, got: dict, what: str | None = None) -> float:
    """``what``: the key of the message that names a tensor in a failure."""
    worst = 0.0
    for name, value in got.items():
        assert_close(value, expected[name],
                     msg=text(what, name=name) if what else name)
        worst = max(worst, (value - expected[name]).abs().max().item())
    return worst


def tp_step_vs_full(config: TinyGPTConfig, batch: int, *, sequence_parallel: bool = False,
                    lr: float = 0.1) -> dict:
    """One SGD step of the TP model and of the full model: largest |difference| of logits, loss,
    gradients (each shard vs the slice of the full gradient) and weights after the step."""
    device = labs.device()
    full = TinyGPT(config, seed=0).to(device)
    tp_model = ParallelTinyGPT(copy.deepcopy(full), sequence_parallel=sequence_parallel)
    x, y = (t.to(device) for t in get_batch(0, batch, config.block_size))
    out = {}
    results = []
    for model in (full, tp_model):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        logits, loss = model(x, y)
        loss.backward()
        if model is tp_model:
            sync_sequence_parallel_grads(model)
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        opt.step()
        results.append((logits.detach(), loss.detach(), grads,
                        {n: p.detach().clone() for n, p in model.named_parameters()}))
    (l_full, loss_full, g_full, w_full), (l_tp, loss_tp, g_tp, w_tp) = results
    out["logits"] = _max_diff({"logits": l_full}, {"logits": l_tp})
    out["loss"] = _max_diff({"loss": loss_full}, {"loss": loss_tp})
    out["gradients"] = _max_diff(local_shards(tp_model, g_full), g_tp,
                                  "models.gradient_of")
    out["weights after the step"] = _max_diff(local_shards(tp_model, w_full), w_tp,
                                               "tensor_parallel.check_weight")
    out["parameters on this rank"] = sum(p.numel() for p in tp_model.parameters())
    return out


def dtensor_vs_hand(config: TinyGPTConfig, batch: int) -> dict:
    """One block three ways (full, hand-written, DTensor ColwiseParallel/RowwiseParallel):
    largest |difference| of outputs, input gradients and parameter gradients."""
    from torch.distributed.device_mesh import init_device_mesh

    device = labs.device()
    full = TinyGPT(config, seed=0).transformer.h[0].to(device)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    modules = {"full": full, "hand-written": ParallelBlock(full), "DTensor": DTensorBlock(full, mesh)}
    x = torch.randn(batch, config.block_size, config.n_embd, device=device,
                    generator=torch.Generator(device).manual_seed(1))
    res = {}
    for name, module in modules.items():
        xi = x.clone().requires_grad_()
        y = module(xi)
        y.pow(2).sum().backward()
        res[name] = {"output": y.detach(), "input grad": xi.grad,
                     **{n: local_grad(p) for n, p in module.named_parameters()}}
    hand = modules["hand-written"]
    expected = {"output": res["full"]["output"], "input grad": res["full"]["input grad"],
                **local_shards(hand, {n: g for n, g in res["full"].items()})}
    checked = {"hand-written": "tensor_parallel.check_hand_written",
               "DTensor": "tensor_parallel.check_dtensor"}
    return {name: _max_diff(expected, res[name], key) for name, key in checked.items()}
