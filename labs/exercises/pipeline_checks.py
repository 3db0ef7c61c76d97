"""Checks of the graded exercises of notebook 2.3 (pipeline parallelism). Must not: import the
grader or the planner widget, or print (the verdict is labs.exercises.checks').

The student's functions are compared with the lab's reference (``labs.pipeline``) on shown
and hidden cases; the schedules are also run through the simulator, so a wrong order is
reported with what it would do (deadlock, too many micro-batches in flight)::

    check_gpipe_order(gpipe_order)                  # ex2_3_gpipe_order, 2 points
    check_1f1b_order(one_f_one_b_order)             # ex2_3_1f1b_order, 3 points
    check_bubble_fraction(bubble_fraction)          # ex2_3_bubble, 1 point
    check_min_microbatches(min_microbatches)        # ex2_3_min_microbatches, 1 point
    check_balanced_partition(balanced_partition)    # ex2_3_balanced_partition, 3 points
    check_1f1b_executor(my_1f1b_run)                 # ex2_3_1f1b_executor, 4 points (real ranks;
                                                     # labs.exercises.executor_checks, served here)
    check_zb_h1_order(my_zb_h1_order)               # ex2_3_zb_h1_order, 3 points
                                                     # (labs.exercises.zero_bubble_checks, served here)
"""

from __future__ import annotations

import random

from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.executor_checks import check_1f1b_executor  # noqa: F401 (练习 6, from here)
from labs.exercises.zero_bubble_checks import check_zb_h1_order  # noqa: F401 (练习 7, from here)
from labs.exercises.secret import active as secret_active
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_gpipe_order", "check_1f1b_order", "check_bubble_fraction",
           "check_min_microbatches", "check_balanced_partition", "check_1f1b_executor",
           "check_zb_h1_order",
           "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch of the executor exercise; a solution needs well under 1 s

#: the domain of this module's hidden seeds and sizes (labs.exercises.secret)
SECRET_TAG = "2.3"


def _seed(seed: int) -> int:
    """``seed`` itself, or the instructor's secret's seed for it (labs.exercises.secret)."""
    return hidden_seed(SECRET_TAG, seed)


def _int(key: int, low: int, high: int, default: int) -> int:
    """A hidden case's number: ``default`` without a secret, else one in [low, high]."""
    return hidden_int(SECRET_TAG, key, low, high, default)


def _as_strings(got) -> list[str]:
    if not isinstance(got, (list, tuple)):
        raise ExerciseFailed(text("checks_2_3.order_not_a_list", type=type(got).__name__))
    return [str(a) for a in got]


def _order_cases(seed: int):
    rng = random.Random(_seed(seed))
    cases = []
    for _ in range(6):
        p = rng.randint(2, 6)
        cases.append((p, rng.randint(1, 9), rng.randrange(p)))
    p = _int(10_000 + seed, 3, 6, 5)
    cases.append((p, _int(10_100 + seed, 1, p - 1, 2), _int(10_200 + seed, 0, p - 1, 0)))  # m < p
    return cases


def _check_order(student_fn, reference, shown, seed, name):
    """``name``: the student's function as the notebook names it (a check may only call the
    student's object, never read its attributes: the grader replays it)."""
    for k, (p, m, stage) in enumerate(shown + _order_cases(seed)):
        hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if hidden
                 else text("checks.case_call", call=f"{name}({p}, {m}, {stage})"))
        with case(label, hidden=hidden):
            expected = pp.compute_order(reference(p, m, stage))
            got = _as_strings(student_fn(p, m, stage))
            if sorted(got) != sorted(expected):
                missing = sorted(set(expected) - set(got))
                extra = [a for a in got if a not in expected or got.count(a) > 1]
                raise ExerciseFailed(text("checks_2_3.order_actions_wrong", missing=missing,
                                          extra=sorted(set(extra))))
            if got != expected:
                first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
                raise ExerciseFailed(text("checks_2_3.order_wrong", index=first + 1,
                                          expected=expected[first], got=got[first],
                                          head=expected[:first + 2]))


@graded("ex2_3_gpipe_order")
def check_gpipe_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> ['F0', ..., 'B0', ...]."""
    _check_order(student_fn, pp.gpipe_order, [(4, 3, 1), (2, 1, 0)], 23, "my_gpipe_order")


@graded("ex2_3_1f1b_order")
def check_1f1b_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the 1F1B compute order as strings."""
    _check_order(student_fn, pp.one_f_one_b_order, [(4, 5, 1), (4, 5, 3)], 11, "my_1f1b_order")
    p, m = 4, 8
    with case(text("checks.case_about",
                   what=text("checks_2_3.simulated_schedule", stages=p, micro=m))):
        orders = [[pp.Action(s[0], int(s[1:]), stage) for s in student_fn(p, m, stage)]
                  for stage in range(p)]
        timeline = pp.simulate(pp.add_communication(orders, p))
        peaks = timeline.peak_in_flight()
        if max(peaks) > p:
            raise ExerciseFailed(text("checks_2_3.too_many_in_flight", p=p, peaks=peaks))


