"""labs.hybrid.profiling: one 3D step under torch.profiler on every rank, its time split into
compute / collectives / send-recv / idle, one Chrome trace per rank, and the stacked bars.

No timing thresholds: only what must hold whatever the machine's speed (shares sum to 1, every
rank computes, pipeline ranks send and receive, tensor-parallel ranks all-reduce)."""
from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")  # figures are drawn, never shown

import pytest  # noqa: E402

import labs  # noqa: E402
from labs.hybrid.mesh import MeshShape  # noqa: E402
from labs.hybrid.profiling import (CATEGORIES, STEP_ANNOTATION, breakdown_of_trace,  # noqa: E402
                                   comm_kind, plot_breakdown, profile_hybrid_step,
                                   profile_timeline)
from labs.pipeline import step as px  # noqa: E402

pytestmark = pytest.mark.numerics

RUN = px.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=8, optimizer="sgd", lr=0.05)


def _x(name, ts, dur, tid=1, cat="cpu_op"):
    return dict(ph="X", name=name, ts=ts, dur=dur, tid=tid, cat=cat)


def test_classification_of_hand_made_spans():
    """Microseconds: window 10..100 (after the opening barrier); see the module docstring's
    priorities: collectives > compute on the calling thread > send/recv > idle."""
    events = [
        _x(STEP_ANNOTATION, 0, 100, cat="user_annotation"),
        _x("aten::empty", 1, 8),                                    # before the window
        _x("c10d::barrier", 0, 1),
        _x("gloo:barrier", 0, 10, tid=2, cat="user_annotation"),    # window starts at its end
        _x("aten::mm", 10, 30),                                     # compute 10..40
        _x("ReduceFromTensorParallelRegion", 40, 20),               # a TP region 40..60 ...
        _x("c10d::allreduce_", 41, 1),                              # ... enqueues 41..42
        _x("gloo:all_reduce", 42, 16, tid=3, cat="user_annotation"),  # ... waits 42..58
        _x("gloo:send", 55, 35, cat="user_annotation"),             # async isend 55..90
        _x("aten::addmm", 60, 10),                                  # compute 60..70
        _x("gloo:recv", 75, 10, cat="user_annotation"),             # blocked 75..85
        _x("aten::copy_", 90, 5, tid=3),                            # a gloo worker's op
    ]
    got = breakdown_of_trace(events)
    assert got["wall_s"] == pytest.approx(90e-6)
    expected = {"all-reduce": 17e-6, "compute": 43e-6, "send-recv": 20e-6, "idle": 10e-6}
    for category in CATEGORIES:
        assert got["seconds"][category] == pytest.approx(expected[category]), category
    assert sum(got["shares"].values()) == pytest.approx(1.0)
    assert got["counts"] == {"c10d::allreduce_": 1, "gloo:all_reduce": 1, "gloo:send": 1,
                             "gloo:recv": 1}
    # exclusive pieces, in time order (microseconds)
    assert [kind for kind, _, _ in got["pieces"]] == ["compute", "all-reduce", "compute",
                                                       "send-recv"]
    assert [t * 1e6 for _, start, end in got["pieces"] for t in (start, end)] == pytest.approx(
        [10, 41, 41, 58, 58, 70, 70, 90])
    us = 1e-6
    timeline = profile_timeline([got, got])
    assert timeline.n_ranks == 2 and timeline.span() == pytest.approx((0.0, 80 * us))
    assert timeline.idle_fraction() == pytest.approx([1 - 43 / 80] * 2)
    with pytest.raises(ValueError, match="record_function"):
        breakdown_of_trace(events[1:])


@pytest.mark.parametrize("name, kind", [
    ("gloo:all_reduce", "all-reduce"), ("c10d::_reduce_scatter_base_", "all-reduce"),
    ("gloo:barrier", "all-reduce"), ("c10d::send", "send-recv"), ("gloo:recv", "send-recv"),
    ("aten::mm", None), ("ReduceFromTensorParallelRegion", None)])
def test_comm_kind_names(name, kind):
    assert comm_kind(name) == kind


@pytest.mark.slow  # the profiler over 4 ranks (make test only, issue 27)
def test_profiled_3d_step_on_four_ranks(tmp_path):
    shape = MeshShape(dp=1, pp=2, tp=2)
    per_rank = labs.launch(profile_hybrid_step, shape.world_size,
                           args=(RUN, shape, str(tmp_path)), timeout=300)
    assert [b["rank"] for b in per_rank] == list(range(shape.world_size))
    for b in per_rank:
        assert b["coords"] == tuple(shape.coords(b["rank"]))
        assert b["wall_s"] > 0
        assert set(b["shares"]) == set(CATEGORIES)
        assert sum(b["shares"].values()) == pytest.approx(1.0)
        assert all(s >= 0 for s in b["seconds"].values())
        assert b["seconds"]["compute"] > 0
        assert b["seconds"]["send-recv"] > 0  # pp = 2: activations and gradients move
        assert b["seconds"]["all-reduce"] > 0  # tp = 2: an all-reduce per TP region
        # both stages send and receive once per micro-batch (1F1B, 2 micro-batches)
        assert b["counts"]["c10d::send"] == b["counts"]["c10d::recv_"] == RUN.n_microbatches
        assert b["counts"]["gloo:all_reduce"] > 0
        path = tmp_path / f"rank{b['rank']}.json"
        assert b["trace"] == str(path)
        trace = json.loads(path.read_text())  # Chrome/Perfetto trace format
        names = {e.get("name") for e in trace["traceEvents"]}
        assert {STEP_ANNOTATION, "gloo:all_reduce", "gloo:recv"} <= names
    fig = plot_breakdown(per_rank, shares=True)
    (ax, *_) = fig.axes
    assert len(ax.patches) == len(CATEGORIES) * shape.world_size
    tops = {}
    for bar in ax.patches:
        x = round(bar.get_x() + bar.get_width() / 2)
        tops[x] = max(tops.get(x, 0.0), bar.get_y() + bar.get_height())
    assert list(tops.values()) == pytest.approx([1.0] * shape.world_size)
    timeline = profile_timeline(per_rank)  # one shared clock on this machine
    assert timeline.n_ranks == shape.world_size
    for b, row in zip(per_rank, timeline.events):
        assert {e.kind for e in row} == {"compute", "all-reduce", "send-recv"}
        busy = b["wall_s"] - b["seconds"]["idle"]
        assert sum(e.end - e.start for e in row) == pytest.approx(busy)
