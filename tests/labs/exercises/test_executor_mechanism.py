"""2.3's exercise 6 (the 1F1B executor) bounds the micro-batches in flight on EVERY stage (issue 30,
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
from labs.messages import text
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in

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
    assert message.startswith(text("checks.case_numbered", n=1, what="")), message
    held = found_in(message, "checks_2_3.executor_stage_in_flight", peak=2, p=2, s=1, m=4, bound=1)
    assert "stage 1" in held["who"], held
    assert verdict(capsys).startswith(verdicts.failed(6, 4))


def test_the_two_pipelines_case_says_what_it_is_and_the_likely_cause(capsys):
    source = cell_source(NAME, "ex2_3_1f1b_executor_solution", "solutions").replace(
        "ranks[stage - 1]", "stage - 1").replace("ranks[stage + 1]", "stage + 1")  # group ranks
    (fn,) = define(source, ("my_1f1b_run",), "pipeline_submission", torch=torch, pp=pp)
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(fn)
    message = str(info.value)
    assert text("checks_2_3.case_hidden_pipelines", n=4, stages=2) in message, message
    found_in(message, "checks_2_3.group_missing_likely")  # the likely cause: group=group missing
    assert verdict(capsys).startswith(verdicts.failed(6, 4))
