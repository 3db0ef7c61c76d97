"""Checks of the capstone exercises of notebook 2.5 (the summary), graded by the planner
(:mod:`labs.planner`) on shown and hidden scenarios::

    check_capstone(plan_training)   # ex2_5_capstone, 4 points: a layout, its numbers, the
                                    # runner-up it beats and what decides between them
    check_diagnose(diagnose)        # ex2_5_diagnose, 2 points: why a layout fails
    check_training_days(training_days)  # ex2_5_training_days, 2 points: 6·N·D in days

The reference solutions are :func:`plan_training`, :func:`diagnose` and
:func:`training_days`; the scenarios are
:func:`shown_scenarios` (printed in the notebook) and hidden ones (models and clusters the
notebook does not show; with the instructor's secret set, their cluster sizes, batches and
random layouts are drawn from it: :mod:`labs.exercises.secret`).

Owns: 2.5's checks, reference solutions and scenarios. Must not: import the grader or the planner
widget (labs.planner.widgets, labs.planner.view), or print (the verdict is labs.exercises.checks').
"""

from __future__ import annotations

import random

from labs.exercises.capstone_rules import (LAYOUT_KEYS, check_deciding, check_runner_up,
                                           deciding, fitting, layout_of, runner_up, unit_mistake)
from labs.exercises.checks import ExerciseFailed, case, graded
from labs.exercises.secret import active, hidden_int, hidden_seed
from labs import cost
from labs import planner as pl
from labs.memory import RECOMPUTE
from labs.planner.types import GiB
from labs.messages import lazy, text

__all__ = ["Scenario", "shown_scenarios", "plan_training", "check_capstone", "diagnose",
           "check_diagnose", "diagnose_scenarios", "KEYS", "REASONS",
           "SPEED_TOLERANCE", "NUMBER_TOLERANCE", "training_days", "check_training_days"]

#: The domain of this module's hidden seeds and numbers (labs.exercises.secret).
_TAG = "2.5"

KEYS = (*LAYOUT_KEYS, "memory_gib", "step_time_s", "runner_up", "deciding")
SPEED_TOLERANCE = 0.25  # a layout may be this much slower than the planner's best
NUMBER_TOLERANCE = 0.05  # relative error allowed on memory_gib and step_time_s


# What diagnose may answer: reason key -> its meaning, a message shown in the notebook's
# language when printed (labs.messages.Message).
REASONS = {
    "ok": lazy("checks_2_5.reason_ok"),
    "gpu_count": lazy("checks_2_5.reason_gpu_count"),
    "tp_node": lazy("checks_2_5.reason_tp_node"),
    "tp_heads": lazy("checks_2_5.reason_tp_heads"),
    "batch": lazy("checks_2_5.reason_batch"),
    "pipeline": lazy("checks_2_5.reason_pipeline"),
    "memory": lazy("checks_2_5.reason_memory"),
}


class Scenario(tuple):
    """(name, model, cluster, train)."""

    def __new__(cls, name, model, cluster, train):
        return super().__new__(cls, (name, model, cluster, train))

    name = property(lambda self: self[0])
    model = property(lambda self: self[1])
    cluster = property(lambda self: self[2])
    train = property(lambda self: self[3])


def shown_scenarios() -> list:
    """The scenarios the notebook shows: GPT-3 175B on 1024 A100-80GB (PTD-P's run), a 7B
    model on 32 A100-80GB, and 2.5's 34B GQA model on 128 H100 (seq 4096, batch 1024), where
    "ZeRO first" is a slow answer."""
    return [
        Scenario(text("checks_2_5.scenario", model="GPT-3 175B", gpus=1024, gpu="A100-80GB"),
                 pl.Model(n_layers=96, hidden=12288, n_heads=96, seq_len=2048, vocab=51200),
                 pl.Cluster("A100-80GB", 1024), pl.Training(global_batch=1536)),
        Scenario(text("checks_2_5.scenario", model="7B", gpus=32, gpu="A100-80GB"),
                 pl.Model(n_layers=32, hidden=4096, n_heads=32, seq_len=4096, vocab=32000,
                          ffn_hidden=11008, mlp="swiglu", tied_embeddings=False,
                          learned_positions=False),
                 pl.Cluster("A100-80GB", 32), pl.Training(global_batch=512)),
        Scenario(text("checks_2_5.scenario", model="34B GQA", gpus=128, gpu="H100-80GB"),
                 pl.Model(n_layers=48, hidden=8192, n_heads=64, n_kv_heads=8, seq_len=4096,
                          vocab=32000, ffn_hidden=22016, mlp="swiglu", tied_embeddings=False,
                          learned_positions=False, dropout=False),
                 pl.Cluster("H100-80GB", 128), pl.Training(global_batch=1024)),
    ]


