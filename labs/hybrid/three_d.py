"""3D parallelism by hand: tensor-parallel blocks inside pipeline stages, one pipeline per
data-parallel replica -- the course's own pieces composed on one mesh.

On each rank of a :class:`~labs.parallel_dims.MeshShape` ``dp × pp × tp`` (the layout's one
declaration of its degrees, torchtitan's ``ParallelDims``):

- the TP group (consecutive ranks) splits every block Megatron-style
  (:class:`labs.tensor_parallel.model.ParallelTinyGPT`);
- the PP group (ranks ``tp`` apart) holds the stages, run by the course's 1F1B executor
  (:func:`labs.pipeline.step.pipeline_step`);
- the DP group (ranks ``pp·tp`` apart) trains on its slice of the global batch and averages
  the gradients before the update.

This is the layout of PTD-P (Narayanan et al. 2021, arXiv:2104.04473). :func:`check_3d`
compares one rank's loss, gradient shards and weight shards with single-process training on
the whole global batch, for ``run.steps`` steps.

Sequence parallelism (``PipelineRun(..., sequence_parallel=True)``; Korthikanti et al. 2022,
arXiv:2205.05198): inside every stage the LayerNorm / residual (and dropout) regions hold only
``T/tp`` positions of the sequence, the TP all-reduces become all-gather + reduce-scatter. The
stage boundary sends the sequence shard: TP rank t of stage s sends its ``(b, T/tp, C)`` to TP
rank t of stage s+1, 1/tp of the activation, and the next stage starts in the sequence-parallel
region without any gather (Megatron-LM does the same). The first stage cuts the sequence after
the embedding, the last gathers it before ``lm_head``; the replicated LayerNorm weights (and
row-parallel biases) saw a slice each, so their gradients are summed over the TP group before
the data-parallel average.

Owns: the hand-written 3D step and its check against one process. Must not: copy the TP layers or
the pipeline executor (it composes them), print, keep process groups in globals, or import torch's
3D, the checks or the grader.
"""
from __future__ import annotations

import torch.distributed as dist

from labs.hybrid.mesh import MeshShape, new_groups
from labs.numerics import assert_close
from labs.models import TinyGPT
from labs.pipeline import step as px  # the pipeline step: PipelineRun, pipeline_step, ...
from labs.tensor_parallel.model import ParallelTinyGPT, local_shards, validate_tp_layout

__all__ = ["check_sequence_parallel", "hybrid_step", "expected_shards", "check_3d"]


def check_sequence_parallel(run: "px.PipelineRun", shape: MeshShape) -> None:
    """Raise ValueError unless ``shape.tp`` can split ``run``'s sequence (with
    ``run.sequence_parallel``; without it, nothing to check). Needs no process group."""
    if run.sequence_parallel and shape.tp > 1:
        validate_tp_layout(run.config, shape.tp, seq_len=run.config.block_size)


def hybrid_step(run: "px.PipelineRun", shape: MeshShape, groups: dict | None = None) -> dict:
    """On a rank: ``run.steps`` steps of 3D training on the mesh ``shape`` (every rank calls it).

    ``run.batch_size`` is the global batch: each of the ``dp`` replicas takes
    ``batch_size / dp`` rows, cut into ``run.n_microbatches`` micro-batches.
    ``groups``: :func:`~labs.hybrid.mesh.new_groups` of ``shape`` (made here if None).
    ``run.sequence_parallel``: sequence-parallel TP blocks (see the module docstring); a
    ValueError if ``tp`` does not divide the sequence length ``run.config.block_size``.
    Returns :func:`~labs.pipeline.step.pipeline_step`'s result plus this rank's
    ``coords`` and the groups' ranks.
    """
    check_sequence_parallel(run, shape)
    shape.check(world_size=dist.get_world_size(), n_heads=run.config.n_head,
                n_layers=run.config.n_layer)
    groups = groups or new_groups(shape)
    result = px.pipeline_step(run, groups["pp"],
                              tp_group=groups["tp"] if shape.tp > 1 else None,
                              dp_group=groups["dp"] if shape.dp > 1 else None)
    rank = dist.get_rank()
    result.update(coords=tuple(shape.coords(rank)),
                  peers={dim: shape.peers(rank, dim) for dim in groups})
    return result


def expected_shards(run: "px.PipelineRun", reference: dict, tp_group=None) -> dict:
    """The pieces of the single-process reference this rank should hold (its TP shards)."""
    if tp_group is None:
        return {what: reference[what] for what in ("grads", "state")}
    layout = ParallelTinyGPT(TinyGPT(run.config, seed=run.seed), group=tp_group)
    return {what: local_shards(layout, reference[what], group=tp_group)
            for what in ("grads", "state")}


def check_3d(run: "px.PipelineRun", shape: MeshShape) -> dict:
    """On a rank: train with :func:`hybrid_step`, then assert this rank's loss (last stage),
    gradient shards and weight shards equal single-process training on the global batch
    (float32 tolerances: sums run in another order). Returns what was checked."""
    groups = new_groups(shape)
    result = hybrid_step(run, shape, groups)
    reference = px.reference_step(run)
    expected = expected_shards(run, reference, groups["tp"] if shape.tp_enabled else None)
    if result["loss"] is not None:
        assert_close(result["loss"], reference["loss"])  # a float32 loss, as a Python float
    for what in ("grads", "state"):
        if not result[what]:  # every rank of a valid mesh holds shards: a bug of labs
            raise AssertionError(f"rank {dist.get_rank()} holds no {what}")
        for name, value in result[what].items():
            assert_close(value, expected[what][name].cpu(), msg=f"{what} {name}")
    return dict(coords=result["coords"], peers=result["peers"], loss=result["loss"],
                names=sorted(result["state"]))
