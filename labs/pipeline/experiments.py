"""Pipeline training steps on real ranks, and the single-process and torch references.

Each rank builds the same seeded TinyGPT, keeps its stages, and runs one schedule of
``labs.pipeline`` per step; ``labs.launch`` brings the per-rank results back and ``merge``
joins them into one loss, gradients and weights named as in the whole model, comparable with
``reference_step`` (single process, same batch) and with ``torch_pipeline_step``
(torch.distributed.pipelining's ScheduleGPipe / Schedule1F1B on the same split)::

    run = PipelineRun(schedule="1f1b", n_microbatches=4)
    per_rank = labs.launch(pipeline_step, 4, args=(run,))
    got, ref = merge(per_rank), reference_step(run)    # compare loss, grads, state

The ``interpret_*`` functions turn the measured timelines into the notebook's conclusion, in its
language (the messages ``pipeline.*`` of :mod:`labs.messages`): the formula's expectation,
whether this machine's measurement agrees, and why not when it does not (overruns of the
fixed-time mode, real compute that is shorter than the send/recv and Python overheads, ranks
sharing a few CPU cores). They take plain numbers (idle shares, seconds).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Sequence

import torch
import torch.distributed as dist

import labs
from labs import pipeline as pp
from labs.data import CharTokenizer, get_batch
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig, language_model_loss
from labs.numerics import assert_close
from labs.reference import make_optimizer, train_reference

__all__ = ["VOCAB", "TINY", "SMALL", "PipelineRun", "build_stages", "average_replicas",
           "pipeline_step", "torch_pipeline_step",
           "merge", "reference_step", "compare", "timeline_of", "sweep", "bubble_grid", "with_",
           "measure", "simulate_run", "TOLERANCE", "interpret_bubble", "interpret_schedules",
           "interpret_bubble_sweep", "interpret_interleaving", "interpret_stages",
           "interpret_microbatch", "interpret_balance"]

VOCAB = 96  # >= the corpus vocabulary (CharTokenizer().vocab_size)
TINY = TinyGPTConfig(vocab_size=VOCAB, block_size=16, n_layer=8, n_head=2, n_embd=32)
SMALL = TinyGPTConfig(vocab_size=VOCAB, block_size=32, n_layer=8, n_head=4, n_embd=64)


@dataclass(frozen=True)
class PipelineRun:
    """One pipeline experiment: schedule, micro-batches, batch, split, model, timing mode."""

    schedule: str | tuple = "1f1b"  # "gpipe", "1f1b", "interleaved", or a Schedule (per rank)
    n_microbatches: int = 4
    batch_size: int = 8
    n_chunks: int = 1  # v model chunks per rank (interleaved only)
    bounds: tuple | None = None  # blocks [start, stop) per stage; None = partition_evenly
    config: TinyGPTConfig = TINY
    lr: float = 1e-3
    optimizer: str = "adamw"  # or "sgd" (labs.reference.make_optimizer)
    seed: int = 0
    timing: pp.FixedTime | None = None  # None = real compute
    steps: int = 1
    # With a tp_group only: the TP blocks also split the LayerNorm/residual regions along the
    # sequence (ParallelTinyGPT(sequence_parallel=True)); stages then exchange (b, T/t, C).
    sequence_parallel: bool = False

    def __post_init__(self) -> None:
        pp.check_microbatches(self.batch_size, self.n_microbatches)

    def build_schedule(self, n_ranks: int) -> list:
        if isinstance(self.schedule, str):
            return pp.build_schedule(self.schedule, n_ranks, self.n_microbatches, self.n_chunks)
        return [list(actions) for actions in self.schedule]

    def stage_bounds(self, n_ranks: int) -> pp.Bounds:
        n_stages = n_ranks * self.n_chunks
        if self.bounds is not None:
            if len(self.bounds) != n_stages:
                raise ValueError(text("pipeline.bounds_mismatch", n=len(self.bounds),
                                      n_ranks=n_ranks, n_chunks=self.n_chunks,
                                      n_stages=n_stages))
            return [tuple(b) for b in self.bounds]
        return pp.partition_evenly(self.config.n_layer, n_stages)

    def batches(self, step: int):
        return get_batch(step, self.batch_size, self.config.block_size, seed=self.seed)


def build_stages(run: PipelineRun, group=None, tp_group=None) -> dict:
    """This rank's stages of the seeded TinyGPT, {stage index: GPTStage}. With ``tp_group``
    (3D), every block is first split Megatron-style over that group, so each stage holds this
    rank's TP shards of its blocks."""
    rank, p = dist.get_rank(group), dist.get_world_size(group)
    model = TinyGPT(run.config, seed=run.seed).to(labs.device())
    if tp_group is not None:  # TP inside PP: every block tensor-parallel over tp_group
        from labs.tensor_parallel.model import ParallelTinyGPT
        model = ParallelTinyGPT(model, group=tp_group, sequence_parallel=run.sequence_parallel)
    return pp.build_gpt_stages(model, run.stage_bounds(p), rank, p)  # PP: my stages' blocks


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


