"""One submission's exercises scored from what its worker handed back.

Owns: each exercise's result -- its verdict, decided here in the grader's process from the record
its check left (:mod:`grader.judge`, one judge at a time), or the reason it was lost (a time or
resource limit, a kernel death, a failed setup) -- its copy and tampering flags
(:mod:`grader.copying`), and the submission's notes on what went wrong. Must not: run the
student's code or start any process, unpickle anything the student made, write files, or print.
"""

from __future__ import annotations

import contextlib
import os
import threading

from labs.exercises import secret as secret_module
from labs.messages import DEFAULT_LANGUAGE, text

from grader import copying, judge, resources
from grader.results import ExerciseResult, SubmissionResult
from grader.sources import max_points as cell_points
from grader.sources import setup_source

__all__ = ["score_exercises", "notes"]

# One judge at a time (it sets the language and the hidden cases' key), and the copy flags under the same
# lock: both parse and compile code, which CPython 3.11 does not do safely in two threads.
_JUDGE_LOCK = threading.Lock()


def score_exercises(result: SubmissionResult, reference: dict, positions: dict, nb, source,
                    steps: dict, raw: dict, *, lang: str | None, step_limits: dict,
                    timeout: float, lims: resources.Limits, case_key: str) -> list[str]:
    """Append each exercise's result to ``result``; the messages of those past a resource limit."""
    status = raw.get("exercises", {})
    by_gid = {e["grade_id"]: e for e in steps["exercises"]}
    limited: list[str] = []
    for grade_id, ref_cell in reference.items():
        max_points = cell_points(ref_cell)
        if grade_id not in positions:
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points,
                                                   text("grade.deleted")))
            continue
        exercise = by_gid[grade_id]
        # CPython 3.11's ast is not safe in threads ("AST constructor recursion depth
        # mismatch" when two submissions parse at once): one at a time; in the submission's
        # language (an English submission's review flags in English)
        with _JUDGE_LOCK, _environment(LABS_LANG=lang or DEFAULT_LANGUAGE):
            flags = _flags(grade_id, nb, exercise, steps["setup"], source)
        state = status.get(grade_id, {}).get("status", "not_run")
        if state != "ok":
            message = _lost_message(grade_id, state, status, step_limits, timeout, lims)
            if state == "limit":
                limited.append(message)
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, message, flags))
            continue
        # The verdict is the judge's (grader.judge, here, from the record the kernel
        # handed back), never what the kernel printed or raised.
        verdict = _judge(exercise, raw.get("records", {}).get(grade_id), steps["judge_setup"],
                         lang, case_key)
        points = max_points if verdict.get("passed") else 0.0
        result.exercises.append(ExerciseResult(grade_id, points, max_points,
                                               str(verdict.get("message", "")), flags))
    return limited


def notes(status: dict, reference: dict, positions: dict, limited: list[str],
          timeout: float) -> str | None:
    """The submission's error line: limits hit, timeouts and deaths, the overall limit, a setup."""
    ran = [g for g in reference if g in positions]
    timeouts = sum(status.get(g, {}).get("status") == "timeout" for g in ran)
    deaths = sum(status.get(g, {}).get("status") == "dead" for g in ran)
    out = list(limited)
    if timeouts or deaths:
        out.append(text("grade.faults", count=timeouts + deaths, timeouts=timeouts,
                        deaths=deaths))
    if any(status.get(g, {}).get("status") == "overall" for g in positions):
        out.append(text("grade.overall", grade_id=next(g for g in positions
                                               if status.get(g, {}).get("status") == "overall"),
                        seconds=f"{timeout:g}"))
    setup_failed = [g for g in positions if status.get(g, {}).get("status") == "setup"]
    if setup_failed and not out:
        out.append(text("grade.setup_failed", grade_id=setup_failed[0],
                        why=status[setup_failed[0]].get("detail") or "?"))
    return "; ".join(out) or None


