"""The experiments of notebook 2.3 on real ranks, and what each measurement says.

The sweeps run :func:`labs.pipeline.step.pipeline_step` (the training step, its references and
their comparison live in :mod:`labs.pipeline.step`) for a grid of runs in one launch and return
their measured timelines (:func:`measure`); :func:`simulate_run` gives the ideal timeline of the
same run. The ``interpret_*`` functions turn the measured timelines into the notebook's
conclusion, in its language (the messages ``pipeline_readings.*`` of :mod:`labs.messages`):
the formula's expectation, whether this machine's measurement agrees, and why not when it does
not (overruns of the fixed-time mode, real compute that is shorter than the send/recv and Python
overheads, ranks sharing a few CPU cores). They take plain numbers (idle shares, seconds), and
first check the bounds those numbers must obey (an idle share between 0 and 1, a step no
shorter than its compute): a measurement that breaks them is called noise, with what to rerun.

Owns: 2.3's sweeps and their readings. Must not: hold the training step (labs.pipeline.step), print,
keep process groups in globals, or import the checks or the grader.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import torch.distributed as dist

import labs
from labs import _moved
from labs.formulas.cost import bubble_fraction
from labs.messages import joined, text
from labs.models import TinyGPTConfig
from labs.pipeline import step
from labs.pipeline.executor import FixedTime, gather_timeline, mode_label
from labs.pipeline.simulator import simulate
from labs.notebook.timeline import Timeline

#: Names that moved to :mod:`labs.pipeline.step`: served here with a DeprecationWarning
#: (module ``__getattr__``); listed in ``__all__`` until the notebooks import them from there.
MOVED = ("VOCAB", "TINY", "SMALL", "PipelineRun", "build_stages", "average_replicas",
         "pipeline_step", "torch_pipeline_step", "merge", "reference_step", "compare")

__all__ = [*MOVED, "timeline_of", "sweep", "bubble_grid", "with_", "measure", "simulate_run",
           "TOLERANCE", "interpret_bubble", "interpret_schedules", "interpret_bubble_sweep",
           "interpret_interleaving", "interpret_stages", "interpret_microbatch",
           "interpret_balance", "interpret_zero_bubble_real"]


def __getattr__(name: str):
    return _moved.moved_attribute(__name__, name)


def timeline_of(per_rank: list[dict], run: step.PipelineRun) -> Timeline:
    """The measured Timeline of the last step, labelled with its mode."""
    return gather_timeline(per_rank, mode_label(run.timing))


def sweep(runs: list[step.PipelineRun], group: dist.ProcessGroup | None = None, *,
          warmup: bool = True) -> list[dict]:
    """On a rank: ``pipeline_step`` for each run in turn (one launch for a whole grid).
    A first untimed real-compute step warms up autograd and the allocator, so that the first
    timed actions do not overrun. Gradients and weights are dropped to keep the results small."""
    if warmup and runs:
        step.pipeline_step(replace(runs[0], timing=None, steps=1), group)
    out = []
    for run in runs:
        r = step.pipeline_step(run, group)
        out.append({k: v for k, v in r.items() if k not in ("grads", "state")})
    return out


def bubble_grid(n_ranks: int, ms, timing: FixedTime | None, *, schedule: str = "1f1b",
                microbatch_size: int = 1,
                config: TinyGPTConfig = step.TINY) -> list[step.PipelineRun]:
    """Runs with a fixed micro-batch size and m micro-batches each (GPipe's convention)."""
    return [step.PipelineRun(schedule=schedule, n_microbatches=m, batch_size=m * microbatch_size,
                        timing=timing, config=config) for m in ms]


def with_(run: step.PipelineRun, **changes) -> step.PipelineRun:
    return replace(run, **changes)


def measure(runs: list[step.PipelineRun], n_ranks: int, *,
            timeout: float = 120.0) -> list[Timeline]:
    """From the notebook: run ``runs`` on ``n_ranks`` ranks in one launch; their measured
    Timelines (info: peak in-flight micro-batches and activation bytes per rank, overruns)."""
    per_rank = labs.launch(sweep, n_ranks, args=(runs,), timeout=timeout)
    return [timeline_of([r[i] for r in per_rank], run) for i, run in enumerate(runs)]


def simulate_run(run: step.PipelineRun, n_ranks: int) -> Timeline:
    """The ideal timeline of ``run`` with its stated times (FixedTime(), if it has none)."""
    timing = run.timing or FixedTime()
    return simulate(run.build_schedule(n_ranks), forward_s=timing.forward_s,
                    backward_s=timing.backward_s, weight_s=timing.weight_s)


# --- what the measurements say (in the notebook's language) ---------------------------------------

TOLERANCE = 0.02  # an idle share within 2 percentage points of the formula agrees with it



def _mean(x) -> float:
    return sum(x) / len(x) if isinstance(x, (list, tuple)) else float(x)


def _pts(x: float) -> str:
    return text("pipeline.points", value=abs(x) * 100)


def _why_real(ranks: int | None, cores: int | None) -> str:
    if ranks is not None and cores is not None and ranks > cores:
        return text("pipeline_readings.why_real_crowded", ranks=ranks, cores=cores)
    return text("pipeline_readings.why_real")


def _why_fixed(overruns: int) -> str:
    if overruns:
        return text("pipeline_readings.why_fixed_overruns", overruns=overruns)
    return text("pipeline_readings.why_fixed_no_overruns")


def interpret_bubble(measured, formula: float, *, fixed_time: bool, overruns: int = 0,
                     ranks: int | None = None, cores: int | None = None) -> str:
    """Measured idle share (one number, or one per rank: their mean) against the formula.
    Fixed-time mode: agrees within :data:`TOLERANCE` unless actions overran. Real compute on a
    CPU: usually far above the formula (overheads as long as the compute)."""
    refused = _impossible(measured)
    if refused:
        return refused
    mean = _mean(measured)
    diff = mean - formula
    head = text("pipeline_readings.bubble_head", mean=mean, formula=formula)
    if abs(diff) <= TOLERANCE:
        if fixed_time:
            if overruns:
                return text("pipeline_readings.bubble_fixed_agree_overruns", head=head, diff=_pts(diff),
                          overruns=overruns, tolerance=TOLERANCE)
            return text("pipeline_readings.bubble_fixed_agree", head=head, diff=_pts(diff))
        return text("pipeline_readings.bubble_real_agree", head=head, diff=_pts(diff))
    if fixed_time:
        return text("pipeline_readings.bubble_fixed_high" if diff > 0
                    else "pipeline_readings.bubble_fixed_low", head=head, diff=_pts(diff),
                    why=_why_fixed(overruns))
    if diff > 0:
        return text("pipeline_readings.bubble_real_high", head=head, diff=_pts(diff), why=_why_real(ranks, cores))
    return text("pipeline_readings.bubble_real_low", head=head, diff=_pts(diff))


def interpret_schedules(steps_s: dict, idle: dict, formula: float, *, overruns: int = 0) -> str:
    """Section 2 of 2.3: GPipe vs 1F1B in fixed-time mode, ``{name: step seconds}`` and
    ``{name: idle share per rank}``. Expected: the same step time and the same idle share, the
    formula's."""
    refused = _impossible(*idle.values(), steps=list(steps_s.values()))
    if refused:
        return refused
    names = list(steps_s)
    fast, slow = min(steps_s.values()), max(steps_s.values())
    means = {n: _mean(idle[n]) for n in names}
    head = text("pipeline_readings.schedules_head",
              steps=joined(text("pipeline_readings.schedule_step", name=n, ms=steps_s[n] * 1e3) for n in names),
              shares=joined(text("pipeline_readings.schedule_share", name=n, share=means[n]) for n in names),
              formula=formula)
    same = slow <= fast * (1 + TOLERANCE) and max(means.values()) - min(means.values()) <= TOLERANCE
    on_formula = all(abs(x - formula) <= TOLERANCE for x in means.values())
    if same and on_formula:
        return head + "\n" + text("pipeline_readings.schedules_same")
    return head + "\n" + text("pipeline_readings.schedules_off_formula" if same
                               else "pipeline_readings.schedules_differ",
                             why=_why_fixed(overruns))


def interpret_bubble_sweep(sweep: dict, *, fixed_time: bool, overruns: int = 0,
                           cores: int | None = None) -> str:
    """Section 2 of 2.3: ``{p: {m: idle share per rank}}`` against (p-1)/(m+p-1), for m >= p."""
    refused = _impossible(*(v for p, by_m in sweep.items() for m, v in by_m.items() if m >= p))
    if refused:
        return refused
    diffs = {(p, m): _mean(v) - bubble_fraction(p, m)
             for p, by_m in sweep.items() for m, v in by_m.items() if m >= p}
    worst_key = max(diffs, key=lambda k: abs(diffs[k]))
    worst = diffs[worst_key]
    avg = sum(diffs.values()) / len(diffs)
    head = text("pipeline_readings.sweep_head_higher" if avg >= 0
                else "pipeline_readings.sweep_head_lower", n=len(diffs), avg=_pts(avg),
                p=worst_key[0], m=worst_key[1], worst=worst * 100)
    if abs(worst) <= TOLERANCE:
        return head + "\n" + text("pipeline_readings.sweep_on_curve_fixed" if fixed_time
                                   else "pipeline_readings.sweep_on_curve_real")
    if fixed_time:
        return head + "\n" + text("pipeline_readings.sweep_fixed_off", why=_why_fixed(overruns))
    return head + "\n" + text("pipeline_readings.sweep_real_off", why=_why_real(max(sweep), cores))


def interpret_interleaving(idle_plain, idle_inter, step_plain_s: float, step_inter_s: float, *,
                           p: int, m: int, v: int, overruns: int = 0,
                           stage_s: float | None = None) -> str:
    """Section 3 of 2.3: plain vs interleaved 1F1B (v chunks per rank), fixed-time mode, with
    each rank's idle share and the step seconds; ``stage_s``: forward + backward seconds of one
    micro-batch on a whole stage (the fixed-time durations). Expected: the bubble *time*
    (p-1)·stage_s shrinks to 1/v, the idle *share* goes (p-1)/(m+p-1) -> (p-1)/(v·m+p-1), the
    step gets shorter. Both idle shares are the mean over ranks (the bubble time is mean idle x
    step). Impossible: a share outside 0-1, a step shorter than its own compute m·stage_s."""
    refused = _impossible(idle_plain, idle_inter, steps=[step_plain_s, step_inter_s],
                          least_step=None if stage_s is None else m * stage_s)
    if refused:
        return refused
    f1, fv = bubble_fraction(p, m), bubble_fraction(p, m, v)
    a, b = _mean(idle_plain), _mean(idle_inter)
    head = text("pipeline_readings.inter_head", a=a, f1=f1, v=v, b=b, fv=fv,
                plain_ms=step_plain_s * 1e3, inter_ms=step_inter_s * 1e3)
    if stage_s is not None:
        head += text("pipeline_readings.inter_bubble_time", plain_ms=a * step_plain_s * 1e3,
                     inter_ms=b * step_inter_s * 1e3, v=v,
                     formula_plain_ms=(p - 1) * stage_s * 1e3,
                     formula_inter_ms=(p - 1) * stage_s / v * 1e3)
    agree = abs(a - f1) <= TOLERANCE and abs(b - fv) <= TOLERANCE
    if b < a - TOLERANCE and step_inter_s < step_plain_s:
        if agree:
            return head + "\n" + text("pipeline_readings.inter_gain", a=a, b=b)
        return head + "\n" + text("pipeline_readings.inter_gain_biased", a=a, b=b,
                                   why=_why_fixed(overruns))
    return head + "\n" + text("pipeline_readings.inter_none", f1=f1, fv=fv, why=_why_fixed(overruns))


def interpret_zero_bubble_real(idle: dict, formulas: dict, *, ranks: int | None = None,
                               cores: int | None = None) -> str:
    """Section 7 of 2.3: 1F1B, ZB-H1 and ZB-V in real-compute mode, ``{name: idle share per
    rank}`` and ``{name: formula}`` (names as :func:`labs.pipeline.zero_bubble.zb_runs`'). Says
    whether the schedules idle in the formulas' order, and when one with the smaller formula
    idles more (ZB-V above 1F1B, say), why: real compute counts every action's and message's
    fixed overhead, and the split schedules have more of both."""
    refused = _impossible(*idle.values())
    if refused:
        return refused
    names = list(idle)
    means = {n: _mean(idle[n]) for n in names}
    head = text("pipeline_readings.zb_real_head",
                shares=joined(text("pipeline_readings.schedule_share", name=n, share=means[n])
                                for n in names),
                formulas=joined(f"{formulas[n]:.1%}" for n in names))
    by_formula = sorted(names, key=lambda n: -formulas[n])  # most idle first, by the formulas
    inverted = [(a, b) for i, a in enumerate(by_formula) for b in by_formula[i + 1:]
                if means[b] > means[a] + TOLERANCE]  # b should idle less than a, idles more
    if not inverted:
        return head + "\n" + text("pipeline_readings.zb_real_in_order",
                                   why=_why_real(ranks, cores))
    a, b = max(inverted, key=lambda pair: means[pair[1]] - means[pair[0]])
    crowded = ranks is not None and cores is not None and ranks > cores
    overheads = text("pipeline_readings.zb_real_overheads_crowded", ranks=ranks, cores=cores) \
        if crowded else text("pipeline_readings.zb_real_overheads")
    return head + "\n" + text("pipeline_readings.zb_real_inverted", more=b, less=a,
                               more_share=means[b], less_share=means[a], overheads=overheads)


def _impossible(*shares, steps: Sequence[float] = (), least_step: float | None = None) -> str:
    """The noise verdict when the measurement breaks its physical bounds (an idle share below 0
    or above 1, a step <= 0 or shorter than ``least_step``, its compute), else ''."""
    flat = [x for v in shares for x in (v if isinstance(v, (list, tuple)) else [v])]
    bad = [x for x in flat if x < -1e-9 or x > 1 + 1e-9]
    if bad:
        return text("pipeline_readings.idle_out_of_bounds",
                    shares=joined(f"{x:.1%}" for x in bad))
    if any(t <= 0 for t in steps) or (least_step is not None and min(steps) < least_step * (1 - 1e-3)):
        return text("pipeline_readings.step_below_compute", step_ms=min(steps) * 1e3,
                    least_ms=(least_step or 0) * 1e3)
    return ""


def interpret_stages(by_p: dict, m: int, *, overruns: int = 0) -> str:
    """Myth 1 of 2.3: ``{p: mean idle share}`` at a fixed m (fixed-time mode). Expected: the
    idle share grows with p, as (p-1)/(m+p-1)."""
    ps = sorted(by_p)
    measured = [by_p[p] for p in ps]
    formula = [bubble_fraction(p, m) for p in ps]
    rising = all(b > a for a, b in zip(measured, measured[1:]))
    off = max(abs(x - f) for x, f in zip(measured, formula))
    head = text("pipeline_readings.stages_head", m=m, ps=joined(map(str, ps)),
              measured=" → ".join(f"{x:.1%}" for x in measured),
              formula=" → ".join(f"{x:.1%}" for x in formula))
    if rising:
        if off <= TOLERANCE:
            return head + "\n" + text("pipeline_readings.stages_rising")
        return head + "\n" + text("pipeline_readings.stages_rising_off", off=_pts(off), why=_why_fixed(overruns))
    return head + "\n" + text("pipeline_readings.stages_flat", why=_why_fixed(overruns))


def interpret_microbatch(sizes: Sequence[int], throughput: Sequence[float],
                         peak_bytes: Sequence[float], *, p: int, batch: int) -> str:
    """Myth 2 of 2.3: a fixed batch cut into micro-batches of ``sizes`` (m = batch / size) on p
    stages, real compute: tokens/s and peak activation bytes per run. The best micro-batch size
    is where the bubble of few micro-batches and the overheads of tiny ones balance: it depends
    on the model and the machine (PTD-P §3.3, §5.5)."""
    best = max(range(len(sizes)), key=lambda i: throughput[i])
    b, worst_m = sizes[best], batch // max(sizes)
    bubbles = {size: bubble_fraction(p, batch // size) for size in sizes}
    in_flight = [min(p, batch // size) * size for size in sizes]  # sequences rank 0 holds
    per_seq = [mem / n for mem, n in zip(peak_bytes, in_flight)]
    linear = max(per_seq) <= 1.25 * min(per_seq)
    lines = [text("pipeline_readings.mb_best", b=b, m=batch // b, throughput=throughput[best])]
    lines.append(text("pipeline_readings.mb_memory_linear", kib=sum(per_seq) / len(per_seq) / 1024) if linear else
                 text("pipeline_readings.mb_memory_not_linear"))
    if b == max(sizes):
        lines.append(text("pipeline_readings.mb_largest", m=worst_m, bubble=bubbles[max(sizes)]))
    elif b == min(sizes):
        lines.append(text("pipeline_readings.mb_smallest"))
    else:
        lines.append(text("pipeline_readings.mb_middle", batch=batch, largest=max(sizes), m=worst_m,
                        bubble=bubbles[max(sizes)]))
    lines.append(text("pipeline_readings.mb_measure"))
    return "\n".join(lines)


def interpret_balance(step_s: dict, simulated_s: dict, *, overruns: int = 0) -> str:
    """Myth 3 of 2.3: measured and simulated step seconds of two splits, ``{name: s}``, the
    first the even split, the second the balanced one (fixed-time mode, time ~ cost)."""
    (even, balanced) = list(step_s)
    got = step_s[even] / step_s[balanced]
    want = simulated_s[even] / simulated_s[balanced]
    head = text("pipeline_readings.balance_head", even=even, even_ms=step_s[even] * 1e3, balanced=balanced,
              balanced_ms=step_s[balanced] * 1e3, got=got, want=want)
    if got > 1 + TOLERANCE:
        if abs(got - want) <= 0.05 * want:
            return head + "\n" + text("pipeline_readings.balance_agree")
        return head + "\n" + text("pipeline_readings.balance_machine", why=_why_fixed(overruns))
    return head + "\n" + text("pipeline_readings.balance_none", want=want, why=_why_fixed(overruns))
