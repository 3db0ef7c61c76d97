"""Checks of the graded exercises of notebook 2.3 (pipeline parallelism): the student's
functions against the lab's reference (``labs.pipeline``) on shown and hidden cases::

    check_gpipe_order(gpipe_order)                  # ex2_3_gpipe_order, 2 points
    check_1f1b_order(one_f_one_b_order)             # ex2_3_1f1b_order, 3 points
    check_bubble_fraction(bubble_fraction)          # ex2_3_bubble, 1 point
    check_min_microbatches(min_microbatches)        # ex2_3_min_microbatches, 1 point
    check_balanced_partition(balanced_partition)    # ex2_3_balanced_partition, 3 points
    check_1f1b_executor(my_1f1b_run)                # ex2_3_1f1b_executor, 4 points (real ranks:
                                                    # labs.exercises.executor_checks, served here)
    check_zb_h1_order(my_zb_h1_order)               # ex2_3_zb_h1_order, 3 points

An order is read alike in the notebook and in the grader's replay: any iterable of actions,
each a string ('F0', 'B3', 'W2'), a (kind, micro-batch) tuple, or an object with ``kind`` and
``mb`` (a NamedTuple such as ``pp.Action``, a dataclass); a kind may be an Enum. Must not:
import the grader or the planner widget, or print (the verdict is labs.exercises.checks').
"""

from __future__ import annotations

import enum
import operator
import random
import re
from fractions import Fraction

from labs.formulas import cost
from labs import pipeline as pp
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.executor_checks import RANK_EXERCISES, TAG, check_1f1b_executor  # noqa: F401
from labs.exercises.secret import active as secret_active, hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_gpipe_order", "check_1f1b_order", "check_bubble_fraction",
           "check_min_microbatches", "check_balanced_partition", "check_1f1b_executor",
           "check_zb_h1_order", "RANK_EXERCISES", "HARD_PARTITIONS"]


# --- exercises 1, 2 and 7: compute orders ---------------------------------------------------

def _actions(got, kinds: tuple) -> list[tuple[str, int]]:
    """The student's order as (kind, micro-batch) pairs (see the module's docstring)."""
    if isinstance(got, (str, bytes, dict)) or not hasattr(got, "__iter__"):
        raise ExerciseFailed(text("checks_2_3.order_not_a_list", type=type(got).__name__))
    out = []
    for index, a in enumerate(got, 1):
        kind, mb = getattr(a, "kind", None), getattr(a, "mb", None)
        if isinstance(a, str):
            found = re.fullmatch(r"\s*([A-Z])\s*(\d+)\s*", a)
            kind, mb = (found[1], int(found[2])) if found else (None, None)
        elif kind is None and isinstance(a, (tuple, list)) and len(a) >= 2:
            kind, mb = a[0], a[1]
        if isinstance(kind, enum.Enum):
            kind = kind.value if kind.value in kinds else kind.name
        try:
            mb = operator.index(mb)
        except TypeError:
            kind = None
        if kind not in kinds:
            raise ExerciseFailed(text("checks_2_3.action_unreadable", index=index,
                                      action=repr(a)[:60], kinds="/".join(kinds)))
        out.append((kind, mb))
    return out


def _compare(got: list, expected: list, kinds: tuple) -> None:
    show = lambda pairs: [f"{k}{i}" for k, i in pairs]  # noqa: E731
    if "W" in kinds and got and not any(k == "W" for k, _ in got):  # ZB-H1: a W for every B,
        raise ExerciseFailed(text("checks_2_3.zb_no_w"))  # never before it
    for i, (kind, mb) in enumerate(got):
        if kind == "W" and ("B", mb) in got[i + 1:]:
            raise ExerciseFailed(text("checks_2_3.zb_w_before_b", w=f"W{mb}", index=i + 1))
    if sorted(got) != sorted(expected):
        extra = {a for a in got if a not in expected or got.count(a) > 1}
        raise ExerciseFailed(text("checks_2_3.order_actions_wrong", kinds=", ".join(kinds),
                                  missing=show(sorted(set(expected) - set(got))),
                                  extra=show(sorted(extra))))
    if got != expected:
        first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        raise ExerciseFailed(text("checks_2_3.order_wrong", index=first + 1,
                                  expected=show(expected)[first], got=show(got)[first],
                                  head=show(expected[:first + 2])))


