"""Checks of notebook 2.5's capstone exercises, graded by the planner (:mod:`labs.planner`):
``check_capstone`` (ex2_5_capstone, 4 points; its rules: labs.exercises.capstone_rules),
``check_diagnose`` (ex2_5_diagnose, 2: the first rule a layout breaks) and
``check_training_days`` (ex2_5_training_days, 2: 6·N·D in days).
Owns: exercises 2 and 3's cases and references. Must not: import the grader or the planner
widget (labs.planner.widgets, labs.planner.view), or print (the verdict is labs.exercises.checks').
"""

from __future__ import annotations

import enum
import math
import numbers
import random

from labs.formulas import cost
from labs import planner as pl
from labs.exercises.capstone_rules import (Scenario, capstone_scenarios, decoder, grade_answer,
                                           scenario, shown_scenarios)
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, case, graded
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import lazy, text
from labs.planner import model as planner_model

__all__ = ["shown_scenarios", "check_capstone", "REASONS", "RULES", "broken_rules", "diagnose",
           "diagnose_cases", "check_diagnose", "training_days", "check_training_days"]

TAG = "2.5"  # the domain of this module's hidden seeds (labs.exercises.secret)

#: What diagnose may answer: a rule's key and its meaning (printed by the notebook), in order.
REASONS = {"ok": lazy("checks_2_5.reason_ok"), "gpu_count": lazy("checks_2_5.reason_gpu_count"),
           "tp_node": lazy("checks_2_5.reason_tp_node"),
           "tp_heads": lazy("checks_2_5.reason_tp_heads"), "batch": lazy("checks_2_5.reason_batch"),
           "pipeline": lazy("checks_2_5.reason_pipeline"),
           "memory": lazy("checks_2_5.reason_memory")}
RULES = tuple(REASONS)[1:]  # the order they are checked in


@graded("ex2_5_capstone")
def check_capstone(student_fn):
    """student_fn(model, cluster, train) -> an answer (capstone_rules.grade_answer)."""
    for k, (shown, hidden) in enumerate(capstone_scenarios()):
        with case(text("checks_2_5.case_hidden_scenario", n=k, name=shown.name) if hidden
                  else text("checks.case_about", what=shown.name), hidden=hidden):
            grade_answer(shown, student_fn(*shown[1:]))


# --- exercise 2: why does a layout fail? -------------------------------------------------------

def broken_rules(model: pl.Model, cluster: pl.Cluster, train: pl.Training,
                 config: pl.Config) -> tuple:
    """Every rule of ``RULES`` that ``config`` breaks, in order (the first: exercise 2's answer);
    the pipeline's are pl.estimate's layout rules, memory is its ``fits`` (whether the layout
    exists or not: the fullest stage's :func:`labs.planner.model.stage_memory`)."""
    tp, pp, dp, mb, v = config.tp, config.pp, config.dp, config.micro_batch, config.v
    layout = pl.Config(tp, pp, dp, mb, v, config.zero_stage, train.recompute)
    peak = max((planner_model.stage_memory(model, cluster, train, layout, stage, pl.Efficiency())
                for stage in {0, pp - 1}), key=lambda mem: mem.total)
    m = train.global_batch // (dp * mb)
    broken = (tp * pp * dp != cluster.n_gpus, tp > cluster.gpus_per_node,
              model.n_heads % tp or model.n_kv_heads % tp, train.global_batch % (dp * mb),
              pp > model.n_layers or v > 1 and (pp == 1 or model.n_layers % (pp * v) or m % pp),
              peak.total > peak.usable)
    return tuple(rule for rule, out in zip(RULES, broken) if out)


def diagnose(model: pl.Model, cluster: pl.Cluster, train: pl.Training,
             config: pl.Config) -> str:
    """The reference: the first rule ``config`` breaks (:func:`broken_rules`), or "ok"."""
    return (*broken_rules(model, cluster, train, config), "ok")[0]