#: The clusters and batches the secret may give each hidden scenario (the first of each: the
#: notebook tests' one); a fitting layout with TP inside a node exists for every pair.
_HIDDEN_CHOICES = (
    ((64, 32, 48, 96, 128), (1024, 512, 768, 1536, 2048)),
    ((256, 128, 192, 384, 512), (1024, 512, 768, 1536, 2048)),
    ((128, 64, 96, 192, 256), (1024, 512, 768, 1536, 2048)),
    ((512, 256, 384, 768, 1024), (1536, 1024, 2048, 3072)),
)


def _hidden_scenarios() -> list:
    sizes = []
    for k, (gpus, batches) in enumerate(_HIDDEN_CHOICES):
        sizes.append((gpus[hidden_int(_TAG, 100 + 2 * k, 0, len(gpus) - 1, 0)],
                      batches[hidden_int(_TAG, 101 + 2 * k, 0, len(batches) - 1, 0)]))
    (n1, b1), (n2, b2), (n3, b3), (n4, b4) = sizes
    return [
        Scenario(f"13B / {n1}×A100-40GB",
                 pl.Model(n_layers=40, hidden=5120, n_heads=40, seq_len=2048, vocab=50257),
                 pl.Cluster("A100-40GB", n1), pl.Training(global_batch=b1)),
        Scenario(f"70B GQA / {n2}×H100",
                 pl.Model(n_layers=80, hidden=8192, n_heads=64, n_kv_heads=8, seq_len=4096,
                          vocab=128256, ffn_hidden=28672, mlp="swiglu", tied_embeddings=False,
                          learned_positions=False),
                 pl.Cluster("H100-80GB", n2), pl.Training(global_batch=b2)),
        Scenario(f"30B / {n3}×V100-32GB",
                 pl.Model(n_layers=48, hidden=7168, n_heads=56, seq_len=2048, vocab=51200),
                 pl.Cluster("V100-32GB", n3), pl.Training(global_batch=b3, precision="fp16")),
        Scenario(f"175B / {n4}×H100",
                 pl.Model(n_layers=96, hidden=12288, n_heads=96, seq_len=2048, vocab=51200),
                 pl.Cluster("H100-80GB", n4), pl.Training(global_batch=b4,
                                                          recompute="selective")),
    ]


# --- exercise 1: choose a layout and justify it ------------------------------------------------

def _fitting(model, cluster, train) -> list:
    plans = fitting(model, cluster, train)
    if not plans:
        raise ValueError(text("checks_2_5.nothing_fits",
                              rejected=pl.plan(model, cluster, train).rejected))
    return plans


def plan_training(model: pl.Model, cluster: pl.Cluster, train: pl.Training) -> dict:
    """Reference: the planner's fastest fitting layout with TP inside a node, its estimated peak
    memory per GPU (GiB) and step time (s), the runner-up it beats (the fastest layout of
    another (tp, pp), as a dict of the layout keys; None if no other fits) and what decides
    between them (a key of ``DECIDING``: the part of the step the runner-up loses most in)."""
    plans = _fitting(model, cluster, train)
    best, rival = plans[0], runner_up(plans, plans[0].config)
    return dict(layout_of(best.config), memory_gib=best.memory.total / GiB,
                step_time_s=best.step_time_s,
                runner_up=None if rival is None else layout_of(rival.config),
                deciding=deciding(best, rival))


