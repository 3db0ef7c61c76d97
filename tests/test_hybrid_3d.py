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

# SGD, not Adam: Adam's update has the same size whatever the gradient's, so float32 rounding
# differences in small gradients become lr-sized weight differences after a few steps; with
# SGD the weights stay within float32 tolerance of the reference, which is what is checked.
RUN = px.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=8, steps=3, optimizer="sgd",
                     lr=0.05)


@pytest.mark.parametrize("shape", [MeshShape(dp=2, pp=2, tp=2), MeshShape(dp=1, pp=4, tp=2),
                                   MeshShape(dp=2, pp=4, tp=1), MeshShape(dp=4, pp=1, tp=2)],
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


def test_global_batch_that_cannot_be_split_says_so():
    run = px.PipelineRun(n_microbatches=2, batch_size=6, steps=1)
    with pytest.raises(labs.RankError, match="multiple of 8"):
        labs.launch(check_3d, 8, args=(run, MeshShape(dp=4, pp=2, tp=1)), timeout=120)
