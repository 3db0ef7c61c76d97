"""3D parallelism with torch's own pieces: DTensor tensor parallelism, FSDP2 as the
data-parallel dimension, and ``torch.distributed.pipelining`` stages, on one ``DeviceMesh``.

The same layout as the hand-written :mod:`labs.hybrid.three_d` (``dp × pp × tp``, TP
innermost, :func:`labs.hybrid.mesh.device_mesh`), built the way torchtitan builds it, in
this order on every rank:

1. **Pipeline split**: the rank keeps the blocks of its stage (``mesh["pp"]`` coordinate),
   the first stage the embeddings, the last ``ln_f`` and ``lm_head``
   (:class:`labs.pipeline.partition.GPTStage`, same bounds as the hand-written run).
2. **Tensor parallel** on ``mesh["tp"]`` with ``parallelize_module``: in every block
   ``c_attn`` / ``c_fc`` ``ColwiseParallel``, the two ``c_proj`` ``RowwiseParallel``
   (Megatron-LM, arXiv:1909.08053; :class:`labs.tensor_parallel.dtensor.DTensorBlock`, whose
   q/k/v rows are reordered so each rank holds whole heads), ``lm_head`` ``ColwiseParallel``
   over the vocabulary with the logits gathered (``output_layouts=Replicate()``), as the
   hand-written ``ParallelTinyGPT``. Embeddings and LayerNorms stay replicated.
3. **Data parallel** on ``mesh["dp"]``: ``fully_shard`` (FSDP2) on every block, then on the
   stage: parameters, gradients and optimizer states become DTensors sharded over
   ``(dp, tp)`` ("2D" FSDP × TP); or, for comparison, ``replicate`` (DDP semantics built on
   FSDP2's machinery in torch >= 2.9: everything replicated over ``dp``, gradients
   all-reduced).
4. **Pipeline schedule**: ``PipelineStage`` on ``mesh["pp"].get_group()`` with
   ``Schedule1F1B`` / ``ScheduleGPipe``: the schedule scales the micro-batch gradients by
   1/m; for an FSDP (or ``replicate``) stage, ``PipelineStage`` turns gradient sync off for
   each micro-batch's backward and runs one reduce-scatter (all-reduce) after the last.

Sources: torch docs "FSDP2: fully_shard" (docs.pytorch.org/docs/stable/distributed.fsdp.
fully_shard.html), "Tensor Parallelism - torch.distributed.tensor.parallel"
(docs.pytorch.org/docs/stable/distributed.tensor.parallel.html), "Pipeline Parallelism"
(docs.pytorch.org/docs/stable/distributed.pipelining.html), and the tutorial "Large Scale
Transformer model training with Tensor Parallel (TP)" (2D FSDP × TP).

Measured on torch 2.13 CPU/gloo (2 cores, 1 thread per rank): all of it composes. TP
(``parallelize_module``) + FSDP2 (``fully_shard`` on ``mesh["dp"]``, parameters sharded as
``(_StridedShard(0), Shard(0))`` over ``(dp, tp)``) or ``replicate`` + ``PipelineStage``
with runtime shape inference (no ``input_args`` needed) + ``Schedule1F1B`` /
``ScheduleGPipe`` trains TinyGPT equal to one process and to the hand-written 3D step within
float32 tolerance for 3 steps at (dp, pp, tp) = (2, 2, 2), (1, 2, 2), (2, 1, 2), (2, 4, 1),
and with ``replicate`` at (2, 2, 2) and (2, 1, 2); ``pp=1`` runs as a one-stage pipeline.
What does not run is torch's rule, not CPU's: ``Schedule1F1B`` with fewer micro-batches than
stages raises "ValueError: Number of microbatches (2) must be greater than or equal to the
number of stages (4)." (:func:`validate` says so before any rank starts). Two warnings are
understood and silenced (:func:`_quiet_known_warnings`). Not tried: interleaved schedules
(several stages per rank).

Example (every rank calls it; ``labs.launch`` runs it on ``shape.world_size`` ranks)::

    run = PipelineRun(n_microbatches=2, batch_size=8, steps=3, optimizer="sgd", lr=0.05)
    per_rank = labs.launch(torch_3d_step, 8, args=(run, MeshShape(dp=2, pp=2, tp=2)),
                           timeout=180)   # loss, full grads and weights per rank's stage

:mod:`labs.hybrid.torch_3d_compare` checks it against one process and the hand-written step;
:mod:`labs.hybrid.state_memory` measures its model states per rank.

Owns: building and stepping torch's own 3D. Must not: import the hand-written 3D step
(torch_3d_compare compares them), print, keep process groups in globals, or import the checks or the
grader.
"""
from __future__ import annotations

