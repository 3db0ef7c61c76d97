"""Checks of the graded exercises of notebook 2.1 (data parallelism): the gradient all-reduce on
real ranks, held to its mechanism's invariants; the formulas against the lab's reference on shown
cases and hidden ones that separate the plausible wrong algorithms (forward order, ``>=``,
floor, a missing warmup) on every secret::

    check_average_gradients(average_gradients)   # ex2_1_average_gradients, 3 points
    check_buckets(make_buckets)                   # ex2_1_buckets, 2 points
    check_model_state_bytes(model_state_bytes)    # ex2_1_model_state_bytes, 2 points
    check_warmup_lr(warmup_lr)                    # ex2_1_warmup_lr, 2 points
    check_hours_per_epoch(hours_per_epoch)        # ex2_1_hours_per_epoch, 1 point
    check_zero1(MyZero1)                          # ex2_1_zero1, 4 points (in zero1_checks)

Owns: 2.1's cases, rank bodies and mechanisms (ZeRO-1's in zero1_checks). Must not: import the
grader or the planner widget, print (the verdict is labs.exercises.checks'), or keep process
groups in globals.
"""
from __future__ import annotations

import numbers
import random

import torch.distributed as dist

from labs import numerics
from labs.data import regression_batch, shard_batch
from labs.data_parallel import assign_buckets, warmup_lr
from labs.exercises import zero1_checks
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, \
    compare_tensors, graded, msg
from labs.exercises.invariants import groups, hold, only, wire
from labs.exercises.ranks import check_cases
from labs.exercises.secret import drawing, hidden_seed
from labs.exercises.zero1_checks import CHECK_TIMEOUT, TAG, Case, cases_of, check_zero1, dp_group, \
    joined, rank_group
from labs.formulas.memory import model_state_bytes
from labs.messages import text
from labs.models import MLP

__all__ = ["check_average_gradients", "check_buckets", "check_model_state_bytes",
           "check_warmup_lr", "check_hours_per_epoch", "check_zero1", "AVERAGE", "CHECK_TIMEOUT"]

# --- exercise 1: average the gradients on real ranks -------------------------------------

def _reduced_once(c: Case, rank: int) -> float:
    """Bytes a rank sends when every gradient is all-reduced once in its group (a ring)."""
    g = len(rank_group(c, rank))
    return 2 * (g - 1) / g * 4 * sum(c.numels)


#: One all-reduce (SUM, or AVG) of every gradient's bytes, once, in the group given: no
#: all_gather, broadcast or send/recv, nothing reduced twice or left out.
AVERAGE = (only("all_reduce"), groups(dp_group), wire(most=_reduced_once, least=_reduced_once))


def grad_cases() -> list[Case]:
    """Shown on 2 and 4 ranks; hidden on 2-4 (sizes drawn), the last in groups {0, 1}, {2, 3}."""
    draw = drawing(f"{TAG}/average_gradients")
    ws1, ws2 = draw(100, 2, 4, 3), draw(110, 2, 4, 4)
    return cases_of("average_gradients", [
        (msg("checks_2_1.case_grads", n=1, world_size=2, sizes=[8, 16, 4], batch=8),
         2, (8, 16, 4), 1, False, dict(batch=8)),
        (msg("checks_2_1.case_grads", n=2, world_size=4, sizes=[8, 16, 4], batch=8),
         4, (8, 16, 4), 1, False, dict(batch=8)),
        (msg("checks.case_hidden", n=1), ws1, (draw(101, 2, 12, 5), draw(102, 2, 12, 7),
         draw(103, 2, 12, 7), draw(104, 1, 6, 3)), 1, True, dict(batch=ws1 * draw(105, 2, 8, 4))),
        (msg("checks.case_hidden", n=2), ws2, (draw(111, 4, 24, 16), draw(112, 8, 48, 32),
         draw(113, 1, 6, 2)), 1, True, dict(batch=ws2 * draw(114, 2, 8, 4))),
        (msg("checks_2_1.case_hidden_groups", n=3), 4, (draw(121, 2, 12, 6), draw(122, 2, 12, 5),
         draw(123, 1, 6, 3)), 2, True, dict(batch=2 * draw(124, 2, 8, 3)))])


