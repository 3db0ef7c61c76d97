"""``python -m grader.mutants`` (``make mutants``): how strong each exercise's check is.

For every exercise (or those named), the reference answer of the source notebook is mutated
(:mod:`grader.mutate`: a call or a wait dropped, SUM for AVG, a group for another, the whole
tensor for its chunk, an order reversed, a bound off by one, two names swapped, ...) and the
exercise's own check cell runs on each mutant in this process, as a notebook runs it (its
ranks from one warm forkserver). A mutant the check fails is killed; one it passes survived,
unless :data:`grader.equivalent.EQUIVALENT` lists it as equivalent (it computes the same thing
by the same mechanism), with the reason. A check's launches are capped at a few times what the
reference answer took (``LABS_CHECK_TIMEOUT``), so a deadlocked mutant costs seconds.

Writes ``mutants/report.json`` ``{"exercises": [{"id", "killed", "survived", "equivalent",
"survivors": [{"mutation", "why_equivalent"}]}]}`` and prints one table (the README's)::

    python -m grader.mutants                       # every exercise
    python -m grader.mutants ex2_0_ring_all_reduce # one (or several) by id
    python -m grader.mutants --notebook 2.3        # one notebook's

Owns: running the mutants and the report. Must not: change a notebook, or run in the grader's
sandbox (it runs the course's own answers, on the instructor's machine).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

from grader.equivalent import EQUIVALENT
from grader.mutate import mutants
from labs.exercises import catalog
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.notebook.hosted import is_hosted_cell

__all__ = ["notebook_cells", "run_exercise", "main", "table"]

ROOT = Path(__file__).resolve().parents[1]


def notebook_cells(notebook: str) -> tuple[str, dict, dict]:
    """(setup cell, {grade_id: solution cell}, {grade_id: check cell}) of a source notebook."""
    import nbformat

    nb = nbformat.read(str(ROOT / "solutions" / notebook), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and not is_hosted_cell(c)]
    solutions, checks = {}, {}
    for cell in code:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id and grade_id.endswith("_solution"):
            solutions[grade_id[: -len("_solution")]] = cell.source
        elif grade_id:
            checks[grade_id] = cell.source
    return code[0].source, solutions, checks


def _verdict(namespace: dict, check_source: str) -> tuple[bool, str]:
    """Run the check cell in ``namespace``: (passed, its first printed line)."""

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(check_source, "<check>", "exec", dont_inherit=True), namespace)
    except (ExerciseFailed, ExerciseIncomplete):
        return False, _first(out.getvalue())
    except Exception as exc:  # noqa: BLE001 - the check cell itself broke: killed, said why
        return False, f"{type(exc).__name__}: {exc}"[:200]
    return True, _first(out.getvalue())


@contextlib.contextmanager
def _deadline(seconds: float):
    """A mutant that loops for ever in this process (a function exercise has no ranks to time
    out) is stopped after ``seconds``: TimeoutError in the student's code, so the check fails it."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise TimeoutError(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _first(printed: str) -> str:
    lines = [ln for ln in printed.splitlines() if ln.startswith(("✅", "❌"))]
    return (lines[-1] if lines else (printed.strip().splitlines() or [""])[-1])[:300]


def _base(notebook: str) -> dict:
    """The notebook's setup and every solution cell run once (later exercises use earlier
    answers), in a module nobody imports (cloudpickle ships its functions by value)."""
    setup, solutions, _ = notebook_cells(notebook)
    namespace = {"__name__": "__labs_mutants__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(setup, "<setup>", "exec", dont_inherit=True), namespace)
        for source in solutions.values():
            exec(compile(source, "<solution>", "exec", dont_inherit=True), namespace)
    return namespace


def run_exercise(exercise_id: str, *, base: dict | None = None, log=None) -> dict:
    """The mutants of one exercise, each checked: the report's entry for it."""

    notebook = catalog.EXERCISES[exercise_id].notebook
    _, solutions, checks = notebook_cells(notebook)
    base = _base(notebook) if base is None else base
    start = time.monotonic()
    passed, line = _verdict(dict(base), checks[exercise_id])
    reference_s = time.monotonic() - start
    if not passed:
        raise RuntimeError(f"{exercise_id}: the reference answer fails its own check: {line}")
    cap = max(5.0, 3 * reference_s)
    known = EQUIVALENT.get(exercise_id, {})
    killed, survivors, equivalent = 0, [], 0
    saved = os.environ.get("LABS_CHECK_TIMEOUT")
    os.environ["LABS_CHECK_TIMEOUT"] = f"{cap:.1f}"
    try:
        for name, source in mutants(solutions[exercise_id]):
            namespace = dict(base)
            try:
                exec(compile(source, "<mutant>", "exec", dont_inherit=True), namespace)
                with _deadline(4 * cap + 10):
                    survived, line = _verdict(namespace, checks[exercise_id])
            except Exception as exc:  # noqa: BLE001 - the mutant does not even define: killed
                survived, line = False, f"{type(exc).__name__}: {exc}"
            if log is not None:
                log(f"  {'SURVIVED' if survived else 'killed  '} {name}   [{line[:90]}]")
            if not survived:
                killed += 1
                continue
            why = known.get(name)
            equivalent += why is not None
            survivors.append({"mutation": name, "why_equivalent": why})
    finally:
        if saved is None:
            os.environ.pop("LABS_CHECK_TIMEOUT", None)
        else:
            os.environ["LABS_CHECK_TIMEOUT"] = saved
    return {"id": exercise_id, "killed": killed, "survived": len(survivors) - equivalent,
            "equivalent": equivalent, "survivors": survivors}


def score(entry: dict) -> float:
    """Killed share of the non-equivalent mutants (1.0 when there are none)."""
    total = entry["killed"] + entry["survived"]
    return entry["killed"] / total if total else 1.0


def table(report: dict) -> str:
    """The report as a Markdown table (the README's instructor section shows it)."""
    rows = ["| exercise | mutants | killed | survived | equivalent | score |",
            "|---|---:|---:|---:|---:|---:|"]
    for e in report["exercises"]:
        total = e["killed"] + e["survived"] + e["equivalent"]
        rows.append(f"| {e['id']} | {total} | {e['killed']} | {e['survived']} | "
                    f"{e['equivalent']} | {100 * score(e):.0f}% |")
    return "\n".join(rows)


def main(argv=None) -> int:

    parser = argparse.ArgumentParser(prog="python -m grader.mutants", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("ids", nargs="*", help="exercise ids (default: every exercise)")
    parser.add_argument("--notebook", help="only the exercises of this notebook (e.g. 2.3)")
    parser.add_argument("--out", default="mutants/report.json")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per mutant")
    args = parser.parse_args(argv)
    chosen = args.ids or [e for e, ex in catalog.EXERCISES.items()
                          if not args.notebook or ex.notebook.startswith(args.notebook)]
    entries, bases = [], {}
    for exercise_id in chosen:
        notebook = catalog.EXERCISES[exercise_id].notebook
        if notebook not in bases:
            bases[notebook] = _base(notebook)
        print(f"{exercise_id} ...", file=sys.stderr, flush=True)
        entries.append(run_exercise(exercise_id, base=bases[notebook],
                                    log=(lambda s: print(s, file=sys.stderr, flush=True))
                                    if args.verbose else None))
    report = {"exercises": entries}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(report))
    weak = [e["id"] for e in entries if score(e) < 0.9]
    if weak:
        print(f"below 90%: {', '.join(weak)}")
    return 1 if weak else 0


if __name__ == "__main__":
    raise SystemExit(main())
