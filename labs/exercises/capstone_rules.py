"""2.5's capstone (exercise 1, checked by :func:`labs.exercises.summary_checks.check_capstone`):
its scenarios (the shown 34B GQA one, then one per part of the step that can decide, drawn per
secret from ``_HIDDEN``, TP 16 on nodes of 16 among them), the reference (:func:`plan_training`)
and :func:`grade_answer`, which says what is wrong with an answer. Owns: these scenarios, rules
and tolerances. Must not: run the student's code or decide the grade (summary_checks' and
checks' work), print, or import the grader or the planner widget (labs.planner.widgets, .view).
"""
from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import math
import numbers
import random
from collections.abc import Mapping

from labs import planner as pl
from labs.exercises.checks import ExerciseFailed
from labs.exercises.secret import hidden_seed
from labs.messages import joined, lazy, text
from labs.planner.types import GiB

__all__ = ["Scenario", "LAYOUT_KEYS", "KEYS", "DECIDING", "decoder", "scenario",
           "shown_scenarios", "capstone_scenarios", "fitting", "step_parts", "runner_up",
           "deciding", "plan_training", "grade_answer"]

#: The keys of a layout in an answer: Config's fields, recomputation included (it is searched).
LAYOUT_KEYS = ("tp", "pp", "dp", "micro_batch", "v", "zero_stage", "recompute")
KEYS = (*LAYOUT_KEYS, "memory_gib", "step_time_s", "runner_up", "deciding")
#: What may decide between the chosen layout and its runner-up: a part of the step time
#: (:func:`step_parts`), or "memory" (no layout of another (tp, pp) fits).
DECIDING = {"compute": lazy("checks_2_5.deciding_compute"),
            "bubble": lazy("checks_2_5.deciding_bubble"), "tp": lazy("checks_2_5.deciding_tp"),
            "pp": lazy("checks_2_5.deciding_pp"), "dp": lazy("checks_2_5.deciding_dp"),
            "memory": lazy("checks_2_5.deciding_memory")}
SPEED_TOLERANCE = 0.25  # a layout may be this much slower than the planner's best
NUMBER_TOLERANCE = 0.05  # relative error allowed on memory_gib and step_time_s
RUNNER_UP_TOLERANCE = 0.05  # a runner-up this much slower than the fastest other split is one
PART_TOLERANCE = 0.01  # a deciding part within this share of the step of the largest loss counts


Scenario = collections.namedtuple("Scenario", "name model cluster train")


def decoder(layers: int, heads: int, kv: int | None, seq: int, vocab: int, swiglu: bool,
            **extra) -> pl.Model:
    """GPT-style (GELU, tied) or LLaMA-style (SwiGLU of 8/3·h, untied, rotary), heads of 128."""
    hidden = 128 * heads
    style = dict(mlp="swiglu", tied_embeddings=False, learned_positions=False,
                 ffn_hidden=256 * math.ceil(hidden / 96)) if swiglu else {}
    return pl.Model(n_layers=layers, hidden=hidden, n_heads=heads, n_kv_heads=kv, seq_len=seq,
                    vocab=vocab, **style, **extra)


def scenario(model: pl.Model, gpu: str, n_gpus: int, per_node: int, batch: int,
             label: str = "") -> Scenario:
    """``model`` on ``n_gpus`` of ``gpu`` (``per_node`` per node; fp16 on V100, else bf16)."""
    name = text("checks_2_5.scenario", model=label or f"{model.n_params / 1e9:.0f}B",
                gpus=n_gpus, gpu=gpu, per_node=per_node)
    return Scenario(name, model, pl.Cluster(gpu, n_gpus, gpus_per_node=per_node), pl.Training(
        global_batch=batch, precision="fp16" if gpu.startswith("V100") else "bf16"))