def _backward(c: Case, k: int, rank_in_group: int = 0, size: int = 1):
    """Group ``k``'s model after backward on its ``rank_in_group``-th slice of the batch."""
    seed = c.seeds[k]
    model = MLP(list(c.sizes), seed=seed)
    batch = regression_batch(seed, c.batch, c.sizes[0], c.sizes[-1], seed=seed)
    model(*shard_batch(*batch, rank_in_group, size))[1].backward()
    return model


def _grads_body(student_fn, c: Case, run):
    """Rank body: backward on this rank's slice, then the student's averaging over its group."""
    group, members, k = joined(c)
    model = _backward(c, k, members.index(dist.get_rank()), len(members))
    before = [p.grad for p in model.parameters()]
    run(student_fn, model, **({} if group is None else {"group": group}))
    return {"grads": {n: p.grad for n, p in model.named_parameters()},
            "moved": [n for (n, p), g in zip(model.named_parameters(), before)
                      if p.grad is not None and p.grad is not g]}


def _judge_grads(c: Case, values, traces) -> None:
    """The mechanism, then every rank's gradients against its group's of the whole batch."""
    hold(AVERAGE, c, traces)
    expected = [dict(_backward(c, k).named_parameters()) for k in range(len(c.groups))]
    for rank, value in enumerate(values):
        members = rank_group(c, rank)
        for name, p in expected[c.groups.index(members)].items():
            compare_tensors(p.grad, value["grads"][name], rank=rank,
                            what=text("checks_2_1.what_grad", name=name),
                            factors={"N": len(members)})
        if value["moved"]:
            raise ExerciseFailed(text("checks_2_1.grad_not_in_place", rank=rank,
                                      name=value["moved"][0]))


#: The exercises on ranks: ``id -> (cases, rank body, judge)`` (tests/catalog/test_secrets.py).
RANK_EXERCISES = {"ex2_1_average_gradients": (grad_cases, _grads_body, _judge_grads),
                  **zero1_checks.RANK_EXERCISES}


@graded("ex2_1_average_gradients")
def check_average_gradients(student_fn):
    """``student_fn(model, group=None)`` averages every ``p.grad`` over ``group``, in place."""
    check_cases("ex2_1_average_gradients", student_fn, *RANK_EXERCISES["ex2_1_average_gradients"],
                timeout=CHECK_TIMEOUT, deadlock="checks_2_1.deadlock_collective")


# --- the formulas: shown cases, then hidden ones -----------------------------------------

def _compare(student_fn, expected_fn, shown, hidden, label, what, *, dtype=None):
    """The student's value against ``expected_fn``'s for every case's arguments."""
    def compare(*args):
        got, expected = student_fn(*args), expected_fn(*args)
        if dtype is None:
            assert_equal(expected, got, what=what)
        else:
            assert_close(float(expected), got, what=what, dtype=dtype)
    each_case(shown, hidden, label, compare)


@graded("ex2_1_buckets")
def check_buckets(student_fn):
    draw = drawing(f"{TAG}/buckets")
    s, m, cap, x = draw(1, 1, 64, 4), draw(2, 1, 3, 1), draw(3, 8, 512, 8), draw(4, 1, 7, 3)
    rng = random.Random(hidden_seed(f"{TAG}/buckets", 21))
    hidden = [([s] * (2 * m + 1), 2 * s),  # odd count of halves: the front's plan flipped differs
              # exact fits, and a tensor over the cap first and in the middle
              ([x, cap - x, cap + draw(5, 1, 99, 2), draw(6, 1, cap - 1, 2), cap + 1], cap),
              ([draw(7, 1, 9, 1) for _ in range(draw(8, 0, 4, 1))] + [1, 1], 1)]  # a cap of 1 B
    hidden += [([rng.choice([4, 16, 64, 256, 1024]) * rng.randint(1, 8)
                 for _ in range(rng.randint(1, 12))], rng.choice([64, 512, 2048, 8192]))
               for _ in range(4)]
    _compare(lambda sizes, c: student_fn(list(sizes), c), assign_buckets,
             [([4, 4, 4, 4], 8), ([4, 100, 4], 8), ([1, 2, 3], 1000)], hidden,
             "make_buckets({!r}, {!r})", text("checks_2_1.what_buckets"))
    with case(text("checks_2_1.case_zero_cap")):
        try:
            student_fn([4], 0)
        except ValueError:
            return
        raise ExerciseFailed(text("checks_2_1.zero_cap_accepted"))


