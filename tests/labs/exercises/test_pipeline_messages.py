"""2.3's checks say what is wrong: each of the catalog's wrong answers named below
(tests/catalog/answers_2_3.py, graded there both ways with its points) gets the message that
names its mistake, asserted by key and fields, whatever the language. The function exercises
only; the executor's messages are test_executor_mechanism.py's."""
from __future__ import annotations

import pytest

from labs.exercises import pipeline_checks as pc
from labs.exercises.checks import ExerciseFailed
from tests.catalog.answers_2_3 import WRONG
from tests.support.both_ways import base_namespace
from tests.support.messages import found_in

CHECKS = {"ex2_3_gpipe_order": (pc.check_gpipe_order, "my_gpipe_order"),
          "ex2_3_1f1b_order": (pc.check_1f1b_order, "my_1f1b_order"),
          "ex2_3_bubble": (pc.check_bubble_fraction, "my_bubble_fraction"),
          "ex2_3_min_microbatches": (pc.check_min_microbatches, "my_min_microbatches"),
          "ex2_3_balanced_partition": (pc.check_balanced_partition, "my_balanced_partition"),
          "ex2_3_zb_h1_order": (pc.check_zb_h1_order, "my_zb_h1_order")}


def failure(exercise: str, what: str) -> str:
    """The message the check of ``exercise`` fails the catalog's answer ``what`` with."""
    (answer,) = [a for a in WRONG if (a.exercise, a.what) == (exercise, what)]
    namespace = dict(base_namespace("2.3_pipeline_parallel.ipynb"))
    exec(compile(answer.source, "<answer>", "exec"), namespace)
    check, name = CHECKS[exercise]
    with pytest.raises(ExerciseFailed) as info:
        check(namespace[name])
    return str(info.value)


@pytest.mark.parametrize("exercise, what, key, fields", [
    # (4, 5, 1) starts F0 F1 F2 B0 F3: the 4th action (counted from 1) is F3 in each variant
    ("ex2_3_1f1b_order", "one forward too many in the warm-up (p - s)", "checks_2_3.order_wrong",
     dict(index=4, expected="B0", got="F3")),
    ("ex2_3_1f1b_order", "stage 0's order on every stage", "checks_2_3.order_wrong",
     dict(index=4, expected="B0", got="F3")),
    ("ex2_3_1f1b_order", "GPipe's order", "checks_2_3.order_wrong",
     dict(index=4, expected="B0", got="F3")),
    # hidden: m < p - s - 1, so the warm-up runs out of micro-batches
    ("ex2_3_1f1b_order", "a warm-up of p - s - 1 forwards, never cut to m",
     "checks_2_3.action_unreadable", {}),
    ("ex2_3_gpipe_order", "backwards in reverse micro-batch order", "checks_2_3.order_wrong",
     dict(index=4, expected="B0", got="B2")),
    ("ex2_3_zb_h1_order", "1F1B's order unchanged (no W)", "checks_2_3.zb_no_w", {}),
    ("ex2_3_zb_h1_order", "a W before its own B", "checks_2_3.zb_w_before_b",
     dict(w="W0", index=4)),  # F0 F1 F2 W0 B0 on stage 1 of 4
    ("ex2_3_zb_h1_order", "every W right after its B (nothing owed)", "checks_2_3.order_wrong",
     dict(index=5, expected="F3", got="W0")),
    ("ex2_3_zb_h1_order", "stage 0's order on every stage", "checks_2_3.order_wrong",
     dict(index=4, expected="B0", got="F3")),
    ("ex2_3_bubble", "a percentage", "checks.off_by_factor", dict(ratio="100", factor="100")),
    ("ex2_3_min_microbatches", "stops only below the target (>=)", "checks.wrong_value",
     dict(expected="63", got="64")),
    ("ex2_3_balanced_partition", "even by layer count", "checks_2_3.partition_not_optimal",
     dict(got=6, best=5)),
    ("ex2_3_balanced_partition", "(start, last) instead of (start, stop)",
     "checks_2_3.partition_invalid", dict(stage=1, a=2, b=3, edge=1)),
    ("ex2_3_balanced_partition", "a DP minimising the sum of squares",
     "checks_2_3.partition_not_optimal", {}),
    ("ex2_3_balanced_partition", "a greedy fill up to the mean",
     "checks_2_3.partition_not_optimal", {}),
])
def test_a_wrong_answer_is_told_its_mistake(exercise, what, key, fields, capsys):
    message = failure(exercise, what)
    found_in(message, key, **fields)
    capsys.readouterr()


def test_the_hidden_partitions_say_hidden_and_show_no_costs(capsys):
    message = failure("ex2_3_balanced_partition", "a DP minimising the sum of squares")
    found_in(message, "checks.case_hidden")
    assert "costs=" not in message, message
    capsys.readouterr()
