"""2.5's capstone (exercise 1) asks for reasoning the planner's ranking does not hand over
(issue 29): the runner-up the chosen layout beats -- the fastest layout of another (tp, pp) -- and
the part of the step that decides between them; unit slips get their own message; the "ZeRO
first" rule fails on the 34B GQA model on 128 H100. Planted answers with their exact grades
(4/4 passes, anything else raises: 0/4), compared with the messages by key and numbers."""
from __future__ import annotations

import pytest

from labs import planner as pl
from labs.exercises import capstone_rules as cr
from labs.exercises import summary_checks as sc
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from labs.planner.types import GiB

SHOWN = sc.shown_scenarios()
GPT3, SEVEN_B, M34 = SHOWN


def _layout(est: pl.Estimate) -> dict:
    return cr.layout_of(est.config)


def _fails(student) -> str:
    """The failure message of a 0/4 grade (check_capstone raises on anything but 4/4)."""
    with pytest.raises(ExerciseFailed) as info:
        sc.check_capstone(student)
    return str(info.value)


def _case(scenario) -> str:
    return str(text("checks.case_about", what=scenario.name))


def test_reference_gets_four_points_and_names_a_runner_up_of_another_split():
    assert sc.check_capstone.points == 4 and sc.check_capstone(sc.plan_training) is None
    for s in SHOWN:
        answer = sc.plan_training(s.model, s.cluster, s.train)
        rival = answer["runner_up"]
        assert (rival["tp"], rival["pp"]) != (answer["tp"], answer["pp"])
        assert answer["deciding"] in cr.DECIDING and answer["deciding"] != "memory"


def test_the_planners_first_plan_alone_scores_zero():
    """The old answer -- pl.plan(...)[0] and its own numbers -- no longer passes."""
    def student(model, cluster, train):
        best = next(e for e in pl.plan(model, cluster, train, top=10**6)
                    if e.config.tp <= cluster.gpus_per_node)
        return dict(_layout(best), memory_gib=best.memory.total / GiB,
                    step_time_s=best.step_time_s)
    message = _fails(student)
    assert str(text("checks_2_5.missing_keys", missing=["runner_up", "deciding"],
                    keys=list(sc.KEYS))) in message


def test_the_planners_second_plan_is_not_the_runner_up_when_it_is_the_same_split():
    """Handing over the planner's list verbatim (first and second, with the right deciding part
    for that pair) passes GPT-3, whose second plan is another split, and fails the 7B model,
    whose second plan only changes the micro-batch and the ZeRO stage of TP 1 x DP 32."""
    def student(model, cluster, train):
        plans = [e for e in pl.plan(model, cluster, train, top=10**6)
                 if e.config.tp <= cluster.gpus_per_node]
        first, second = plans[0], plans[1]
        return dict(_layout(first), memory_gib=first.memory.total / GiB,
                    step_time_s=first.step_time_s, runner_up=_layout(second),
                    deciding=cr.deciding(first, second))
    plans = cr.fitting(SEVEN_B.model, SEVEN_B.cluster, SEVEN_B.train)
    assert (plans[1].config.tp, plans[1].config.pp) == (plans[0].config.tp, plans[0].config.pp)
    message = _fails(student)
    assert _case(SEVEN_B) in message
    assert str(text("checks_2_5.runner_up_same_family", config=plans[0].config,
                    rival=plans[1].config)) in message


@pytest.mark.parametrize("key,factor,slip", [("memory_gib", GiB / 1e9, "checks_2_5.unit_gb"),
                                             ("memory_gib", GiB, "checks_2_5.unit_bytes"),
                                             ("step_time_s", 1e3, "checks_2_5.unit_ms")])
def test_each_unit_slip_scores_zero_with_its_own_message(key, factor, slip):
    def student(model, cluster, train):
        answer = sc.plan_training(model, cluster, train)
        return dict(answer, **{key: answer[key] * factor})
    expected = sc.plan_training(GPT3.model, GPT3.cluster, GPT3.train)[key]
    message = _fails(student)
    assert _case(GPT3) in message
    assert str(text(slip, key=key, got=expected * factor, expected=expected)) in message


