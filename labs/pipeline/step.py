"""A pipeline training step on real ranks, and the single-process and torch references: the
core that notebook 2.3's experiments and 2.4's 3D step build on.

Each rank builds the same seeded TinyGPT, keeps its stages, and runs one schedule of
``labs.pipeline`` per step (:func:`pipeline_step`, with optional tensor-parallel blocks and
data-parallel replicas); ``labs.launch`` brings the per-rank results back and :func:`merge`
joins them into one loss, gradients and weights named as in the whole model, comparable with
:func:`reference_step` (single process, same batch) and with :func:`torch_pipeline_step`
(torch.distributed.pipelining's ScheduleGPipe / Schedule1F1B on the same split)::

    run = PipelineRun(schedule="1f1b", n_microbatches=4)
    per_rank = labs.launch(pipeline_step, 4, args=(run,))
    got, ref = merge(per_rank), reference_step(run)    # compare(got, ref)

Steps and their comparison only: the sweeps of notebook 2.3 and what they say are
:mod:`labs.pipeline.experiments`'.

Owns: PipelineRun, the pipeline training step and its references. Must not: hold the executor's loop
or the schedules, print, keep process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.distributed as dist

import labs
from labs.data import CharTokenizer, get_batch
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig, language_model_loss
from labs import numerics
from labs.numerics import assert_close
from labs.pipeline.executor import FixedTime, Recorder, run_schedule
from labs.pipeline.partition import (Bounds, build_gpt_stages, check_microbatches,
                                     partition_evenly, split_microbatches)
from labs.pipeline.schedules import build_schedule, placement_of, torch_schedule_error
from labs.reference import make_optimizer, train_reference
from labs.tensor_parallel.model import (ParallelTinyGPT, sync_sequence_parallel_grads,
                                        validate_tp_layout)

__all__ = ["VOCAB", "TINY", "SMALL", "PipelineRun", "build_stages", "average_replicas",
           "pipeline_step", "torch_pipeline_step", "merge", "reference_step", "compare",
           "activation_shape", "rank_result", "train_steps"]

VOCAB = 96  # >= the corpus vocabulary (CharTokenizer().vocab_size)
TINY = TinyGPTConfig(vocab_size=VOCAB, block_size=16, n_layer=8, n_head=2, n_embd=32)
SMALL = TinyGPTConfig(vocab_size=VOCAB, block_size=32, n_layer=8, n_head=4, n_embd=64)


@dataclass(frozen=True)
class PipelineRun:
    """One pipeline experiment: schedule, micro-batches, batch, split, model, timing mode."""

    schedule: str | tuple = "1f1b"  # a name of labs.pipeline.SCHEDULES, or a Schedule (per rank)
    n_microbatches: int = 4
    batch_size: int = 8
    n_chunks: int = 1  # v model chunks per rank (interleaved only; "zb-v" always has 2)
    bounds: tuple | None = None  # blocks [start, stop) per stage; None = partition_evenly
    config: TinyGPTConfig = TINY
    lr: float = 1e-3
    optimizer: str = "adamw"  # or "sgd" (labs.reference.make_optimizer)
    seed: int = 0
    timing: FixedTime | None = None  # None = real compute
    steps: int = 1
    # With a tp_group only: the TP blocks also split the LayerNorm/residual regions along the
    # sequence (ParallelTinyGPT(sequence_parallel=True)); stages then exchange (b, T/t, C).
    sequence_parallel: bool = False

    def __post_init__(self) -> None:
        check_microbatches(self.batch_size, self.n_microbatches)

    def build_schedule(self, n_ranks: int) -> list:
        if isinstance(self.schedule, str):
            return build_schedule(self.schedule, n_ranks, self.n_microbatches, self.n_chunks)
        refused = torch_schedule_error(self.schedule)  # torch's Schedule1F1B: not a table
        if refused is not None:
            raise refused
        return [list(actions) for actions in self.schedule]

    def stage_bounds(self, n_ranks: int) -> Bounds:
        chunks = 2 if self.schedule == "zb-v" else self.n_chunks
        n_stages = n_ranks * chunks
        if self.bounds is not None:
            if len(self.bounds) != n_stages:
                raise ValueError(text("pipeline.bounds_mismatch", n=len(self.bounds),
                                      n_ranks=n_ranks, n_chunks=chunks,
                                      n_stages=n_stages))
            return [tuple(b) for b in self.bounds]
        return partition_evenly(self.config.n_layer, n_stages)

    def batches(self, step: int):
        return get_batch(step, self.batch_size, self.config.block_size, seed=self.seed)


def build_stages(run: PipelineRun, group=None, tp_group=None) -> dict:
    """This rank's stages of the seeded TinyGPT, {stage index: GPTStage}. With ``tp_group``
    (3D), every block is first split Megatron-style over that group, so each stage holds this
    rank's TP shards of its blocks."""
    rank, p = dist.get_rank(group), dist.get_world_size(group)
    model = TinyGPT(run.config, seed=run.seed).to(labs.device())
    if tp_group is not None:  # TP inside PP: every block tensor-parallel over tp_group
        model = ParallelTinyGPT(model, group=tp_group, sequence_parallel=run.sequence_parallel)
    placement = placement_of(run.build_schedule(p))  # ZB-V: a V, else rank r holds r, r + p ...
    return build_gpt_stages(model, run.stage_bounds(p), rank, p, placement)  # PP: my blocks


