"""2.3's 练习 6 (the 1F1B executor) bounds the micro-batches in flight on EVERY stage (issue 30,
item 1): stage s of p holds at most min(p - s, m). A loop that gives every stage stage 0's
order computes the right loss and gradients, and got 4/4 when only stage 0 was counted; the
last stage then holds p micro-batches instead of 1. Now 0/4, naming the stage and the bound.
"""
from __future__ import annotations

import pytest
import torch

from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed
from labs.exercises.pipeline_checks import check_1f1b_executor
from tests.support.exercise_cells import cell_source, define, replaced, verdict

pytestmark = pytest.mark.numerics

NAME = "2.3_pipeline_parallel.ipynb"


def _variant(old: str, new: str):
    source = replaced(cell_source(NAME, "ex2_3_1f1b_executor_solution", "solutions"), old, new)
    (defined,) = define(source, ("my_1f1b_run",), "pipeline_submission", torch=torch, pp=pp)
    return defined


def test_stage_zeros_order_on_every_stage_scores_zero(capsys):
    fn = _variant("pp.one_f_one_b_order(n_stages, n_microbatches, stage)",
                  "pp.one_f_one_b_order(n_stages, n_microbatches, 0)")
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(fn)
    message = str(info.value)
    # case 1: 2 stages, 4 micro-batches; the last stage (s = 1) may hold min(2 - 1, 4) = 1
    assert message.startswith("用例 1") and "stage 1 上同时在途" in message, message
    assert "最多有 2 个" in message and "min(2 - 1, 4) = 1 个" in message, message
    assert verdict(capsys).startswith("❌ 练习 6 未通过（0/4 分）")


def test_the_two_pipelines_case_says_what_it_is_and_the_likely_cause(capsys):
    source = cell_source(NAME, "ex2_3_1f1b_executor_solution", "solutions").replace(
        "ranks[stage - 1]", "stage - 1").replace("ranks[stage + 1]", "stage + 1")  # group ranks
    (fn,) = define(source, ("my_1f1b_run",), "pipeline_submission", torch=torch, pp=pp)
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(fn)
    message = str(info.value)
    assert "隐藏用例 4：两条 2 级流水线 {0, 1} 和 {2, 3}（4 个 rank）" in message, message
    assert "很可能的原因：有一处通信没有传 group=group" in message, message
    assert verdict(capsys).startswith("❌ 练习 6 未通过（0/4 分）")
