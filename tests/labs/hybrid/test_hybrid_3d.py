"""2.4's hand-written 3D parallelism on 8 real ranks: TP blocks inside pipeline stages run by
the course's 1F1B executor, one pipeline per DP replica, equal to one process on the global
batch (loss, every gradient and weight shard) for 3 steps, at several mesh shapes."""
from __future__ import annotations

import pytest

import labs
from labs.hybrid.mesh import MeshShape
from labs.hybrid.three_d import check_3d
from labs.models import TinyGPT
from labs.pipeline import experiments as px
from labs.pipeline import step as ps
from tests.support.messages import pattern

pytestmark = pytest.mark.numerics

# SGD, not Adam: Adam's update has the same size whatever the gradient's, so float32 rounding
# differences in small gradients become lr-sized weight differences after a few steps; with
# SGD the weights stay within float32 tolerance of the reference, which is what is checked.
RUN = ps.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=8, steps=3, optimizer="sgd",
                     lr=0.05)


# make check keeps the full 3D mesh and one more; the other two: make test only (issue 27)
@pytest.mark.parametrize("shape", [
    MeshShape(dp=2, pp=2, tp=2), MeshShape(dp=1, pp=4, tp=2),
    pytest.param(MeshShape(dp=2, pp=4, tp=1), marks=pytest.mark.slow),
    pytest.param(MeshShape(dp=4, pp=1, tp=2), marks=pytest.mark.slow)],
                         ids=lambda s: f"dp{s.dp}-pp{s.pp}-tp{s.tp}")
def test_3d_training_equals_one_process(shape):
    per_rank = labs.launch(check_3d, shape.world_size, args=(RUN, shape), timeout=240)
    assert [r["coords"] for r in per_rank] == [tuple(shape.coords(r)) for r in range(8)]
    losses = [r["loss"] for r in per_rank if r["loss"] is not None]
    assert len(losses) == shape.dp * shape.tp  # the last stage of every replica and TP rank
    all_names = {n for n, _ in TinyGPT(RUN.config).named_parameters()}
    for d in range(shape.dp):  # each replica's stages hold every parameter between them
        for t in range(shape.tp):
            held = [set(per_rank[shape.rank(dp=d, pp=p, tp=t)]["names"]) for p in range(shape.pp)]
            assert set().union(*held) == all_names
            assert sum(map(len, held)) == len(all_names)  # no parameter on two stages


@pytest.fixture
def english(monkeypatch):
    """Messages in English (the words these tests match); the launched ranks inherit it."""
    monkeypatch.setenv("LABS_LANG", "en")


def test_global_batch_that_cannot_be_split_says_so(english):
    run = ps.PipelineRun(n_microbatches=2, batch_size=6, steps=1)
    with pytest.raises(labs.RankError, match=pattern("pipeline.dp_split", batch_size=6, dp=4, m=2, multiple=8)):
        labs.launch(check_3d, 8, args=(run, MeshShape(dp=4, pp=2, tp=1)), timeout=120)


# --- sequence parallelism inside the stages -------------------------------------------------

def test_3d_with_sequence_parallel_blocks_equals_one_process():
    """TP blocks with sequence parallelism inside the stages, stages exchanging sequence
    shards (b, T/tp, C): still equal to one process on the global batch, for 3 steps."""
    shape = MeshShape(dp=2, pp=2, tp=2)
    run = px.with_(RUN, sequence_parallel=True)
    per_rank = labs.launch(check_3d, shape.world_size, args=(run, shape), timeout=240)
    assert [r["coords"] for r in per_rank] == [tuple(shape.coords(r)) for r in range(8)]
    assert len([r for r in per_rank if r["loss"] is not None]) == shape.dp * shape.tp


def _activation_shapes(run, shape):
    from labs.hybrid.mesh import new_groups

    groups = new_groups(shape)
    return ps.activation_shape(run, shape.dp, groups["tp"])


def test_sequence_parallel_stages_send_the_sequence_shard():
    shape = MeshShape(dp=1, pp=2, tp=2)
    b, T, C = RUN.batch_size // RUN.n_microbatches, RUN.config.block_size, RUN.config.n_embd
    plain, sharded = (labs.launch(_activation_shapes, 4, args=(px.with_(RUN, sequence_parallel=sp),
                                                               shape), timeout=120)
                      for sp in (False, True))
    assert plain == [(b, T, C)] * 4
    assert sharded == [(b, T // 2, C)] * 4


def test_sequence_parallel_needs_tp_to_divide_the_sequence(english):
    from dataclasses import replace

    from labs.hybrid.three_d import check_sequence_parallel

    run = px.with_(RUN, sequence_parallel=True, config=replace(RUN.config, block_size=15))
    with pytest.raises(ValueError, match=pattern("tensor_parallel.sequence_not_divisible",
                                                 tp=2, seq_len=15)):
        check_sequence_parallel(run, MeshShape(dp=1, pp=2, tp=2))
    check_sequence_parallel(run, MeshShape(dp=2, pp=2, tp=1))  # tp=1: nothing to split
    check_sequence_parallel(px.with_(run, sequence_parallel=False), MeshShape(1, 2, 2))
    with pytest.raises(labs.RankError, match=pattern("tensor_parallel.sequence_not_divisible",
                                                     tp=2, seq_len=15)):
        labs.launch(check_3d, 4, args=(run, MeshShape(dp=1, pp=2, tp=2)), timeout=120)
