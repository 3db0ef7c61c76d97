"""2.4's exercise 5 (one DP × TP step): each DP replica processes only its own share of the batch
(issue 30, item 1). Skipping the data split, every replica on the whole global batch, gives
the same DP-averaged gradients and got 4/4; the rows of x that reach a matrix product are now
recorded on every rank, and such a step gets 0/4 with the replica and the rows it should use.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises.checks import ExerciseFailed
from labs.exercises.hybrid_checks import check_hybrid_step
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in
from labs.messages import text

pytestmark = pytest.mark.numerics

NAME = "2.4_hybrid_parallel.ipynb"


def _variant(old: str, new: str):
    source = replaced(cell_source(NAME, "ex2_4_hybrid_step_solution", "solutions"), old, new)
    (defined,) = define(source, ("my_hybrid_step",), "hybrid_step_submission",
                        torch=torch, dist=dist)
    return defined


def test_every_replica_on_the_whole_batch_scores_zero(capsys):
    fn = _variant("x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]",
                  "x_mine, y_mine = x, y")
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(fn)
    message = str(info.value)
    # case 1: dp = tp = 2, a batch of 8: replica 0 owns rows 0-3, and saw rows 4-7 too
    assert message.startswith(text("checks.case_numbered", n=1, what="")), message
    found_in(message, "checks_2_4.rows_of_other_replicas", rank=0, d=0, dp=2, row=4, count=4,
             first=0, last=3)
    assert verdict(capsys).startswith(verdicts.failed(5, 4))


TRANSPOSED = ("h = torch.relu(copy_to_tensor_parallel_region(x_mine, group=tp_group) @ w1_mine.T)",
              "h = torch.relu((w1_mine @ copy_to_tensor_parallel_region(x_mine, group=tp_group).T).T)")


def test_a_transposed_product_is_seen_too(capsys):
    check_hybrid_step(_variant(*TRANSPOSED))  # the right rows, as columns: full marks
    assert verdicts.passed(5, 4) in verdict(capsys)
    source = replaced(cell_source(NAME, "ex2_4_hybrid_step_solution", "solutions"), *TRANSPOSED)
    source = replaced(source, "x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]",
                      "x_mine, y_mine = x, y")
    (fn,) = define(source, ("my_hybrid_step",), "hybrid_step_submission", torch=torch, dist=dist)
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(fn)
    found_in(info.value, "checks_2_4.rows_of_other_replicas")
    capsys.readouterr()