def average_replicas(params: list, losses: list, dp_group) -> list:
    """Data parallelism across pipeline replicas (3D): average every gradient over
    ``dp_group``, as DDP does; on the last stage the loss becomes the whole batch's.
    Returns the losses."""
    dp = dist.get_world_size(dp_group)
    for q in params:
        dist.all_reduce(q.grad, group=dp_group)
        q.grad /= dp
    if losses:  # last stage: the loss of the whole batch, for the comparison
        mean = torch.stack(losses).mean()
        dist.all_reduce(mean, group=dp_group)
        losses = [mean / dp]
    return losses


def activation_shape(run: PipelineRun, dp: int, tp_group=None) -> tuple[int, int, int]:
    """The activation one stage sends the next per micro-batch: (b, T, C), or this TP rank's
    sequence shard (b, T/t, C) with sequence parallelism -- Megatron-LM sends the same shard
    between stages (megatron/core/pipeline_parallel/schedules.py, ``get_tensor_shapes``: the
    sequence length divided by the TP size when sequence_parallel is on)."""
    b, T, C = run.batch_size // dp // run.n_microbatches, run.config.block_size, run.config.n_embd
    if run.sequence_parallel and tp_group is not None:
        tp = dist.get_world_size(tp_group)
        validate_tp_layout(run.config, tp, seq_len=T)  # ValueError unless tp divides T
        T //= tp
    return b, T, C


def rank_result(stages: dict, losses: list, m: int, **extra) -> dict:
    """What one rank returns: its micro-batch losses, gradients and weights by global name."""
    grads, state = {}, {}
    for stage in stages.values():
        for local, name in stage.global_names.items():
            q = stage.get_parameter(local)
            state[name] = q.detach().cpu().clone()  # comparable wherever it ran
            if q.grad is not None:
                grads[name] = q.grad.detach().cpu().clone()
    loss = torch.stack(losses).mean().item() if losses else None
    return dict(loss=loss, grads=grads, state=state, n_microbatches=m, **extra)


def train_steps(run: PipelineRun, opt, one_step, group=None) -> tuple[list, list[float]]:
    """``run.steps`` training steps on a rank: draw the batch, zero the gradients, line the
    pipeline's ranks up, time ``one_step(x, y)`` (the batch's forwards and backwards; it returns
    this rank's micro-batch losses), update. Returns the last step's losses and every step's
    time; the update leaves ``.grad`` alone, so the last step's gradients can still be read."""
    losses, step_s = [], []
    for step in range(run.steps):
        x, y = run.batches(step)
        opt.zero_grad(set_to_none=True)
        dist.barrier(group=group)
        start = time.perf_counter()
        losses = one_step(x, y)
        step_s.append(time.perf_counter() - start)
        opt.step()
    return losses, step_s


