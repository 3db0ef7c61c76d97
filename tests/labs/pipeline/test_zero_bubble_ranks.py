"""Zero-bubble pipelines on real gloo ranks (issue 28): the split backward (B: the input's
gradient, W: the weights', later) gives one process's loss, gradients and weights after two
AdamW steps, for ZB-H1 and ZB-V on 2 and 4 ranks and m below and above p; it equals torch's
ScheduleInterleavedZeroBubble / ScheduleZBVZeroBubble on the same split and batch; in fixed-time
mode every rank's measured idle share is each schedule's formula and its peak of micro-batches in
flight is the schedule's bound.
"""
from __future__ import annotations

import pytest

import labs
from labs.pipeline import step as ps
from labs.pipeline import zero_bubble as zb
from labs.pipeline.schedules import in_flight_bound

pytestmark = [pytest.mark.slow, pytest.mark.numerics]

LAUNCH_TIMEOUT = 120
# {p: [(m, batch)]}: m < p and m > p; the batch divisible by m
CASES = {2: [(1, 4), (4, 8)], 4: [(3, 6), (8, 8)]}


@pytest.mark.parametrize("p", [2, 4])
def test_split_backward_equals_one_process(p):
    runs = [ps.PipelineRun(schedule=name, n_microbatches=m, batch_size=b, steps=2)
            for name in ("zb-h1", "zb-v") for m, b in CASES[p]]
    per_rank = labs.launch(zb.pipeline_steps, p, args=(runs,), timeout=LAUNCH_TIMEOUT)
    for i, run in enumerate(runs):
        ranks = [r[i] for r in per_rank]
        ps.compare(ps.merge(ranks), ps.reference_step(run))  # loss, every gradient, weights
        assert [r["peak_in_flight"] for r in ranks] == [
            in_flight_bound(run.schedule, p, run.n_microbatches, rank) for rank in range(p)]


@pytest.mark.parametrize("name, p, m, batch", [("zb-h1", 4, 8, 8), ("zb-v", 2, 3, 6),
                                               ("zb-v", 4, 8, 8)])
def test_split_backward_equals_torchs_zero_bubble_schedules(name, p, m, batch):
    run = ps.PipelineRun(schedule=name, n_microbatches=m, batch_size=batch, steps=2)
    ours = ps.merge(labs.launch(ps.pipeline_step, p, args=(run,), timeout=LAUNCH_TIMEOUT))
    theirs = ps.merge(labs.launch(ps.torch_pipeline_step, p, args=(run,),
                                  timeout=LAUNCH_TIMEOUT))
    ps.compare(theirs, ps.reference_step(run))
    ps.compare(ours, theirs)


def test_measured_bubbles_and_peaks_are_the_formulas_and_bounds(monkeypatch):
    # Timing: the default share of the cores (see test_pipeline's fixed-time test); slots of
    # 100 ms per stage action (50 ms per ZB-V chunk) leave a wide margin over the compute, and
    # over the late wake-ups of a loaded machine.
    monkeypatch.delenv("LABS_THREADS_PER_RANK", raising=False)
    for p, m in [(4, 8), (2, 3)]:
        readings = {r.name: r for r in zb.measure_zero_bubble(p, m, 0.1, 0.1, 0.1,
                                                                timeout=LAUNCH_TIMEOUT)}
        assert list(readings) == list(zb.ZB_SCHEDULES)
        for r in readings.values():
            assert r.peak == r.bound, r.name
            for idle in r.idle:
                assert idle == pytest.approx(r.formula, abs=0.03), (r.name, p, m, r.idle,
                                                                     r.overruns)
        assert readings["zb-v"].formula < readings["zb-h1"].formula < readings["1f1b"].formula
        # the same activation memory, about: 1F1B's first stage holds p micro-batches
        most = max(readings["1f1b"].peak_bytes)
        for name in ("zb-h1", "zb-v"):
            assert max(readings[name].peak_bytes) <= 1.25 * most, name