@graded("ex2_1_model_state_bytes")
def check_model_state_bytes(student_fn):
    draw = drawing(f"{TAG}/model_state_bytes")
    # every optimizer in both precisions, the counts drawn from the instructor's secret
    hidden = [(draw(1, 10**10, 10**12, 175 * 10**9), "adam", "mixed"),
              (draw(2, 10**8, 10**11, 7 * 10**9), "sgd_momentum", "fp32"),
              (draw(3, 10**4, 10**6, 123457), "sgd", "mixed"),
              (draw(4, 10**7, 10**10, 3 * 10**8), "sgd_momentum", "mixed")]
    _compare(student_fn, lambda *args: model_state_bytes(*args).total,
             [(110e6, "adam", "fp32"), (1.5e9, "adam", "mixed"), (1000, "sgd", "fp32")], hidden,
             "model_state_bytes({!r}, {!r}, {!r})", text("checks_2_1.what_total_bytes"),
             dtype="float64")


@graded("ex2_1_warmup_lr")
def check_warmup_lr(student_fn):
    draw = drawing(f"{TAG}/warmup_lr")
    rng = random.Random(hidden_seed(f"{TAG}/warmup_lr", 5))
    same = draw(2, 8, 512, 64)
    hidden = [(rng.randint(0, 30), rng.choice([0.01, 0.05, 0.1]), 32, 32 * rng.choice([2, 4, 8]),
               rng.choice([5, 10, 20])) for _ in range(4)] + [
        (draw(1, 1, 9, 3), 0.1, same, same, 10),  # batch == base_batch
        (draw(3, 0, 50, 7), 0.1, 32, 32 * draw(4, 2, 16, 8), 0),  # no warmup at all
        (0, 0.1, 64, 64 * draw(9, 2, 8, 2), 1),  # one warmup step: step 0 is base_lr
        (draw(7, 1, 19, 13), 0.05, 128, 512, 20),  # inside the warmup
        # ratios that are no whole number (1.5, 0.75): integer division fails
        (draw(5, 0, 9, 4), 0.1, 256, 384, 10), (draw(6, 10, 40, 20), 0.2, 512, 384, 10)]
    names = ("base_lr", "base_batch", "batch", "warmup_steps")
    _compare(lambda step, *rest: student_fn(step, **dict(zip(names, rest))),
             lambda step, *rest: warmup_lr(step, **dict(zip(names, rest))),
             [(0, 0.1, 256, 1024, 10), (5, 0.1, 256, 1024, 10), (50, 0.1, 256, 1024, 10)], hidden,
             "step={}, base_lr={}, base_batch={}, batch={}, warmup_steps={}",
             text("checks_2_1.what_lr"), dtype="float64")


@graded("ex2_1_hours_per_epoch")
def check_hours_per_epoch(student_fn):
    draw = drawing(f"{TAG}/hours_per_epoch")
    # the batch divides the samples in the 1st and 3rd hidden case, not in the 2nd (a partial
    # last batch, so floor and ceil differ); seconds in tenths
    b1, b2, b3 = draw(10, 8, 512, 32), draw(20, 3, 64, 7), draw(30, 16, 1024, 64)
    partial = 1 + draw(22, 0, 10**6, 1) % (b2 - 1)
    hidden = [(b1 * draw(11, 1000, 100_000, 31250), b1, draw(12, 1, 20, 5) / 10),
              (b2 * draw(21, 1, 1000, 14) + partial, b2, draw(23, 10, 600, 360) / 10),
              (b3 * draw(31, 10_000, 1_000_000, 78125), b3, draw(32, 1, 20, 8) / 10)]
    chapter = (5_000_000, 16, 0.8)
    label = text("checks_2_1.case_case_study", call=f"hours_per_epoch{chapter}")
    hours = lambda n, b, s: -(-n // b) * s / 3600  # noqa: E731 - the last, partial batch too
    with case(label):
        got = student_fn(*chapter)
        if isinstance(got, numbers.Real) and numerics.is_close(float(got), hours(*chapter) / 10,
                                                               dtype="float64"):
            raise ExerciseFailed(text("checks_2_1.ten_epochs", got=got))
    _compare(student_fn, hours, [chapter], hidden, lambda *args: label,
             text("checks_2_1.what_hours"), dtype="float64")