def _order_cases(key: int) -> list[tuple[int, int, int]]:
    """Hidden (p, m, stage): six drawn from the secret's seed; m < p twice (a warm-up cut to m,
    a stage past m); the last stage with m >= p."""
    rng = random.Random(hidden_seed(TAG, key))
    cases = [(p, rng.randint(1, 10), rng.randrange(p)) for p in
             [rng.randint(2, 6) for _ in range(6)]]
    p = rng.randint(4, 6)
    m = rng.randint(1, p - 3)
    return cases + [(p, m, rng.randint(0, p - 2 - m)), (p, m, rng.randint(m + 1, p - 1)),
                    (p, rng.randint(p, 12), p - 1)]


def _check_order(student_fn, reference, shown, key, name, kinds="FB") -> None:
    """``name``: the student's function as the notebook names it (the grader replays calls, not
    attributes). Orders with B run in the simulator too (4 stages, 8 micro-batches, t_F = t_B =
    t_W): 1F1B keeps at most p in flight, ZB-H1 idles the share of labs.formulas.cost's formula."""
    kinds = tuple(kinds)
    each_case(shown, _order_cases(key), name + "({}, {}, {})", lambda p, m, stage: _compare(
        _actions(student_fn(p, m, stage), kinds), [(a.kind, a.mb) for a in reference(p, m, stage)],
        kinds))
    if reference is pp.gpipe_order:
        return
    with case(text("checks.case_about", what=text("checks_2_3.simulated_schedule", stages=4,
                                                  micro=8))):
        orders = [[pp.Action(k, i, s) for k, i in _actions(student_fn(4, 8, s), kinds)]
                  for s in range(4)]
        timeline = pp.simulate(pp.add_communication(orders, 4), forward_s=1.0,
                               backward_s=1.0, weight_s=1.0)
        peaks, idle = timeline.peak_in_flight(), max(timeline.idle_fraction())
        if "W" not in kinds and max(peaks) > 4:
            raise ExerciseFailed(text("checks_2_3.too_many_in_flight", p=4, peaks=peaks))
        if "W" in kinds and abs(idle - cost.zb_h1_bubble_fraction(4, 8)) > 1e-9:
            raise ExerciseFailed(text("checks_2_3.zb_bubble", idle=idle,
                                      formula=cost.zb_h1_bubble_fraction(4, 8)))


@graded("ex2_3_gpipe_order")
def check_gpipe_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> ['F0', ..., 'B0', ...]."""
    _check_order(student_fn, pp.gpipe_order, [(4, 3, 1), (2, 1, 0)], 23, "my_gpipe_order")


@graded("ex2_3_1f1b_order")
def check_1f1b_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the 1F1B compute order."""
    _check_order(student_fn, pp.one_f_one_b_order, [(4, 5, 1), (4, 5, 3)], 11, "my_1f1b_order")