def _int(answer: dict, key: str) -> int:
    value = answer[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < (key != "zero_stage"):
        raise ExerciseFailed(text("checks_2_5.not_a_positive_int", key=key, value=answer[key]))
    return value


def _number(answer: dict, key: str) -> float:
    value = answer[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ExerciseFailed(text("checks_2_5.not_a_positive_number", key=key, value=value))
    return float(value)


def _grade_answer(model, cluster, train, answer) -> None:
    """Raise ExerciseFailed saying what is wrong with ``answer``, else return."""
    if not isinstance(answer, dict):
        raise ExerciseFailed(text("checks_2_5.not_a_dict", keys=list(KEYS),
                                  type=type(answer).__name__))
    missing = [k for k in KEYS if k not in answer]
    if missing:
        raise ExerciseFailed(text("checks_2_5.missing_keys", missing=missing, keys=list(KEYS)))
    est = _checked_layout(model, cluster, train, answer)
    plans = _fitting(model, cluster, train)
    best = plans[0]
    slower = est.step_time_s / best.step_time_s - 1
    if slower > SPEED_TOLERANCE:
        raise ExerciseFailed(text("checks_2_5.too_slow", config=est.config,
                                  step=est.step_time_s, best=best.step_time_s, slower=slower,
                                  tolerance=SPEED_TOLERANCE, bubble=est.bubble,
                                  exposed=sum(est.exposed_s.values())))
    for key, expected, unit in (("memory_gib", est.memory.total / GiB, "GiB"),
                                ("step_time_s", est.step_time_s, "s")):
        got = _number(answer, key)
        if abs(got - expected) > NUMBER_TOLERANCE * expected:
            slip = unit_mistake(key, got, expected)
            raise ExerciseFailed(text(slip, key=key, got=got, expected=expected) if slip else
                                 text("checks_2_5.number_off", key=key, got=got, unit=unit,
                                      expected=expected, tolerance=NUMBER_TOLERANCE))
    rival = check_runner_up(answer["runner_up"], est, plans, LAYOUT_KEYS,
                            lambda layout: _checked_layout(model, cluster, train, layout))
    check_deciding(answer["deciding"], est, rival)


def _checked_layout(model, cluster, train, answer: dict) -> pl.Estimate:
    """The estimate of the layout in ``answer`` (the keys of ``LAYOUT_KEYS``); ExerciseFailed
    if it breaks a rule or does not fit."""
    tp, pp, dp, mb, v, zero = (_int(answer, k) for k in LAYOUT_KEYS[:6])
    if answer["recompute"] not in RECOMPUTE:
        raise ExerciseFailed(text("checks_2_5.not_a_recompute", choices=RECOMPUTE,
                                  got=answer["recompute"]))
    n, per_node = cluster.n_gpus, cluster.gpus_per_node
    if tp * pp * dp != n:
        raise ExerciseFailed(text("checks_2_5.gpu_count", tp=tp, pp=pp, dp=dp,
                                  product=tp * pp * dp, n_gpus=n))
    if tp > per_node:
        raise ExerciseFailed(text("checks_2_5.tp_node", tp=tp, per_node=per_node))
    if model.n_heads % tp or model.n_kv_heads % tp:
        raise ExerciseFailed(text("checks_2_5.tp_heads", tp=tp, heads=model.n_heads,
                                  kv_heads=model.n_kv_heads))
    if train.global_batch % (dp * mb):
        raise ExerciseFailed(text("checks_2_5.batch", batch=train.global_batch, dp=dp, mb=mb,
                                  product=dp * mb))
    try:
        est = pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=v, micro_batch=mb,
                          zero_stage=zero, recompute=answer["recompute"])
    except ValueError as exc:
        raise ExerciseFailed(text("checks_2_5.invalid_layout", error=exc)) from None
    if not est.fits:
        raise ExerciseFailed(text("checks_2_5.does_not_fit", config=est.config,
                                  need=est.memory.total / GiB, usable=est.memory.usable / GiB,
                                  reason=est.reasons[-1]))
    return est


@graded("ex2_5_capstone")
def check_capstone(student_fn):
    """student_fn(model, cluster, train) -> dict with the keys of ``KEYS``: a layout
    (tp·pp·dp = n_gpus, tp within a node and dividing the heads) that fits, whose estimated
    step time is within 25 % of the planner's best, the planner's memory (GiB) and step time
    (s) of that layout within 5 % (a unit slip is named), the runner-up it beats (the fastest
    layout of another (tp, pp), within 5 %; None if none fits) and the part of the step that
    decides between them (``DECIDING``). A hidden case's failure names its model and cluster."""
    shown = shown_scenarios()
    for k, scenario in enumerate(shown + _hidden_scenarios()):
        hidden = k >= len(shown)
        label = (text("checks_2_5.case_hidden_scenario", n=k - len(shown) + 1,
                      name=scenario.name) if hidden
                 else text("checks.case_about", what=scenario.name))
        with case(label, hidden=hidden):
            _grade_answer(scenario.model, scenario.cluster, scenario.train,
                          student_fn(scenario.model, scenario.cluster, scenario.train))


# --- exercise 2: why does a layout fail? -------------------------------------------------------

def diagnose(model: pl.Model, cluster: pl.Cluster, train: pl.Training,
             config: pl.Config) -> str:
    """Reference: the first of these that ``config`` breaks, as a key of ``REASONS``:
    "gpu_count" (tp·pp·dp ≠ n_gpus), "tp_node" (tp > gpus_per_node), "tp_heads" (tp does
    not divide the heads or KV heads), "batch" (global_batch not divisible by
    dp·micro_batch), "pipeline" (any other layout rule: pp > layers, interleaving),
    "memory" (it exists but does not fit); "ok" if none."""
    tp, pp, dp = config.tp, config.pp, config.dp
    if tp * pp * dp != cluster.n_gpus:
        return "gpu_count"
    if tp > cluster.gpus_per_node:
        return "tp_node"
    if model.n_heads % tp or model.n_kv_heads % tp:
        return "tp_heads"
    if train.global_batch % (dp * config.micro_batch):
        return "batch"
    try:
        est = pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=config.v,
                          micro_batch=config.micro_batch, zero_stage=config.zero_stage)
    except ValueError:
        return "pipeline"
    return "ok" if est.fits else "memory"