def _activation_shape(run: PipelineRun, dp: int, tp_group=None) -> tuple[int, int, int]:
    """The activation one stage sends the next per micro-batch: (b, T, C), or this TP rank's
    sequence shard (b, T/t, C) with sequence parallelism -- Megatron-LM sends the same shard
    between stages (megatron/core/pipeline_parallel/schedules.py, ``get_tensor_shapes``: the
    sequence length divided by the TP size when sequence_parallel is on)."""
    b, T, C = run.batch_size // dp // run.n_microbatches, run.config.block_size, run.config.n_embd
    if run.sequence_parallel and tp_group is not None:
        from labs.tensor_parallel.model import validate_tp_layout
        tp = dist.get_world_size(tp_group)
        validate_tp_layout(run.config, tp, seq_len=T)  # ValueError unless tp divides T
        T //= tp
    return b, T, C


def _result(stages: dict, losses: list, m: int, **extra) -> dict:
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
    shape = _activation_shape(run, dp, tp_group)
    step_s = []
    for step in range(run.steps):
        x, y = (t.chunk(dp)[dp_rank] for t in run.batches(step))  # this replica's slice
        xs, ys = pp.split_microbatches(x, m), pp.split_microbatches(y, m)
        opt.zero_grad(set_to_none=True)
        recorder = pp.Recorder()
        dist.barrier(group=group)
        start = time.perf_counter()
        losses = pp.run_schedule(schedule, stages, inputs=xs, targets=ys,
                                 loss_fn=language_model_loss, activation_shape=shape,
                                 group=group, timing=run.timing, recorder=recorder)
        if run.sequence_parallel and tp_group is not None:  # LayerNorms saw T/t positions
            from labs.tensor_parallel.model import sync_sequence_parallel_grads
            for stage in stages.values():
                sync_sequence_parallel_grads(stage, group=tp_group)
        if dp > 1:  # data parallel: average the replicas' gradients, as DDP does
            losses = average_replicas(params, losses, dp_group)
        step_s.append(time.perf_counter() - start)
        opt.step()  # leaves .grad alone: _result reads this step's gradients
    return _result(stages, losses, m, step_s=step_s, **recorder.summary())


def torch_pipeline_step(run: PipelineRun, group: dist.ProcessGroup | None = None) -> dict:
    """On a rank: the same steps with torch.distributed.pipelining (ScheduleGPipe or
    Schedule1F1B) on the same split, model and batch."""
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    classes = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
    if run.schedule not in classes or run.n_chunks != 1:
        raise ValueError(text("pipeline.torch_compare", schedules=sorted(classes)))
    rank, p = dist.get_rank(group), dist.get_world_size(group)
    m = run.n_microbatches
    (module,) = build_stages(run, group).values()
    stage = PipelineStage(module, rank, p, labs.device(), group=group)
    schedule = classes[run.schedule](stage, n_microbatches=m, loss_fn=language_model_loss)
    opt = make_optimizer(module.parameters(), run.optimizer, lr=run.lr)
    step_s, losses = [], []
    for step in range(run.steps):
        x, y = run.batches(step)
        opt.zero_grad(set_to_none=True)
        losses = []
        dist.barrier(group=group)
        start = time.perf_counter()
        if rank == 0:
            schedule.step(x)
        elif rank == p - 1:
            schedule.step(target=y, losses=losses)
        else:
            schedule.step()
        step_s.append(time.perf_counter() - start)
        opt.step()
    return _result({rank: module}, [t.detach() for t in losses], m, step_s=step_s)


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
    return dict(loss=result.losses[-1], grads=result.grads_of_last_step, state=result.state_dict)


