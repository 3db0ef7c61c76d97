"""2.3's exercise 5 (the balanced partition): the hidden instances separate the plausible wrong
algorithms from the right one under EVERY secret (issue 37, item 4).

A dynamic programme that minimises the sum of squares passed 177 of 200 secrets and a greedy
fill 116 of 200: random instances rarely tell them from the minimax optimum. Now every secret
draws its hidden instances from ``HARD_PARTITIONS`` (chosen, reversed or not, scaled), each of
which, read either way round, no wrong algorithm below solves: the first test proves it instance
by instance, with every tie of an objective counted against the wrong answer (a student's DP may
break ties either way). The second grades wrong answers, as a student writes them, under many
secrets: 0 points each time; a right answer by binary search keeps full marks (the reference,
a DP, is tests/catalog/test_secrets.py's).
"""
from __future__ import annotations

import contextlib
import io
import itertools
import os
import random

import pytest

from labs import pipeline as pp
from labs.exercises import pipeline_checks as pc
from labs.exercises.checks import ExerciseFailed
from labs.exercises.secret import SECRET_ENV

# --- wrong algorithms, each returning every partition it may give (ties included) ----------


def _sums(costs, bounds):
    return [sum(costs[a:b]) for a, b in bounds]


def _all(n, p):
    for cuts in itertools.combinations(range(1, n), p - 1):
        edges = (0, *cuts, n)
        yield list(zip(edges, edges[1:]))


def _argmins(objective):
    def partitions(costs, p):
        scored = [(objective(_sums(costs, b)), b) for b in _all(len(costs), p)]
        least = min(s for s, _ in scored)
        return [b for s, b in scored if abs(s - least) < 1e-9]
    return partitions


def _greedy(rule, adaptive, tie=False):
    """Fill a stage from the left until the next layer would pass the mean ("before"), once it
    reached it ("after"), or whichever is nearer ("nearest"); "cap": before max(mean, max
    layer). The mean fixed (total / p) or recomputed over what is left; p - 1 stages, the rest
    the last; every stage keeps a layer for each stage after it."""
    def partitions(costs, p):
        n, bounds, start = len(costs), [], 0
        for s in range(p - 1):
            target = sum(costs[start:]) / (p - s) if adaptive else sum(costs) / p
            target = max(target, max(costs)) if rule == "cap" else target
            acc, i = costs[start], start + 1
            while i < n - (p - s - 1):
                nxt = acc + costs[i]
                if rule in ("before", "cap"):
                    stop = nxt > target
                else:
                    over, under = abs(nxt - target), abs(acc - target)
                    stop = acc >= target or rule == "nearest" and (over > under or
                                                                   tie and over == under)
                if stop:
                    break
                acc, i = nxt, i + 1
            bounds.append((start, i))
            start = i
        return [bounds + [(start, n)]]
    return partitions


def _nearest_cuts(costs, p):
    """Cut where the running total is nearest to k/p of the total."""
    prefix = list(itertools.accumulate(costs, initial=0))
    cuts = [0]
    for k in range(1, p):
        cuts.append(min(range(cuts[-1] + 1, len(costs) - (p - k) + 1),
                        key=lambda j: abs(prefix[j] - k * prefix[-1] / p)))
    return [list(zip(cuts, cuts[1:] + [len(costs)]))]


def _split_heaviest(costs, p):
    """Start with one stage; split the costliest stage at its most even point, p - 1 times."""
    bounds = [(0, len(costs))]
    while len(bounds) < p:
        a, b = max((x for x in bounds if x[1] - x[0] > 1), key=lambda x: sum(costs[x[0]:x[1]]))
        j = min(range(a + 1, b), key=lambda j: max(sum(costs[a:j]), sum(costs[j:b])))
        bounds = sorted([x for x in bounds if x != (a, b)] + [(a, j), (j, b)])
    return [bounds]


def _even(costs, p):
    return [pp.partition_evenly(len(costs), p)]