def diagnose_scenarios() -> list:
    """The scenarios of the shown diagnose cases: GPT-3 175B on 1024 A100-80GB and GPT-2
    small (124M, 12 heads, 12 layers) on 16 A100-40GB."""
    return [shown_scenarios()[0],
            Scenario(text("checks_2_5.scenario", model="GPT-2 124M", gpus=16, gpu="A100-40GB"),
                     pl.Model(n_layers=12, hidden=768, n_heads=12, seq_len=1024, vocab=50257),
                     pl.Cluster("A100-40GB", 16), pl.Training(global_batch=512))]


def _shown_configs() -> list:
    gpt3, gpt2 = diagnose_scenarios()
    C = pl.Config
    return ([(gpt3, c) for c in (C(8, 16, 8), C(8, 16, 16), C(16, 8, 8), C(1, 64, 16),
                                 C(4, 32, 8, micro_batch=8))]
            + [(gpt2, c) for c in (C(1, 1, 16), C(8, 1, 2), C(2, 1, 8, micro_batch=3),
                                   C(1, 16, 1))])


#: Reasons the hidden layouts must give (tp_heads: the shown ones; in the hidden scenarios a tp
#: that does not divide the heads is over 8 and breaks tp_node first).
_HIDDEN_REASONS = ("ok", "gpu_count", "tp_node", "batch", "pipeline", "memory")


def _hidden_configs(seed: int = 53, per_scenario: int = 10) -> list:
    """Random layouts of the hidden scenarios, each reason at least once overall (with a
    secret: the first draw from it that gives each of ``_HIDDEN_REASONS``)."""
    scenarios = _hidden_scenarios()
    for attempt in range(100):
        found = _random_configs(hidden_seed(_TAG, seed + 1000 * attempt), scenarios,
                                per_scenario)
        if not active() or {diagnose(s.model, s.cluster, s.train, c)
                            for s, c in found} >= set(_HIDDEN_REASONS):
            break
    return found


def _random_configs(seed: int, scenarios: list, per_scenario: int) -> list:
    rng = random.Random(seed)
    found = []
    for scenario in scenarios:
        n = scenario.cluster.n_gpus
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        for _ in range(per_scenario):
            tp = rng.choice([1, 2, 4, 8, 16])
            pp = rng.choice([d for d in divisors if d <= 64])
            dp = n // (tp * pp) if rng.random() < 0.8 else rng.choice([2, 3, 8])
            config = pl.Config(tp, pp, max(dp, 1), micro_batch=rng.choice([1, 2, 4, 8, 16]),
                               v=rng.choice([1, 1, 2]), zero_stage=rng.choice([0, 1]))
            found.append((scenario, config))
    return found


