"""Torch's 3D training (:mod:`labs.hybrid.torch_3d`) next to the references: single-process
training on the global batch and the hand-written 3D step (:mod:`labs.hybrid.three_d`) --
the same loss, gradients and weights (float32 tolerance, :mod:`labs.numerics`), and their step
times on the same ranks (for ``python -m labs.bench hybrid``)::

    run = PipelineRun(n_microbatches=2, batch_size=8, steps=3, optimizer="sgd", lr=0.05)
    labs.launch(check_torch_3d, 8, args=(run, MeshShape(2, 2, 2)), timeout=180)

Torch's step returns *full* tensors (gathered from the DTensor shards, q/k/v rows back in the
full model's order), compared with the reference as they are; the hand-written step returns
its TP shards, compared with torch's full tensors cut the same way.

Owns: the comparison of torch's 3D with the references. Must not: build either step itself
(torch_3d, three_d), print, keep process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

import torch.distributed as dist

from labs.hybrid.mesh import MeshShape, device_mesh, new_groups
from labs.hybrid.three_d import hybrid_step
from labs.hybrid.torch_3d import torch_3d_step
from labs.messages import text
from labs.models import TinyGPT
from labs.numerics import assert_close
from labs.pipeline.step import reference_step
from labs.tensor_parallel.layers import shard
from labs.tensor_parallel.model import ParallelTinyGPT

__all__ = ["check_torch_3d", "both_3d_steps"]


def _tp_shards(run, full: dict, tp_group) -> dict:
    """This rank's TP pieces of the full ``grads`` / ``state`` in ``full``, cut as the
    hand-written ``ParallelTinyGPT`` holds them (``tp_dim`` / ``tp_stride`` of its parameters)."""
    if tp_group is None:
        return {what: full[what] for what in ("grads", "state")}
    layout = dict(ParallelTinyGPT(TinyGPT(run.config, seed=run.seed),
                                  group=tp_group).named_parameters())
    rank, tp = dist.get_rank(tp_group), dist.get_world_size(tp_group)

    def cut(name, t):
        dim = getattr(layout[name], "tp_dim", None)
        return t if dim is None else shard(t, dim, rank, tp, stride=layout[name].tp_stride)

    return {what: {n: cut(n, t) for n, t in full[what].items()} for what in ("grads", "state")}


def check_torch_3d(run, shape: MeshShape, *, dp_mode: str = "fsdp",
                   against_hand_written: bool = True, reference_run=None, mesh=None,
                   groups: dict | None = None) -> dict:
    """On a rank: train with :func:`torch_3d_step`, then assert this rank's loss, full
    gradients and weights equal single-process training on the global batch
    (:func:`labs.pipeline.step.reference_step`), and, with ``against_hand_written``,
    that the hand-written 3D step (:func:`labs.hybrid.three_d.hybrid_step`, same ranks and
    batch) holds the same TP shards as torch's. float32 tolerances (``labs.numerics``).
    ``reference_run``: the run the single process trains (default ``run``); a different one
    (another lr) must make the check fail -- the tests use it to show the check can fail.
    ``mesh`` / ``groups``: :func:`~labs.hybrid.mesh.device_mesh` and
    :func:`~labs.hybrid.mesh.new_groups` of ``shape`` (made here if None)."""
    got = torch_3d_step(run, shape, dp_mode=dp_mode, mesh=mesh)
    reference = reference_step(reference_run or run)
    if got["loss"] is not None:
        assert_close(got["loss"], reference["loss"], msg=text("hybrid.torch3d_loss_vs_one"))
    for what in ("grads", "state"):
        if not got[what]:  # every rank of a valid mesh holds shards: a bug of labs
            raise AssertionError(f"rank {dist.get_rank()} holds no {what}")
        for name, value in got[what].items():
            assert_close(value, reference[what][name],
                         msg=text("hybrid.torch3d_vs_one", what=what, name=name))
    checked = dict(coords=got["coords"], loss=got["loss"], names=sorted(got["state"]))
    if against_hand_written:
        groups = groups or new_groups(shape)
        hand = hybrid_step(run, shape, groups)
        tp_group = groups["tp"] if shape.tp > 1 else None
        expected = _tp_shards(run, got, tp_group)  # torch's result, cut as hand-written
        if hand["loss"] is not None:
            assert_close(hand["loss"], got["loss"], msg=text("hybrid.hand_vs_torch_loss"))
        for what in ("grads", "state"):
            if set(hand[what]) != set(got[what]):  # the same stages of the same run: a bug
                raise AssertionError(f"{what}: the hand-written and torch's 3D steps hold "
                                     f"different parameters")
            for name, value in hand[what].items():
                assert_close(value, expected[what][name],
                             msg=text("hybrid.hand_vs_torch", what=what, name=name))
        checked["hand_loss"] = hand["loss"]
    return checked


def both_3d_steps(run, shape: MeshShape, rounds: int) -> dict:
    """On a rank: alternate ``run.steps`` steps of the hand-written 3D step and of torch's,
    ``rounds`` times, on the same mesh and batches, so that both see the same machine load.
    The first step of each block is a warm-up and dropped. Returns ``{"hand": [s],
    "torch": [s], "torch_ddp": [s]}`` (torch's with FSDP, then with ``replicate`` as DP, the
    hand-written's kind of DP): each step from a barrier to the gradients synchronised
    (optimizer step excluded)."""
    if run.steps < 2:
        raise ValueError(text("hybrid.steps_warm_up", steps=run.steps))
    groups, mesh = new_groups(shape), device_mesh(shape)
    times = {"hand": [], "torch": [], "torch_ddp": []}
    for _ in range(rounds):
        times["hand"] += hybrid_step(run, shape, groups)["step_s"][1:]
        times["torch"] += torch_3d_step(run, shape, mesh=mesh, gather=False)["step_s"][1:]
        times["torch_ddp"] += torch_3d_step(run, shape, mesh=mesh, gather=False,
                                            dp_mode="ddp")["step_s"][1:]
    return times