def compare(got: dict, expected: dict, **tolerances) -> None:
    """labs.numerics.assert_close on loss, gradients and weights (float32 policy; ``rtol=``,
    ``atol=`` override it). Not bit-exact: the pipeline sums the micro-batches' gradients
    (each scaled by 1/m) where one process differentiates the mean over the whole batch, so
    float rounding differs in the last bits."""
    assert_close(got["loss"], expected["loss"], **tolerances, msg=text("pipeline.compare_loss"))
    if got["grads"].keys() != expected["grads"].keys():
        raise AssertionError(text("pipeline.compare_missing_grads"))
    for name in expected["grads"]:
        assert_close(got["grads"][name], expected["grads"][name], **tolerances,
                     msg=text("pipeline.compare_gradient", name=name))
    for name in expected["state"]:
        assert_close(got["state"][name], expected["state"][name], **tolerances,
                     msg=text("pipeline.compare_weight", name=name))


def timeline_of(per_rank: list[dict], run: PipelineRun) -> pp.Timeline:
    """The measured Timeline of the last step, labelled with its mode."""
    return pp.gather_timeline(per_rank, pp.mode_label(run.timing))


def sweep(runs: list[PipelineRun], group: dist.ProcessGroup | None = None, *,
          warmup: bool = True) -> list[dict]:
    """On a rank: ``pipeline_step`` for each run in turn (one launch for a whole grid).
    A first untimed real-compute step warms up autograd and the allocator, so that the first
    timed actions do not overrun. Gradients and weights are dropped to keep the results small."""
    if warmup and runs:
        pipeline_step(replace(runs[0], timing=None, steps=1), group)
    out = []
    for run in runs:
        r = pipeline_step(run, group)
        out.append({k: v for k, v in r.items() if k not in ("grads", "state")})
    return out


def bubble_grid(n_ranks: int, ms, timing: pp.FixedTime | None, *, schedule: str = "1f1b",
                microbatch_size: int = 1, config: TinyGPTConfig = TINY) -> list[PipelineRun]:
    """Runs with a fixed micro-batch size and m micro-batches each (GPipe's convention)."""
    return [PipelineRun(schedule=schedule, n_microbatches=m, batch_size=m * microbatch_size,
                        timing=timing, config=config) for m in ms]


def with_(run: PipelineRun, **changes) -> PipelineRun:
    return replace(run, **changes)


def measure(runs: list[PipelineRun], n_ranks: int, *, timeout: float = 120.0) -> list[pp.Timeline]:
    """From the notebook: run ``runs`` on ``n_ranks`` ranks in one launch; their measured
    Timelines (info: peak in-flight micro-batches and activation bytes per rank, overruns)."""
    per_rank = labs.launch(sweep, n_ranks, args=(runs,), timeout=timeout)
    return [timeline_of([r[i] for r in per_rank], run) for i, run in enumerate(runs)]


def simulate_run(run: PipelineRun, n_ranks: int) -> pp.Timeline:
    """The ideal timeline of ``run`` with its stated times (FixedTime(), if it has none)."""
    timing = run.timing or pp.FixedTime()
    return pp.simulate(run.build_schedule(n_ranks), forward_s=timing.forward_s,
                       backward_s=timing.backward_s)


# --- what the measurements say (in the notebook's language) ---------------------------------------

TOLERANCE = 0.02  # an idle share within 2 percentage points of the formula agrees with it



def _mean(x) -> float:
    return sum(x) / len(x) if isinstance(x, (list, tuple)) else float(x)


def _pts(x: float) -> str:
    return text("pipeline.points", value=abs(x) * 100)


def _why_real(ranks: int | None, cores: int | None) -> str:
    if ranks is not None and cores is not None and ranks > cores:
        return text("pipeline.why_real_crowded", ranks=ranks, cores=cores)
    return text("pipeline.why_real")


def _why_fixed(overruns: int) -> str:
    if overruns:
        return text("pipeline.why_fixed_overruns", overruns=overruns)
    return text("pipeline.why_fixed_no_overruns")


