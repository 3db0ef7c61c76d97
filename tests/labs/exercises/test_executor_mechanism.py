"""2.3's exercise 6 (the 1F1B executor) sees what each rank did (issue 37, item 1).

An executor that ran F_i then B_i on every stage, micro-batch after micro-batch (no pipelining),
got full marks when only the activations in flight were capped. Now the stage module the check
hands in marks each forward and backward on the rank's trace with its micro-batch, told by the
data it gets, and each stage's marks must be 1F1B's for that stage; activations and gradients go
by send/recv between neighbours only, every Work waited for. The wrong executors themselves are
the catalog's (tests/catalog/answers_2_3.py, graded both ways); here: the marks of the solution,
the messages of two wrong ones, and the untouched stub.
"""
from __future__ import annotations

import pytest

from labs.exercises import executor_checks as ec
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.ranks import check_cases
from labs.exercises.trace import Trace
from tests.catalog.answers_2_3 import WRONG
from tests.support.both_ways import base_namespace
from tests.support.exercise_cells import cell_source, define
from tests.support.messages import found_in

pytestmark = pytest.mark.numerics

NAME = "2.3_pipeline_parallel.ipynb"


def _answer(what: str):
    (answer,) = [a for a in WRONG if (a.exercise, a.what) == ("ex2_3_1f1b_executor", what)]
    namespace = dict(base_namespace(NAME))
    exec(compile(answer.source, "<answer>", "exec"), namespace)
    return namespace["my_1f1b_run"]


def test_every_stage_of_the_solution_marks_1f1b_with_the_micro_batches():
    seen = []
    cases = ec.executor_cases()[:3]  # 2 stages, 4 stages, fewer micro-batches than stages

    def judge(c, values, traces):
        ec.RANK_EXERCISES["ex2_3_1f1b_executor"][2](c, values, traces)
        seen.append([Trace.from_data(t).sequence(("F", "B")) for t in traces])

    check_cases("ex2_3_1f1b_executor", base_namespace(NAME)["my_1f1b_run"], cases, ec._body,
                judge)
    for c, per_rank in zip(cases, seen):
        assert per_rank == [ec._stage_order(c, rank) for rank in range(c.world_size)]
    # stage 0 of 4 with 4 micro-batches warms up with 3 forwards, the last stage with none
    assert seen[1][0][:5] == [("F", 0), ("F", 1), ("F", 2), ("F", 3), ("B", 0)]
    assert seen[1][3][:2] == [("F", 0), ("B", 0)]


def test_no_pipelining_is_told_where_stage_0_departs_from_1f1b(capsys):
    with pytest.raises(ExerciseFailed) as info:
        ec.check_1f1b_executor(_answer("F_i then B_i, micro-batch after micro-batch "
                                       "(no pipelining)"))
    found_in(info.value, "invariants.order", rank=0, index=2, got="F0 B0", expected="F0 F1")
    capsys.readouterr()


def test_group_ranks_as_peers_fail_on_the_two_pipelines_case_that_names_the_cause(capsys):
    with pytest.raises(ExerciseFailed) as info:
        ec.check_1f1b_executor(_answer("group ranks as send/recv peers"))
    found_in(info.value, "checks_2_3.case_hidden_pipelines", n=4, stages=2)
    capsys.readouterr()


def test_the_untouched_stub_is_not_done(capsys):
    (stub,) = define(cell_source(NAME, "ex2_3_1f1b_executor_solution", "notebooks"),
                     ("my_1f1b_run",), "pipeline_submission", **base_namespace(NAME))
    with pytest.raises(ExerciseIncomplete):
        ec.check_1f1b_executor(stub)
    capsys.readouterr()
