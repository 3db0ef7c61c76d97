"""Pipeline parallelism (labs.pipeline): partition, schedules as data, simulator, executor.

The executor runs on real gloo ranks and is compared with single-process training
(labs.reference) and with torch.distributed.pipelining on the same split; timings are only
checked in fixed-time mode and only as ratios (idle shares), never as absolute times.
"""
from __future__ import annotations

import dataclasses

import itertools
import random

import pytest
import torch

import labs
from labs import pipeline as pp
from labs.numerics import assert_close
from labs.pipeline import experiments as px
from labs.pipeline import step as ps
from labs.messages import text
from labs.pipeline.schedules import Action
from tests.support.messages import found_in, pattern

pytestmark = pytest.mark.numerics

LAUNCH_TIMEOUT = 60


# --- partition --------------------------------------------------------------------------------

def test_partition_evenly_and_errors(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    assert pp.partition_evenly(8, 4) == [(0, 2), (2, 4), (4, 6), (6, 8)]
    assert pp.partition_evenly(7, 3) == [(0, 3), (3, 5), (5, 7)]
    with pytest.raises(ValueError, match=pattern("pipeline.too_many_stages", n_layers=2, n_stages=4)):
        pp.partition_evenly(2, 4)
    with pytest.raises(ValueError, match=pattern("pipeline.too_many_stages", n_layers=3, n_stages=4)):
        pp.balanced_partition([1.0, 2.0, 3.0], 4)


def _brute_force_best(costs, n_stages):
    n = len(costs)
    best = float("inf")
    for cuts in itertools.combinations(range(1, n), n_stages - 1):
        edges = (0, *cuts, n)
        best = min(best, max(sum(costs[a:b]) for a, b in zip(edges, edges[1:])))
    return best


def test_balanced_partition_is_optimal_and_contiguous():
    rng = random.Random(0)
    for _ in range(30):
        n = rng.randint(1, 9)
        p = rng.randint(1, n)
        costs = [rng.choice([1, 2, 3, 5, 8]) * 1.0 for _ in range(n)]
        bounds = pp.balanced_partition(costs, p)
        assert len(bounds) == p and bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a < b for a, b in bounds) and all(b == c for (_, b), (c, _) in zip(bounds, bounds[1:]))
        assert max(pp.stage_costs(costs, bounds)) == _brute_force_best(costs, p)


def test_gpt_layer_costs_put_the_head_on_the_last_block():
    costs = pp.gpt_layer_costs(ps.TINY)
    assert len(costs) == ps.TINY.n_layer and costs[-1] > costs[0] == costs[1]


# --- schedules and simulator -------------------------------------------------------------------