def interpret_bubble(measured, formula: float, *, fixed_time: bool, overruns: int = 0,
                     ranks: int | None = None, cores: int | None = None) -> str:
    """Measured idle share (one number, or one per rank: their mean) against the formula.
    Fixed-time mode: agrees within :data:`TOLERANCE` unless actions overran. Real compute on a
    CPU: usually far above the formula (overheads as long as the compute)."""
    mean = _mean(measured)
    diff = mean - formula
    head = text("pipeline.bubble_head", mean=mean, formula=formula)
    if abs(diff) <= TOLERANCE:
        if fixed_time:
            if overruns:
                return text("pipeline.bubble_fixed_agree_overruns", head=head, diff=_pts(diff),
                          overruns=overruns, tolerance=TOLERANCE)
            return text("pipeline.bubble_fixed_agree", head=head, diff=_pts(diff))
        return text("pipeline.bubble_real_agree", head=head, diff=_pts(diff))
    if fixed_time:
        side = text("pipeline.higher" if diff > 0 else "pipeline.lower")
        return text("pipeline.bubble_fixed_off", head=head, side=side,
                  diff=_pts(diff), why=_why_fixed(overruns))
    if diff > 0:
        return text("pipeline.bubble_real_high", head=head, diff=_pts(diff), why=_why_real(ranks, cores))
    return text("pipeline.bubble_real_low", head=head, diff=_pts(diff))


def interpret_schedules(steps_s: dict, idle: dict, formula: float, *, overruns: int = 0) -> str:
    """Section 2 of 2.3: GPipe vs 1F1B in fixed-time mode, ``{name: step seconds}`` and
    ``{name: idle share per rank}``. Expected: the same step time and the same idle share, the
    formula's."""
    names = list(steps_s)
    fast, slow = min(steps_s.values()), max(steps_s.values())
    means = {n: _mean(idle[n]) for n in names}
    sep = text("pipeline.list_sep")
    head = text("pipeline.schedules_head",
              steps=sep.join(text("pipeline.schedule_step", name=n, ms=steps_s[n] * 1e3) for n in names),
              shares=sep.join(text("pipeline.schedule_share", name=n, share=means[n]) for n in names),
              formula=formula)
    same = slow <= fast * (1 + TOLERANCE) and max(means.values()) - min(means.values()) <= TOLERANCE
    on_formula = all(abs(x - formula) <= TOLERANCE for x in means.values())
    if same and on_formula:
        return head + "\n" + text("pipeline.schedules_same")
    return head + "\n" + text("pipeline.schedules_off_formula" if same
                               else "pipeline.schedules_differ",
                             why=_why_fixed(overruns))


def interpret_bubble_sweep(sweep: dict, *, fixed_time: bool, overruns: int = 0,
                           cores: int | None = None) -> str:
    """Section 2 of 2.3: ``{p: {m: idle share per rank}}`` against (p-1)/(m+p-1), for m >= p."""
    diffs = {(p, m): _mean(v) - pp.bubble_fraction(p, m)
             for p, by_m in sweep.items() for m, v in by_m.items() if m >= p}
    worst_key = max(diffs, key=lambda k: abs(diffs[k]))
    worst = diffs[worst_key]
    avg = sum(diffs.values()) / len(diffs)
    side = text("pipeline.higher" if avg >= 0 else "pipeline.lower")
    head = text("pipeline.sweep_head", n=len(diffs), side=side,
              avg=_pts(avg), p=worst_key[0], m=worst_key[1], worst=worst * 100)
    if abs(worst) <= TOLERANCE:
        return head + "\n" + text("pipeline.sweep_on_curve_fixed" if fixed_time
                                   else "pipeline.sweep_on_curve_real")
    if fixed_time:
        return head + "\n" + text("pipeline.sweep_fixed_off", why=_why_fixed(overruns))
    return head + "\n" + text("pipeline.sweep_real_off", why=_why_real(max(sweep), cores))


def interpret_interleaving(idle_plain, idle_inter, step_plain_s: float, step_inter_s: float, *,
                           p: int, m: int, v: int, overruns: int = 0) -> str:
    """Section 3 of 2.3: plain vs interleaved 1F1B (v chunks per rank), fixed-time mode.
    Expected: idle share (p-1)/(m+p-1) -> (p-1)/(v·m+p-1) and a shorter step."""
    f1, fv = pp.bubble_fraction(p, m), pp.bubble_fraction(p, m, v)
    a, b = _mean(idle_plain), _mean(idle_inter)
    head = text("pipeline.inter_head", a=a, f1=f1, v=v, b=b, fv=fv, plain_ms=step_plain_s * 1e3,
              inter_ms=step_inter_s * 1e3)
    agree = abs(a - f1) <= TOLERANCE and abs(b - fv) <= TOLERANCE
    if b < a - TOLERANCE and step_inter_s < step_plain_s:
        if agree:
            return head + "\n" + text("pipeline.inter_gain", a=a, b=b)
        return head + "\n" + text("pipeline.inter_gain_biased", a=a, b=b, why=_why_fixed(overruns))
    return head + "\n" + text("pipeline.inter_none", f1=f1, fv=fv, why=_why_fixed(overruns))