@graded("ex2_3_bubble")
def check_bubble_fraction(student_fn):
    """student_fn(p, m) -> the idle share (p-1)/(m+p-1)."""
    shown = [(8, 32), (4, 4)]
    rng = random.Random(_seed(5))
    hidden = [(rng.randint(1, 64), rng.randint(1, 128)) for _ in range(8)] + [
        (1, _int(11_000, 1, 128, 7)), (_int(11_001, 2, 64, 12), _int(11_002, 1, 128, 32))]
    for k, (p, m) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"p={p}, m={m}"))
        with case(label, hidden=is_hidden):
            assert_close(pp.bubble_fraction(p, m), student_fn(p, m),
                         what=text("checks_2_3.what_bubble"), dtype="float64")


def _min_microbatches_case(k: int, p: int, target: float) -> tuple[int, float]:
    """Hidden case ``k`` of check_min_microbatches: ``(p, target)`` itself without a secret,
    else a p (1 stays 1: no bubble) and a target in hundredths drawn from the secret, never one
    that some m meets exactly (floats may land on either side of it)."""
    from fractions import Fraction

    if not secret_active():
        return p, target
    if p > 1:
        p = _int(12_010 + k, 2, 64, p)
    hundredths = _int(12_020 + k, 1, 60, round(target * 100))
    # an exact boundary: (p - 1) / (m + p - 1) = target, i.e. (p - 1)(1 - target) / target whole
    while p > 1 and (Fraction(p - 1) * (100 - hundredths) / hundredths).denominator == 1:
        hundredths += 1
    return p, hundredths / 100


@graded("ex2_3_min_microbatches")
def check_min_microbatches(student_fn):
    """student_fn(p, target) -> the smallest m whose bubble share is at most target."""
    shown = [(8, 0.10), (4, 0.25)]
    hidden = [_min_microbatches_case(k, p, target) for k, (p, target) in enumerate(
        [(12, 0.10), (35, 0.05), (2, 0.5), (16, 0.2), (1, 0.1), (64, 0.01)])]
    for k, (p, target) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"p={p}, target={target}"))
        with case(label, hidden=is_hidden):
            assert_equal(pp.min_microbatches(p, target), student_fn(p, target),
                         what=text("checks_2_3.what_min_microbatches"))


def _check_bounds(bounds, costs, n_stages) -> list[tuple[int, int]]:
    if not isinstance(bounds, (list, tuple)):
        raise ExerciseFailed(text("checks_2_3.partition_not_a_list", type=type(bounds).__name__))
    try:
        bounds = [(int(a), int(b)) for a, b in bounds]
    except (TypeError, ValueError):
        raise ExerciseFailed(text("checks_2_3.partition_not_pairs", bounds=bounds)) from None
    if len(bounds) != n_stages:
        raise ExerciseFailed(text("checks_2_3.partition_stage_count", n_stages=n_stages,
                                  got=len(bounds)))
    edge = 0
    for s, (a, b) in enumerate(bounds):
        if a != edge or b <= a:
            raise ExerciseFailed(text("checks_2_3.partition_invalid", stage=s, a=a, b=b, edge=edge))
        edge = b
    if edge != len(costs):
        raise ExerciseFailed(text("checks_2_3.partition_short", edge=edge, layers=len(costs)))
    return bounds


@graded("ex2_3_balanced_partition")
def check_balanced_partition(student_fn):
    """student_fn(costs, n_stages) -> consecutive (start, stop) per stage, minimal max cost."""
    shown = [([1, 1, 1, 1, 1, 1, 1, 5], 4), ([4, 1, 1, 1, 1, 4], 3)]
    rng = random.Random(_seed(7))
    n_equal = _int(13_000, 2, 6, 3)  # as many stages as layers
    hidden = [([rng.choice([1, 2, 3, 5, 8]) for _ in range(n)], rng.randint(1, n))
              for n in (5, 7, 9, 10, 12)] + [
        ([_int(13_010 + i, 1, 9, 2) for i in range(n_equal)], n_equal),
        ([_int(13_001, 1, 9, 9)], 1)]
    for k, (costs, p) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"costs={costs}, n_stages={p}"))
        with case(label, hidden=is_hidden):
            bounds = _check_bounds(student_fn(list(costs), p), costs, p)
            best = max(pp.stage_costs(costs, pp.balanced_partition(costs, p)))
            got = max(pp.stage_costs(costs, bounds))
            if got > best:
                raise ExerciseFailed(text("checks_2_3.partition_not_optimal", got=got, best=best,
                                          bounds=bounds))