def shown_scenarios() -> list:
    """The notebook's: GPT-3 175B on 1024 A100-80GB (PTD-P's run), a 7B model on 32
    A100-80GB, 2.5's 34B GQA model on 128 H100, where "ZeRO first" is a slow answer."""
    return [scenario(decoder(96, 96, None, 2048, 51200, False), "A100-80GB", 1024, 8, 1536,
                     "GPT-3 175B"),
            scenario(decoder(32, 32, None, 4096, 32000, True), "A100-80GB", 32, 8, 512, "7B"),
            scenario(decoder(48, 64, 8, 4096, 32000, True, dropout=False), "H100-80GB", 128, 8,
                     1024, "34B GQA")]


#: Hidden scenarios by the part that decides there, by more than PART_TOLERANCE (tests/labs/
#: planner/test_capstone.py): (layers, heads, KV heads, seq, vocab, SwiGLU, GPU, n, per node, batch)
_HIDDEN = {
    "compute": ((60, 16, 4, 2048, 128256, False, "H100-80GB", 16, 4, 1024),
                (60, 16, 4, 2048, 128256, True, "H200", 16, 16, 2048),
                (60, 64, None, 4096, 32000, False, "V100-32GB", 32, 16, 128)),
    "bubble": ((60, 16, 4, 4096, 50257, False, "H100-80GB", 256, 8, 128),
               (40, 40, 4, 4096, 128256, False, "A100-80GB", 256, 16, 128),
               (60, 32, 4, 2048, 128256, False, "H100-80GB", 128, 8, 64)),
    "tp": ((60, 80, None, 2048, 128256, False, "A100-40GB", 48, 16, 256),
           (60, 24, 8, 4096, 128256, False, "A100-80GB", 16, 4, 128),
           (60, 64, None, 4096, 50257, True, "V100-32GB", 32, 16, 1024)),
    "pp": ((32, 16, 4, 2048, 32000, False, "H100-80GB", 256, 16, 64),
           (32, 16, 4, 2048, 32000, False, "A100-80GB", 256, 16, 64),
           (32, 16, 4, 2048, 50257, False, "H100-80GB", 256, 16, 64)),
    "dp": ((24, 128, 8, 4096, 128256, False, "H100-80GB", 16, 4, 64),
           (40, 96, None, 2048, 32000, False, "H100-80GB", 16, 4, 64),
           (48, 128, 16, 4096, 128256, True, "H100-80GB", 32, 4, 128)),
    "memory": ((80, 80, None, 2048, 50257, True, "A100-40GB", 48, 16, 256),
               (64, 80, None, 2048, 50257, True, "V100-32GB", 48, 16, 128),
               (80, 80, None, 4096, 32000, False, "A100-40GB", 48, 16, 64)),
}


def capstone_scenarios() -> list:
    """``[(scenario, hidden)]``: the shown 34B GQA one, one hidden per part from the secret."""
    rng = random.Random(hidden_seed("2.5", 61))
    return [(shown_scenarios()[2], False)] + [
        (scenario(decoder(*spec[:6]), *spec[6:]), True)
        for spec in (rng.choice(specs) for specs in _HIDDEN.values())]


@functools.lru_cache(maxsize=None)
def fitting(model: pl.Model, cluster: pl.Cluster, train: pl.Training) -> tuple:
    """Every fitting layout with TP inside a node, fastest first (the planner searched once)."""
    return tuple(e for e in pl.plan(model, cluster, train, top=10**6)
                 if e.config.tp <= cluster.gpus_per_node)


def step_parts(est: pl.Estimate) -> dict:
    """Seconds of ``est``'s step on its critical path: ``compute`` (``compute_s``), exposed
    ``tp``, ``pp`` and ``dp`` (``exposed_s``), and the rest, the ``bubble`` (idle time)."""
    parts = {"compute": est.compute_s, **{k: est.exposed_s[k] for k in ("tp", "pp", "dp")}}
    return {**parts, "bubble": max(0.0, est.step_time_s - sum(parts.values()))}


