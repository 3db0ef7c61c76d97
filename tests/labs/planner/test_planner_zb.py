"""labs.planner with the ZB-H1 schedule (issue 28 item 4): its bubble, step time and memory in
flight against labs.pipeline's simulator and ZB-H1's formula, the v = 1 rule, and the search that
tries ZB-H1 only when asked.

The simulator is the reference: a schedule run on paper with fixed F, B, W times (2.3 §7)."""
from __future__ import annotations

import pytest

from labs import planner as pl
from labs.planner.model import stage_memory, zb_times
from labs.pipeline import experiments, zero_bubble as zb
from tests.support.messages import said

A100 = pl.GPUS["A100-80GB"]
SMALL = pl.Model(n_layers=24, hidden=2048, n_heads=16, seq_len=2048, vocab=51200)


def _train(m: int, recompute: str) -> pl.Training:
    return pl.Training(global_batch=m, micro_batch=1, recompute=recompute)


@pytest.mark.parametrize("recompute", ["none", "full"])
@pytest.mark.parametrize("p,m", [(2, 4), (4, 2), (4, 4), (4, 8)])
def test_bubble_and_in_flight_equal_the_simulated_schedule(p, m, recompute):
    """The planner's ZB-H1 (and 1F1B) bubble is the simulated idle share with the planner's own
    F:B:W split (1:1:1, or 1:2:1 when B recomputes the forward), and every stage's micro-batches
    in flight are the simulated peak: ZB-H1 keeps min(p, m) on every stage, 1F1B min(p - s, m)."""
    cluster, train = pl.Cluster(A100, p), _train(m, recompute)
    t_f, t_b, t_w = zb_times(recompute)
    sims = {name: experiments.simulate_run(run, p)
            for name, run in zb.zb_runs(p, m, t_f, t_b, t_w).items() if name != "zb-v"}
    for schedule in ("1f1b", "zb-h1"):
        est = pl.estimate(SMALL, cluster, train, tp=1, pp=p, dp=1, schedule=schedule)
        idle, peak = sims[schedule].idle_fraction(), sims[schedule].peak_in_flight()
        assert est.bubble == pytest.approx(idle[0], abs=1e-9)
        assert max(idle) - min(idle) < 1e-9
        for stage in range(p):
            got = stage_memory(SMALL, cluster, train, est.config, stage, pl.Efficiency())
            assert got.in_flight == peak[stage], (schedule, stage)
    if m >= p:  # ZB-H1's idle is (p-1)(t_F + t_B - t_W) against 1F1B's (p-1)(t_F + t_B + t_W)
        assert sims["zb-h1"].idle_fraction()[0] < sims["1f1b"].idle_fraction()[0]


@pytest.mark.parametrize("recompute,share", [("none", 1 / 3), ("full", 1 / 4)])
def test_step_time_by_hand(recompute, share):
    """One micro-batch takes t (from 1F1B's (m + p - 1)·t, no DP traffic with dp = 1); ZB-H1's
    step is m·t + (p-1)·(t_F + t_B - t_W) = m·t + (p-1)·(1 - 2·share)·t."""
    p, m = 4, 8
    cluster, train = pl.Cluster(A100, 8), _train(m, recompute)
    one = pl.estimate(SMALL, cluster, train, tp=2, pp=p, dp=1)
    zbh1 = pl.estimate(SMALL, cluster, train, tp=2, pp=p, dp=1, schedule="zb-h1")
    t = one.step_time_s / (m + p - 1)
    assert zbh1.step_time_s == pytest.approx(m * t + (p - 1) * (1 - 2 * share) * t, rel=1e-9)
    assert zbh1.compute_s == pytest.approx(one.compute_s, rel=1e-12)  # the same work
    idle = (p - 1) * (1 - 2 * share) * t
    assert zbh1.bubble == pytest.approx(idle / (idle + m * t), rel=1e-9)
    # memory: 1F1B's last stage holds 1 micro-batch (and the output layer), ZB-H1's holds 4
    last = {e.config.schedule: stage_memory(SMALL, cluster, train, e.config, p - 1,
                                            pl.Efficiency()) for e in (one, zbh1)}
    assert (last["1f1b"].in_flight, last["zb-h1"].in_flight) == (1, 4)
    first, second = (stage_memory(SMALL, cluster, train, one.config, st, pl.Efficiency())
                     for st in (0, 1))
    per_mb = first.activations - second.activations  # 4 - 3 in flight, neither with the head
    assert last["zb-h1"].activations - last["1f1b"].activations == pytest.approx(3 * per_mb)
    assert zbh1.memory.total > one.memory.total