import contextlib
import logging
import time
import warnings

import torch
import torch.distributed as dist
from torch import Tensor, nn

import labs
from labs.hybrid.mesh import MeshShape, device_mesh
from labs.messages import text
from labs.models import TinyGPT, language_model_loss
from labs.pipeline.partition import GPTStage
from labs.reference import make_optimizer
from labs.tensor_parallel.dtensor import DTensorBlock

__all__ = ["DP_MODES", "COMPOSES", "validate", "build_stage", "torch_3d_step", "full_tensors",
           "qkv_from_heads_layout"]

DP_MODES = ("fsdp", "ddp")  # fully_shard (ZeRO-3-like) or replicate (DDP-like) over mesh["dp"]

#: What composes on torch 2.13 CPU/gloo, as measured (see the module docstring and
#: tests/labs/hybrid/test_hybrid_torch3d.py, which re-checks the first three on every run).
COMPOSES = {
    "TP (parallelize_module) + FSDP2 (fully_shard) + PipelineStage, Schedule1F1B": "yes",
    "TP + replicate (DDP on FSDP2's machinery) + PipelineStage, Schedule1F1B": "yes",
    "TP + FSDP2 + PipelineStage, ScheduleGPipe": "yes",
    "Schedule1F1B with n_microbatches < pp": "no: torch raises 'Number of microbatches (2) "
                                             "must be greater than or equal to the number of "
                                             "stages (4).'",
    "interleaved schedules (several stages per rank)": "not tried",
}


def validate(run, shape: MeshShape, *, world_size: int | None = None) -> None:
    """Raise a ValueError that says what to change unless torch's 3D step can run ``run`` on
    ``shape`` (no torch.distributed needed): :meth:`MeshShape.check` (product = world size,
    tp divides the heads, pp <= layers), the schedule, and the batch split."""
    shape.check(world_size=world_size, n_heads=run.config.n_head, n_layers=run.config.n_layer)
    if run.schedule not in ("gpipe", "1f1b") or run.n_chunks != 1:
        raise ValueError(text("hybrid.torch3d_schedule", schedule=run.schedule,
                              n_chunks=run.n_chunks))
    m = run.n_microbatches
    if run.schedule == "1f1b" and m < shape.pp:  # torch's Schedule1F1B refuses it
        raise ValueError(text("hybrid.torch3d_microbatches", m=m, pp=shape.pp))
    if run.batch_size % (shape.dp * m):
        raise ValueError(text("hybrid.torch3d_batch", batch_size=run.batch_size, dp=shape.dp,
                              m=m, multiple=shape.dp * m))


def _tp_plan_lm_head():
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel
    return ColwiseParallel(output_layouts=Replicate())  # vocabulary split, logits gathered


def build_stage(run, shape: MeshShape, mesh, *, dp_mode: str = "fsdp") -> nn.Module:
    """This rank's pipeline stage of a seeded TinyGPT, tensor-parallel on ``mesh["tp"]`` and
    data-parallel on ``mesh["dp"]`` (``dp_mode`` "fsdp": ``fully_shard``; "ddp":
    ``replicate``). Its ``global_names`` map local parameter names to the whole model's."""
    if dp_mode not in DP_MODES:
        raise ValueError(text("hybrid.dp_mode", dp_mode=dp_mode, choices=DP_MODES))
    stage_index = mesh["pp"].get_local_rank()
    start, stop = run.stage_bounds(shape.pp)[stage_index]
    first, last = stage_index == 0, stage_index == shape.pp - 1
    model = TinyGPT(run.config, seed=run.seed)
    if shape.tp > 1:
        from torch.distributed.tensor.parallel import parallelize_module
        for i in range(start, stop):  # only this stage's blocks: the others are never used
            model.transformer.h[i] = DTensorBlock(model.transformer.h[i], mesh["tp"])
        if last:
            parallelize_module(model.lm_head, mesh["tp"], _tp_plan_lm_head())
    stage = GPTStage(model, start, stop, first=first, last=last)
    if dp_mode == "fsdp":
        from torch.distributed.fsdp import fully_shard
        for block in stage.blocks:  # one all-gather / reduce-scatter per block
            fully_shard(block, mesh=mesh["dp"])
        fully_shard(stage, mesh=mesh["dp"])
    else:
        from torch.distributed._composable.replicate_with_fsdp import replicate
        replicate(stage, mesh=mesh["dp"])
    return stage


def qkv_from_heads_layout(weight: Tensor, tp: int) -> Tensor:
    """Undo ``DTensorSelfAttention``'s row order ``[q_0 k_0 v_0 | q_1 k_1 v_1 | ...]`` (rank
    by rank) back to the full model's ``[q | k | v]``."""
    rest = weight.shape[1:]
    rows = weight.size(0) // (3 * tp)
    return weight.reshape(tp, 3, rows, *rest).transpose(0, 1).reshape(weight.shape)