def runner_up(plans: list, config: pl.Config) -> pl.Estimate | None:
    """The fastest of ``plans`` (fastest first) whose (tp, pp) differs from ``config``'s."""
    return next((e for e in plans if (e.config.tp, e.config.pp) != (config.tp, config.pp)),
                None)


def deciding(chosen: pl.Estimate, rival: pl.Estimate | None) -> str:
    """The part of the step ``rival`` loses most time in to ``chosen`` ("memory" if none)."""
    ours, theirs = step_parts(chosen), rival and step_parts(rival)
    return max(ours, key=lambda k: theirs[k] - ours[k]) if rival else "memory"


def plan_training(model: pl.Model, cluster: pl.Cluster, train: pl.Training) -> dict:
    """The reference: the fastest fitting layout with TP inside a node, its memory (GiB) and
    step time (s), its runner-up (None if no other (tp, pp) fits) and the deciding part."""
    plans = fitting(model, cluster, train)
    best, rival = plans[0], runner_up(plans, plans[0].config)
    return dict({k: getattr(best.config, k) for k in LAYOUT_KEYS}, deciding=deciding(best, rival),
                memory_gib=best.memory.total / GiB, step_time_s=best.step_time_s,
                runner_up=rival and {k: getattr(rival.config, k) for k in LAYOUT_KEYS})


def _fields(value, keys: tuple, what: str) -> dict:
    """``value``'s keys and values (a mapping's; a dataclass's or a NamedTuple's, a pl.Config
    too), an Enum member as its value; ExerciseFailed without one of ``keys``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    value = value._asdict() if hasattr(value, "_asdict") else value
    if not isinstance(value, Mapping):
        raise ExerciseFailed(text("checks_2_5.not_a_dict", what=what, keys=list(keys),
                                  type=type(value).__name__))
    if [k for k in keys if k not in value]:
        raise ExerciseFailed(text("checks_2_5.missing_keys", what=what, keys=list(keys),
                                  missing=[k for k in keys if k not in value]))
    return {k: v.value if isinstance(v, enum.Enum) else v for k, v in value.items()}


def _checked_layout(scenario: Scenario, answer: dict) -> pl.Estimate:
    """The estimate of ``answer``'s layout; ExerciseFailed if it breaks a rule or overflows."""
    whole = {}
    for k in LAYOUT_KEYS[:6]:
        value = answer[k]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not float(value).is_integer() or value < (k != "zero_stage"):
            raise ExerciseFailed(text("checks_2_5.not_a_positive_int", key=k, value=value))
        whole[k] = int(value)
    if whole["tp"] > scenario.cluster.gpus_per_node:
        raise ExerciseFailed(text("checks_2_5.tp_node", tp=whole["tp"],
                                  per_node=scenario.cluster.gpus_per_node))
    try:
        est = pl.estimate(*scenario[1:], **whole, recompute=answer["recompute"])
    except ValueError as exc:
        raise ExerciseFailed(text("checks_2_5.invalid_layout", error=exc)) from None
    if not est.fits:
        raise ExerciseFailed(text("checks_2_5.does_not_fit", config=est.config,
                                  need=est.memory.total / GiB, usable=est.memory.usable / GiB,
                                  reason=est.reasons[-1]))
    return est


def _check_number(answer: dict, key: str, expected: float, unit: str) -> None:
    got = answer[key]
    if isinstance(got, bool) or not isinstance(got, numbers.Real) or not got > 0:
        raise ExerciseFailed(text("checks_2_5.not_a_positive_number", key=key, value=got))
    slips = {"memory_gib": (("checks_2_5.unit_gb", GiB / 1e9), ("checks_2_5.unit_bytes", GiB)),
             "step_time_s": (("checks_2_5.unit_ms", 1e3),)}[key]  # GB, bytes, ms for GiB, s
    if abs(float(got) - expected) > NUMBER_TOLERANCE * expected:
        slip = next((message for message, factor in slips
                     if math.isclose(float(got), expected * factor, rel_tol=0.01)), None)
        raise ExerciseFailed(text(slip, key=key, got=float(got), expected=expected) if slip else
                             text("checks_2_5.number_off", key=key, got=float(got), unit=unit,
                                  expected=expected, tolerance=NUMBER_TOLERANCE))


