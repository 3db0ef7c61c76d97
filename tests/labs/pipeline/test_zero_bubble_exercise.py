"""Notebook 2.3's exercise 7 (the ZB-H1 order from 1F1B's): its check, on paper.

The solution cell of solutions/2.3 (both editions) gets 3/3; planted wrong answers get 0/3 with
their own message: 1F1B's order unchanged (no W), a W before its own B, every W right after its
B (nothing owed: wrong from stage 1 on), stage 0's order for every stage; the untouched student
stub is reported not done. Verdicts are compared by message key and numbers, not sentences.
"""
from __future__ import annotations

import pytest

from labs import pipeline as pp
from labs.exercises import generate
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.exercises.pipeline_checks import check_zb_h1_order
from tests.support.exercise_cells import cell_source, define, replaced, verdict
from tests.support.messages import said

pytestmark = pytest.mark.numerics  # a course check: its simulated idle share vs the formula

NAME = "2.3_pipeline_parallel.ipynb"
POINTS = 3


def _source(folder: str = "solutions") -> str:
    return cell_source(NAME, "ex2_3_zb_h1_order_solution", folder)


def _fn(source: str):
    (defined,) = define(source, ("my_zb_h1_order",), "zb_submission", pp=pp)
    return defined


def _failed(capsys, fn) -> str:
    """The check's failure message, after asserting the verdict: 0 of 3 points."""
    with pytest.raises(ExerciseFailed) as info:
        check_zb_h1_order(fn)
    out = verdict(capsys).splitlines()[0]
    said(out, "checks.verdict_failed", exercise="Exercise 7", points=POINTS, start=True)
    return str(info.value)


@pytest.fixture(autouse=True)
def english(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")


@pytest.mark.parametrize("folder", ["solutions", "solutions/en"])
def test_the_solution_gets_full_marks(folder, capsys):
    check_zb_h1_order(_fn(_source(folder)))
    said(verdict(capsys).strip(), "checks.verdict_passed", exercise="Exercise 7", points=POINTS)


def test_1f1b_unchanged_is_told_it_has_no_w(capsys):
    fn = _fn(replaced(_source(), "if i >= stage:", "if False:").replace(
        'return order + [f"W{i}" for i in owed]', "return order"))
    assert "W" not in "".join(fn(4, 6, 1))
    label, rest = _failed(capsys, fn).split(": ", 1)
    said(label, "checks.case_call", call="my_zb_h1_order(4, 6, 1)")
    said(rest, "checks_2_3.zb_no_w")


def test_a_w_before_its_b_is_refused(capsys):
    source = replaced(_source(), '''        owed.append(i)
        order.append(f"B{i}")''', '''        owed.append(i)
        if i >= stage:
            order.append(f"W{i}")
            owed.pop()
        order.append(f"B{i}")''')
    source = replaced(source, '''        if i >= stage:  # stage s owes its first s W
            order.append(f"W{owed.pop(0)}")''', "")
    label, rest = _failed(capsys, _fn(source)).split(": ", 1)
    said(label, "checks.case_call", call="my_zb_h1_order(4, 6, 1)")  # stage 0 owes no W
    said(rest, "checks_2_3.zb_w_before_b", w="W1", index=5)  # F0 F1 F2 B0 F3 W1 B1


def test_every_w_right_after_its_b_is_wrong_from_stage_1_on(capsys):
    fn = _fn(replaced(_source(), "if i >= stage:", "if True:"))
    assert fn(4, 6, 0) == pp.compute_order(pp.zb_h1_order(4, 6, 0))  # stage 0 owes nothing
    message = _failed(capsys, fn)
    label, rest = message.split(": ", 1)
    said(label, "checks.case_call", call="my_zb_h1_order(4, 6, 1)")
    found = said(rest, "checks_2_3.order_wrong")
    assert (found["index"], found["expected"], found["got"]) == ("5", "F3", "W0")


def test_stage_0s_order_for_every_stage_is_wrong(capsys):
    fn = _fn(replaced(_source(), "warmup = min(n_stages - stage - 1, m)",
                      "warmup = min(n_stages - 1, m)\n    stage = 0"))
    message = _failed(capsys, fn)
    label, rest = message.split(": ", 1)
    said(label, "checks.case_call", call="my_zb_h1_order(4, 6, 1)")
    found = said(rest, "checks_2_3.order_wrong")
    assert (found["index"], found["expected"], found["got"]) == ("4", "B0", "F3")


def test_the_untouched_stub_is_not_done(capsys):
    stub, _ = generate.strip_solutions(_source(), lang="en")
    with pytest.raises(ExerciseIncomplete):
        check_zb_h1_order(_fn(stub))
    said(verdict(capsys).splitlines()[0], "checks.verdict_incomplete", exercise="Exercise 7",
         start=True)
