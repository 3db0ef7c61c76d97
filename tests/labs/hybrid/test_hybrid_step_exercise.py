"""Notebook 2.4's exercise 5 (one DP × TP step on real ranks): what its check says beyond the
answers catalog (tests/catalog/answers_2_4.py grades the planted answers both ways): gradients
summed over DP and not divided are off by exactly dp, and the message says so; DP groups ``dp``
ranks apart (the same as ``tp`` apart when dp = tp = 2) fail on a hidden mesh; the untouched
student stub is reported unfinished.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.hybrid_checks import check_hybrid_step
from labs.messages import text
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in

pytestmark = pytest.mark.numerics

NAME = "2.4_hybrid_parallel.ipynb"


def _student_fn(source: str):
    """``my_hybrid_step`` as the notebook cell defines it."""
    (defined,) = define(source, ("my_hybrid_step",), "hybrid_step_submission",
                        torch=torch, dist=dist)
    return defined


def _variant(old: str, new: str):
    return _student_fn(replaced(cell_source(NAME, "ex2_4_hybrid_step_solution"), old, new))


def test_dp_groups_dp_apart_fail_only_on_a_hidden_mesh(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(_variant("range(t, dp * tp, tp)", "range(t, dp * tp, dp)"))
    out = verdict(capsys)
    assert text("checks.case_hidden", n=1) in str(info.value), str(info.value)  # (2, 2) passes
    assert out.startswith(verdicts.failed(5, 4)), out


def test_summed_not_averaged_gradients_are_off_by_dp(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(_variant("grads.append(grad / dp)", "grads.append(grad)"))
    message = str(info.value)
    assert message.startswith(text("checks.case_numbered", n=1, what="")), message
    found_in(message, "checks.off_by_factor", ratio="2", factor="2")  # dp = 2 in case 1
    capsys.readouterr()


def test_untouched_stub_is_reported_unfinished(capsys):
    with pytest.raises(ExerciseIncomplete):
        check_hybrid_step(_student_fn(cell_source(NAME, "ex2_4_hybrid_step_solution",
                                                  "notebooks")))
    assert verdicts.incomplete(5) in verdict(capsys)
