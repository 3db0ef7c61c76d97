"""Notebook 2.2's exercise 7 (the sequence-parallel MLP block by hand): its check, on real ranks.

The solution cell of solutions/2.2 passes; a copy whose all-gather backward only keeps its own
positions (no sum over the group) is named as that gradient; one adding the bias before the
reduce-scatter is caught on the output; one whose reduce-scatter forgets ``group`` passes the
shown cases and fails on the hidden two-group case; one calling the course's own
sequence-parallel operator is refused; the untouched student stub is reported unfinished.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F

from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.tensor_parallel_checks import check_sequence_parallel_mlp
from labs.messages import text
from labs.tensor_parallel import comm
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support import verdicts
from tests.support.messages import pattern

pytestmark = pytest.mark.numerics

NAME = "2.2_model_parallel.ipynb"


def _cell(folder: str) -> str:
    return cell_source(NAME, "ex2_2_sequence_parallel_mlp_solution", folder)


def _submission(source: str):
    """The cell's two Functions and its block (torch, dist, F and comm imported by the setup cell)."""
    return define(source, ("SeqAllGather", "SeqReduceScatter", "sp_mlp_forward"), "sp_submission",
                  torch=torch, dist=dist, F=F, comm=comm)


def _variant(old: str, new: str):
    return _submission(replaced(_cell("solutions"), old, new))


_verdict = verdict


def test_solution_passes(capsys):
    check_sequence_parallel_mlp(*_submission(_cell("solutions")))
    assert verdicts.passed(7, 4) in _verdict(capsys)


def test_all_gather_backward_without_the_sum_names_that_gradient(capsys):
    old = ("dist.reduce_scatter_single(mine, full, group=ctx.group)  # sum over ranks, my positions\n"
           "        return mine.movedim(0, 1), None")
    new = "return grad.chunk(t, dim=1)[dist.get_rank(ctx.group)], None"
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*_variant(old, new))
    message = str(info.value)
    assert message.startswith(text("checks_2_2.case_sp", n=1, world_size=2, seq=4)), message
    assert text("checks_2_2.what_gather_backward") in message, message  # it points to hint 1
    assert verdicts.hint(7, 1) in _verdict(capsys)


def test_bias_before_the_reduce_scatter_is_caught_on_the_output(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*_variant("SeqReduceScatter.apply(partial, group) + proj_b",
                                              "SeqReduceScatter.apply(partial + proj_b, group)"))
    message = str(info.value)
    assert text("checks_2_2.what_sp_output") in message, message  # proj_b once, after it
    capsys.readouterr()


def test_reduce_scatter_without_group_fails_only_on_the_hidden_group_case(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*_variant("dist.reduce_scatter_single(mine, full, group=group)",
                                              "dist.reduce_scatter_single(mine, full)"))
    out = _verdict(capsys)
    hidden = text("checks_2_2.case_hidden_two_groups", n=3, world_size=4)
    assert hidden in str(info.value), str(info.value)  # the shown cases pass
    assert out.startswith(verdicts.failed(7, 4)), out
    assert pattern("checks.frame", func="forward").search(out), out  # the student's forward


def test_the_courses_sequence_parallel_operator_is_refused(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*_variant(
            "x = SeqAllGather.apply(x_shard, group)",
            "x = comm.gather_from_sequence_parallel_region(x_shard, group=group)"))
    refused = text("checks_2_2.ready_made_sp",
                   shown="labs.tensor_parallel.comm.gather_from_sequence_parallel_region")
    assert refused in str(info.value), str(info.value)
    capsys.readouterr()


def test_untouched_stub_is_reported_unfinished(capsys):
    with pytest.raises(ExerciseIncomplete):
        check_sequence_parallel_mlp(*_submission(_cell("notebooks")))
    assert verdicts.incomplete(7) in _verdict(capsys)
