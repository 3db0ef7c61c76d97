"""2.1's exercises 1-4 enforce what their statements say (issue 30, item 1). Each planted answer
below got full marks before and now gets 0 of its points, with the reason:

- exercise 1 (3 pts): ignoring ``group`` (a hidden case with two groups {0, 1}, {2, 3}), replacing
  p.grad by a new tensor (not in place), all_gather plus a local mean, calling the course's
  allreduce_gradients;
- exercise 2 (2 pts): greedy from the front, then flipped ([[2], [1, 0]] for ([4, 4, 4], 8));
- exercise 3 (2 pts): calling labs.memory, which the statement forbids;
- exercise 4 (2 pts): integer division of the batch ratio (a hidden 1.5 and 0.75).
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises import data_parallel_checks as checks
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from tests.support.messages import pattern, said


def case_1() -> str:
    return text("checks_2_1.case_grads", n=1, world_size=2, sizes=[8, 16, 4], batch=8)


def hidden_groups() -> str:
    return text("checks_2_1.case_hidden_groups", n=3)


def reason(error, case: str) -> str:
    """What a failed check says about ``case``, without the rank and the case it names first."""
    first = str(error).splitlines()[0]
    for key in ("checks.rank_check_failed_in_case", "checks.case_failed"):
        found = pattern(key, case=case).fullmatch(first)
        if found:
            return found["message"]
    raise AssertionError(f"not about {case!r}: {first!r}")


def failed(exercise: int, points: int) -> str:
    """How the verdict of a failed check starts."""
    return text("checks.verdict_failed", exercise=text("exercises.label", number=exercise),
                points=points, message="")


def average(model, group=None):
    n = dist.get_world_size(group)
    for p in model.parameters():
        dist.all_reduce(p.grad, group=group)
        p.grad.div_(n)


def average_ignoring_group(model, group=None):
    n = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad.div_(n)


def average_not_in_place(model, group=None):
    n = dist.get_world_size(group)
    for p in model.parameters():
        total = p.grad.clone()
        dist.all_reduce(total, group=group)
        p.grad = total / n


def average_by_all_gather(model, group=None):
    n = dist.get_world_size(group)
    for p in model.parameters():
        parts = [torch.empty_like(p.grad) for _ in range(n)]
        dist.all_gather(parts, p.grad, group=group)
        p.grad.copy_(torch.stack(parts).mean(0))


def average_by_the_course(model, group=None):
    from labs import data_parallel as dp
    dp.allreduce_gradients(model, group=group)


def buckets_flipped(sizes, cap):
    if cap <= 0:
        raise ValueError(cap)
    buckets, current, filled = [], [], 0
    for i in range(len(sizes)):
        if current and filled + sizes[i] > cap:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes[i]
    if current:
        buckets.append(current)
    return [list(reversed(b)) for b in reversed(buckets)]


def bytes_by_the_course(num_params, optimizer, precision):
    from labs import memory
    return memory.model_state_bytes(num_params, optimizer, precision).total


def lr_integer_ratio(step, *, base_lr, base_batch, batch, warmup_steps):
    target = base_lr * (batch // base_batch)
    if warmup_steps <= 0 or step >= warmup_steps:
        return target
    return base_lr + (target - base_lr) * step / warmup_steps


def test_the_right_average_still_scores_full_marks(capsys):
    checks.check_average_gradients(average)
    assert text("checks.verdict_passed", exercise=text("exercises.label", number=1),
                points=3) in capsys.readouterr().out


@pytest.mark.parametrize("plant, case, key, fields", [
    (average_ignoring_group, hidden_groups, "checks_2_1.group_ignored", {}),
    (average_not_in_place, case_1, "checks_2_1.grad_not_in_place", {}),
    (average_by_all_gather, case_1, "checks_2_1.average_refused", dict(shown="dist.all_gather")),
    (average_by_the_course, case_1, "checks_2_1.average_refused",
     dict(shown="labs.data_parallel.ddp")),
], ids=["ignores_group", "not_in_place", "all_gather", "course"])
def test_wrong_averages_score_zero(capsys, plant, case, key, fields):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_average_gradients(plant)
    said(reason(info.value, case()), key, **fields)
    assert capsys.readouterr().out.startswith(failed(1, 3))


def test_buckets_from_the_front_flipped_score_zero(capsys):
    assert buckets_flipped([4, 4, 4, 4], 8) == [[3, 2], [1, 0]]  # the shown cases pass
    with pytest.raises(ExerciseFailed) as info:
        checks.check_buckets(buckets_flipped)
    said(info.value, "checks.case_failed", case=text("checks.case_hidden", n=1))
    assert capsys.readouterr().out.startswith(failed(2, 2))


def test_calling_labs_memory_scores_zero(capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_model_state_bytes(bytes_by_the_course)
    assert str(info.value) == text("checks_2_1.memory_refused", shown="labs.memory")
    assert capsys.readouterr().out.startswith(failed(3, 2))


def test_an_integer_batch_ratio_scores_zero(capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_warmup_lr(lr_integer_ratio)
    wrong = said(info.value, "checks.case_failed",
                 case=text("checks.case_hidden", n=9))["message"]  # the first non-integer ratio
    said(wrong, "checks.wrong_value", where=text("checks_2_1.what_lr"), got=0.1)
    assert capsys.readouterr().out.startswith(failed(4, 2))


def sum_not_divided(model, group=None):
    for p in model.parameters():
        dist.all_reduce(p.grad, group=group)


def test_a_sum_not_divided_is_named(capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_average_gradients(sum_not_divided)
    said(reason(info.value, case_1()), "checks_2_1.grad_times_world_size", n=2)
    capsys.readouterr()