def _kinds(scenario: Scenario, config: pl.Config) -> set:
    """The kinds of case ``config`` is in ``scenario`` (see ``_REQUIRED``)."""
    _, model, cluster, train = scenario
    tp, pp, dp, mb, batch = config.tp, config.pp, config.dp, config.micro_batch, train.global_batch
    broken = broken_rules(model, cluster, train, config)
    first = (*broken, "ok")[0]
    kinds = {("first", first), ("pair", *broken[:2]) if len(broken) > 1 else ("only", first)}
    extra = {("gpus over", tp * pp * dp > cluster.n_gpus): first == "gpu_count",
             ("tp = per node",): tp == cluster.gpus_per_node and first != "tp_node",
             ("kv heads only",): first == "tp_heads" and model.n_heads % tp == 0,
             ("batch", batch % dp == 0, batch % mb == 0): first == "batch",
             ("pp > layers", pp > model.n_layers): first == "pipeline",
             ("nodes not of 8",): (tp > 8) != (tp > cluster.gpus_per_node) and first != "gpu_count",
             ("zero decides",): first in ("ok", "memory") and config.zero_stage == 1
             and diagnose(model, cluster, train, pl.Config(tp, pp, dp, mb, config.v)) != first}
    return kinds | {kind for kind, holds in extra.items() if holds}


#: What every secret's hidden layouts include (:func:`_kinds`), so that every other order of the
#: rules fails: each reason first, alone, and with the next rule broken too; GPUs over and
#: under; tp = a node of 4, 8, 16 GPUs; ZeRO-1.
_REQUIRED = ({("first", r) for r in REASONS} | {("only", r) for r in RULES}
             | {("pair", a, b) for a, b in zip(RULES, RULES[1:])}
             | {("gpus over", True), ("gpus over", False), ("tp = per node",),
                ("kv heads only",), ("batch", True, False), ("batch", False, True),
                ("pp > layers", True), ("pp > layers", False), ("nodes not of 8",),
                ("zero decides",)})


def diagnose_cases() -> list:
    """``[(scenario, config, hidden)]``: layouts shown, then drawn on three hidden clusters (of
    4, 8, 16 GPUs per node, sized from the secret) until every kind of ``_REQUIRED`` occurs."""
    gpt3, C = shown_scenarios()[0], pl.Config
    gpt2 = scenario(pl.Model(n_layers=12, hidden=768, n_heads=12, seq_len=1024, vocab=50257),
                    "A100-40GB", 16, 8, 512, "GPT-2 124M")
    cases = [(gpt3, c, False) for c in (C(8, 16, 8), C(8, 16, 16), C(16, 8, 8), C(1, 64, 16),
                                        C(4, 32, 8, micro_batch=8))]
    cases += [(gpt2, c, False) for c in (C(1, 1, 16), C(8, 1, 2), C(2, 1, 8, micro_batch=3),
                                         C(1, 16, 1))]
    hidden = [scenario(model, gpu, sizes[hidden_int(TAG, 70 + k, 0, 2, 1)], per_node,
                       batches[hidden_int(TAG, 80 + k, 0, 2, 1)])
              for k, (model, gpu, sizes, per_node, batches) in enumerate((
                  (decoder(40, 40, None, 2048, 50257, False), "A100-40GB", (64, 128, 256), 4,
                   (480, 1440, 2400)),
                  (decoder(80, 64, 8, 4096, 128256, True), "H100-80GB", (96, 192, 384), 8,
                   (768, 1536, 3072)),
                  (decoder(32, 64, 8, 2048, 32000, True), "V100-32GB", (64, 128, 256), 16,
                   (256, 512, 1024))))]
    rng, seen = random.Random(hidden_seed(TAG, 53)), set()
    for draw in range(50_000):
        where = hidden[draw % 3]
        n = where.cluster.n_gpus
        tp = rng.choice([1, 2, 3, 4, 6, 8, 12, 16, 32])
        pp = rng.choice([d for d in range(1, n + 1) if n % (tp * d) == 0] or [1, 2, 3])
        dp = n // (tp * pp) if n % (tp * pp) == 0 and rng.random() < 0.8 else rng.choice([1, 3, 8])
        config = C(tp, pp, dp, rng.choice([1, 2, 3, 4, 8, 16]), rng.choice([1, 1, 2, 3, 4]),
                   rng.choice([0, 1]))
        if new := _kinds(where, config) - seen:
            seen |= new
            cases.append((where, config, True))
        if draw > 1500 and seen >= _REQUIRED:
            return cases
    raise RuntimeError(f"hidden layouts lack {_REQUIRED - seen}")  # a test draws 1,000 secrets


