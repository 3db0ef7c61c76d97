"""Notebook 2.4's exercise 5 (one DP × TP step on real ranks): its check.

The solution cell of solutions/2.4 passes; a copy that creates only its own groups is stopped
at its first dist.new_group with the message; one whose DP groups are ``dp`` ranks apart (the
same as ``tp`` apart when dp = tp = 2) fails only on a hidden mesh; one that sums the DP
gradients without dividing fails with the factor; the lab's new_groups is refused; the
untouched student stub is reported unfinished.
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

CASE_1 = text("checks.case_numbered", n=1, what="")  # how the first (shown) case is named

pytestmark = pytest.mark.numerics

NAME = "2.4_hybrid_parallel.ipynb"


def _cell(folder: str) -> str:
    return cell_source(NAME, "ex2_4_hybrid_step_solution", folder)


def _student_fn(source: str):
    """``my_hybrid_step`` as the notebook cell defines it."""
    (defined,) = define(source, ("my_hybrid_step",), "hybrid_step_submission",
                        torch=torch, dist=dist)
    return defined


def _variant(old: str, new: str):
    return _student_fn(replaced(_cell("solutions"), old, new))


_verdict = verdict


def test_solution_passes(capsys):
    check_hybrid_step(_student_fn(_cell("solutions")))
    assert verdicts.passed(5, 4) in _verdict(capsys)


def test_only_its_own_groups_is_stopped_at_the_first_new_group(capsys):
    source = _cell("solutions")
    start = source.index("    for d in range(dp):")
    end = source.index("    # (b)")
    fn = _student_fn(source[:start]
                     + "    tp_group = dist.new_group(list(range(dp_index * tp, (dp_index + 1) * tp)))\n"
                     + "    dp_group = dist.new_group(list(range(tp_index, dp * tp, tp)))\n"
                     + source[end:])
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(fn)
    message = str(info.value)
    assert CASE_1 in message, message
    found_in(message, "checks_2_4.new_group_differs", call=1)  # it points to hint 1
    assert verdicts.hint(5, 1) in _verdict(capsys)


def test_dp_groups_dp_apart_fail_only_on_a_hidden_mesh(capsys):
    fn = _variant("range(t, dp * tp, tp)", "range(t, dp * tp, dp)")
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(fn)
    out = _verdict(capsys)
    assert text("checks.case_hidden", n=1) in str(info.value), str(info.value)  # (2, 2) passes
    assert out.startswith(verdicts.failed(5, 4)) and verdicts.hint(5, 1) in out, out


def test_summed_not_averaged_gradients_fail_with_the_factor(capsys):
    fn = _variant("grads.append(grad / dp)", "grads.append(grad)")
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(fn)
    message = str(info.value)
    assert CASE_1 in message, message
    found_in(message, "checks_2_4.shard_times_dp", dp=2)
    capsys.readouterr()


def test_the_labs_new_groups_is_refused(capsys):
    source = '''
def my_hybrid_step(dp, tp, w1, w2, x, y):
    from labs.hybrid.mesh import MeshShape, new_groups
    groups = new_groups(MeshShape(dp=dp, pp=1, tp=tp))
    return [w1, w2]
'''
    with pytest.raises(ExerciseFailed) as info:
        check_hybrid_step(_student_fn(source))
    found_in(info.value, "checks_2_4.no_ready_made", shown="labs.hybrid.mesh.new_groups")
    capsys.readouterr()


def test_untouched_stub_is_reported_unfinished(capsys):
    with pytest.raises(ExerciseIncomplete):
        check_hybrid_step(_student_fn(_cell("notebooks")))
    assert verdicts.incomplete(5) in _verdict(capsys)