def test_zb_h1_needs_one_chunk_and_a_known_name():
    cluster, train = pl.Cluster(A100, 8), _train(8, "full")
    with pytest.raises(ValueError) as caught:
        pl.estimate(SMALL, cluster, train, tp=1, pp=4, dp=2, v=2, schedule="zb-h1")
    said(str(caught.value), "planner.schedule_zb_v", v=2)
    with pytest.raises(ValueError) as caught:
        pl.estimate(SMALL, cluster, train, tp=1, pp=4, dp=2, schedule="zb-v")
    said(str(caught.value), "planner.schedule_unknown", schedule="zb-v")
    with pytest.raises(ValueError) as caught:
        pl.plan(SMALL, cluster, train, schedules=("gpipe",))
    said(str(caught.value), "planner.schedule_unknown", schedule="gpipe")


def test_config_names_the_schedule_only_when_not_1f1b():
    one = pl.Config(2, 4, 1)
    zbh1 = pl.Config(2, 4, 1, schedule="zb-h1")
    assert "zb-h1" not in str(one)
    assert str(zbh1).startswith(str(one)) and "zb-h1" in str(zbh1)


def test_search_tries_zb_h1_only_when_asked():
    """Default: 1F1B alone (2.4's searches unchanged). Asked: ZB-H1 beside it, v = 1 and pp > 1
    only, and on a pipelined family it is faster than 1F1B with the same layout."""
    cluster = pl.Cluster(A100, 8)
    train = pl.Training(global_batch=16, micro_batch=1, recompute="full")
    plain = pl.plan(SMALL, cluster, train, top=1000)
    both = pl.plan(SMALL, cluster, train, top=1000, schedules=("1f1b", "zb-h1"))
    assert {e.config.schedule for e in plain} == {"1f1b"}
    zbs = [e for e in both if e.config.schedule == "zb-h1"]
    assert zbs and all(e.config.v == 1 and e.config.pp > 1 for e in zbs)
    assert len(both) == len(plain) + len(zbs)
    by_layout = {(e.config.tp, e.config.pp, e.config.dp, e.config.micro_batch, e.config.v,
                  e.config.zero_stage, e.config.recompute): e for e in plain}
    for e in zbs:
        twin = by_layout.get((e.config.tp, e.config.pp, e.config.dp, e.config.micro_batch, 1,
                              e.config.zero_stage, e.config.recompute))
        if twin is not None:
            assert e.step_time_s < twin.step_time_s and e.bubble < twin.bubble


def test_widget_schedule_control_searches_zb_h1_and_says_so():
    """compute(): schedule "1f1b" shows only 1F1B; "zb-h1" searches both, shows the faster (a
    fixed pipelined layout with v = 1 gets ZB-H1) and a note says what ZB-H1 costs."""
    from labs.planner import widgets  # why here: the widget module is this test's alone

    values = dict(widgets.DEFAULTS, preset="custom", n_layers=24, hidden=2048, n_heads=16,
                  seq_len=2048, vocab=51200, n_gpus=8, global_batch=16, tp=2, pp=4, v=1)
    plain = widgets.compute(values)
    both = widgets.compute(dict(values, schedule="zb-h1"))
    assert plain["error"] is None and both["error"] is None
    assert (plain["config"].schedule, both["config"].schedule) == ("1f1b", "zb-h1")
    assert both["step_time_s"] < plain["step_time_s"] and both["bubble"] < plain["bubble"]
    note = [n for n in both["notes"] if "zb-h1" in n]
    assert len(note) == 1 and not [n for n in plain["notes"] if "zb-h1" in n]
    said(note[0], "widgets.note_schedule", schedule="zb-h1")
    auto = widgets.compute(dict(values, schedule="zb-h1", tp=0, pp=0, v=0))
    assert {c.schedule for c in auto["plans"]} <= {"1f1b", "zb-h1"}
    interleaved = widgets.compute(dict(values, schedule="zb-h1", v=2))
    assert interleaved["config"].schedule == "1f1b" and interleaved["config"].v == 2


def test_widget_timeline_draws_w_for_zb_h1():
    from labs.planner import view  # why here: view imports ipywidgets and matplotlib

    fig = view.timeline_figure(pl.Config(1, 4, 2, schedule="zb-h1"), 8, 0.2)
    colors = {tuple(c.get_facecolor()[0]) for c in fig.axes[0].collections}
    assert len(colors) == 3  # F, B and W, each in its own colour
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(legend) == 3
