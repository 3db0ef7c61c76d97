"""The check of notebook 2.3's 练习 7, the ZB-H1 order built from 1F1B's (served to the notebook by
labs.exercises.pipeline_checks, whose module the notebook imports).

The student's ``my_zb_h1_order(n_stages, n_microbatches, stage)`` returns one stage's compute
order as strings ('F0', 'B0', 'W0', ...) and is compared action for action with
:func:`labs.pipeline.schedules.zb_h1_order` (torch's ZB1P order) on shown and hidden (p, m,
stage) cases, m < p among them. Before the comparison, two mistakes get their own message: an
order without W (1F1B's, unchanged) and a W before its own B. Then the whole p = 4, m = 8
schedule runs in the simulator, with t_F = t_B = t_W: its idle share must be labs.cost's
(p-1)(t_F+t_B-t_W) formula's.

Owns: 练习 7's cases. Must not: import the grader or labs.exercises.pipeline_checks (which serves
this check), or print (the verdict is labs.exercises.checks').
"""
from __future__ import annotations

import random

from labs import cost
from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed, case, graded
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_zb_h1_order"]

SECRET_TAG = "2.3"  # the domain of 2.3's hidden seeds (as labs.exercises.pipeline_checks)
SHOWN = [(4, 6, 1), (4, 6, 3)]


def _cases() -> list[tuple[int, int, int]]:
    """Hidden (p, m, stage): six drawn from the secret's seed, one with m < p, one last stage."""
    rng = random.Random(hidden_seed(SECRET_TAG, 47))
    cases = []
    for _ in range(6):
        p = rng.randint(2, 6)
        cases.append((p, rng.randint(1, 10), rng.randrange(p)))
    p = hidden_int(SECRET_TAG, 14_000, 3, 6, 5)
    cases.append((p, hidden_int(SECRET_TAG, 14_001, 1, p - 1, 2),
                  hidden_int(SECRET_TAG, 14_002, 1, p - 1, 2)))  # m < p
    cases.append((p, hidden_int(SECRET_TAG, 14_003, p, 12, 9), p - 1))  # the last stage
    return cases


def _strings(got) -> list[str]:
    if not isinstance(got, (list, tuple)):
        raise ExerciseFailed(text("checks_2_3.order_not_a_list", type=type(got).__name__))
    return [str(a) for a in got]


def _compare(got: list[str], expected: list[str]) -> None:
    if got and not any(a.startswith("W") for a in got):
        raise ExerciseFailed(text("checks_2_3.zb_no_w"))
    for i, a in enumerate(got):
        if a.startswith("W") and f"B{a[1:]}" in got and got.index(f"B{a[1:]}") > i:
            raise ExerciseFailed(text("checks_2_3.zb_w_before_b", w=a, index=i))
    if sorted(got) != sorted(expected):
        missing = sorted(set(expected) - set(got))
        extra = sorted({a for a in got if a not in expected or got.count(a) > 1})
        raise ExerciseFailed(text("checks_2_3.zb_actions_wrong", missing=missing, extra=extra))
    if got != expected:
        first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        raise ExerciseFailed(text("checks_2_3.order_wrong", index=first + 1, expected=expected[first],
                                  got=got[first], head=expected[:first + 2]))


@graded("ex2_3_zb_h1_order")
def check_zb_h1_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the ZB-H1 compute order as strings."""
    for k, (p, m, stage) in enumerate(SHOWN + _cases()):
        hidden = k >= len(SHOWN)
        label = (text("checks.case_hidden", n=k - len(SHOWN) + 1) if hidden
                 else text("checks.case_call", call=f"my_zb_h1_order({p}, {m}, {stage})"))
        with case(label, hidden=hidden):
            expected = pp.compute_order(pp.zb_h1_order(p, m, stage))
            _compare(_strings(student_fn(p, m, stage)), expected)
    p, m = 4, 8
    with case(text("checks.case_about",
                   what=text("checks_2_3.simulated_schedule", stages=p, micro=m))):
        orders = [[pp.Action(s[0], int(s[1:]), stage) for s in _strings(student_fn(p, m, stage))]
                  for stage in range(p)]
        timeline = pp.simulate(pp.add_communication(orders, p), forward_s=1.0, backward_s=1.0,
                               weight_s=1.0)
        formula = cost.zb_h1_bubble_fraction(p, m)
        idle = max(timeline.idle_fraction())
        if abs(idle - formula) > 1e-9:
            raise ExerciseFailed(text("checks_2_3.zb_bubble", idle=idle, formula=formula))