@graded("ex2_5_diagnose")
def check_diagnose(student_fn):
    """student_fn(model, cluster, train, config) -> the key of ``REASONS`` (or an Enum of it)."""
    hidden_cases = 0
    for where, config, hidden in diagnose_cases():
        hidden_cases += hidden
        with case(text("checks.case_hidden", n=hidden_cases) if hidden else text(
                "checks.case_about", what=text("checks_2_5.scenario_config", name=where.name,
                                               config=config)), hidden=hidden):
            got, expected = student_fn(*where[1:], config), diagnose(*where[1:], config)
            got = got.value if isinstance(got, enum.Enum) else got
            if not isinstance(got, str) or got not in REASONS:
                raise ExerciseFailed(text("checks_2_5.not_a_reason", reasons=list(REASONS),
                                          got=got))
            if got != expected:
                raise ExerciseFailed(text("checks_2_5.wrong_reason", expected=expected,
                                          expected_meaning=REASONS[expected], got=got,
                                          got_meaning=REASONS[got]))


# --- exercise 3: how long does a run take? -----------------------------------------------------

def training_days(n_params: float, tokens: float, n_gpus: int, peak_flops: float,
                  mfu: float) -> float:
    """Reference: days to train on ``tokens`` at utilisation ``mfu`` of ``n_gpus`` GPUs of
    ``peak_flops``: 6·N·D FLOPs (Kaplan et al., arXiv:2001.08361 §2.1) / achieved FLOP/s."""
    seconds = cost.training_flops(n_params, tokens) / (peak_flops * mfu * n_gpus)
    return seconds / (24 * 3600)


@graded("ex2_5_training_days")
def check_training_days(student_fn):
    """student_fn(n_params, tokens, n_gpus, peak_flops, mfu) -> days, any numbers.Real."""
    def compare(*args):
        expected, got = training_days(*args), student_fn(*args)
        if not isinstance(got, numbers.Real) or isinstance(got, bool):
            raise ExerciseFailed(text("checks_2_5.days_not_a_number", got=got))
        if math.isclose(float(got), expected, rel_tol=1e-6):
            return
        slips = ((3, "checks_2_5.days_why_forward_only"), (4 / 3, "checks_2_5.days_why_recompute"),
                 (86400, "checks_2_5.days_why_seconds"), (24, "checks_2_5.days_why_hours"),
                 (6, "checks_2_5.days_why_six"), (100, "checks_2_5.days_why_percent"),
                 (args[2], "checks_2_5.days_why_gpus"))
        why = next((text("checks_2_5.days_off_by", ratio=ratio, why=text(key, n_gpus=args[2]))
                    for factor, key in slips for ratio in (factor, 1 / factor)
                    if math.isclose(float(got), expected * ratio, rel_tol=1e-6)), "")
        raise ExerciseFailed(text("checks_2_5.days_wrong", expected=expected, got=float(got),
                                  hint=why))
    rng = random.Random(hidden_seed(TAG, 59))
    hidden = [(rng.choice([7e9, 13e9, 70e9, 175e9, 405e9]), rng.choice([0.3e12, 1e12, 15e12]),
               rng.choice([64, 512, 2048, 16384]), rng.choice([125e12, 312e12, 989e12]),
               rng.choice([0.3, 0.4, 0.5])) for _ in range(6)]
    each_case([(65.2e9, 1.4e12, 2048, 312e12, 0.476), (65.2e9, 1.4e12, 128, 312e12, 38 / 312)],
              hidden, lambda n, tokens, gpus, _, mfu: text("checks.case_call", call=text(
                  "checks_2_5.days_case", n=n, tokens=tokens, gpus=gpus, mfu=mfu)), compare)
