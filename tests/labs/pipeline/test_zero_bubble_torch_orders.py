"""Our ZB-H1 and ZB-V orders are torch's (issue 28): torch.distributed.pipelining's
ScheduleInterleavedZeroBubble (one stage per rank: ZB1P) and ScheduleZBVZeroBubble compute
their per-rank orders in a method that needs no process group; we call it on a bare instance
and compare it, action for action, with labs.pipeline.schedules'. The same schedules run on
real ranks against torch's runtime in test_zero_bubble_ranks.py.
"""
from __future__ import annotations

import pytest
from torch.distributed.pipelining import schedules as torch_schedules

from labs.pipeline.schedules import compute_order, zb_h1_order, zb_v_order

KIND = {torch_schedules.FORWARD: "F", torch_schedules.BACKWARD_INPUT: "B",
        torch_schedules.BACKWARD_WEIGHT: "W"}


def _torch_order(cls, p: int, m: int, rank: int, **attrs) -> list[str]:
    schedule = object.__new__(cls)  # no stages, no group: only what the order needs
    schedule.pp_group_size, schedule._n_microbatches = p, m
    for name, value in attrs.items():
        setattr(schedule, name, value)
    ops = [a for a in schedule._calculate_single_rank_operations(rank) if a is not None]
    return [(KIND[a.computation_type], a.microbatch_index, a.stage_index) for a in ops]


def _ours(order) -> list[tuple]:
    return [(a.kind, a.mb, a.stage) for a in order]


@pytest.mark.parametrize("p, m", [(2, 1), (2, 2), (2, 3), (2, 4), (2, 8), (4, 1), (4, 2),
                                  (4, 3), (4, 4), (4, 8), (4, 12), (3, 6)])
def test_zb_h1_is_torchs_interleaved_zero_bubble_with_one_stage_per_rank(p, m):
    rounds = max(1, m // p)
    if m % rounds:
        pytest.fail(f"torch refuses m={m} with p={p}: pick another case")
    for rank in range(p):
        theirs = _torch_order(torch_schedules.ScheduleInterleavedZeroBubble, p, m, rank,
                              n_local_stages=1, microbatches_per_round=m // rounds)
        assert _ours(zb_h1_order(p, m, rank)) == theirs, compute_order(zb_h1_order(p, m, rank))


@pytest.mark.parametrize("p, m", [(2, 1), (2, 3), (2, 4), (2, 8), (3, 5), (4, 1), (4, 2),
                                  (4, 7), (4, 8), (4, 16)])
def test_zb_v_is_torchs_zbv_zero_bubble(p, m):
    for rank in range(p):
        theirs = _torch_order(torch_schedules.ScheduleZBVZeroBubble, p, m, rank,
                              num_stages=2 * p)
        assert _ours(zb_v_order(p, m, rank)) == theirs