def _lost_message(grade_id: str, state: str, status: dict, step_limits: dict, timeout: float,
                  lims: resources.Limits) -> str:
    """Why an exercise that did not finish scored 0 (its time limit, a death, a resource limit)."""
    return {
        "timeout": lambda: text("grade.timeout", grade_id=grade_id,
                                seconds=f"{round(step_limits[grade_id], 1):g}"),
        "dead": lambda: text("grade.dead", grade_id=grade_id),
        "overall": lambda: text("grade.overall", grade_id=grade_id, seconds=f"{timeout:g}"),
        "setup": lambda: text("grade.setup_failed", grade_id=grade_id,
                              why=status.get(grade_id, {}).get("detail") or "?"),
        "limit": lambda: _limit_message(grade_id, status[grade_id].get("limit"), lims),
    }.get(state, lambda: text("grade.not_run", grade_id=grade_id))()


def _limit_message(grade_id: str, kind: str | None, lims: resources.Limits) -> str:
    """The reason an exercise scored 0 past a resource limit (keys written out in full)."""
    value = resources.shown(kind, lims) if kind in resources.KINDS else "?"
    return {"memory": lambda: text("grade.limit_memory", grade_id=grade_id, limit=value),
            "tmp": lambda: text("grade.limit_tmp", grade_id=grade_id, limit=value),
            "processes": lambda: text("grade.limit_processes", grade_id=grade_id, limit=value),
            "cpu": lambda: text("grade.limit_cpu", grade_id=grade_id, limit=value),
            "output": lambda: text("grade.limit_output", grade_id=grade_id, limit=value),
            }.get(kind, lambda: text("grade.dead", grade_id=grade_id))()


def _flags(grade_id: str, nb, exercise: dict, setup: list[int], source) -> list[str]:
    # the student's own code: the exercise's cells but its check and the cells the course
    # provides, as provided (an import cell handed out is not the student's)
    provided = {c.source for c in source.cells if c.cell_type == "code"
                and not c.metadata.get("nbgrader", {}).get("solution")}
    student = [nb.cells[i].source for i in exercise["cells"]
               if i != exercise["check"] and nb.cells[i].source not in provided]
    solutions = [c.source for c in source.cells if c.cell_type == "code"
                 and c.metadata.get("nbgrader", {}).get("solution")
                 and not c.metadata.get("nbgrader", {}).get("grade")
                 and c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(grade_id)]
    # what the student's code may name: the setup's imports and the provided cells' (as handed out)
    context = "\n".join([nb.cells[i].source for i in setup] + [
        nb.cells[i].source for i in exercise["cells"]
        if i != exercise["check"] and nb.cells[i].source in provided])
    course = source.metadata.get("course", {})
    extra = course.get("references") if isinstance(course, dict) else None
    source_code = [setup_source(source)] + [
        c.source for c in source.cells if c.cell_type == "code"
        and not c.metadata.get("nbgrader", {}).get("grade")]  # every cell but the checks
    found = copying.flags(grade_id, student, solutions, context=context,
                          extra=extra if isinstance(extra, dict) else None,
                          source_cells=source_code)
    out = []
    if found["tampering"]:
        out.append(text("grade.flag_tampering", names=", ".join(found["tampering"])))
    if found["references"]:
        out.append(text("grade.flag_reference", names=", ".join(found["references"])))
    if found["solution"]:
        out.append(text("grade.flag_solution"))
    return out


def _judge(exercise: dict, found: dict | None, judge_setup: str, lang: str | None,
           case_key: str) -> dict:
    """The verdict on one exercise, decided here, in the grader's process, from the record its
    check handed back (grader.judge); the key to the hidden cases and the language are the
    submission's."""
    gid, points = exercise["grade_id"], float(exercise.get("points", 0))
    with _JUDGE_LOCK, _environment(LABS_LANG=lang or DEFAULT_LANGUAGE,
                                   **{secret_module.SECRET_ENV: case_key}):
        try:
            if not found or found.get("missing"):
                return judge.missing(gid, points)
            if "refused" in found:
                return judge.refused(gid, points, found["refused"])
            return judge.judge(gid, found["data"], points, exercise["check_source"], judge_setup)
        except Exception as exc:  # noqa: BLE001 - one exercise's judge never stops the rest
            return {"passed": False, "points": 0.0, "message": text(
                "record.judge_failed", error=f"{type(exc).__name__}: {exc}")}


@contextlib.contextmanager
def _environment(**values: str):
    """This process's environment with ``values`` for the ``with`` block (under _JUDGE_LOCK)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
