"""2.4's exercises 5 and 6: the mechanism's invariants on traces built by hand (no ranks).

An all-reduce is judged by its group's members and its pass -- forward (g: TP), backward (f:
TP; a gradient hook: DP), after the backward pass (the gradient average: DP) -- never by its
tensor's shape (issue 37: a correct answer whose activation and gradient shard had the same
shape was told "the TP and DP groups are swapped", about one secret in eight). Then the
FLOPs of a rank's products, no whole weight, the bytes each group and each stage boundary
carries, and the stages' partners.
"""
from __future__ import annotations

import pytest

from labs.exercises.checks import ExerciseFailed
from labs.exercises.hybrid_step_checks import STEP, Case, share
from labs.exercises.invariants import hold
from labs.exercises.three_d_checks import STEP_3D
from labs.exercises.trace import Comm, Product, Trace
from tests.support.messages import found_in


def _case(dp, tp, sizes, batch, pp=1) -> Case:
    return Case("test", dp, tp, sizes, batch, seed=0, pp=pp)


def _traces(c: Case, *, dp_pass="after", swap=False, extra=(), p2p=None) -> list[Trace]:
    """What every rank of a right step does: its products (FLOPs of its share, shards only), g
    in its TP group, then its gradient shards all-reduced in its DP group (in ``dp_pass``);
    ``swap``: the two groups exchanged; ``extra``: more (kind, rank, item) to add."""
    traces = []
    for rank in range(c.world_size):
        d, s, t = c.mesh.coords(rank)
        tp_g, dp_g = tuple(c.mesh.peers(rank, "tp")), tuple(c.mesh.peers(rank, "dp"))
        if swap:
            tp_g, dp_g = dp_g, tp_g
        d_in, hidden, d_out = c.sizes
        rows, shard = c.rows, hidden // c.tp
        out = Trace(rank=rank)
        out.products.append(Product(1, "mm", ((rows, c.d_in(s)), (c.d_in(s), shard)),
                                    int(share(c, rank)), False))
        out.comms.append(Comm(2, "all_reduce", tp_g, None, rows * d_out * 4, (rows, d_out),
                              "sum", False, True))
        out.products.append(Product(3, "mm", ((d_out, rows), (rows, shard)), 0, True))
        for k, shape in enumerate(((shard, c.d_in(s)), (d_out, shard))):
            out.comms.append(Comm(4 + k, "all_reduce", dp_g, None, shape[0] * shape[1] * 4,
                                  shape, "sum", dp_pass == "backward", True))
        if dp_pass == "backward":  # a gradient hook's all-reduce, then the last product
            out.products.append(Product(6, "mm", ((rows, shard), (shard, d_out)), 0, True))
        for kind, where, item in extra:
            if where == rank:
                getattr(out, kind).append(item)
        if p2p:
            p2p(c, rank, out)
        traces.append(out)
    return traces


# dp = 1, tp = 3, sizes (2, 9, 2), batch 3: the activation (3, 2) and the w1 shard (3, 2)
COINCIDING = _case(1, 3, (2, 9, 2), 3)
# dp = tp = 2, sizes (4, 6, 3), batch 6: the activation (3, 3) and the w2 shard (3, 3)
BOTH = _case(2, 2, (4, 6, 3), 6)


@pytest.mark.parametrize("c", [COINCIDING, BOTH], ids=["dp1-tp3", "dp2-tp2"])
def test_same_shapes_are_judged_by_group_and_pass(c):
    hold(STEP, c, _traces(c))
    hold(STEP, c, _traces(c, dp_pass="backward"))  # averaged by a gradient hook: DP too


def test_swapped_groups_are_named_swapped():
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, _traces(BOTH, swap=True))
    fields = found_in(info.value, "checks_2_4.group_of_pass", rank=0, role="TP", want=[0, 1])
    assert fields["note"], info.value  # "the TP and DP groups are swapped"