def _checked_runner_up(scenario: Scenario, got, est: pl.Estimate, plans: list):
    """The runner-up's estimate (None if none fits): another split, slower, nearly the fastest."""
    fastest = runner_up(plans, est.config)
    if got is None or fastest is None:
        if (got is None) != (fastest is None):
            raise ExerciseFailed(text("checks_2_5.runner_up_missing" if got is None
                                      else "checks_2_5.runner_up_none", config=est.config))
        return None
    rival = _checked_layout(scenario, _fields(got, LAYOUT_KEYS, "runner_up"))
    if (rival.config.tp, rival.config.pp) == (est.config.tp, est.config.pp):
        raise ExerciseFailed(text("checks_2_5.runner_up_same_family", config=est.config,
                                  rival=rival.config))
    if rival.step_time_s < est.step_time_s:
        raise ExerciseFailed(text("checks_2_5.runner_up_faster", config=est.config,
                                  step=est.step_time_s, rival=rival.config,
                                  rival_step=rival.step_time_s))
    if rival.step_time_s > (1 + RUNNER_UP_TOLERANCE) * fastest.step_time_s:
        raise ExerciseFailed(text("checks_2_5.runner_up_not_fastest", rival=rival.config,
                                  rival_step=rival.step_time_s, fastest=fastest.step_time_s,
                                  tolerance=RUNNER_UP_TOLERANCE))
    return rival


def _check_deciding(got, est: pl.Estimate, rival: pl.Estimate | None) -> None:
    """``got`` is the part the runner-up loses most in (within PART_TOLERANCE of the step)."""
    if not isinstance(got, str) or got not in DECIDING:
        raise ExerciseFailed(text("checks_2_5.not_a_deciding", choices=list(DECIDING), got=got))
    if rival is None:
        if got != "memory":
            raise ExerciseFailed(text("checks_2_5.deciding_memory_expected", got=got))
        return
    ours, theirs, expected = step_parts(est), step_parts(rival), deciding(est, rival)
    if got in ours and theirs[got] - ours[got] >= theirs[expected] - ours[expected] \
            - PART_TOLERANCE * est.step_time_s:
        return
    parts = joined((text("checks_2_5.deciding_part", part=k, ours=ours[k], theirs=theirs[k])
                    for k in ours), "comma")
    raise ExerciseFailed(text("checks_2_5.wrong_deciding", got=got, expected=expected,
                              meaning=DECIDING[expected], parts=parts, rival=rival.config))


def grade_answer(scenario: Scenario, answer) -> None:
    """Raise ExerciseFailed: what is wrong with ``answer`` (layout, numbers, runner-up, part)."""
    fields = _fields(answer, KEYS, text("checks.what_returned"))
    est, plans = _checked_layout(scenario, fields), fitting(*scenario[1:])
    slower = est.step_time_s / plans[0].step_time_s - 1
    if slower > SPEED_TOLERANCE:
        raise ExerciseFailed(text("checks_2_5.too_slow", config=est.config,
                                  step=est.step_time_s, best=plans[0].step_time_s,
                                  slower=slower, tolerance=SPEED_TOLERANCE, bubble=est.bubble,
                                  exposed=sum(est.exposed_s.values())))
    _check_number(fields, "memory_gib", est.memory.total / GiB, "GiB")
    _check_number(fields, "step_time_s", est.step_time_s, "s")
    _check_deciding(fields["deciding"], est,
                    _checked_runner_up(scenario, fields["runner_up"], est, plans))
