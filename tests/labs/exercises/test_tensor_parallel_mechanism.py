"""2.2's checks: planted wrong answers get their exact grade and feedback that names the mistake
(issue 30 item 1 for 2.2's build exercise, issue 31's feedback items).

练习 7 (the sequence-parallel MLP, the build exercise, 4 points) scores 0 for: a collective
without ``group=`` (named as the likely cause, on the hidden case with two TP groups), an
all-reduce followed by a slice instead of a reduce-scatter (not the structure asked: twice the
bytes), a functional collective (a ready-made collective by another route), the course's own
operator from a reloaded module; a right answer with torch's deprecated names passes with no
FutureWarning around the verdict. 练习 3 without ``group=`` and 练习 4 with f and g swapped are
named as such. Asserted by grade and message key, not by sentence.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
import torch.nn.functional as F

from labs.exercises import sequence_parallel_checks as sp_checks
from labs.exercises import tensor_parallel_checks as tp_checks
from labs.exercises.checks import ExerciseFailed
from labs.exercises.sequence_parallel_checks import check_sequence_parallel_mlp
from labs.exercises.tensor_parallel_checks import check_parallel_mlp, check_row_parallel
from labs.messages import text
from labs.tensor_parallel import comm
from tests.support.exercise_cells import cell_source, define, replaced

pytestmark = [pytest.mark.numerics, pytest.mark.slow]

NAME = "2.2_model_parallel.ipynb"
SP_NAMES = ("SeqAllGather", "SeqReduceScatter", "sp_mlp_forward")
ONE_GROUP, TWO_GROUPS = sp_checks.SP_CASES[0], sp_checks.SP_CASES[4]


def _sp(old: str = "", new: str = ""):
    source = cell_source(NAME, "ex2_2_sequence_parallel_mlp_solution")
    if old:
        source = replaced(source, old, new)
    return define(source, SP_NAMES, "sp_planted", torch=torch, dist=dist, F=F, comm=comm)


def _fn(grade_id: str, name: str, old: str, new: str):
    source = replaced(cell_source(NAME, grade_id), old, new)
    return define(source, (name,), "tp_planted", torch=torch, dist=dist, F=F, comm=comm)[0]


def _tail(key: str, **fields) -> str:
    """The part of a message that follows its ``{message}`` field (the key's own words)."""
    return text(key, message="", **fields).strip()


@pytest.fixture
def two_sp_cases(monkeypatch):
    """Case 1 (one group of 2) and hidden case 3 (two TP groups of 2) only: the grade is decided
    by the first failure, and these two tell every plant apart."""
    monkeypatch.setattr(sp_checks, "SP_CASES", (ONE_GROUP, TWO_GROUPS))


def _zero(capsys, number: int, points: int) -> str:
    """The verdict's first line gives 0 of the exercise's points (练习 ``number``)."""
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert f" {number} " in first, first
    assert f"0/{points}" in first and f"{points}/{points}" not in first, first
    return out


def test_all_gather_without_group_scores_zero_and_names_the_likely_cause(two_sp_cases, capsys):
    plant = _sp("dist.all_gather_single(full, mine, group=group)", "dist.all_gather_single(full, mine)")
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*plant)
    message = str(info.value)
    assert str(TWO_GROUPS[0]) in message  # the hidden case says what it is
    assert _tail("checks_2_2.likely_missing_group") in message
    _zero(capsys, 7, 4)


def test_all_reduce_and_slice_is_not_the_structure_asked(two_sp_cases, capsys):
    plant = _sp("dist.reduce_scatter_single(mine, full, group=group)  # sum over ranks, my positions\n"
                "        return mine.movedim(0, 1)  # (B, T/t, C)",
                "dist.all_reduce(full, group=group)\n"
                "        return full.chunk(t)[dist.get_rank(group)].movedim(0, 1)")
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*plant)
    assert text("checks_2_2.sp_forbidden_call", shown="dist.all_reduce") in str(info.value)
    _zero(capsys, 7, 4)


def test_a_functional_collective_is_refused(two_sp_cases, capsys):
    plant = _sp("dist.all_gather_single(full, mine, group=group)  # every rank's positions, in rank order",
                "import torch.distributed._functional_collectives as fc\n"
                "        full.copy_(fc.all_gather_tensor(mine, 0, group))")
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*plant)
    assert text("checks_2_2.sp_forbidden_call",
                shown="torch.distributed._functional_collectives.all_gather_tensor") in str(info.value)
    _zero(capsys, 7, 4)


def test_the_courses_operator_from_a_reloaded_module_is_refused(two_sp_cases, capsys):
    plant = _sp("x = SeqAllGather.apply(x_shard, group)",
                "import importlib, labs.tensor_parallel.comm as c\n"
                "    x = importlib.reload(c).gather_from_sequence_parallel_region(x_shard, group=group)")
    with pytest.raises(ExerciseFailed) as info:
        check_sequence_parallel_mlp(*plant)
    assert _tail("checks_2_2.ready_made_sp", shown="")[:8] in str(info.value)
    _zero(capsys, 7, 4)


def test_a_right_answer_with_the_deprecated_names_passes_without_warnings(two_sp_cases, capsys):
    source = cell_source(NAME, "ex2_2_sequence_parallel_mlp_solution")
    source = source.replace("dist.all_gather_single(", "dist.all_gather_into_tensor(")
    source = source.replace("dist.reduce_scatter_single(", "dist.reduce_scatter_tensor(")
    check_sequence_parallel_mlp(*define(source, SP_NAMES, "sp_old_names", torch=torch,
                                                  dist=dist, F=F, comm=comm))
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].endswith("4/4 分"), captured.out
    assert "FutureWarning" not in captured.out + captured.err


def test_row_parallel_without_group_names_the_likely_cause(capsys):
    plant = _fn("ex2_2_row_linear_solution", "row_parallel_forward",
                "reduce_from_tensor_parallel_region(partial, group=group)",
                "reduce_from_tensor_parallel_region(partial)")
    with pytest.raises(ExerciseFailed) as info:
        check_row_parallel(plant)
    message = str(info.value)
    assert str(tp_checks.CASES[2][0]) in message and \
        _tail("checks_2_2.likely_missing_group") in message
    assert text("checks_2_2.what_row_output") in message
    _zero(capsys, 3, 2)


def test_swapped_f_and_g_get_their_own_message(capsys):
    source = cell_source(NAME, "ex2_2_parallel_mlp_solution")
    source = source.replace("copy_to_tensor_parallel_region", "SWAP").replace(
        "reduce_from_tensor_parallel_region", "copy_to_tensor_parallel_region").replace(
        "SWAP", "reduce_from_tensor_parallel_region")
    plant, = define(source, ("parallel_mlp_forward",), "mlp_swapped", torch=torch, dist=dist,
                    F=F, comm=comm)
    with pytest.raises(ExerciseFailed) as info:
        check_parallel_mlp(plant)
    assert text("checks_2_2.f_g_swapped", rank=0) in str(info.value)
    _zero(capsys, 4, 2)