def _reversed(algorithm):
    def partitions(costs, p):
        n = len(costs)
        return [[(n - b, n - a) for a, b in bounds[::-1]] for bounds in algorithm(costs[::-1], p)]
    return partitions


WRONG = {
    "sum of squares": _argmins(lambda s: sum(x * x for x in s)),
    "sum of deviations": _argmins(lambda s: sum(abs(x - sum(s) / len(s)) for x in s)),
    "max - min": _argmins(lambda s: max(s) - min(s)),
    "even by count": _even,
    "cuts nearest k/p": _nearest_cuts,
    "split the heaviest": _split_heaviest,
    **{f"greedy {rule}{', recomputed' if adaptive else ''}{', ties close' if tie else ''}":
       _greedy(rule, adaptive, tie)
       for rule in ("before", "after", "nearest", "cap") for adaptive in (False, True)
       for tie in ((False, True) if rule == "nearest" else (False,))},
}
WRONG.update({f"{name}, from the right": _reversed(f) for name, f in list(WRONG.items())
              if name.startswith(("greedy", "cuts", "split"))})


@pytest.mark.parametrize("instance", pc.HARD_PARTITIONS)
def test_every_hidden_instance_defeats_every_wrong_algorithm_both_ways(instance):
    digits, p = instance.split(":")
    for costs in ([int(d) for d in digits], [int(d) for d in digits[::-1]]):
        best = max(pp.stage_costs(costs, pp.balanced_partition(costs, int(p))))
        for name, algorithm in WRONG.items():
            for bounds in algorithm(costs, int(p)):
                assert max(_sums(costs, bounds)) > best, (name, costs, bounds, best)


# --- graded under many secrets -------------------------------------------------------------

def _as_answer(algorithm):
    return lambda costs, p: algorithm(costs, p)[-1]


def _binary_search(costs, n_stages):
    """A right answer another way: bisect the costs a stage can have for the least one that
    n_stages stages keep to, then cut n_stages stages under it."""
    def stages_needed(cap):
        used, acc = 1, 0
        for c in costs:
            used, acc = (used + 1, c) if acc + c > cap else (used, acc + c)
        return used
    n = len(costs)
    caps = sorted({sum(costs[a:b]) for a in range(n) for b in range(a + 1, n + 1)
                   if sum(costs[a:b]) >= max(costs)})
    low, high = 0, len(caps) - 1
    while low < high:  # the least cap that n_stages stages can keep to
        mid = (low + high) // 2
        low, high = (low, mid) if stages_needed(caps[mid]) <= n_stages else (mid + 1, high)
    bounds, start, acc = [], 0, 0
    for i, c in enumerate(costs):
        if i > start and (acc + c > caps[low] or n - i == n_stages - len(bounds) - 1):
            bounds.append((start, i))
            start, acc = i, 0
        acc += c
    return bounds + [(start, n)]


@contextlib.contextmanager
def _secret(value):
    saved = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = value
    try:
        yield
    finally:
        os.environ.pop(SECRET_ENV) if saved is None else os.environ.__setitem__(SECRET_ENV, saved)


SECRETS = [f"{random.Random(k).getrandbits(64):016x}" for k in range(40)]


@pytest.mark.parametrize("name", ["sum of squares", "greedy before", "greedy after, recomputed",
                                  "greedy nearest", "cuts nearest k/p", "max - min"])
def test_wrong_answers_score_zero_under_every_secret(name):
    answer = _as_answer(WRONG[name])
    for secret in SECRETS:
        with _secret(secret), contextlib.redirect_stdout(io.StringIO()), \
                pytest.raises(ExerciseFailed):
            pc.check_balanced_partition(answer)


def test_the_right_answers_keep_full_marks_under_every_secret():
    for secret in SECRETS:
        with _secret(secret), contextlib.redirect_stdout(io.StringIO()):
            pc.check_balanced_partition(_binary_search)