def test_gpipe_and_1f1b_orders():
    assert pp.compute_order(pp.gpipe_order(4, 3, 1)) == ["F0", "F1", "F2", "B0", "B1", "B2"]
    assert [pp.one_f_one_b_warmup(4, 8, s) for s in range(4)] == [3, 2, 1, 0]
    assert pp.compute_order(pp.one_f_one_b_order(4, 5, 1)) == [
        "F0", "F1", "F2", "B0", "F3", "B1", "F4", "B2", "B3", "B4"]
    assert pp.compute_order(pp.one_f_one_b_order(4, 5, 3)) == [
        "F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "F4", "B4"]
    assert pp.compute_order(pp.one_f_one_b_order(4, 2, 0)) == ["F0", "F1", "B0", "B1"]  # m < p


def test_communication_is_inserted_next_to_compute():
    (r0, r1) = pp.build_schedule("gpipe", 2, 2)
    assert [str(a) for a in r0] == ["F0", "SEND_F0->1", "F1", "SEND_F1->1", "RECV_B0<-1", "B0",
                                    "RECV_B1<-1", "B1"]
    assert [str(a) for a in r1][:3] == ["RECV_F0<-0", "F0", "RECV_F1<-0"]


@pytest.mark.parametrize("name,v", [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("interleaved", 3)])
def test_simulated_bubble_equals_the_formula(name, v):
    for p, m in [(2, 2), (2, 4), (4, 4), (4, 8), (4, 16), (3, 6)]:
        timeline = pp.simulate(pp.build_schedule(name, p, m, v), forward_s=1 / v, backward_s=2 / v)
        for idle in timeline.idle_fraction():
            assert_close(idle, pp.bubble_fraction(p, m, v), dtype="float64")


def test_m_smaller_than_p_is_allowed_and_its_bubble_is_large():
    for name in ("gpipe", "1f1b"):
        timeline = pp.simulate(pp.build_schedule(name, 4, 1))
        assert_close(timeline.idle_fraction(), [0.75] * 4, dtype="float64")


def test_in_flight_microbatches_gpipe_m_1f1b_at_most_p():
    p, m = 4, 8
    assert pp.simulate(pp.build_schedule("gpipe", p, m)).peak_in_flight() == [m] * p
    assert pp.simulate(pp.build_schedule("1f1b", p, m)).peak_in_flight() == [4, 3, 2, 1]


def test_bubble_formula_and_min_microbatches():
    assert_close(pp.bubble_fraction(8, 32), 7 / 39, dtype="float64")  # 17.9 %, FACTCHECK #13
    assert_close(pp.bubble_fraction(12, 32), 11 / 43, dtype="float64")  # 25.6 %
    assert pp.min_microbatches(8, 0.10) == 63 and pp.min_microbatches(12, 0.10) == 99


def test_deadlock_and_bad_schedules_are_errors(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    good = pp.build_schedule("gpipe", 2, 1)
    r0 = [Action("F", 0, 0), Action("RECV_B", 0, 0, 1), Action("SEND_F", 0, 0, 1), Action("B", 0, 0)]
    with pytest.raises(pp.DeadlockError) as info:
        pp.simulate([r0, good[1]])
    waits = found_in(info.value, "pipeline.deadlock")["waits"]
    found_in(waits, "pipeline.waits_at", r=0, action="RECV_B0<-1", pos=1)
    found_in(waits, "pipeline.waits_at", r=1, action="RECV_F0<-0", pos=0)
    with pytest.raises(pp.ScheduleError,
                       match=pattern("pipeline.never_runs",
                                     missing=text("pipeline.action_of_stage", action="B0", stage=1))):
        pp.simulate([good[0], [a for a in good[1] if a.kind != "B"]])
    with pytest.raises(pp.ScheduleError, match=pattern("pipeline.before_forward", r=0, action="B0", stage=0)):
        pp.simulate([[Action("B", 0, 0), Action("F", 0, 0)]])
    # what an action needs and does not have yet: received from another rank or computed here
    with pytest.raises(pp.ScheduleError, match=pattern("pipeline.needs_activation_received",
                                                       r=1, stage=1, src=0)):
        pp.simulate([good[0], [a for a in good[1] if not a.kind.startswith("RECV")]])
    with pytest.raises(pp.ScheduleError, match=pattern("pipeline.needs_activation_computed",
                                                       r=0, stage=1, src=0)):
        pp.simulate([[Action("F", 0, 1), Action("F", 0, 0), Action("B", 0, 1),
                      Action("B", 0, 0)]])
    with pytest.raises(pp.ScheduleError, match=pattern("pipeline.wrong_rank", owner=1)):
        pp.simulate([good[0] + [Action("F", 0, 1)], good[1]])
    with pytest.raises(ValueError, match=pattern("pipeline.interleaved_multiple", p=4, m=6)):
        pp.build_schedule("interleaved", 4, 6, 2)


def test_microbatches_must_divide_the_batch(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(ValueError, match=pattern("pipeline.microbatches_split", batch_size=8, m=3)):
        pp.split_microbatches(torch.zeros(8, 4), 3)
    with pytest.raises(ValueError, match=pattern("pipeline.microbatches_split", batch_size=8, m=3)):
        ps.PipelineRun(batch_size=8, n_microbatches=3)


def test_errors_in_the_notebooks_language(monkeypatch):
    """The same errors in the Chinese edition: Chinese, with the same numbers and names."""
    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.raises(ValueError, match="无法把 2 层切成 4 个 stage"):
        pp.partition_evenly(2, 4)
    with pytest.raises(ValueError, match=r"8 行的 batch 无法平均切成 3 个 micro-batch；请从 \[1, 2, 4, 8\]"):
        pp.split_microbatches(torch.zeros(8, 4), 3)
    good = pp.build_schedule("gpipe", 2, 1)
    r0 = [Action("F", 0, 0), Action("RECV_B", 0, 0, 1), Action("SEND_F", 0, 0, 1), Action("B", 0, 0)]
    with pytest.raises(pp.DeadlockError, match=r"死锁.*rank 0 停在 RECV_B0<-1.*；rank 1 停在 RECV_F0<-0"):
        pp.simulate([r0, good[1]])
    with pytest.raises(pp.ScheduleError, match="调度从不运行 stage 1 的 B0"):
        pp.simulate([good[0], [a for a in good[1] if a.kind != "B"]])
    with pytest.raises(pp.ScheduleError, match="排在它的前向之前"):
        pp.simulate([[Action("B", 0, 0), Action("F", 0, 0)]])
    with pytest.raises(ValueError, match="n_microbatches=6 必须是 4 的倍数"):
        pp.build_schedule("interleaved", 4, 6, 2)
    with pytest.raises(ValueError, match="未知的调度 'zb'"):
        pp.build_schedule("zb", 2, 2)
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(ValueError, match="schedule 'zb' is unknown"):
        pp.build_schedule("zb", 2, 2)


# --- the executor on real ranks ------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference():
    return ps.reference_step(ps.PipelineRun())  # batch 8, the same for every m below


@pytest.mark.parametrize("p", [2, 4])
@pytest.mark.parametrize("name", ["gpipe", "1f1b", "interleaved"])
def test_executor_equals_single_process(name, p, reference):
    run = ps.PipelineRun(schedule=name, n_microbatches=4, n_chunks=2 if name == "interleaved" else 1)
    per_rank = labs.launch(ps.pipeline_step, p, args=(run,), timeout=LAUNCH_TIMEOUT)
    ps.compare(ps.merge(per_rank), reference)
    peaks = [r["peak_in_flight"] for r in per_rank]
    if name == "gpipe":
        assert peaks == [4] * p
    elif name == "1f1b":
        assert peaks == [min(4, p - r) for r in range(p)]


@pytest.mark.parametrize("p", [2, 4])
@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
def test_executor_equals_torch_pipelining(name, p, reference):
    run = ps.PipelineRun(schedule=name, n_microbatches=4)
    ours = ps.merge(labs.launch(ps.pipeline_step, p, args=(run,), timeout=LAUNCH_TIMEOUT))
    theirs = ps.merge(labs.launch(ps.torch_pipeline_step, p, args=(run,), timeout=LAUNCH_TIMEOUT))
    ps.compare(theirs, reference)
    ps.compare(ours, theirs)


def test_the_weights_after_adamw_steps_still_catch_a_step_too_many_or_another_lr(reference):
    """compare() allows the weights ps.ADAMW_SLACK of lr x steps (rounding where a gradient is
    near zero moves Adam's update): a step too many, or one with another lr, is still refused."""
    for other in (dataclasses.replace(ps.PipelineRun(), steps=2),
                  dataclasses.replace(ps.PipelineRun(), lr=2e-3)):
        got = ps.reference_step(other)
        got = {**got, "loss": reference["loss"], "grads": reference["grads"]}
        with pytest.raises(AssertionError, match="transformer"):
            ps.compare(got, reference)
    ps.compare(ps.reference_step(ps.PipelineRun()), reference)


def test_a_deadlocking_schedule_is_refused_on_the_ranks_not_hung():
    good = pp.build_schedule("gpipe", 2, 1)
    r0 = [Action("F", 0, 0), Action("RECV_B", 0, 0, 1), Action("SEND_F", 0, 0, 1), Action("B", 0, 0)]
    run = ps.PipelineRun(schedule=(tuple(r0), tuple(good[1])), n_microbatches=1, batch_size=2)
    with pytest.raises(labs.RankError, match="DeadlockError"):
        labs.launch(ps.pipeline_step, 2, args=(run,), timeout=LAUNCH_TIMEOUT)


def test_fixed_time_bubble_matches_the_formula_for_m_at_least_p(monkeypatch):
    # Timing, not numerics: the default share of the cores, whatever LABS_THREADS_PER_RANK the
    # run sets. With more threads than cores (4 ranks x 2 threads on 2 cores) the real compute
    # of an action takes longer than its stated 10 ms, and fixed-time mode cannot hold.
    # Slots of 40/80 ms leave a wide margin over the few ms an action of this tiny model takes,
    # so that a busy machine does not make actions overrun their slots (which would skew it).
    monkeypatch.delenv("LABS_THREADS_PER_RANK", raising=False)
    timing = pp.FixedTime(0.040, 0.080)
    for p, ms in [(2, [2, 8]), (4, [4, 8])]:
        runs = px.bubble_grid(p, ms, timing)
        per_rank = labs.launch(px.sweep, p, args=(runs,), timeout=LAUNCH_TIMEOUT)
        for i, run in enumerate(runs):
            timeline = pp.gather_timeline([r[i] for r in per_rank], pp.mode_label(timing))
            expected = pp.bubble_fraction(p, run.n_microbatches)
            for idle in timeline.idle_fraction():
                assert idle == pytest.approx(expected, rel=0.10), (p, run.n_microbatches)
