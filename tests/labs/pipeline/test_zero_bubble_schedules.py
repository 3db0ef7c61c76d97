"""Zero-bubble pipelines as data (issue 28): the W action, the ZB-H1 and ZB-V orders, the V
placement, their validation, their simulated bubbles against labs.formulas.cost's formulas and their
in-flight bounds. On paper only: no ranks,
no torch (the real-rank runs are test_zero_bubble_ranks.py's).
"""
from __future__ import annotations

import pytest

from labs.formulas import cost
from labs import pipeline as pp
from labs.pipeline.schedules import (LOOP, V_SHAPE, Action, compute_order, in_flight_bound,
                                     placement_of, stage_rank, zb_h1_order, zb_v_order)
from tests.support.messages import said

CASES = [(p, m) for p in (2, 3, 4, 6) for m in (1, 2, 3, 4, 5, 8, 16)]


@pytest.mark.parametrize("p, m", CASES)
def test_zb_h1_is_1f1b_with_each_backward_split_and_w_deferred(p, m):
    for s in range(p):
        order = zb_h1_order(p, m, s)
        f_and_b = [a for a in order if a.kind != "W"]
        assert f_and_b == pp.one_f_one_b_order(p, m, s)  # F and B exactly where 1F1B has them
        ws = [a.mb for a in order if a.kind == "W"]
        assert ws == list(range(m))  # every W once, oldest first
        for a in order:  # every W after its own B
            if a.kind == "W":
                assert order.index(Action("B", a.mb, s)) < order.index(a)
        # stage s leaves s W for later: its first W (W0) comes after B0 .. Bs
        first_w = next(i for i, a in enumerate(order) if a.kind == "W")
        assert sum(a.kind == "B" for a in order[:first_w]) == min(s + 1, m)


def test_zb_h1_order_of_four_stages():
    assert compute_order(zb_h1_order(4, 6, 3)) == [
        "F0", "B0", "F1", "B1", "F2", "B2", "F3", "B3", "W0", "F4", "B4", "W1", "F5", "B5",
        "W2", "W3", "W4", "W5"]
    assert compute_order(zb_h1_order(4, 6, 0)) == [
        "F0", "F1", "F2", "F3", "B0", "W0", "F4", "B1", "W1", "F5", "B2", "W2", "B3", "W3",
        "B4", "W4", "B5", "W5"]


@pytest.mark.parametrize("p, m", CASES)
def test_simulated_zb_h1_bubble_equals_the_formula(p, m):
    for t_f, t_b, t_w in [(1, 1, 1), (1, 2, 1), (2, 1, 1), (1, 1, 0.5), (2, 2, 1.5)]:
        schedule = pp.build_schedule("zb-h1", p, m)
        timeline = pp.simulate(schedule, forward_s=t_f, backward_s=t_b, weight_s=t_w)
        idle = timeline.span()[1] - m * (t_f + t_b + t_w)
        assert idle == pytest.approx(cost.zb_h1_bubble_seconds(p, m, t_f, t_b, t_w))
        for share in timeline.idle_fraction():  # every rank idles the same
            assert share == pytest.approx(cost.zb_h1_bubble_fraction(p, m, t_f, t_b, t_w))
        one_f_one_b = pp.simulate(pp.build_schedule("1f1b", p, m), forward_s=t_f,
                                  backward_s=t_b + t_w)  # the same work, backward unsplit
        assert max(timeline.idle_fraction()) <= max(one_f_one_b.idle_fraction()) + 1e-12
        if m >= 2 and p >= 2:
            assert timeline.span()[1] < one_f_one_b.span()[1]  # W fills 1F1B's bubble


def test_zb_h1_bubble_is_a_third_of_1f1b_when_t_f_t_b_t_w_are_equal():
    p = 4
    assert cost.zb_h1_bubble_seconds(p, 8) == (p - 1) * 1  # (p-1)(t_F + t_B - t_W)
    # 1F1B idles (p-1)(t_F + t_B + t_W) = 3(p-1): three times as long
    one_f_one_b = pp.simulate(pp.build_schedule("1f1b", p, 8), forward_s=1, backward_s=2)
    assert one_f_one_b.span()[1] - 8 * 3 == 3 * cost.zb_h1_bubble_seconds(p, 8)
    assert cost.zb_h1_bubble_fraction(p, 8) == pytest.approx((p - 1) / (3 * 8 + p - 1))


@pytest.mark.parametrize("p, m", CASES)
@pytest.mark.parametrize("name", ["gpipe", "1f1b", "zb-h1", "zb-v"])
def test_simulated_peak_in_flight_equals_the_bound(name, p, m):
    timeline = pp.simulate(pp.build_schedule(name, p, m), forward_s=1, backward_s=1, weight_s=1)
    assert timeline.peak_in_flight() == [in_flight_bound(name, p, m, r) for r in range(p)]
    if name == "zb-h1":  # 1F1B's peak (its first stage's), on every stage
        assert timeline.peak_in_flight() == [in_flight_bound("1f1b", p, m, 0)] * p