def test_a_gradient_average_over_the_tp_group_after_backward_is_refused():
    wrong = Comm(9, "all_reduce", (0, 1), None, 36, (3, 3), "sum", False, True)
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, _traces(BOTH, extra=[("comms", 0, wrong)]))
    found_in(info.value, "checks_2_4.group_of_pass", rank=0, role="DP", want=[0, 2])


def test_a_whole_weight_and_extra_flops_are_refused():
    whole = Product(3, "mm", ((3, 6), (6, 3)), 0, True)  # w2 (3, 6): D_out × H
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, _traces(BOTH, extra=[("products", 1, whole)]))
    found_in(info.value, "invariants.sharded", rank=1, shape=(3, 6))
    more = Product(9, "mm", ((3, 4), (4, 3)), int(share(BOTH, 3) / 3), False)
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, _traces(BOTH, extra=[("products", 3, more)]))
    found_in(info.value, "invariants.flops", rank=3)


def test_the_bytes_of_g_and_of_the_dp_average_are_counted_per_group():
    twice = Comm(2, "all_reduce", (2, 3), None, 3 * 3 * 4, (3, 3), "sum", False, True)
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, _traces(BOTH, extra=[("comms", 2, twice)]))  # g twice: 72 B, not 36
    found_in(info.value, "checks_2_4.tp_bytes", rank=2, got=72, want=36, group=[2, 3])


STAGES = _case(2, 2, (4, 6, 4), 8, pp=2)


def _pipeline(peer_of=lambda c, rank: rank + c.tp if c.stage(rank) == 0 else rank - c.tp,
              size=lambda c: c.rows * c.sizes[2] * 4):
    def add(c, rank, t):
        peer = peer_of(c, rank)
        t.comms += [Comm(10, "send", (), peer, size(c), (), None, False, True),
                    Comm(11, "recv", (), peer, size(c), (), None, False, True)]
    return add


def test_stage_boundaries_go_to_the_partner_with_the_activations_bytes():
    hold(STEP_3D, STAGES, _traces(STAGES, p2p=_pipeline()))
    with pytest.raises(ExerciseFailed) as info:  # to the TP neighbour
        hold(STEP_3D, STAGES, _traces(STAGES, p2p=_pipeline(lambda c, rank: rank ^ 1)))
    found_in(info.value, "invariants.peers", rank=0)
    with pytest.raises(ExerciseFailed) as info:  # a token instead of the activations
        hold(STEP_3D, STAGES, _traces(STAGES, p2p=_pipeline(size=lambda c: 4)))
    found_in(info.value, "checks_2_4.p2p_bytes", rank=0, got=4, want=64, op="send")


def _regroup(traces, rank, seqs, group):
    """``traces`` with the all-reduces ``seqs`` of ``rank`` moved to ``group``."""
    import dataclasses
    t = traces[rank]
    t.comms = [dataclasses.replace(c, group=tuple(group)) if c.seq in seqs else c for c in t.comms]
    return traces


def test_one_all_reduce_in_the_other_group_is_not_called_a_swap():
    """Issue 39: "the TP and DP groups are swapped" only when the rank swapped them (its forward
    all-reduces over its DP group and its gradient average over its TP group), not for one
    all-reduce in the wrong group."""
    average_over_tp = _regroup(_traces(BOTH), 0, (4, 5), BOTH.mesh.peers(0, "tp"))  # g is right
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, average_over_tp)
    fields = found_in(info.value, "checks_2_4.group_of_pass", rank=0, role="DP", want=[0, 2],
                      note="")
    assert fields is not None
    g_over_dp = _regroup(_traces(BOTH), 0, (2,), BOTH.mesh.peers(0, "dp"))  # the average is right
    with pytest.raises(ExerciseFailed) as info:
        hold(STEP, BOTH, g_over_dp)
    found_in(info.value, "checks_2_4.group_of_pass", rank=0, role="TP", want=[0, 1], note="")
