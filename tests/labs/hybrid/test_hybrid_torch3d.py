"""Torch's own 3D parallelism (DTensor TP + FSDP2 / replicate + torch.distributed.pipelining)
on real gloo ranks: equal to one process on the global batch and to the hand-written 3D step
(labs.hybrid.three_d) for 3 steps; per-rank model-state memory of DDP vs FSDP as the DP
dimension equal to labs.formulas.memory's prediction; clear errors on bad input; the benchmark runs."""
from __future__ import annotations

import pytest
import torch

import labs
from labs.hybrid.mesh import MeshShape
from labs.hybrid.state_memory import MEMORY_CONFIG, measure_state_memory, memory_rows
from labs.hybrid.torch_3d import qkv_from_heads_layout, validate
from labs.hybrid.torch_3d_compare import check_torch_3d
from labs.models import TinyGPT
from labs.pipeline import experiments as px
from labs.pipeline import step as ps
from labs.tensor_parallel.layers import shard
from tests.support.messages import found_in, pattern, said

pytestmark = pytest.mark.numerics

# SGD, as tests/labs/hybrid/test_hybrid_3d.py: Adam turns float32 rounding in small gradients into
# lr-sized weight differences; with SGD the weights stay within float32 tolerance.
RUN = ps.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=8, steps=3, optimizer="sgd",
                     lr=0.05)


# 8 ranks on 2 cores: make test only (issue 27: make check <= 3 min keeps the 4-rank meshes)
@pytest.mark.parametrize("shape,dp_mode", [pytest.param(MeshShape(dp=2, pp=2, tp=2), "fsdp",
                                                        marks=pytest.mark.slow),
                                           (MeshShape(dp=1, pp=2, tp=2), "fsdp"),
                                           (MeshShape(dp=2, pp=1, tp=2), "ddp")],
                         ids=lambda v: f"dp{v.dp}-pp{v.pp}-tp{v.tp}" if isinstance(v, MeshShape)
                         else v)
def test_torch_3d_equals_one_process_and_hand_written(shape, dp_mode):
    per_rank = labs.launch(check_torch_3d, shape.world_size, args=(RUN, shape),
                           kwargs=dict(dp_mode=dp_mode), timeout=180)
    assert [r["coords"] for r in per_rank] == [tuple(shape.coords(r))
                                               for r in range(shape.world_size)]
    losses = [r["loss"] for r in per_rank if r["loss"] is not None]
    assert len(losses) == shape.dp * shape.tp  # the last stage of every replica and TP rank
    assert len(set(losses)) == 1  # averaged over DP, identical on the TP ranks
    assert [r["hand_loss"] for r in per_rank if r["loss"] is not None] == pytest.approx(losses)
    all_names = {n for n, _ in TinyGPT(RUN.config).named_parameters()}
    for d in range(shape.dp):  # each replica's stages hold every parameter between them
        held = [set(per_rank[shape.rank(dp=d, pp=p, tp=0)]["names"]) for p in range(shape.pp)]
        assert set().union(*held) == all_names
        assert sum(map(len, held)) == len(all_names)


def test_the_check_fails_when_the_reference_trains_differently():
    shape = MeshShape(dp=2, pp=1, tp=2)
    run = px.with_(RUN, steps=1)
    with pytest.raises(labs.RankError, match="torch 3D"):
        labs.launch(check_torch_3d, 4, args=(run, shape),
                    kwargs=dict(against_hand_written=False,
                                reference_run=px.with_(run, lr=0.07)), timeout=120)


def test_qkv_rows_go_back_to_the_full_models_order():
    w = torch.arange(12 * 3, dtype=torch.float32).reshape(12, 3)  # [q | k | v], 4 rows each
    heads_layout = torch.cat([shard(w, 0, r, 2, stride=3) for r in range(2)])
    assert not torch.equal(heads_layout, w)
    assert torch.equal(qkv_from_heads_layout(heads_layout, 2), w)
    assert torch.equal(qkv_from_heads_layout(w[:, 0], 1), w[:, 0])


