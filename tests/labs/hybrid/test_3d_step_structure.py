"""Notebook 2.4's exercise 6: the structure rules of its check, on recorded traffic (no ranks).

labs.exercises.three_d_checks judges what each rank recorded: sends and receives only with the
rank of the other stage with the same DP replica and TP index, both ways; rows of x in a matrix
product only on stage 0; each all-reduce in the group its tensor's role asks for.
"""
from __future__ import annotations

import pytest

from labs.exercises.checks import ExerciseFailed
from labs.exercises.three_d_checks import _check_groups, _check_structure
from labs.hybrid.mesh import MeshShape
from tests.support.messages import found_in

SHAPE = MeshShape(dp=2, pp=2, tp=2)  # replica 0: stage 0 = ranks 0, 1; stage 1 = ranks 2, 3
BATCH = 8


def _correct() -> list[dict]:
    """What every rank of a correct step records: its partner rank ± tp, both ways."""
    results = []
    for rank in range(SHAPE.world_size):
        d, s, t = SHAPE.coords(rank)
        partner = SHAPE.rank(dp=d, pp=1 - s, tp=t)
        rows = list(range(d * 4, d * 4 + 4)) if s == 0 else []
        results.append(dict(sent=[(partner, 64)], received=[(partner, 64)], rows=rows,
                            reduced=[]))
    return results


def test_the_correct_traffic_passes():
    _check_structure(SHAPE, BATCH, _correct())


def test_a_send_to_the_tp_neighbour_is_named_with_the_partner():
    results = _correct()
    results[0]["sent"] = [(1, 64)]
    with pytest.raises(ExerciseFailed) as info:
        _check_structure(SHAPE, BATCH, results)
    found_in(info.value, "checks_2_4.step3d_sent_wrong_peer", rank=0, peer=1, partner=2, s=0)


def test_a_receive_from_another_replica_is_named():
    results = _correct()
    results[6]["received"] = [(0, 64)]
    with pytest.raises(ExerciseFailed) as info:
        _check_structure(SHAPE, BATCH, results)
    found_in(info.value, "checks_2_4.step3d_received_wrong_peer", rank=6, peer=0, partner=4,
             s=1)


def test_no_gradient_sent_back_is_named():
    results = _correct()
    results[3]["sent"] = []
    with pytest.raises(ExerciseFailed) as info:
        _check_structure(SHAPE, BATCH, results)
    found_in(info.value, "checks_2_4.step3d_no_sent", rank=3, s=1, partner=1)


def test_stage_1_with_rows_of_x_is_named():
    results = _correct()
    results[7]["rows"] = [4]
    with pytest.raises(ExerciseFailed) as info:
        _check_structure(SHAPE, BATCH, results)
    found_in(info.value, "checks_2_4.step3d_stage_computes_x", rank=7, s=1)


def test_all_reduces_in_their_groups_pass_and_a_swapped_one_is_named():
    results = _correct()
    d, hidden = 4, 6  # gradient shards (3, 4) and (4, 3); activations (4, 4)
    for rank, result in enumerate(results):
        tp_members = [rank - rank % 2, rank - rank % 2 + 1]
        dp_members = sorted({rank % 4, rank % 4 + 4})
        result["reduced"] = [((4, 4), tp_members), ((3, 4), dp_members), ((4, 3), dp_members)]
    _check_groups(SHAPE, d, hidden, BATCH, results)
    results[5]["reduced"].append(((3, 4), [4, 5]))  # a gradient averaged in the TP group
    with pytest.raises(ExerciseFailed) as info:
        _check_groups(SHAPE, d, hidden, BATCH, results)
    found_in(info.value, "checks_2_4.group_membership_wrong", rank=5, role="DP", got=[4, 5],
             want=[1, 5], tp=2)