def pipeline_step(run: PipelineRun, group: dist.ProcessGroup | None = None, *,
                  tp_group: dist.ProcessGroup | None = None,
                  dp_group: dist.ProcessGroup | None = None) -> dict:
    """On a rank: ``run.steps`` training steps with the hand-written executor (``run.optimizer``).

    ``group``: the pipeline's ranks (one per stage). ``tp_group``: when given, the stages hold
    tensor-parallel blocks (``ParallelTinyGPT`` over that group), and the gradients and weights
    returned are this rank's shards (``labs.tensor_parallel.model.local_shards`` cuts the
    reference the same way); with ``run.sequence_parallel`` the blocks are sequence-parallel
    too, stages send each other this TP rank's sequence shard, and the gradients of the
    replicated parameters used on sequence slices are summed over ``tp_group`` after the
    backward (``sync_sequence_parallel_grads``).
    ``dp_group``: when given, this pipeline is one data-parallel replica: it trains on its
    slice of each batch, and the gradients are averaged over the group before the update
    (2.4's third dimension), so all replicas stay equal to one process on the whole batch.

    Returns the last step's loss (last stage only; averaged over the replicas), gradients
    (before the update) and weights (after it), the recorder's summary of the last step, and
    every step's wall time.
    """
    p = dist.get_world_size(group)
    m = run.n_microbatches
    dp = dist.get_world_size(dp_group) if dp_group is not None else 1
    dp_rank = dist.get_rank(dp_group) if dp_group is not None else 0
    if run.batch_size % (dp * m):
        raise ValueError(text("pipeline.dp_split", batch_size=run.batch_size, dp=dp, m=m,
                              multiple=dp * m))
    stages = build_stages(run, group, tp_group)
    schedule = run.build_schedule(p)
    params = [q for s in stages.values() for q in s.parameters()]
    opt = make_optimizer(params, run.optimizer, lr=run.lr)
    shape = activation_shape(run, dp, tp_group)
    recorder = Recorder()

    def one_step(x, y):
        nonlocal recorder
        x, y = x.chunk(dp)[dp_rank], y.chunk(dp)[dp_rank]  # this replica's slice
        recorder = Recorder()
        losses = run_schedule(schedule, stages, inputs=split_microbatches(x, m),
                              targets=split_microbatches(y, m), loss_fn=language_model_loss,
                              activation_shape=shape, group=group, timing=run.timing,
                              recorder=recorder)
        if run.sequence_parallel and tp_group is not None:  # LayerNorms saw T/t positions
            for stage in stages.values():
                sync_sequence_parallel_grads(stage, group=tp_group)
        if dp > 1:  # data parallel: average the replicas' gradients, as DDP does
            losses = average_replicas(params, losses, dp_group)
        return losses

    losses, step_s = train_steps(run, opt, one_step, group)
    return rank_result(stages, losses, m, step_s=step_s, **recorder.summary())