def test_model_state_memory_per_rank_ddp_vs_fsdp_matches_the_prediction():
    shape = MeshShape(dp=2, pp=2, tp=2)
    run = ps.PipelineRun(n_microbatches=2, batch_size=8, config=MEMORY_CONFIG,
                         optimizer="adamw")
    per_rank = labs.launch(measure_state_memory, 8, args=(run, shape), timeout=180)
    rows = memory_rows(per_rank, shape, TinyGPT(MEMORY_CONFIG).num_params())
    assert len(rows) == 2 * 8
    for r in rows:  # exact up to the uneven FSDP shards, whose size the slack states
        assert abs(r["measured"] - r["predicted"]) <= r["slack"], r
    ddp = {r["rank"]: r for r in rows if r["mode"] == "ddp"}
    fsdp = {r["rank"]: r for r in rows if r["mode"] == "fsdp"}
    assert all(r["slack"] == 0 and r["measured"] == r["predicted"] for r in ddp.values())
    # wpe has 15 rows: FSDP gives dp rank 0 eight, dp rank 1 seven (32 floats x 16 B each)
    first = [shape.rank(dp=d, pp=0, tp=0) for d in range(2)]
    assert fsdp[first[0]]["measured"] - fsdp[first[1]]["measured"] == 32 * 16
    assert fsdp[first[0]]["slack"] == 16 * 32 / 2
    for p in range(2):  # the FSDP shards of a DP group add up to one DDP replica, exactly
        for t in range(2):
            ranks = [shape.rank(dp=d, pp=p, tp=t) for d in range(2)]
            assert sum(fsdp[k]["measured"] for k in ranks) == ddp[ranks[0]]["measured"]


@pytest.fixture
def english(monkeypatch):
    """Messages in English (the words these tests match); the launched ranks inherit it."""
    monkeypatch.setenv("LABS_LANG", "en")


@pytest.mark.parametrize("shape,world_size,match", [
    (MeshShape(2, 2, 2), 4, "choose degrees whose product is 4"),
    (MeshShape(1, 1, 4), 4, "does not divide the 2 attention heads"),
    (MeshShape(1, 9, 1), 9, "only 8 layers"),
])
def test_bad_shapes_say_what_to_change(english, shape, world_size, match):
    with pytest.raises(ValueError, match=match):
        validate(RUN, shape, world_size=world_size)


def test_bad_batches_say_what_to_change(english):
    with pytest.raises(ValueError, match=pattern("hybrid.torch3d_microbatches", pp=4)):
        validate(RUN, MeshShape(1, 4, 1), world_size=4)
    with pytest.raises(ValueError, match=pattern("hybrid.torch3d_batch", batch_size=12, dp=2, m=4, multiple=8)):
        validate(px.with_(RUN, n_microbatches=4, batch_size=12), MeshShape(2, 2, 1), world_size=4)
    with pytest.raises(ValueError, match=pattern("hybrid.torch3d_schedule", schedule="interleaved",
                                                 n_chunks=2)):
        validate(px.with_(RUN, schedule="interleaved", n_chunks=2), MeshShape(1, 2, 1))


def test_bad_shape_on_the_ranks_is_a_clear_error(english):
    with pytest.raises(labs.RankError) as info:
        labs.launch(check_torch_3d, 2, args=(RUN, MeshShape(2, 2, 2)), timeout=60)
    found_in(info.value, "hybrid.mesh_world_size", lang="en", ranks=8, world_size=2)


@pytest.mark.slow  # a benchmark run (make test only, issue 27)
def test_benchmark_quick_prints_time_and_memory(english, capsys):
    from labs.bench import hybrid

    assert hybrid.main(["--quick", "--shape", "2", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "world size 4" in out and f"torch {torch.__version__}" in out
    assert "step time: hand-written" in out and "hand/torch" in out
    assert "memory: predicted vs measured" in out and "-> within" in out
    # The planner sees only the shape (no biases, every weight split over tp): deterministic,
    # and within 15% of what the ranks hold.
    ratios = [float(line.rsplit("= ", 1)[1]) for line in out.splitlines() if "planner/measured" in line]
    assert len(ratios) == 2 and all(0.85 <= r <= 1.0 for r in ratios), ratios


def test_bad_runs_say_what_to_change_in_chinese(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.raises(ValueError) as info:
        validate(RUN, MeshShape(1, 4, 1), world_size=4)
    said(info.value, "hybrid.torch3d_microbatches", lang="zh", pp=4)  # n_microbatches >= 4
    with pytest.raises(ValueError) as info:
        validate(px.with_(RUN, n_microbatches=4, batch_size=12), MeshShape(2, 2, 1), world_size=4)
    said(info.value, "hybrid.torch3d_batch", lang="zh", batch_size=12, dp=2, m=4, multiple=8)
    with pytest.raises(ValueError) as info:
        validate(px.with_(RUN, schedule="interleaved", n_chunks=2), MeshShape(1, 2, 1))
    said(info.value, "hybrid.torch3d_schedule", lang="zh")  # only 'gpipe' or '1f1b'