def _gqa_case() -> tuple:
    """A hidden case only n_kv_heads decides (issue 29): 32 query heads but 2 KV heads
    (ChatGLM2-6B's multi-query groups) with tp = 4, which divides the heads but not the KV
    heads: "tp_heads", however the rest of the layout looks."""
    model = pl.Model(n_layers=28, hidden=4096, n_heads=32, n_kv_heads=2, seq_len=4096,
                     vocab=65024, ffn_hidden=13696, mlp="swiglu", tied_embeddings=False,
                     learned_positions=False)
    scenario = Scenario(text("checks_2_5.scenario", model="GQA 6B (2 KV heads)", gpus=64,
                             gpu="H100-80GB"),
                        model, pl.Cluster("H100-80GB", 64), pl.Training(global_batch=512))
    return scenario, pl.Config(4, 1, 16)


@graded("ex2_5_diagnose")
def check_diagnose(student_fn):
    """student_fn(model, cluster, train, config) -> one key of ``REASONS``: the first rule
    ``config`` breaks (in the order of :func:`diagnose`), or "ok"."""
    shown = _shown_configs()
    for k, (scenario, config) in enumerate(shown + [_gqa_case()] + _hidden_configs()):
        hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if hidden
                 else text("checks.case_about", what=text(
                     "checks_2_5.scenario_config", name=scenario.name, config=config)))
        with case(label, hidden=hidden):
            got = student_fn(scenario.model, scenario.cluster, scenario.train, config)
            expected = diagnose(scenario.model, scenario.cluster, scenario.train, config)
            if got not in REASONS:
                raise ExerciseFailed(text("checks_2_5.not_a_reason", reasons=sorted(REASONS),
                                          got=got))
            if got != expected:
                raise ExerciseFailed(text("checks_2_5.wrong_reason", expected=expected,
                                          expected_meaning=REASONS[expected], got=got,
                                          got_meaning=REASONS[got]))


# --- exercise 3: how long does a run take? -------------------------------------------------------

def training_days(n_params: float, tokens: float, n_gpus: int, peak_flops: float,
                  mfu: float) -> float:
    """Reference: days to train on ``tokens`` at utilisation ``mfu`` of ``n_gpus`` GPUs of
    ``peak_flops``: 6·N·D FLOPs (Kaplan et al., arXiv:2001.08361 §2.1) / achieved FLOP/s."""
    return cost.training_flops(n_params, tokens) / (n_gpus * peak_flops * mfu) / 86400


@graded("ex2_5_training_days")
def check_training_days(student_fn):
    """student_fn(n_params, tokens, n_gpus, peak_flops, mfu) -> days (6·N·D FLOPs)."""
    shown = [(65.2e9, 1.4e12, 2048, 312e12, 0.476), (65.2e9, 1.4e12, 128, 312e12, 38 / 312)]
    rng = random.Random(hidden_seed(_TAG, 59))
    hidden = [(rng.choice([7e9, 13e9, 70e9, 175e9, 405e9]), rng.choice([0.3e12, 1e12, 2e12, 15e12]),
               rng.choice([64, 512, 2048, 16384]), rng.choice([125e12, 312e12, 989e12]),
               rng.choice([0.3, 0.4, 0.5])) for _ in range(6)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks.case_call", call=text(
                     "checks_2_5.days_case", n=args[0], tokens=args[1], gpus=args[2], mfu=args[4])))
        with case(label, hidden=is_hidden):
            expected, got = training_days(*args), student_fn(*args)
            if not isinstance(got, (int, float)) or isinstance(got, bool):
                raise ExerciseFailed(text("checks_2_5.days_not_a_number", got=got))
            if abs(got - expected) > 1e-6 * expected:
                hint = ""
                if abs(got * 3 - expected) < 1e-3 * expected:
                    hint = text("checks_2_5.days_hint_factor_3")
                elif abs(got * 3 - expected * 4) < 1e-3 * expected:  # 8·N·D: recompute counted
                    hint = text("checks_2_5.days_hint_recompute")
                elif abs(got * 86400 - expected) < 1e-3 * expected or abs(got - expected * 86400) < 1e-3 * got:
                    hint = text("checks_2_5.days_hint_unit")
                raise ExerciseFailed(text("checks_2_5.days_wrong", expected=expected, got=got,
                                          hint=hint))
