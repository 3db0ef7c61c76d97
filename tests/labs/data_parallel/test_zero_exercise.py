"""Notebook 2.1's exercise 6 (ZeRO-1 by hand): its check, on real ranks.

The solution cell of solutions/2.1 passes; a copy that broadcasts from the owner's rank in the
group (not its global rank) fails on the hidden two-group case; one whose local optimizer holds
the states of every parameter fails the shard check; one built on the lab's ShardedOptimizer
is refused; the untouched student stub is reported unfinished.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.data_parallel_checks import check_zero1
from labs.messages import text
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in

pytestmark = pytest.mark.numerics

NAME = "2.1_data_parallel.ipynb"


def _cell(folder: str) -> str:
    return cell_source(NAME, "ex2_1_zero1_solution", folder)


def _student_class(source: str):
    """``MyZero1`` as a notebook cell defines it (torch and dist imported by the setup cell)."""
    (defined,) = define(source, ("MyZero1",), "zero1_submission", torch=torch, dist=dist)
    return defined


def _variant(old: str, new: str):
    return _student_class(replaced(_cell("solutions"), old, new))


_verdict = verdict


def test_solution_passes(capsys):
    check_zero1(_student_class(_cell("solutions")))
    assert verdicts.passed(6, 4) in _verdict(capsys)


def test_group_rank_as_broadcast_src_fails_on_the_hidden_group_case(capsys):
    cls = _variant("src=self.global_ranks[self.owner[i]]", "src=self.owner[i]")
    with pytest.raises(ExerciseFailed) as info:
        check_zero1(cls)
    out = _verdict(capsys)
    assert text("checks.case_hidden", n=3) in str(info.value), str(info.value)  # shown ones pass
    assert out.startswith(verdicts.failed(6, 4)) and verdicts.hint(6, 2) in out, out


def test_full_optimizer_state_on_every_rank_fails_the_shard_check(capsys):
    cls = _variant("self.optim = optimizer_class(mine, **defaults)",
                   "self.optim = optimizer_class(self.params, **defaults)")
    with pytest.raises(ExerciseFailed) as info:
        check_zero1(cls)
    message = str(info.value)
    found_in(message, "checks_2_1.case_zero1", n=1)
    found_in(message, "checks_2_1.full_state")  # it points to hint 1
    assert verdicts.hint(6, 1) in _verdict(capsys)


def test_the_labs_sharded_optimizer_is_refused(capsys):
    source = '''
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        from labs.data_parallel.zero import ShardedOptimizer
        self.inner = ShardedOptimizer(params, optimizer_class, group=group, **defaults)
        self.optim = self.inner.optim

    def step(self):
        self.inner.step()
'''
    with pytest.raises(ExerciseFailed) as info:
        check_zero1(_student_class(source))
    found_in(info.value, "checks_2_1.ready_made_optimizer",
             shown="labs.data_parallel.zero.ShardedOptimizer")
    capsys.readouterr()


def test_untouched_stub_is_reported_unfinished(capsys):
    with pytest.raises(ExerciseIncomplete):
        check_zero1(_student_class(_cell("notebooks")))
    assert verdicts.incomplete(6) in _verdict(capsys)