@graded("ex2_3_zb_h1_order")
def check_zb_h1_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the ZB-H1 compute order (F, B, W)."""
    _check_order(student_fn, pp.zb_h1_order, [(4, 6, 1), (4, 6, 3)], 47, "my_zb_h1_order",
                 "FBW")


# --- exercises 3 and 4: the bubble and the micro-batches it needs ----------------------------

@graded("ex2_3_bubble")
def check_bubble_fraction(student_fn):
    """student_fn(p, m) -> the idle share (p-1)/(m+p-1)."""
    rng = random.Random(hidden_seed(TAG, 5))
    hidden = [(rng.randint(1, 64), rng.randint(1, 128)) for _ in range(8)] + [
        (1, hidden_int(TAG, 11_000, 1, 128, 7)),
        (hidden_int(TAG, 11_001, 2, 64, 12), hidden_int(TAG, 11_002, 1, 128, 32))]
    each_case([(8, 32), (4, 4)], hidden, "p={}, m={}", lambda p, m: assert_close(
        pp.bubble_fraction(p, m), student_fn(p, m), what=text("checks_2_3.what_bubble"),
        dtype="float64", factors={"100": 100}))


def _min_microbatches_case(k: int, p: int, target: float) -> tuple[int, float]:
    """Hidden case ``k``: ``(p, target)`` without a secret, else drawn (p = 1 kept), the target in
    hundredths, never one some m meets exactly (floats may land on either side of it)."""
    if not secret_active():
        return p, target
    if p > 1:
        p = hidden_int(TAG, 12_010 + k, 2, 64, p)
    hundredths = hidden_int(TAG, 12_020 + k, 1, 60, round(target * 100))
    # an exact boundary: (p - 1) / (m + p - 1) = target, i.e. (p - 1)(1 - target) / target whole
    while p > 1 and (Fraction(p - 1) * (100 - hundredths) / hundredths).denominator == 1:
        hundredths += 1
    return p, hundredths / 100


@graded("ex2_3_min_microbatches")
def check_min_microbatches(student_fn):
    """student_fn(p, target) -> the smallest m whose bubble share is at most target."""
    hidden = [_min_microbatches_case(k, p, target) for k, (p, target) in enumerate(
        [(12, 0.10), (35, 0.05), (2, 0.5), (16, 0.2), (1, 0.1), (64, 0.01)])]
    each_case([(8, 0.10), (4, 0.25)], hidden, "p={}, target={}", lambda p, t: assert_equal(
        pp.min_microbatches(p, t), student_fn(p, t),
        what=text("checks_2_3.what_min_microbatches")))


# --- exercise 5: the balanced partition --------------------------------------------------------

#: Hidden instances ("costs:stages", one digit per layer's cost) on which the right answer (the
#: least possible cost of the costliest stage) beats, read either way round: DPs minimising the
#: sum of squares, the sum of deviations from the mean, or max - min; an even split by count;
#: and greedy fills (close a stage before, after or nearest the mean, the mean fixed or
#: recomputed, from either end; cuts nearest k/p of the total; splitting the heaviest stage).
#: tests/labs/exercises/test_partition_instances.py proves it, instance by instance.
HARD_PARTITIONS = (
    "79241363:3 73992366:3 6221485:3 66226299:3 2124131697:3 89713911:3 8972166:3 5741243:3 "
    "8473812239:3 57222129939:3 893131186:4 58264112788:4 935433597:4 594129351:4 47255153:4 "
    "2833317:4 897127579:4 57221279:4 92174211587:4 327422348:4 1387131377:5 88722289639:5 "
    "7381473586:5 1539165375:5 72635231293:5 765661299:5 87532183:5 3688322714:5 "
    "8592112189:5 54553573195:5").split()


def _partition_cases() -> list[tuple[list, int]]:
    """Hidden (costs, n_stages): four HARD_PARTITIONS (drawn, reversed or not, scaled), as many
    stages as layers, a single layer, twelve layers of float costs under one in all."""
    rng = random.Random(hidden_seed(TAG, 7))
    cases = []
    for item in rng.sample(HARD_PARTITIONS, 4):
        digits, p = item.split(":")
        scale, way = rng.randint(1, 9), rng.choice((1, -1))
        cases.append(([scale * int(d) for d in digits[::way]], int(p)))
    n = rng.randint(2, 6)
    return cases + [([rng.randint(1, 9) for _ in range(n)], n), ([rng.randint(1, 9)], 1),
                    ([rng.choice([1, 2, 3, 5, 8]) / 64 for _ in range(12)], rng.randint(2, 6))]


def _bounds(got, n_layers: int, n_stages: int) -> list[tuple[int, int]]:
    """The student's partition as (start, stop) pairs, refused unless it is valid."""
    try:
        bounds = [(operator.index(a), operator.index(b)) for a, b in got]
    except (TypeError, ValueError):
        raise ExerciseFailed(text("checks_2_3.partition_not_pairs", got=repr(got)[:80])) from None
    if len(bounds) != n_stages:
        raise ExerciseFailed(text("checks_2_3.partition_stage_count", n_stages=n_stages,
                                  got=len(bounds)))
    edge = 0
    for s, (a, b) in enumerate(bounds):
        if a != edge or b <= a:
            raise ExerciseFailed(text("checks_2_3.partition_invalid", stage=s, a=a, b=b, edge=edge))
        edge = b
    if edge != n_layers:
        raise ExerciseFailed(text("checks_2_3.partition_short", edge=edge, layers=n_layers))
    return bounds


@graded("ex2_3_balanced_partition")
def check_balanced_partition(student_fn):
    """student_fn(costs, n_stages) -> consecutive (start, stop) per stage, minimal max cost."""
    def compare(costs, p):
        bounds = _bounds(student_fn(list(costs), p), len(costs), p)
        best = max(pp.stage_costs(costs, pp.balanced_partition(costs, p)))
        got = max(pp.stage_costs(costs, bounds))
        if got > best * (1 + 1e-9):
            raise ExerciseFailed(text("checks_2_3.partition_not_optimal", got=got, best=best,
                                      bounds=bounds))

    each_case([([1, 1, 1, 1, 1, 1, 1, 5], 4), ([4, 1, 1, 1, 1, 4], 3)], _partition_cases(),
              "costs={}, n_stages={}", compare)