@contextlib.contextmanager
def _quiet_known_warnings():
    """Silence two warnings that are understood, so that real ones stand out.

    - FSDP2: "FSDP2-wrapped module (FSDPGPTStage) returned a view tensor": the last stage's
      logits come out of ``lm_head``'s DTensor as a view; the schedule only feeds them to the
      loss (no in-place op), and the gradients equal one process's (the tests check it).
    - DTensor: "2 sequential all_gather operations will be performed" when a (dp, tp)-sharded
      parameter is gathered whole (:func:`full_tensors`, for the comparison only).
    """
    log = logging.getLogger("torch.distributed.tensor._redistribute")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"FSDP2-wrapped module .* view tensor")
            yield
    finally:
        log.setLevel(level)


def full_tensors(stage: nn.Module, tp: int, *, grads: bool) -> dict[str, Tensor]:
    """{global name: full tensor} of the stage's weights (or gradients), gathered from their
    DTensor shards (a collective over the stage's dp × tp ranks: all of them call it)."""
    out = {}
    for local, name in stage.global_names.items():
        p = stage.get_parameter(local)
        t = p.grad if grads else p
        if t is None:
            continue
        t = t.full_tensor() if hasattr(t, "full_tensor") else t
        t = t.detach().cpu().clone()
        if tp > 1 and ".attn.c_attn." in name:
            t = qkv_from_heads_layout(t, tp)
        out[name] = t
    return out


def torch_3d_step(run, shape: MeshShape, *, dp_mode: str = "fsdp", mesh=None,
                  measure=None, gather: bool = True) -> dict:
    """On a rank: ``run.steps`` steps of torch's 3D training on ``shape`` (every rank calls it).

    ``run`` (:class:`labs.pipeline.step.PipelineRun`): ``batch_size`` is the global
    batch, each DP replica takes ``batch_size / dp`` rows cut into ``n_microbatches``;
    ``schedule`` "1f1b" or "gpipe". Returns the last step's loss (last stage; mean over the
    replicas, else None), full gradients (before the update) and weights (after it) of this
    rank's stage by global name, every step's seconds (from a barrier), and, with ``measure``
    (a function of this rank's stage and optimizer, e.g.
    :func:`labs.hybrid.state_memory.rank_model_states`), what it returns after the last step,
    as ``"measured"``. ``gather=False``: no full gradients and
    weights (saves the all-gathers when only times or memory are wanted).
    ``mesh``: :func:`labs.hybrid.mesh.device_mesh` of ``shape`` (made here if None).
    """
    # why here: torch.distributed.pipelining takes ~3 s to import; only the step itself needs it
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    validate(run, shape, world_size=dist.get_world_size())
    classes = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
    m = run.n_microbatches
    mesh = mesh if mesh is not None else device_mesh(shape)
    stage = build_stage(run, shape, mesh, dp_mode=dp_mode)
    pp_rank, dp_rank = mesh["pp"].get_local_rank(), mesh["dp"].get_local_rank()
    pipe = PipelineStage(stage, pp_rank, shape.pp, labs.device(), group=mesh["pp"].get_group())
    schedule = classes[run.schedule](pipe, n_microbatches=m, loss_fn=language_model_loss)
    opt = make_optimizer(stage.parameters(), run.optimizer, lr=run.lr)
    step_s, losses = [], []
    for step in range(run.steps):
        x, y = (t.chunk(shape.dp)[dp_rank] for t in run.batches(step))  # this replica's rows
        opt.zero_grad(set_to_none=True)
        losses = []
        dist.barrier()
        start = time.perf_counter()
        args = (x,) if pp_rank == 0 else ()
        kwargs = dict(target=y, losses=losses) if pp_rank == shape.pp - 1 else {}
        with _quiet_known_warnings():
            schedule.step(*args, **kwargs)
        step_s.append(time.perf_counter() - start)
        opt.step()
    loss = None
    if losses:  # last stage: the loss of the whole global batch, for the comparison
        mean = torch.stack([t.detach() for t in losses]).mean()
        dist.all_reduce(mean, group=mesh["dp"].get_group())
        loss = (mean / shape.dp).item()
    result = dict(loss=loss, step_s=step_s, coords=tuple(shape.coords(dist.get_rank())))
    if gather:
        with _quiet_known_warnings():
            result.update(grads=full_tensors(stage, shape.tp, grads=True),
                          state=full_tensors(stage, shape.tp, grads=False))
    if measure is not None:
        result["measured"] = measure(stage, opt)
    return result
