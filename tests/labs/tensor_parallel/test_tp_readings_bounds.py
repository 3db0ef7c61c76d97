"""2.2's readings refuse impossible measurements (issue 31): a speedup above what overlap can
hide, busy shares above 100 % or below 0, a rank starting before the rank it waits for has
finished. Each says the measurement is noise and what to rerun, and concludes nothing. The rank
bodies time from one origin shared by every rank, so the hand-offs come out in causal order,
and the overlap experiment returns the events of the repeat whose time it returns."""
from __future__ import annotations

import pytest

import labs
from labs.models import TinyGPTConfig
from labs.tensor_parallel import experiments as tpx
from labs.tensor_parallel import readings
from labs.messages import joined, text
from labs.notebook.timeline import REAL_COMPUTE, Timeline
from tests.support.messages import pattern, said

pytestmark = pytest.mark.numerics

TIMEOUT = 120


def test_the_readings_are_served_by_experiments_too():
    assert tpx.interpret_overlap is readings.interpret_overlap
    assert tpx.interpret_layerwise is readings.interpret_layerwise


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_overlap_above_its_bound_is_noise(lang, monkeypatch):
    # issue 31's trial: 104 -> 57 ms while overlap can hide at most min(30, 20) = 20 ms
    monkeypatch.setenv("LABS_LANG", lang)
    reading = tpx.interpret_overlap(0.104, 0.057, ranks=2, cores=2, comm_s=0.030,
                                    weight_grad_s=0.020)
    speedup, best = 0.104 / 0.057, 0.104 / 0.084  # 1.82x measured, 1.24x at most
    assert reading.splitlines() == [
        text("tensor_parallel_readings.overlap_times_bound", no_ms=104, yes_ms=57, speedup=speedup,
             comm_ms=30, wgrad_ms=20, best=best),
        text("tensor_parallel_readings.overlap_above_bound", speedup=speedup, best=best,
             saved_ms=47, hidden_ms=20)]  # noise: rerun, no conclusion


def test_overlap_negative_or_zero_time_is_an_error():
    assert tpx.interpret_overlap(0.1, 0.0, ranks=2, cores=2) == text(
        "tensor_parallel_readings.overlap_impossible_time", no_ms=100, yes_ms=0)


def test_overlap_within_its_bound_still_concludes():
    reading = tpx.interpret_overlap(0.100, 0.085, ranks=2, cores=2, comm_s=0.030,
                                    weight_grad_s=0.020)
    assert reading.splitlines()[1] == text("tensor_parallel_readings.overlap_gain", saved=0.15)


@pytest.mark.parametrize("busy", [[0.5, 0.5, 0.5, 0.5], [0.3, -0.05, 0.2, 0.2], [1.2, 0, 0, 0]])
def test_layerwise_shares_out_of_bounds_are_refused(busy):
    head, conclusion = tpx.interpret_layerwise(busy).splitlines()
    said(head, "tensor_parallel_readings.layerwise_head", n=4, total=sum(busy))
    assert conclusion == text("tensor_parallel_readings.layerwise_overlapping")  # rerun


def test_layerwise_out_of_order_hand_off_is_clock_skew(monkeypatch):
    spans = {"forward": [(0.0, 0.010), (0.008, 0.020), (0.021, 0.030), (0.031, 0.040)],
             "backward": [(0.080, 0.090), (0.070, 0.079), (0.060, 0.069), (0.041, 0.059)]}
    reading = tpx.interpret_layerwise([0.2, 0.2, 0.2, 0.25], spans=spans)
    assert reading.splitlines()[1] == text(  # no conclusion: clock skew, rerun
        "tensor_parallel_readings.layerwise_out_of_order_forward", later=1, earlier=0, ms=2.0)
    spans["forward"][1] = (0.011, 0.020)
    spans["backward"][2] = (0.060, 0.075)  # rank 2's backward ends after rank 1's starts
    for lang in ("zh", "en"):
        monkeypatch.setenv("LABS_LANG", lang)
        reading = tpx.interpret_layerwise([0.2, 0.2, 0.2, 0.25], spans=spans)
        assert reading.splitlines()[1] == text(
            "tensor_parallel_readings.layerwise_out_of_order_backward", later=1, earlier=2,
            ms=5.0)


def test_layerwise_uneven_shares_are_explained():
    conclusion = tpx.interpret_layerwise([0.48, 0.20, 0.16, 0.14]).splitlines()[1]
    assert conclusion == (text("tensor_parallel_readings.layerwise_serial", mean=0.245)
                          + text("tensor_parallel_readings.layerwise_uneven", low=0.14, high=0.48))


def test_layerwise_ranks_share_one_clock():
    config = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=4, n_head=2, n_embd=32)
    per_rank = labs.launch(tpx.layerwise_step, 4, args=(config, 2), timeout=TIMEOUT)
    timeline = Timeline.from_ranks([events for _, events, _, _ in per_rank], mode=REAL_COMPUTE)
    spans = tpx.layerwise_spans(timeline)
    for r in range(3):  # causal: a rank computes only after the recv of its predecessor's output
        assert spans["forward"][r + 1][0] >= spans["forward"][r][1]
        assert spans["backward"][r][0] >= spans["backward"][r + 1][1]
    conclusion = tpx.interpret_layerwise(
        [b / (timeline.span()[1] - timeline.span()[0]) for b in timeline.busy_seconds()],
        spans=spans).splitlines()[1]
    assert conclusion != text("tensor_parallel_readings.layerwise_overlapping")
    for key in ("tensor_parallel_readings.layerwise_out_of_order_forward",
                "tensor_parallel_readings.layerwise_out_of_order_backward"):
        assert not pattern(key).fullmatch(conclusion)


def test_overlap_backward_returns_the_events_of_the_printed_repeat():
    seconds, events, _ = labs.launch(tpx.overlap_backward, 2, args=(64, 32, 32),
                                     kwargs={"overlap": False, "repeats": 3}, timeout=TIMEOUT)[0]
    # the drawn events lie inside the printed repeat (times from that repeat's start); a busy
    # machine may pause the rank between events, so the drawn span can be much shorter
    assert min(e.start for e in events) >= 0
    assert max(e.end for e in events) <= seconds + 1e-6


def test_tp_scaling_names_crowded_cores_only_where_ranks_outnumber_them():
    # TP=2 and TP=4 both slower than TP=1 on 2 cores: only TP=4 has more ranks than cores
    reading = tpx.interpret_tp_scaling([1, 2, 4], [0.040, 0.030, 0.025], [0.0, 0.020, 0.050],
                                       cores=2)
    said(reading.splitlines()[3], "tensor_parallel_readings.tp_slower_than_one",
         degrees=joined(["2", "4"]),
         crowded=text("tensor_parallel_readings.crowded_some", degrees="4", ranks=4, cores=2,
                      crowded=text("tensor_parallel_readings.crowded")))
