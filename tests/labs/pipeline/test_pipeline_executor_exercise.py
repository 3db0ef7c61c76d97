"""Notebook 2.3's exercise 6 (the 1F1B executor by hand): its check, on real ranks.

The solution cell of solutions/2.3 passes; a copy that sends to and receives from group ranks
(not global ranks) fails only on the hidden two-pipeline case; one that does not divide the
loss by the number of micro-batches, and one that runs the GPipe order (too many micro-batches
in flight on stage 0), fail with their own messages; one built on the lab's run_schedule is
refused; the untouched student stub is reported 未完成.
"""
from __future__ import annotations

import pytest
import torch

from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.pipeline_checks import check_1f1b_executor
from tests.support.exercise_cells import cell_source, define, replaced, verdict

pytestmark = pytest.mark.numerics

NAME = "2.3_pipeline_parallel.ipynb"


def _cell(folder: str) -> str:
    return cell_source(NAME, "ex2_3_1f1b_executor_solution", folder)


def _student_fn(source: str):
    """``my_1f1b_run`` as a notebook cell defines it (torch and pp imported by the setup cell)."""
    (defined,) = define(source, ("my_1f1b_run",), "pipeline_submission", torch=torch, pp=pp)
    return defined


def _variant(old: str, new: str):
    return _student_fn(replaced(_cell("solutions"), old, new))


_verdict = verdict


def test_solution_passes(capsys):
    check_1f1b_executor(_student_fn(_cell("solutions")))
    assert "✅ 练习 6 通过：4/4 分" in _verdict(capsys)


def test_group_ranks_as_peers_fail_on_the_hidden_group_case(capsys):
    source = _cell("solutions").replace("ranks[stage - 1]", "stage - 1").replace(
        "ranks[stage + 1]", "stage + 1")
    assert "ranks[stage" not in source
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(_student_fn(source))
    out = _verdict(capsys)
    assert "隐藏用例 4" in str(info.value), str(info.value)  # the shown cases pass
    assert "not part of group" in str(info.value), str(info.value)
    assert out.startswith("❌ 练习 6 未通过（0/4 分）") and "练习 6 · 提示 2" in out, out


def test_loss_not_divided_by_the_microbatches_fails(capsys):
    fn = _variant("y = loss_fn(y, targets[mb]) / n_microbatches", "y = loss_fn(y, targets[mb])")
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(fn)
    message = str(info.value)
    assert message.startswith("用例 1") and "的梯度是单进程的 4 倍" in message, message
    assert "看提示 1" in message and "练习 6 · 提示 1" in _verdict(capsys)


def test_the_gpipe_order_keeps_too_many_microbatches_in_flight(capsys):
    fn = _variant("pp.one_f_one_b_order(", "pp.gpipe_order(")
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(fn)
    message = str(info.value)
    assert message.startswith("用例 1") and "最多有 4 个，1F1B 中 stage s 最多 min(p - s, m) = min(2 - 0, 4) = 2 个" in message, message
    capsys.readouterr()


def test_the_labs_executor_is_refused(capsys):
    source = '''
from labs.pipeline import run_schedule

def my_1f1b_run(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
                group=None):
    schedule = pp.build_schedule("1f1b", 2, n_microbatches)
    return run_schedule(schedule, {0: stage_module}, inputs=inputs, targets=targets,
                        loss_fn=loss_fn, activation_shape=activation_shape, group=group)
'''
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_executor(_student_fn(source))
    assert "不能调用现成的 labs.pipeline.run_schedule" in str(info.value)
    capsys.readouterr()


def test_untouched_stub_is_reported_unfinished(capsys):
    with pytest.raises(ExerciseIncomplete):
        check_1f1b_executor(_student_fn(_cell("notebooks")))
    assert "未完成" in _verdict(capsys)
