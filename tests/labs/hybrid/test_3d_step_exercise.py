"""Notebook 2.4's exercise 6 (one DP × PP × TP step built by hand on 8 ranks): what its check
says beyond the answers catalog (tests/catalog/answers_2_4.py grades the planted answers both
ways): the untouched stub is unfinished, and f without its group -- stage 1's backward
all-reduce then waits for stage 0's ranks, which wait in their recv -- is a deadlock that names
each rank's pending operation.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.generate import strip_solutions
from labs.exercises.hybrid_checks import check_3d_step
from labs.exercises.ranks import TIMEOUT_CAP_ENV
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in

pytestmark = [pytest.mark.slow, pytest.mark.numerics]

NAME = "2.4_hybrid_parallel.ipynb"


def _student_fn(source: str):
    (defined,) = define(source, ("my_3d_step",), "three_d_submission", torch=torch, dist=dist)
    return defined


def test_untouched_stub_is_reported_unfinished(capsys):
    stub, _ = strip_solutions(cell_source(NAME, "ex2_4_3d_step_solution"))
    with pytest.raises(ExerciseIncomplete):
        check_3d_step(_student_fn(stub))
    assert verdicts.incomplete(6) in verdict(capsys)


def test_a_missing_group_in_f_is_a_deadlock_that_names_the_pending_operations(capsys,
                                                                              monkeypatch):
    monkeypatch.setenv(TIMEOUT_CAP_ENV, "5")  # the right verdict under load, in seconds
    fn = _student_fn(replaced(cell_source(NAME, "ex2_4_3d_step_solution"),
                              "copy_to_tensor_parallel_region(h, group=tp_group)",
                              "copy_to_tensor_parallel_region(h)"))
    with pytest.raises(ExerciseFailed) as info:
        check_3d_step(fn)
    assert verdict(capsys).startswith(verdicts.failed(6, 5))
    found_in(info.value, "checks.rank_waits_for", rank=0)  # stage 0 in its recv