def torch_pipeline_step(run: PipelineRun, group: dist.ProcessGroup | None = None) -> dict:
    """On a rank: the same steps with torch.distributed.pipelining on the same split, model and
    batch: ScheduleGPipe, Schedule1F1B, for "zb-h1" ScheduleInterleavedZeroBubble with one stage
    per rank (its ZB1P order is :func:`labs.pipeline.schedules.zb_h1_order`'s), for "zb-v"
    ScheduleZBVZeroBubble (two stages per rank in a V, :func:`~labs.pipeline.schedules.zb_v_order`)."""
    # why here: torch.distributed.pipelining takes ~3 s to import, and only this comparison uses it
    from torch.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                              ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble)

    classes = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B,
               "zb-h1": ScheduleInterleavedZeroBubble, "zb-v": ScheduleZBVZeroBubble}
    if run.schedule not in classes or run.n_chunks != 1:
        raise ValueError(text("pipeline.torch_compare", schedules=sorted(classes)))
    rank, p = dist.get_rank(group), dist.get_world_size(group)
    m = run.n_microbatches
    modules = build_stages(run, group)  # {stage index: module}, two for ZB-V
    n_stages = len(run.stage_bounds(p))
    stages = [PipelineStage(mod, s, n_stages, labs.device(), group=group)
              for s, mod in sorted(modules.items())]
    multi = run.schedule in ("zb-h1", "zb-v")  # the multi-stage classes take a list
    schedule = classes[run.schedule](stages if multi else stages[0], n_microbatches=m,
                                     loss_fn=language_model_loss)
    opt = make_optimizer([q for mod in modules.values() for q in mod.parameters()],
                         run.optimizer, lr=run.lr)

    def one_step(x, y):
        losses = []
        args = (x,) if 0 in modules else ()  # the first stage takes the batch
        last = {"target": y, "losses": losses} if n_stages - 1 in modules else {}
        schedule.step(*args, **last)
        return [t.detach() for t in losses]

    losses, step_s = train_steps(run, opt, one_step, group)
    return rank_result(modules, losses, m, step_s=step_s)


def merge(per_rank: list[dict]) -> dict:
    """One result from all ranks': the loss (from the last stage), gradients and weights."""
    loss = next(r["loss"] for r in per_rank if r["loss"] is not None)
    grads = {k: v for r in per_rank for k, v in r["grads"].items()}
    state = {k: v for r in per_rank for k, v in r["state"].items()}
    return dict(loss=loss, grads=grads, state=state)


def reference_step(run: PipelineRun) -> dict:
    """The ground truth: the same steps in one process (labs.reference.train_reference)."""
    if run.config.vocab_size < CharTokenizer().vocab_size:
        raise ValueError(text("pipeline.vocab_too_small"))
    result = train_reference(TinyGPT(run.config, seed=run.seed), run.batches,
                             steps=run.steps, lr=run.lr, optimizer=run.optimizer)
    # AdamW moves each weight by about lr a step whatever its gradient's size: see compare()
    moved = run.lr * run.steps if run.optimizer == "adamw" else 0.0
    return dict(loss=result.losses[-1], grads=result.grads_of_last_step, state=result.state_dict,
                moved=moved)


#: AdamW's update is m/(sqrt(v)+eps) times lr: for a weight whose gradient is as small as the
#: rounding of another summation order (the micro-batches' sum against the whole batch's mean),
#: that rounding changes the update by a fraction of lr. The weights after the steps are
#: compared to this fraction of lr x steps (observed: 0.5% on an AMD EPYC; a missed or doubled
#: step moves every weight by about lr, 20 times more).
ADAMW_SLACK = 0.05


def compare(got: dict, expected: dict, **tolerances) -> None:
    """labs.numerics.assert_close on loss, gradients and weights (float32 policy; ``rtol=``,
    ``atol=`` override it; after AdamW steps the weights to :data:`ADAMW_SLACK` of the reference's
    ``moved``). Not bit-exact: the pipeline sums the micro-batches' gradients
    (each scaled by 1/m) where one process differentiates the mean over the whole batch, so
    float rounding differs in the last bits."""
    assert_close(got["loss"], expected["loss"], **tolerances, msg=text("pipeline.compare_loss"))
    if got["grads"].keys() != expected["grads"].keys():
        raise AssertionError(text("pipeline.compare_missing_grads"))
    for name in expected["grads"]:
        assert_close(got["grads"][name], expected["grads"][name], **tolerances,
                     msg=text("models.gradient_of", name=name))
    weights = dict(tolerances)
    if expected.get("moved") and "atol" not in tolerances:
        weights.update(atol=max(numerics.tolerances("float32")[1],
                                ADAMW_SLACK * expected["moved"]))
    for name in expected["state"]:
        assert_close(got["state"][name], expected["state"][name], **weights,
                     msg=text("pipeline.compare_weight", name=name))