def interpret_stages(by_p: dict, m: int, *, overruns: int = 0) -> str:
    """Myth 1 of 2.3: ``{p: mean idle share}`` at a fixed m (fixed-time mode). Expected: the
    idle share grows with p, as (p-1)/(m+p-1)."""
    ps = sorted(by_p)
    measured = [by_p[p] for p in ps]
    formula = [pp.bubble_fraction(p, m) for p in ps]
    rising = all(b > a for a, b in zip(measured, measured[1:]))
    off = max(abs(x - f) for x, f in zip(measured, formula))
    head = text("pipeline.stages_head", m=m, ps=text("pipeline.list_sep").join(map(str, ps)),
              measured=" → ".join(f"{x:.1%}" for x in measured),
              formula=" → ".join(f"{x:.1%}" for x in formula))
    if rising:
        if off <= TOLERANCE:
            return head + "\n" + text("pipeline.stages_rising")
        return head + "\n" + text("pipeline.stages_rising_off", off=_pts(off), why=_why_fixed(overruns))
    return head + "\n" + text("pipeline.stages_flat", why=_why_fixed(overruns))


def interpret_microbatch(sizes: Sequence[int], throughput: Sequence[float],
                         peak_bytes: Sequence[float], *, p: int, batch: int) -> str:
    """Myth 2 of 2.3: a fixed batch cut into micro-batches of ``sizes`` (m = batch / size) on p
    stages, real compute: tokens/s and peak activation bytes per run. The best micro-batch size
    is where the bubble of few micro-batches and the overheads of tiny ones balance: it depends
    on the model and the machine (PTD-P §3.3, §5.5)."""
    best = max(range(len(sizes)), key=lambda i: throughput[i])
    b, worst_m = sizes[best], batch // max(sizes)
    bubbles = {size: pp.bubble_fraction(p, batch // size) for size in sizes}
    in_flight = [min(p, batch // size) * size for size in sizes]  # sequences rank 0 holds
    per_seq = [mem / n for mem, n in zip(peak_bytes, in_flight)]
    linear = max(per_seq) <= 1.25 * min(per_seq)
    lines = [text("pipeline.mb_best", b=b, m=batch // b, throughput=throughput[best])]
    lines.append(text("pipeline.mb_memory_linear", kib=sum(per_seq) / len(per_seq) / 1024) if linear else
                 text("pipeline.mb_memory_not_linear"))
    if b == max(sizes):
        lines.append(text("pipeline.mb_largest", m=worst_m, bubble=bubbles[max(sizes)]))
    elif b == min(sizes):
        lines.append(text("pipeline.mb_smallest"))
    else:
        lines.append(text("pipeline.mb_middle", batch=batch, largest=max(sizes), m=worst_m,
                        bubble=bubbles[max(sizes)]))
    lines.append(text("pipeline.mb_measure"))
    return "\n".join(lines)


def interpret_balance(step_s: dict, simulated_s: dict, *, overruns: int = 0) -> str:
    """Myth 3 of 2.3: measured and simulated step seconds of two splits, ``{name: s}``, the
    first the even split, the second the balanced one (fixed-time mode, time ~ cost)."""
    (even, balanced) = list(step_s)
    got = step_s[even] / step_s[balanced]
    want = simulated_s[even] / simulated_s[balanced]
    head = text("pipeline.balance_head", even=even, even_ms=step_s[even] * 1e3, balanced=balanced,
              balanced_ms=step_s[balanced] * 1e3, got=got, want=want)
    if got > 1 + TOLERANCE:
        if abs(got - want) <= 0.05 * want:
            return head + "\n" + text("pipeline.balance_agree")
        return head + "\n" + text("pipeline.balance_machine", why=_why_fixed(overruns))
    return head + "\n" + text("pipeline.balance_none", want=want, why=_why_fixed(overruns))