def test_w_needs_no_message_and_adds_none():
    schedule = pp.build_schedule("zb-h1", 3, 4)
    plain = pp.build_schedule("1f1b", 3, 4)
    for rank in range(3):
        assert [a for a in schedule[rank] if a.kind != "W"] == plain[rank]


def test_w_before_its_b_and_a_missing_w_are_refused(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(pp.ScheduleError) as info:
        pp.simulate([[Action("F", 0, 0), Action("W", 0, 0), Action("B", 0, 0)]])
    said(info.value, "pipeline.weight_before_input", r=0, action="W0", stage=0)
    schedule = pp.build_schedule("zb-h1", 2, 2)
    schedule[1] = [a for a in schedule[1] if (a.kind, a.mb) != ("W", 1)]
    with pytest.raises(pp.ScheduleError) as info:
        pp.simulate(schedule)
    missing = said(info.value, "pipeline.never_runs")["missing"]
    said(missing, "pipeline.action_of_stage", action="W1", stage=1)
    with pytest.raises(ValueError) as info:
        in_flight_bound("interleaved", 2, 2, 0)
    said(info.value, "pipeline.unknown_schedule", name="interleaved", start=True)


def test_the_v_placement():
    assert [stage_rank(s, 4, V_SHAPE) for s in range(8)] == [0, 1, 2, 3, 3, 2, 1, 0]
    assert [stage_rank(s, 4, LOOP) for s in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert placement_of(pp.build_schedule("zb-v", 4, 8)) == V_SHAPE
    assert placement_of(pp.build_schedule("interleaved", 4, 8, 2)) == LOOP
    assert placement_of(pp.build_schedule("zb-h1", 4, 8)) == LOOP
    schedule = pp.build_schedule("zb-v", 4, 8)
    for rank, actions in enumerate(schedule):
        assert {a.stage for a in actions if a.kind in "FBW"} == {rank, 7 - rank}
    # the turn of the V (stages 3 -> 4) and the last stage beside the first send nothing
    assert not [a for a in schedule[3] if a.kind == "SEND_F" and a.stage == 3]
    assert [a.peer for a in schedule[0] if a.kind == "RECV_F" and a.stage == 7] == [1] * 8


@pytest.mark.parametrize("p, m", CASES)
def test_zb_v_orders_are_complete_and_w_follows_b(p, m):
    for rank in range(p):
        order = zb_v_order(p, m, rank)
        for stage in (rank, 2 * p - 1 - rank):
            for kind in "FBW":
                assert sorted(a.mb for a in order if (a.kind, a.stage) == (kind, stage)) \
                    == list(range(m))
            for i in range(m):
                assert (order.index(Action("F", i, stage)) < order.index(Action("B", i, stage))
                        < order.index(Action("W", i, stage)))


@pytest.mark.parametrize("p, m", CASES)
def test_simulated_zb_v_bubble_equals_the_formula(p, m):
    for t in (1.0, 0.5):
        timeline = pp.simulate(pp.build_schedule("zb-v", p, m), forward_s=t, backward_s=t,
                               weight_s=t)
        assert timeline.span()[1] - 6 * m * t == pytest.approx(cost.zb_v_bubble_seconds(p, m, t))
        for share in timeline.idle_fraction():
            assert share == pytest.approx(cost.zb_v_bubble_fraction(p, m))
    # once the pipeline can fill (m >= 2p - 1): only the fill, p - 1 chunk forwards, is idle --
    # half ZB-H1's (p - 1)·t_F with a stage's F = two chunks' -- and the least possible
    if m >= 2 * p - 1:
        assert cost.zb_v_bubble_seconds(p, m) == p - 1
        assert cost.zb_v_bubble_seconds(p, m) * 2 == cost.zb_h1_bubble_seconds(p, m, 2, 2, 2)


@pytest.mark.parametrize("p, m", CASES)
def test_zb_h1_step_seconds_is_the_simulated_step(p, m):
    for share in (1 / 3, 0.25, 0.1):
        t = 3.0  # one micro-batch's F + B + W on a stage
        t_w = share * t
        t_f = t_b = (t - t_w) / 2
        timeline = pp.simulate(pp.build_schedule("zb-h1", p, m), forward_s=t_f, backward_s=t_b,
                               weight_s=t_w)
        assert cost.zb_h1_step_seconds(t, m, p, share) == pytest.approx(timeline.span()[1])
    one_f_one_b = pp.simulate(pp.build_schedule("1f1b", p, m), forward_s=1, backward_s=2)
    assert cost.pipeline_step_seconds(3.0, m, p) == pytest.approx(one_f_one_b.span()[1])
