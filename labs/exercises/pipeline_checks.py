"""Checks of the graded exercises of notebook 2.3 (pipeline parallelism).

The student's functions are compared with the lab's reference (``labs.pipeline``) on shown
and hidden cases; the schedules are also run through the simulator, so a wrong order is
reported with what it would do (deadlock, too many micro-batches in flight)::

    check_gpipe_order(gpipe_order)                  # ex2_3_gpipe_order, 2 points
    check_1f1b_order(one_f_one_b_order)             # ex2_3_1f1b_order, 3 points
    check_bubble_fraction(bubble_fraction)          # ex2_3_bubble, 1 point
    check_min_microbatches(min_microbatches)        # ex2_3_min_microbatches, 1 point
    check_balanced_partition(balanced_partition)    # ex2_3_balanced_partition, 3 points
"""

from __future__ import annotations

import random

from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded

__all__ = ["check_gpipe_order", "check_1f1b_order", "check_bubble_fraction",
           "check_min_microbatches", "check_balanced_partition"]


def _as_strings(got, what: str) -> list[str]:
    if not isinstance(got, (list, tuple)):
        raise ExerciseFailed(f"{what}应该是 list（例如 ['F0', 'F1', 'B0', 'B1']），"
                             f"实际得到 {type(got).__name__}")
    return [str(a) for a in got]


def _order_cases(seed: int):
    rng = random.Random(seed)
    cases = []
    for _ in range(6):
        p = rng.randint(2, 6)
        cases.append((p, rng.randint(1, 9), rng.randrange(p)))
    cases.append((5, 2, 0))  # m < p
    return cases


def _check_order(student_fn, reference, shown, seed, name):
    for k, (p, m, stage) in enumerate(shown + _order_cases(seed)):
        hidden = k >= len(shown)
        label = f"隐藏用例 {k - len(shown) + 1}" if hidden else f"用例 {name}({p}, {m}, {stage})"
        with case(label, hidden=hidden):
            expected = pp.compute_order(reference(p, m, stage))
            got = _as_strings(student_fn(p, m, stage), "返回值")
            if sorted(got) != sorted(expected):
                missing = sorted(set(expected) - set(got))
                extra = [a for a in got if a not in expected or got.count(a) > 1]
                raise ExerciseFailed(f"动作不全或有多余：缺少 {missing}，多出 {sorted(set(extra))}"
                                     f"（每个 micro-batch 恰好一个 F 和一个 B）")
            if got != expected:
                first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
                raise ExerciseFailed(f"顺序不对：第 {first} 个动作期望 {expected[first]}，实际 "
                                     f"{got[first]}（期望的开头：{expected[:first + 2]}）")
    return True


@graded("ex2_3_gpipe_order", points=2)
def check_gpipe_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> ['F0', ..., 'B0', ...]."""
    return _check_order(student_fn, pp.gpipe_order, [(4, 3, 1), (2, 1, 0)], 23, "gpipe_order")


@graded("ex2_3_1f1b_order", points=3)
def check_1f1b_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the 1F1B compute order as strings."""
    _check_order(student_fn, pp.one_f_one_b_order, [(4, 5, 1), (4, 5, 3)], 11, "one_f_one_b_order")
    with case("用例：4 个 stage、8 个 micro-batch 的完整调度在模拟器里运行"):
        p, m = 4, 8
        orders = [[pp.Action(s[0], int(s[1:]), stage) for s in student_fn(p, m, stage)]
                  for stage in range(p)]
        timeline = pp.simulate(pp.add_communication(orders, p))
        peaks = timeline.peak_in_flight()
        if max(peaks) > p:
            raise ExerciseFailed(f"同时在途的 micro-batch 最多应为 p={p}，实际 {peaks}")
    return True


@graded("ex2_3_bubble", points=1)
def check_bubble_fraction(student_fn):
    """student_fn(p, m) -> the idle share (p-1)/(m+p-1)."""
    shown = [(8, 32), (4, 4)]
    rng = random.Random(5)
    hidden = [(rng.randint(1, 64), rng.randint(1, 128)) for _ in range(8)] + [(1, 7), (12, 32)]
    for k, (p, m) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        with case(f"隐藏用例 {k - 1}" if is_hidden else f"用例 p={p}, m={m}", hidden=is_hidden):
            assert_close(pp.bubble_fraction(p, m), student_fn(p, m), what="气泡占比",
                         dtype="float64")
    return True


@graded("ex2_3_min_microbatches", points=1)
def check_min_microbatches(student_fn):
    """student_fn(p, target) -> the smallest m whose bubble share is at most target."""
    shown = [(8, 0.10), (4, 0.25)]
    hidden = [(12, 0.10), (35, 0.05), (2, 0.5), (16, 0.2), (1, 0.1), (64, 0.01)]
    for k, (p, target) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        with case(f"隐藏用例 {k - 1}" if is_hidden else f"用例 p={p}, target={target}",
                  hidden=is_hidden):
            assert_equal(pp.min_microbatches(p, target), student_fn(p, target),
                         what="最少的 micro-batch 数")
    return True


def _check_bounds(bounds, costs, n_stages, what="返回的切分") -> list[tuple[int, int]]:
    if not isinstance(bounds, (list, tuple)):
        raise ExerciseFailed(f"{what}应该是 [(start, stop), ...] 的 list，实际得到 {type(bounds).__name__}")
    try:
        bounds = [(int(a), int(b)) for a, b in bounds]
    except (TypeError, ValueError):
        raise ExerciseFailed(f"{what}的每一项都应是 (start, stop) 两个整数：{bounds!r}") from None
    if len(bounds) != n_stages:
        raise ExerciseFailed(f"{what}应有 {n_stages} 个 stage，实际 {len(bounds)} 个")
    edge = 0
    for s, (a, b) in enumerate(bounds):
        if a != edge or b <= a:
            raise ExerciseFailed(f"{what}不合法：stage {s} 是 ({a}, {b})，应从第 {edge} 层开始、"
                                 f"至少含一层（stage 必须是连续、不重叠、非空的层段）")
        edge = b
    if edge != len(costs):
        raise ExerciseFailed(f"{what}只覆盖了前 {edge} 层，共有 {len(costs)} 层")
    return bounds


@graded("ex2_3_balanced_partition", points=3)
def check_balanced_partition(student_fn):
    """student_fn(costs, n_stages) -> consecutive (start, stop) per stage, minimal max cost."""
    shown = [([1, 1, 1, 1, 1, 1, 1, 5], 4), ([4, 1, 1, 1, 1, 4], 3)]
    rng = random.Random(7)
    hidden = [([rng.choice([1, 2, 3, 5, 8]) for _ in range(n)], rng.randint(1, n))
              for n in (5, 7, 9, 10, 12)] + [([2, 2, 2], 3), ([9], 1)]
    for k, (costs, p) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        with case(f"隐藏用例 {k - 1}" if is_hidden else f"用例 costs={costs}, n_stages={p}",
                  hidden=is_hidden):
            bounds = _check_bounds(student_fn(list(costs), p), costs, p)
            best = max(pp.stage_costs(costs, pp.balanced_partition(costs, p)))
            got = max(pp.stage_costs(costs, bounds))
            if got > best:
                raise ExerciseFailed(f"最慢的 stage 耗费 {got:g}，但最优切分可以做到 {best:g}"
                                     f"（你的切分 {bounds}）")
    return True
