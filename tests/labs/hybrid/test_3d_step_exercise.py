"""Notebook 2.4's exercise 6 (one DP × PP × TP step built by hand on 8 ranks): its check.

The solution cell of solutions/2.4 (both editions) passes 5/5, and so does a variant with two
GPipe micro-batches; planted mistakes get 0/5 with their own message: a replica computing on the
whole batch, stage 1 computing stage 0's layers itself (no send/recv), gradients not averaged
over DP, a DP average without group=, f without group= (a deadlock, with its own advice), the
lab's three_d.hybrid_step, a collective other than all_reduce; the untouched stub is reported
unfinished.
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.generate import strip_solutions
from labs.exercises import three_d_checks
from labs.exercises.hybrid_checks import check_3d_step
from labs.messages import text
from tests.support import verdicts
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import found_in

pytestmark = [pytest.mark.slow, pytest.mark.numerics]

NAME = "2.4_hybrid_parallel.ipynb"
CASE_1 = text("checks.case_numbered", n=1, what="")  # how the first (shown) case is named


def _cell(folder: str = "solutions") -> str:
    return cell_source(NAME, "ex2_4_3d_step_solution", folder)


def _student_fn(source: str):
    (defined,) = define(source, ("my_3d_step",), "three_d_submission", torch=torch, dist=dist)
    return defined


def _failed(capsys, fn) -> str:
    """The failure's message, after asserting the verdict gives 0 of 5 points."""
    with pytest.raises(ExerciseFailed) as info:
        check_3d_step(fn)
    assert verdict(capsys).startswith(verdicts.failed(6, 5)), "not 0/5"
    return str(info.value)


@pytest.mark.parametrize("folder", ["solutions", "solutions/en"])
def test_solution_passes(capsys, folder):
    check_3d_step(_student_fn(_cell(folder)))
    assert verdicts.passed(6, 5) in verdict(capsys)


def test_whole_batch_on_each_replica_is_refused(capsys):
    fn = _student_fn(replaced(_cell(), "x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]", "x, y"))
    message = _failed(capsys, fn)
    assert CASE_1 in message, message
    found_in(message, "checks_2_4.rows_of_other_replicas", rank=0, d=0, dp=2, row=4, count=4,
             first=0, last=3)


def test_stage_1_computing_stage_0_without_send_is_refused(capsys):
    source = _cell()
    start, end = source.index("    if stage == 0:"), source.index("    # (c)")
    fn = _student_fn(source[:start] + """\
    if stage == 0:  # the whole model here, stage 1's weights unsplit: no send, no recv
        out = block(x_mine)
        ((torch.relu(out @ w1s[1].T) @ w2s[1].T - y_mine) ** 2).mean().backward()
    else:  # stage 0's layers computed again here
        h = torch.relu(x_mine @ w1s[0].T) @ w2s[0].T
        loss = ((block(h) - y_mine) ** 2).mean()
        loss.backward()
        loss = loss.detach()
""" + source[end:])
    message = _failed(capsys, fn)
    found_in(message, "checks_2_4.step3d_stage_computes_x", rank=2, s=1)


def test_gradients_not_averaged_over_dp_are_refused(capsys):
    fn = _student_fn(replaced(_cell(), "        dist.all_reduce(grad, group=dp_group)\n", ""))
    message = _failed(capsys, fn)
    assert CASE_1 in message, message
    found_in(message, "checks_2_4.shard_local_batch", rank=0, dp=2,
             what=text("checks_2_4.what_shard", weight="w1[0]"))


def test_the_labs_hybrid_step_is_refused(capsys):
    source = '''
def my_3d_step(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
    from labs.hybrid import three_d
    from labs.hybrid.mesh import MeshShape
    return three_d.hybrid_step(None, MeshShape(dp=dp, pp=2, tp=tp))
'''
    message = _failed(capsys, _student_fn(source))
    found_in(message, "checks_2_4.no_ready_made", shown="labs.hybrid.three_d")


def test_a_broadcast_between_stages_is_refused(capsys):
    fn = _student_fn(replaced(_cell(), "dist.send(out.detach().contiguous(), dst=rank + tp)",
                              "dist.broadcast(out.detach(), src=rank)"))
    message = _failed(capsys, fn)
    found_in(message, "checks_2_4.step3d_collective", shown="dist.broadcast")


def test_untouched_stub_is_reported_unfinished(capsys):
    stub, _ = strip_solutions(_cell())
    with pytest.raises(ExerciseIncomplete):
        check_3d_step(_student_fn(stub))
    assert verdicts.incomplete(6) in verdict(capsys)


def test_a_missing_group_in_the_dp_average_is_named(capsys):
    fn = _student_fn(replaced(_cell(), "dist.all_reduce(grad, group=dp_group)",
                              "dist.all_reduce(grad)"))
    message = _failed(capsys, fn)
    found_in(message, "checks_2_4.step3d_group_missing", rank=0, role="DP",
             got=list(range(8)), want=[0, 4], group="dp_group")


def test_a_missing_group_in_f_deadlocks_with_its_own_advice(capsys, monkeypatch):
    # stage 1's f all-reduces over every rank in backward while stage 0 waits in its recv
    # 5 s (it was 10): 8 ranks, the right verdict every time with three busy loops beside it
    monkeypatch.setattr(three_d_checks, "STEP_3D_TIMEOUT", 5.0)
    fn = _student_fn(replaced(_cell(), "copy_to_tensor_parallel_region(h, group=tp_group)",
                              "copy_to_tensor_parallel_region(h)"))
    message = _failed(capsys, fn)
    assert text("checks_2_4.step3d_deadlock") in message, message


def test_two_gpipe_microbatches_with_isend_pass(capsys):
    """The statement allows micro-batches: two, GPipe order, isend for the activations."""
    source = _cell()
    start, end = source.index("    loss = None\n    if stage == 0:"), source.index("    # (c)")
    fn = _student_fn(source[:start] + """\
    loss = None
    if stage == 0:
        outs = [block(part) for part in x_mine.chunk(2)]
        for request in [dist.isend(o.detach().contiguous(), dst=rank + tp) for o in outs]:
            request.wait()
        for o in outs:
            grad_out = torch.empty_like(o)
            dist.recv(grad_out, src=rank + tp)
            o.backward(grad_out)
    else:
        hs = []
        for part in y_mine.chunk(2):
            h = torch.empty(part.shape[0], w1s[1].shape[1])
            dist.recv(h, src=rank - tp)
            hs.append(h.requires_grad_())
        losses = [((block(h) - part) ** 2).mean() / 2 for h, part in zip(hs, y_mine.chunk(2))]
        for h, part_loss in zip(hs, losses):
            part_loss.backward()
            dist.send(h.grad.contiguous(), dst=rank - tp)
        loss = sum(part_loss.detach() for part_loss in losses)
""" + source[end:])
    check_3d_step(fn)
    assert verdicts.passed(6, 5) in verdict(capsys)
