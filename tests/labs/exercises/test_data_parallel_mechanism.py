"""2.1's 练习 1-4 enforce what their statements say (issue 30, item 1). Each planted answer
below got full marks before and now gets 0 of its points, with the reason:

- 练习 1 (3 pts): ignoring ``group`` (a hidden case with two groups {0, 1}, {2, 3}), replacing
  p.grad by a new tensor (not in place), all_gather plus a local mean, calling the course's
  allreduce_gradients;
- 练习 2 (2 pts): greedy from the front, then flipped ([[2], [1, 0]] for ([4, 4, 4], 8));
- 练习 3 (2 pts): calling labs.memory, which the statement forbids;
- 练习 4 (2 pts): integer division of the batch ratio (a hidden 1.5 and 0.75).
"""
from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises import data_parallel_checks as checks
from labs.exercises.checks import ExerciseFailed


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
    assert "✅ 练习 1 通过：3/3 分" in capsys.readouterr().out


@pytest.mark.parametrize("plant, reason", [
    (average_ignoring_group, "是全部 4 个 rank 的平均，而不是它所在进程组的平均"),
    (average_not_in_place, "的 .grad 换成了一个新张量"),
    (average_by_all_gather, "不能调用 dist.all_gather"),
    (average_by_the_course, "不能调用 labs.data_parallel.ddp"),
], ids=["ignores_group", "not_in_place", "all_gather", "course"])
def test_wrong_averages_score_zero(capsys, plant, reason):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_average_gradients(plant)
    assert reason in str(info.value), str(info.value)
    assert capsys.readouterr().out.startswith("❌ 练习 1 未通过（0/3 分）")


def test_buckets_from_the_front_flipped_score_zero(capsys):
    assert buckets_flipped([4, 4, 4, 4], 8) == [[3, 2], [1, 0]]  # the shown cases pass
    with pytest.raises(ExerciseFailed) as info:
        checks.check_buckets(buckets_flipped)
    assert str(info.value).startswith("隐藏用例 1"), str(info.value)
    assert capsys.readouterr().out.startswith("❌ 练习 2 未通过（0/2 分）")


def test_calling_labs_memory_scores_zero(capsys):
    with pytest.raises(ExerciseFailed, match="不能调用 labs.memory"):
        checks.check_model_state_bytes(bytes_by_the_course)
    assert capsys.readouterr().out.startswith("❌ 练习 3 未通过（0/2 分）")


def test_an_integer_batch_ratio_scores_zero(capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_warmup_lr(lr_integer_ratio)
    assert "隐藏用例 9" in str(info.value), str(info.value)  # the first non-integer ratio
    assert capsys.readouterr().out.startswith("❌ 练习 4 未通过（0/2 分）")


def sum_not_divided(model, group=None):
    for p in model.parameters():
        dist.all_reduce(p.grad, group=group)


def test_a_sum_not_divided_is_named(capsys):
    with pytest.raises(ExerciseFailed, match="的梯度正好是正确值的 2 倍：all_reduce 求的是和"):
        checks.check_average_gradients(sum_not_divided)
    capsys.readouterr()
