"""2.1's exercise 6 (ZeRO-1): what the catalog cannot grade quickly.

The wrong ZeRO-1s (sharding nothing, a second optimizer, the state kept out of sight, no
broadcast, the group's rank as src, round-robin, whole parameters all-gathered, the course's
class by any route) and the right ones written unusually are in tests/catalog/answers_2_1.py,
graded both ways with their exact points. Here: the untouched stub is unfinished, not wrong,
and a broadcast deadlock names the operation each rank waits for.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises import zero1_checks
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.data_parallel_checks import check_zero1
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, verdict
from tests.support.messages import found_in

pytestmark = pytest.mark.numerics

WRONG_ORDER = '''
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        self.params, self.group = list(params), group
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        me, n = dist.get_rank(group), dist.get_world_size(group)
        self.owner = {i: i % n for i in range(len(self.params))}
        self.optim = optimizer_class([p for i, p in enumerate(self.params) if i % n == me],
                                     **defaults)

    def step(self):
        self.optim.step()
        me = dist.get_rank(self.group)
        mine = [i for i in self.owner if self.owner[i] == me]  # my own first: orders differ
        for i in mine + [i for i in self.owner if i not in mine]:
            dist.broadcast(self.params[i], src=self.ranks[self.owner[i]], group=self.group)
'''


def test_untouched_stub_is_reported_unfinished(capsys):
    source = cell_source("2.1_data_parallel.ipynb", "ex2_1_zero1_solution", "notebooks")
    (cls,) = define(source, ("MyZero1",), "zero1_stub", torch=torch, dist=dist)
    with pytest.raises(ExerciseIncomplete):
        check_zero1(cls)
    assert verdicts.incomplete(6) in verdict(capsys)


@pytest.mark.slow  # waits out a 4 s deadlock (make test only, issue 27)
def test_a_broadcast_deadlock_names_what_each_rank_waits_for(capsys, monkeypatch):
    monkeypatch.setattr(zero1_checks, "CHECK_TIMEOUT", 4.0)
    (cls,) = define(WRONG_ORDER, ("MyZero1",), "zero1_plant", torch=torch, dist=dist)
    with pytest.raises(ExerciseFailed) as info:
        check_zero1(cls)
    fields = found_in(info.value, "checks.deadlock_pending")
    assert "broadcast" in fields["pending"], fields
    capsys.readouterr()
