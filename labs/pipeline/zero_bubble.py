"""Zero-bubble pipelines on real ranks (issue 28, the last section of notebook 2.3): the same
work under 1F1B, ZB-H1 and ZB-V, simulated or measured in fixed-time mode, each with its
formula and its in-flight bound beside it::

    readings = measure_zero_bubble(4, 8)          # one launch, three schedules
    for r in readings:
        print(r.name, r.idle, r.formula, r.peak, r.bound)

The three do the same work when a stage's forward takes t_F, the input gradient t_B and the
weight gradient t_W: 1F1B runs its unsplit backward in t_B + t_W; ZB-H1 splits it into B and W;
ZB-V cuts every stage in two chunks, one on each arm of the V, so a chunk's F, B and W take half
of a stage's. Their bubbles: (p-1)/(m+p-1) (PTD-P §2.2), labs.formulas.cost.zb_h1_bubble_fraction and
labs.formulas.cost.zb_v_bubble_fraction (ZB-H1: Qi et al., arXiv:2401.10241 §2.1; ZB-V: arXiv:2405.15362).

Owns: the comparable runs of the three schedules and their readings. Must not: print, hold a
formula (labs.formulas.cost) or an order (labs.pipeline.schedules), or import the checks or the grader.
"""
from __future__ import annotations

from dataclasses import dataclass

from labs.formulas.cost import bubble_fraction, zb_h1_bubble_fraction, zb_v_bubble_fraction
from labs.messages import text
from labs.pipeline import experiments
from labs.pipeline.executor import FixedTime
from labs.pipeline.schedules import in_flight_bound
from labs.pipeline.step import TINY, PipelineRun, pipeline_step
from labs.notebook.timeline import Timeline

__all__ = ["ZB_SCHEDULES", "zb_timings", "zb_formula", "zb_runs", "ZBReading",
           "measure_zero_bubble", "simulate_zero_bubble", "pipeline_steps"]

ZB_SCHEDULES = ("1f1b", "zb-h1", "zb-v")


def zb_timings(t_f: float, t_b: float, t_w: float) -> dict[str, FixedTime]:
    """The fixed times that make the three schedules do the same work (see the module)."""
    return {"1f1b": FixedTime(t_f, t_b + t_w), "zb-h1": FixedTime(t_f, t_b, t_w),
            "zb-v": FixedTime(t_f / 2, t_b / 2, t_w / 2)}


def zb_formula(name: str, p: int, m: int, t_f: float, t_b: float, t_w: float) -> float:
    """The idle share each schedule's formula gives; ZB-V's needs t_F = t_B = t_W."""
    if name == "1f1b":
        return bubble_fraction(p, m)
    if name == "zb-h1":
        return zb_h1_bubble_fraction(p, m, t_f, t_b, t_w)
    if name == "zb-v":
        if not t_f == t_b == t_w:
            raise ValueError(text("pipeline.zb_v_equal_times", t_f=t_f, t_b=t_b, t_w=t_w))
        return zb_v_bubble_fraction(p, m)
    raise ValueError(text("pipeline.unknown_schedule", name=name, schedules=ZB_SCHEDULES))


def zb_runs(p: int, m: int, t_f: float = 0.04, t_b: float = 0.04, t_w: float = 0.04, *,
            microbatch_size: int = 1, config=TINY) -> dict[str, PipelineRun]:
    """{schedule: its fixed-time run}, m micro-batches of ``microbatch_size`` rows each; the
    model needs 2p blocks at least (ZB-V's chunks)."""
    return {name: PipelineRun(schedule=name, n_microbatches=m, batch_size=m * microbatch_size,
                              timing=timing, config=config)
            for name, timing in zb_timings(t_f, t_b, t_w).items()}


@dataclass(frozen=True)
class ZBReading:
    """One schedule's timeline and what to compare in it: the idle share of every rank and the
    formula's, the peak micro-batches in flight on every rank and the schedule's bound (ZB-V
    counts chunks: half a stage's activations each), the peak bytes of activations per rank."""

    name: str
    timeline: Timeline
    idle: list[float]
    formula: float
    peak: list[int]
    bound: list[int]
    peak_bytes: list[int] | None
    overruns: int


def _reading(name: str, timeline: Timeline, p: int, m: int, times: tuple) -> ZBReading:
    measured = "peak_in_flight" in timeline.info  # the recorders' counts, else the simulated
    peak = list(timeline.info["peak_in_flight"]) if measured else timeline.peak_in_flight()
    return ZBReading(name=name, timeline=timeline, idle=timeline.idle_fraction(),
                     formula=zb_formula(name, p, m, *times), peak=peak,
                     bound=[in_flight_bound(name, p, m, r) for r in range(p)],
                     peak_bytes=timeline.info.get("peak_activation_bytes"),
                     overruns=timeline.info.get("overruns", 0))


def measure_zero_bubble(p: int, m: int, t_f: float = 0.04, t_b: float = 0.04,
                        t_w: float = 0.04, *, timeout: float = 120.0) -> list[ZBReading]:
    """From the notebook: 1F1B, ZB-H1 and ZB-V on ``p`` ranks in one launch, fixed-time mode."""
    runs = zb_runs(p, m, t_f, t_b, t_w)
    timelines = experiments.measure(list(runs.values()), p, timeout=timeout)
    return [_reading(name, t, p, m, (t_f, t_b, t_w)) for name, t in zip(runs, timelines)]


def simulate_zero_bubble(p: int, m: int, t_f: float = 0.04, t_b: float = 0.04,
                         t_w: float = 0.04) -> list[ZBReading]:
    """The same three on paper (no ranks): their ideal timelines."""
    runs = zb_runs(p, m, t_f, t_b, t_w)
    return [_reading(name, experiments.simulate_run(run, p), p, m, (t_f, t_b, t_w))
            for name, run in runs.items()]


def pipeline_steps(runs: list[PipelineRun], group=None) -> list[dict]:
    """On a rank: :func:`labs.pipeline.step.pipeline_step` for each run, gradients and weights
    kept (one launch for several comparisons with one process)."""
    return [pipeline_step(run, group) for run in runs]