def test_unit_mistake_tells_the_slips_from_a_plain_error():
    assert cr.unit_mistake("memory_gib", 10 * GiB / 1e9, 10.0) == "checks_2_5.unit_gb"
    assert cr.unit_mistake("memory_gib", 10 * GiB, 10.0) == "checks_2_5.unit_bytes"
    assert cr.unit_mistake("step_time_s", 12_500.0, 12.5) == "checks_2_5.unit_ms"
    assert cr.unit_mistake("memory_gib", 11.0, 10.0) is None  # 10 % off, no unit explains it
    assert cr.unit_mistake("step_time_s", 12.5 / 60, 12.5) is None


def test_zero_first_rule_scores_zero_on_the_34b_gqa_model():
    """2.5's "ask first whether ZeRO/FSDP is enough": pure ZeRO-3 (DP over all 128 H100, the
    recipe's micro-batch 1) fits the 34B model but re-gathers the parameters for each of 8
    micro-batches: 49.4 s against the best 12.5 s (TP 2 x PP 4 x DP 16, no recomputation)."""
    def student(model, cluster, train):  # the rule on the 34B case, the reference elsewhere
        if model != M34.model:
            return sc.plan_training(model, cluster, train)
        est = pl.estimate(model, cluster, train, tp=1, pp=1, dp=cluster.n_gpus, zero_stage=3)
        return dict(sc.plan_training(model, cluster, train), **_layout(est),
                    memory_gib=est.memory.total / GiB, step_time_s=est.step_time_s)
    zero = pl.estimate(M34.model, M34.cluster, M34.train, tp=1, pp=1, dp=128, zero_stage=3)
    best = cr.fitting(M34.model, M34.cluster, M34.train)[0]
    assert zero.fits and zero.n_microbatches == 8
    assert zero.step_time_s == pytest.approx(49.39, abs=0.05)
    assert best.step_time_s == pytest.approx(12.46, abs=0.05)
    assert (best.config.tp, best.config.pp, best.config.zero_stage) == (2, 4, 1)
    message = _fails(student)
    assert _case(M34) in message
    assert str(text("checks_2_5.too_slow", config=zero.config, step=zero.step_time_s,
                    best=best.step_time_s, slower=zero.step_time_s / best.step_time_s - 1,
                    tolerance=sc.SPEED_TOLERANCE, bubble=zero.bubble,
                    exposed=sum(zero.exposed_s.values()))) in message


def test_a_wrong_deciding_part_scores_zero_and_shows_both_critical_paths():
    def student(model, cluster, train):
        answer = sc.plan_training(model, cluster, train)
        wrong = "bubble" if answer["deciding"] != "bubble" else "compute"
        return dict(answer, deciding=wrong)
    message = _fails(student)
    answer = sc.plan_training(GPT3.model, GPT3.cluster, GPT3.train)
    assert _case(GPT3) in message
    assert f"'{answer['deciding']}'" in message  # the expected key, as repr


def test_a_runner_up_faster_than_the_choice_or_a_missing_one_scores_zero():
    def swapped(model, cluster, train):  # chose the runner-up, named the best as runner-up
        answer = sc.plan_training(model, cluster, train)
        rival = pl.estimate(model, cluster, train, **answer["runner_up"])
        return dict(answer["runner_up"], memory_gib=rival.memory.total / GiB,
                    step_time_s=rival.step_time_s, deciding="dp",
                    runner_up={k: answer[k] for k in sc.LAYOUT_KEYS})
    plans = cr.fitting(GPT3.model, GPT3.cluster, GPT3.train)
    rival = cr.runner_up(plans, plans[0].config)
    assert str(text("checks_2_5.runner_up_faster", config=rival.config, step=rival.step_time_s,
                    rival=plans[0].config, rival_step=plans[0].step_time_s)) in _fails(swapped)

    def none(model, cluster, train):
        return dict(sc.plan_training(model, cluster, train), runner_up=None, deciding="memory")
    assert str(text("checks_2_5.runner_up_missing", config=plans[0].config)) in _fails(none)


def test_step_parts_add_up_and_deciding_is_the_largest_loss():
    for s in SHOWN:
        plans = cr.fitting(s.model, s.cluster, s.train)
        best, rival = plans[0], cr.runner_up(plans, plans[0].config)
        for est in (best, rival):
            parts = cr.step_parts(est)
            assert sum(parts.values()) == pytest.approx(est.step_time_s, rel=1e-9)
            assert min(parts.values()) >= 0
        ours, theirs = cr.step_parts(best), cr.step_parts(rival)
        key = cr.deciding(best, rival)
        assert all(theirs[key] - ours[key] >= theirs[k] - ours[k] for k in ours)
    assert cr.deciding(plans[0], None) == "memory"
