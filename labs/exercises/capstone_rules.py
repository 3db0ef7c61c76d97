"""The reasoning 2.5's capstone (exercise 1, :mod:`labs.exercises.summary_checks`) asks for beyond
the planner's ranking: the runner-up layout the chosen one beats, the part of the step time that
decides between them, and the units of the justifying numbers.

- :func:`step_parts`: an estimate's step time split into the parts on its critical path
  (compute, pipeline bubble, exposed TP, PP and DP communication), summing to the step time;
- :func:`runner_up`: the fastest fitting layout of another (tp, pp) family, TP inside a node;
- :func:`deciding`: the part in which the runner-up loses most time to the chosen layout
  ("memory" when no other family fits);
- :func:`unit_mistake`: which unit slip (GB for GiB, bytes, ms) explains a wrong number;
- :func:`check_runner_up`, :func:`check_deciding`: raise ExerciseFailed, saying why, when the
  student's runner-up or deciding part is wrong.

Owns: these rules and their tolerances. Must not: run the student's code, name cases or decide
the grade (labs.exercises.summary_checks, labs.exercises.checks), print, or import the grader or
the planner widget (labs.planner.widgets, labs.planner.view).
"""
from __future__ import annotations

import functools

from labs import planner as pl
from labs.exercises.checks import ExerciseFailed
from labs.messages import lazy, text
from labs.planner.types import GiB

__all__ = ["LAYOUT_KEYS", "layout_of", "DECIDING", "RUNNER_UP_TOLERANCE", "step_parts", "fitting", "runner_up", "deciding",
           "unit_mistake", "check_runner_up", "check_deciding"]

#: The keys of a layout in an answer: Config's fields, recomputation included (it is searched).
LAYOUT_KEYS = ("tp", "pp", "dp", "micro_batch", "v", "zero_stage", "recompute")


def layout_of(config: pl.Config) -> dict:
    """``config`` as an answer's layout dict (the keys of ``LAYOUT_KEYS``)."""
    return {k: getattr(config, k) for k in LAYOUT_KEYS}


#: What may decide between the chosen layout and its runner-up: a part of the step time
#: (:func:`step_parts`), or "memory" (no layout of another family fits).
DECIDING = {
    "compute": lazy("checks_2_5.deciding_compute"),
    "bubble": lazy("checks_2_5.deciding_bubble"),
    "tp": lazy("checks_2_5.deciding_tp"),
    "pp": lazy("checks_2_5.deciding_pp"),
    "dp": lazy("checks_2_5.deciding_dp"),
    "memory": lazy("checks_2_5.deciding_memory"),
}
#: A runner-up may be this much slower than the fastest layout of another family (near ties).
RUNNER_UP_TOLERANCE = 0.05


def step_parts(est: pl.Estimate) -> dict:
    """Seconds of ``est``'s step on its critical path: ``compute`` (every micro-batch's kernels,
    ``compute_s``), exposed ``tp``, ``pp`` and ``dp`` communication (``exposed_s``), and
    ``bubble``, the rest (the pipeline's idle time: step - compute - exposed)."""
    parts = {"compute": est.compute_s, **{k: est.exposed_s[k] for k in ("tp", "pp", "dp")}}
    parts["bubble"] = max(0.0, est.step_time_s - sum(parts.values()))
    return parts


@functools.lru_cache(maxsize=16)  # one search per scenario, shared by reference and grading
def fitting(model: pl.Model, cluster: pl.Cluster, train: pl.Training) -> tuple:
    """Every fitting layout with TP inside a node, fastest first."""
    return tuple(e for e in pl.plan(model, cluster, train, top=10**6)
                 if e.config.tp <= cluster.gpus_per_node)


def runner_up(plans: list, config: pl.Config) -> pl.Estimate | None:
    """The fastest of ``plans`` (fitting, fastest first) whose (tp, pp) differs from
    ``config``'s; None when every fitting layout is of ``config``'s family."""
    return next((e for e in plans if (e.config.tp, e.config.pp) != (config.tp, config.pp)),
                None)


def deciding(chosen: pl.Estimate, rival: pl.Estimate | None) -> str:
    """The key of ``DECIDING``: the part of the step in which ``rival`` loses most time to
    ``chosen``; "memory" without a rival."""
    if rival is None:
        return "memory"
    ours, theirs = step_parts(chosen), step_parts(rival)
    return max(ours, key=lambda k: theirs[k] - ours[k])


def unit_mistake(key: str, got: float, expected: float) -> str | None:
    """The message key of the unit slip that turns ``expected`` into ``got`` within 1 %:
    memory in GB (10^9 bytes) or in bytes instead of GiB, step time in milliseconds; None if
    none does."""
    slips = {"memory_gib": (("checks_2_5.unit_gb", GiB / 1e9), ("checks_2_5.unit_bytes", GiB)),
             "step_time_s": (("checks_2_5.unit_ms", 1e3),)}[key]
    return next((message for message, factor in slips
                 if abs(got - expected * factor) <= 0.01 * expected * factor), None)


def check_runner_up(got, est: pl.Estimate, plans: list, layout_keys: tuple,
                    checked_layout) -> pl.Estimate | None:
    """The estimate of the student's runner-up ``got`` (None when none is expected), checked:
    a dict of ``layout_keys`` that ``checked_layout`` (the exercise's layout rules) accepts,
    another (tp, pp) than the chosen ``est``, within ``RUNNER_UP_TOLERANCE`` of the fastest
    layout of another family in ``plans``, and slower than ``est``. ExerciseFailed if not."""
    fastest = runner_up(plans, est.config)
    if got is None or fastest is None:
        if got is None and fastest is None:
            return None
        raise ExerciseFailed(text("checks_2_5.runner_up_missing" if got is None
                                  else "checks_2_5.runner_up_none", config=est.config))
    if not isinstance(got, dict) or [k for k in layout_keys if k not in got]:
        raise ExerciseFailed(text("checks_2_5.runner_up_not_a_layout", keys=list(layout_keys),
                                  got=got))
    rival = checked_layout(got)
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


def check_deciding(got, est: pl.Estimate, rival: pl.Estimate | None) -> None:
    """``got`` must name the part of the step the runner-up loses most in (any part within 1 %
    of the chosen step time of the largest loss), or "memory" without a runner-up."""
    if got not in DECIDING:
        raise ExerciseFailed(text("checks_2_5.not_a_deciding", choices=sorted(DECIDING), got=got))
    expected = deciding(est, rival)
    if rival is None or expected == got:
        if got != expected:
            raise ExerciseFailed(text("checks_2_5.deciding_memory_expected", got=got))
        return
    ours, theirs = step_parts(est), step_parts(rival)
    losses = {k: theirs[k] - ours[k] for k in ours}
    if got in losses and losses[got] >= losses[expected] - 0.01 * est.step_time_s:
        return
    parts = text("planner.list_sep").join(
        text("checks_2_5.deciding_part", part=k, ours=ours[k], theirs=theirs[k]) for k in ours)
    raise ExerciseFailed(text("checks_2_5.wrong_deciding", got=got, expected=expected,
                              meaning=DECIDING[expected], parts=parts, rival=rival.config))
