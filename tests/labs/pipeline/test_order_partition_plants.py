"""Planted wrong answers for 2.3's build exercises 2 (the 1F1B order) and 5 (the balanced
partition), each with its exact verdict (issue 30 item 1: at least two per build exercise).

A check that raises ExerciseFailed gives the exercise 0 of its points; which message it raises
is asserted by key and numbers, whatever the language."""
from __future__ import annotations

import pytest

from labs import pipeline as pp
from labs.exercises import pipeline_checks as pc
from labs.exercises.checks import ExerciseFailed
from tests.support.messages import found_in


def order(p, m, s, warm_up):
    """A 1F1B-shaped order with ``warm_up(p, m, s)`` forwards before the steady state."""
    w = warm_up(p, m, s)
    out = [f"F{i}" for i in range(w)]
    f, b = w, 0
    while f < m:
        out += [f"F{f}", f"B{b}"]
        f, b = f + 1, b + 1
    return out + [f"B{i}" for i in range(b, m)]


def right_order(p, m, s):
    return order(p, m, s, lambda p, m, s: min(p - s - 1, m))


def test_the_planted_generator_is_right_before_its_variants_are_planted():
    assert pc.check_1f1b_order(right_order) is None


@pytest.mark.parametrize("name, wrong, index", [
    # (4, 5, 1) starts F0 F1 F2 B0 F3: each variant's 4th action (counted from 1) is F3, not B0
    # one forward too many in the warm-up
    ("warm_up_off_by_one", lambda p, m, s: order(p, m, s, lambda p, m, s: min(p - s, m)), 4),
    # stage 0's order on every stage: stage 1 warms up with 3 forwards instead of 2
    ("stage_0_for_all", lambda p, m, s: right_order(p, m, 0), 4),
    # GPipe: every forward first
    ("gpipe", lambda p, m, s: [f"F{i}" for i in range(m)] + [f"B{i}" for i in range(m)], 4),
])
def test_wrong_1f1b_orders_score_zero_with_the_first_difference(name, wrong, index):
    with pytest.raises(ExerciseFailed) as info:
        pc.check_1f1b_order(wrong)
    found_in(info.value, "checks_2_3.order_wrong", index=index, expected="B0", got="F3")


def test_a_warm_up_without_min_m_fails_on_the_hidden_case_with_fewer_micro_batches():
    wrong = lambda p, m, s: order(p, m, s, lambda p, m, s: p - s - 1)  # noqa: E731
    with pytest.raises(ExerciseFailed) as info:
        pc.check_1f1b_order(wrong)
    found_in(info.value, "checks_2_3.order_actions_wrong")
    found_in(info.value, "checks.case_hidden")


def test_wrong_partitions_score_zero_naming_what_is_off():
    even = lambda costs, p: pp.partition_evenly(len(costs), p)  # noqa: E731 (costs ignored)
    with pytest.raises(ExerciseFailed) as info:
        pc.check_balanced_partition(even)
    found_in(info.value, "checks_2_3.partition_not_optimal", got=6, best=5)

    def inclusive_stops(costs, p):  # (start, last) instead of (start, stop)
        return [(a, b - 1) for a, b in pp.balanced_partition(costs, p)]

    with pytest.raises(ExerciseFailed) as info:
        pc.check_balanced_partition(inclusive_stops)
    found_in(info.value, "checks_2_3.partition_invalid", stage=1, a=2, b=3, edge=1)

    assert pc.check_balanced_partition(pp.balanced_partition) is None
