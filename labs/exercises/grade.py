"""Score submitted notebooks: each isolated, exercise by exercise, never modifying them.

    python -m labs.grade PATH [--out DIR] [--jobs N] [--sandbox {auto,bwrap,none}] [--fresh]
                              [--secret TEXT] [--timeout SECONDS] [--cell-timeout SECONDS]
                              [--solutions DIR] [--kernel NAME]

PATH is one ``.ipynb`` or a folder searched recursively (``.ipynb_checkpoints`` skipped). The
source of a submission is found in the solutions folder by ``metadata.course.notebook``, else by
file name, else as the longest solution name that ends the submission's name
(``alice_2.0_collectives.ipynb``). Every graded check cell is replaced by the source's version
(matched by ``grade_id``, or by cell id when its metadata was lost), so an edited check does not
count.

What runs: the setup cell (the first code cell), then each exercise: every code cell after the
previous check (for the first exercise: from the heading above its first exercise cell) up to
and including its check; the experiments of the notebook's body are not run. A cell the student
added inside an exercise's section runs with it. Each exercise has its own time limit
(``--cell-timeout``; by default derived from the source notebook's own recorded run time of the
same cells, :mod:`labs.exercises.limits`); on a timeout or a kernel death only that exercise
scores 0, the kernel and everything it started are killed, a new kernel replays the setup and
the finished exercises' cells, and grading goes on. ``--timeout`` bounds a whole submission.

The verdict is decided here, in the grader's process, not in the student's kernel: the kernel
hands back only a record of what the student's code returned on the check's inputs
(:mod:`labs.exercises.record`), and :mod:`labs.exercises.judge` re-runs the source's check cell
against it. ``--secret`` (else ``$LABS_GRADE_SECRET``, else random per run) generates the hidden
cases (:mod:`labs.exercises.secret`). English submissions (``metadata.course.language`` "en", or
a path through a folder ``en/``) are graded against ``solutions/en/`` and answered in English.

Isolation (:mod:`labs.exercises.sandbox`): each submission is graded by its own worker
process (:mod:`labs.exercises.runner`) whose kernel runs in a bubblewrap sandbox when available
(``--sandbox auto``), else in its own session with a private copy of the course code; the report
records which. Results: ``DIR/submissions/<name>.json`` per submission, written atomically as
each is graded (never through a symlink), then ``DIR/grades.csv`` and ``DIR/grades.json``
rebuilt from them; a rerun keeps the results whose notebook and source are unchanged
(``--fresh`` regrades all). Flags for review (:mod:`labs.exercises.copying`) go to the report.
The exit code is 0 whatever the students scored; 2 on misuse (nothing to grade, no solutions,
an output folder that is a symlink).
"""

from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unicodedata
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from labs.messages import DEFAULT_LANGUAGE, EDITION_FOLDERS, LANGUAGES, text

from . import copying, limits, record, sandbox
from . import secret as secret_module
from .generate import graded_cells, is_graded

__all__ = ["ExerciseResult", "SubmissionResult", "GraderError", "find_submissions",
           "load_sources", "match_source", "sanitize", "prepare", "plan", "grade_submission",
           "summary_table", "write_reports", "default_solutions", "default_jobs", "grade", "main"]

DEFAULT_TIMEOUT = 900.0
DEFAULT_CELL_TIMEOUT = 300.0
RESULT_VERSION = 2
HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_STOP = threading.Event()  # set when the run is interrupted: start no more workers


def _say(key: str, /, **values) -> str:
    return text(f"grade.{key}", **values)


@dataclass
class ExerciseResult:
    grade_id: str
    points: float
    max_points: float
    message: str
    flags: list[str] = field(default_factory=list)


@dataclass
class SubmissionResult:
    submission: str
    notebook: str | None
    exercises: list[ExerciseResult] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    sandbox: str = "none"
    restarts: int = 0
    sha256: str = ""
    source_sha256: str = ""

    @property
    def total(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def max_total(self) -> float:
        return sum(e.max_points for e in self.exercises)

    @property
    def flags(self) -> list[str]:
        return [f"{e.grade_id}: {f}" for e in self.exercises for f in e.flags]

    def as_dict(self) -> dict:
        return {"submission": self.submission, "notebook": self.notebook,
                "total": self.total, "max_total": self.max_total, "error": self.error,
                "seconds": round(self.seconds, 2), "sandbox": self.sandbox,
                "restarts": self.restarts, "sha256": self.sha256,
                "source_sha256": self.source_sha256, "version": RESULT_VERSION,
                "exercises": [asdict(e) for e in self.exercises]}

    @classmethod
    def from_dict(cls, data: dict) -> "SubmissionResult":
        exercises = [ExerciseResult(e["grade_id"], float(e["points"]), float(e["max_points"]),
                                    str(e["message"]), list(e.get("flags", [])))
                     for e in data["exercises"]]
        return cls(submission=data["submission"], notebook=data["notebook"],
                   exercises=exercises, error=data["error"], seconds=float(data["seconds"]),
                   sandbox=data.get("sandbox", "none"), restarts=int(data.get("restarts", 0)),
                   sha256=data.get("sha256", ""), source_sha256=data.get("source_sha256", ""))


class GraderError(Exception):
    """Misuse of the grader (nothing to grade, no solutions, a bad output folder); exit 2."""


def find_submissions(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        if path.suffix != ".ipynb":
            raise GraderError(f"{path} is not a .ipynb notebook")
        return [path]
    if not path.is_dir():
        raise GraderError(f"{path} does not exist")
    found = [p for p in sorted(path.rglob("*.ipynb"))
             if ".ipynb_checkpoints" not in p.relative_to(path).parts and p.is_file()
             and not p.is_symlink()]
    if not found:
        raise GraderError(f"no .ipynb notebooks found under {path}")
    return found


def load_sources(solutions: Path) -> dict[str, nbformat.NotebookNode]:
    """The source notebooks by name: ``X.ipynb`` (Chinese) and ``en/X.ipynb`` (the English
    edition, ``solutions/en/``)."""
    solutions = Path(solutions)
    sources = {p.name: nbformat.read(str(p), as_version=4)
               for p in sorted(solutions.glob("*.ipynb"))} if solutions.is_dir() else {}
    for folder in EDITION_FOLDERS:
        for p in sorted((solutions / folder).glob("*.ipynb")) if solutions.is_dir() else []:
            sources[f"{folder}/{p.name}"] = nbformat.read(str(p), as_version=4)
    if not sources:
        raise GraderError(f"no solution notebooks in {solutions} (use --solutions DIR)")
    for name, nb in sources.items():
        try:
            graded_cells(nb)
        except ValueError as exc:
            raise GraderError(f"{solutions / name}: {exc}") from None
    return sources


def _source_hashes(sources: dict) -> dict[str, str]:
    return {name: hashlib.sha256(json.dumps(nb, sort_keys=True).encode()).hexdigest()
            for name, nb in sources.items()}


def match_source(path: Path, nb, sources: dict) -> str | None:
    """The source of a submission: by ``metadata.course.notebook`` (in the edition of
    ``metadata.course.language``, else of a folder ``en/`` on the submission's path), else by
    file name, else by the longest source name that ends the file name."""
    metadata = nb.get("metadata") if isinstance(nb, dict) else None
    course = metadata.get("course") if isinstance(metadata, dict) else None
    name = course.get("notebook") if isinstance(course, dict) else None
    lang = course.get("language") if isinstance(course, dict) else None
    folder = next((f for f, code in EDITION_FOLDERS.items()
                   if code == lang or (lang is None and f in Path(path).parent.parts)), None)

    def pick(found: str) -> str:
        edition = f"{folder}/{found}" if folder else None
        return edition if edition in sources else found

    if isinstance(name, str) and "/" not in name and name in sources:
        return pick(name)
    if path.name in sources:
        return pick(path.name)
    suffixes = [n for n in sources if "/" not in n and path.name.endswith(n)]
    return pick(max(suffixes, key=len)) if suffixes else None


def sanitize(nb) -> list[str]:
    """Make the few fields the grader reads well-typed, in place; what was wrong.

    A cell whose ``metadata`` is not a mapping gets an empty one; ``nbgrader`` metadata that is
    not a mapping, or whose ``grade_id`` is not a string, is dropped (the cell becomes an
    ordinary cell); a cell that is not a mapping with a known type is dropped.
    """
    problems = []
    if not isinstance(nb.get("metadata"), dict):
        problems.append("metadata")
        nb["metadata"] = nbformat.NotebookNode()
    course = nb.metadata.get("course")
    if course is not None and (not isinstance(course, dict)
                               or not isinstance(course.get("notebook", ""), str)):
        problems.append("metadata.course")
        nb.metadata.pop("course")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        problems.append("cells")
        cells = []
    kept = []
    for k, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            problems.append(f"cells[{k}]")
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            problems.append(f"cells[{k}].source")
            source = ""
        cell["source"] = source
        if not isinstance(cell.get("metadata"), dict):
            problems.append(f"cells[{k}].metadata")
            cell["metadata"] = nbformat.NotebookNode()
        grader = cell.metadata.get("nbgrader")
        if grader is not None and (not isinstance(grader, dict)
                                   or not isinstance(grader.get("grade_id", ""), str)):
            problems.append(f"cells[{k}].metadata.nbgrader")
            cell.metadata.pop("nbgrader")
        if cell.get("id") is not None and not isinstance(cell.get("id"), str):
            cell.pop("id")
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        kept.append(nbformat.from_dict(cell))
    nb["cells"] = kept
    return problems


def prepare(submission, source) -> tuple[nbformat.NotebookNode, dict[str, int]]:
    """The notebook to execute and ``{grade_id: cell index}`` of the checks in it.

    Graded cells take the source's code and metadata; outputs are cleared; the submission's
    own graded cells that the source does not know become ordinary cells.
    """
    nb = copy.deepcopy(submission)
    reference = graded_cells(source)
    by_cell_id = {cell.get("id"): grade_id for grade_id, cell in reference.items() if cell.get("id")}
    positions: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if is_graded(cell):
            grade_id = cell.metadata["nbgrader"].get("grade_id")
        elif cell.cell_type == "code":  # a check whose metadata was lost: known by its cell id
            grade_id = by_cell_id.get(cell.get("id"))
        else:
            continue
        if grade_id in reference and grade_id not in positions:
            cell.source = reference[grade_id].source
            cell.metadata = copy.deepcopy(reference[grade_id].metadata)
            positions[grade_id] = index
        else:  # unknown or duplicated check: it scores nothing
            cell.metadata.pop("nbgrader", None)
    return nb, positions


def _setup_source(source) -> str:
    """The source notebook's setup cell: its first code cell."""
    return next((c.source for c in source.cells if c.cell_type == "code"), "")


def plan(nb, positions: dict[str, int], source) -> dict:
    """Which cells run: ``{"setup": [i], "exercises": [{grade_id, cells, check}]}``.

    The setup is the first code cell. The exercise section starts at the last markdown heading
    above the first exercise cell (a solution cell of the source, known by ``grade_id`` or cell
    id, or the first check); exercise k is every code cell after the previous check (or the
    section's start) up to its check, in notebook order. Checks out of order run in notebook
    order; a deleted check's exercise is not run.
    """
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    setup = code[:1]
    # the judge imports what the SOURCE's setup cell imports (the student's may be edited)
    judge_setup = _setup_source(source)
    checks = sorted((i, gid) for gid, i in positions.items())
    if not checks:
        return {"setup": setup, "exercises": [], "judge_setup": judge_setup}
    sol_ids = {c.get("id") for c in source.cells if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("solution")
               and not c.metadata.get("nbgrader", {}).get("grade")}
    sol_gids = {c.metadata["nbgrader"].get("grade_id") for c in source.cells
                if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}
    first = checks[0][0]
    for i, cell in enumerate(nb.cells[:first]):
        if cell.cell_type != "code" or i in setup:
            continue
        grader = cell.metadata.get("nbgrader", {})
        if (cell.get("id") in sol_ids and cell.get("id")) or grader.get("grade_id") in sol_gids \
                or grader.get("solution"):
            first = i
            break
    start = setup[0] + 1 if setup else 0
    for i in range(first, start - 1, -1):
        cell = nb.cells[i]
        if cell.cell_type == "markdown" and HEADING_RE.search(cell.source):
            start = i
            break
    else:
        start = first
    exercises, previous = [], start
    for at, gid in checks:
        cells = [i for i in code if previous <= i <= at and i not in setup]
        exercises.append({"grade_id": gid, "cells": cells, "check": at,
                          "points": _max_points(nb.cells[at]),
                          "check_source": nb.cells[at].source})  # the source's (prepare())
        previous = at + 1
    return {"setup": setup, "exercises": exercises, "judge_setup": judge_setup}


# --- one submission ------------------------------------------------------------------------

@dataclass
class _Settings:
    timeout: float = DEFAULT_TIMEOUT
    cell_timeout: float | None = DEFAULT_CELL_TIMEOUT  # None: derived per step (limits.derive)
    kernel_name: str | None = None
    sandbox: str = "none"
    hide: tuple = ()
    scratch: Path | None = None
    secret: str = ""


def _max_points(cell) -> float:
    try:
        return float(cell.metadata["nbgrader"].get("points", 0))
    except (TypeError, ValueError):
        return 0.0


def _limits(source, settings: _Settings) -> dict:
    """The time limit of each step (``"setup"``, each grade_id): ``--cell-timeout`` when given,
    else derived from the source's own recorded run times (:mod:`labs.exercises.limits`)."""
    if settings.cell_timeout is not None:
        return defaultdict(lambda: settings.cell_timeout)
    cap = min(settings.timeout, DEFAULT_CELL_TIMEOUT)
    nb, positions = prepare(source, source)  # a few milliseconds
    return defaultdict(lambda: cap, limits.derive(source, plan(nb, positions, source), cap))


def _zeros(result: SubmissionResult, reference: dict, message: str) -> None:
    result.exercises = [ExerciseResult(gid, 0.0, _max_points(c), message)
                        for gid, c in reference.items()]


def _flags(grade_id: str, nb, exercise: dict, setup: list[int], source) -> list[str]:
    student = [nb.cells[i].source for i in exercise["cells"] if i != exercise["check"]]
    solutions = [c.source for c in source.cells if c.cell_type == "code"
                 and c.metadata.get("nbgrader", {}).get("solution")
                 and not c.metadata.get("nbgrader", {}).get("grade")
                 and c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(grade_id)]
    context = "\n".join(nb.cells[i].source for i in setup)
    course = source.metadata.get("course", {})
    extra = course.get("references") if isinstance(course, dict) else None
    source_code = [_setup_source(source)] + [
        c.source for c in source.cells
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
    found = copying.flags(grade_id, student, solutions, context=context,
                          extra=extra if isinstance(extra, dict) else None,
                          source_cells=source_code)
    out = []
    if found["tampering"]:
        out.append(_say("flag_tampering", names=", ".join(found["tampering"])))
    if found["references"]:
        out.append(_say("flag_reference", names=", ".join(found["references"])))
    if found["solution"]:
        out.append(_say("flag_solution"))
    return out


def _language(nb, source_name: str | None = None) -> str | None:
    """The submission's language: its ``metadata.course.language``, else its source's edition."""
    course = nb.metadata.get("course")
    lang = course.get("language") if isinstance(course, dict) else None
    if lang in LANGUAGES:
        return lang
    folder = source_name.split("/")[0] if source_name and "/" in source_name else None
    return EDITION_FOLDERS.get(folder)


def _run_worker(nb, steps: dict, path: Path, settings: _Settings, lang: str | None,
                step_limits: dict) -> dict:
    """Run the prepared notebook in a worker process; its JSON result."""
    scratch = Path(tempfile.mkdtemp(prefix="s", dir=settings.scratch))
    try:
        work, course, ipc = scratch / "work", scratch / "course", scratch / "ipc"
        records = work / ".records"  # the checks' records (labs.exercises.record), judged here
        for folder in (work, ipc, work / ".home", records):
            folder.mkdir()
        sandbox.copy_course(course)
        name = re.sub(r"[^A-Za-z0-9._-]", "_", path.name) or "submission.ipynb"
        (work / name).write_bytes(path.read_bytes())  # its own copy, the only writable file
        home = work / ".home"
        env = {"LABS_GRADE_MARK": secrets.token_hex(8),
               "PYTHONPATH": str(course.resolve()), "HOME": str(home),
               "IPYTHONDIR": str(home / ".ipython"), "MPLCONFIGDIR": str(home / ".mpl"),
               "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONDONTWRITEBYTECODE": "1",
               "JUPYTER_RUNTIME_DIR": str(ipc), "JUPYTER_PLATFORM_DIRS": "1",
               record.RECORDS_ENV: str(records.resolve()),
               secret_module.SECRET_ENV: settings.secret}
        if lang:
            env["LABS_LANG"] = lang
        exercises = [{**e, "limit": step_limits[e["grade_id"]]} for e in steps["exercises"]]
        job = {"notebook": nb, "setup": steps["setup"], "exercises": exercises,
               "setup_timeout": step_limits["setup"], "timeout": settings.timeout,
               "kernel_name": settings.kernel_name, "sandbox": settings.sandbox,
               "workdir": str(work.resolve()), "course": str(course.resolve()),
               "ipc": str(ipc.resolve()), "hide": [str(p) for p in settings.hide], "env": env,
               "records": str(records.resolve()), "judge_setup": steps.get("judge_setup", ""),
               "unset_env": ["JPY_SESSION_NAME", "LABS_LANG"] if not lang else ["JPY_SESSION_NAME"]}
        job_path, result_path = scratch / "job.json", scratch / "result.json"
        job_path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
        # a safety net only: the worker keeps its own time limits
        limit = settings.timeout + 60 + 30 * (len(steps["exercises"]) + 1)
        if _STOP.is_set():
            raise RuntimeError("grading stopped")
        proc = subprocess.Popen(
            [sys.executable, "-m", "labs.exercises.runner", str(job_path), str(result_path)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=str(scratch),
            env={**os.environ, "LABS_GRADE_PARENT": str(os.getpid())})
        try:
            output, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            output = b"worker timed out"
        finally:
            sandbox.kill_tree(proc.pid)
            sandbox.kill_marked(env["LABS_GRADE_MARK"])
            proc.wait()
        if not result_path.is_file():
            tail = output.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise RuntimeError(f"worker exit {proc.returncode}: {' | '.join(tail)}")
        raw = json.loads(result_path.read_text(encoding="utf-8"))
        raw["records"] = _read_records(records, steps["exercises"])
        return raw
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read_records(folder: Path, exercises: list[dict]) -> dict:
    """``{grade_id: record data, or {"missing": True} / {"refused": why}}``, read after the
    kernel and everything it started are gone (plain JSON, size-limited, never a symlink)."""
    out = {}
    for exercise in exercises:
        gid = exercise["grade_id"]
        try:
            out[gid] = {"data": record.read(record.record_path(gid, folder))}
        except FileNotFoundError:
            out[gid] = {"missing": True}
        except (OSError, record.RecordError) as exc:
            out[gid] = {"refused": str(exc)}
    return out


# One judge at a time (it sets the language and the secret), and the copy flags under the same
# lock: both parse and compile code, which CPython 3.11 does not do safely in two threads.
_JUDGE_LOCK = threading.Lock()


def _judge(exercise: dict, found: dict | None, judge_setup: str, lang: str | None,
           secret: str) -> dict:
    """The verdict on one exercise, decided here, in the grader's process, from the record its
    check handed back (labs.exercises.judge); the secret and the language are the submission's."""
    from labs.exercises import judge

    gid, points = exercise["grade_id"], float(exercise.get("points", 0))
    with _JUDGE_LOCK:
        saved = {name: os.environ.get(name) for name in ("LABS_LANG", secret_module.SECRET_ENV)}
        os.environ["LABS_LANG"] = lang or DEFAULT_LANGUAGE
        os.environ[secret_module.SECRET_ENV] = secret
        try:
            if not found or found.get("missing"):
                return judge.missing(gid, points)
            if "refused" in found:
                return judge.refused(gid, points, found["refused"])
            return judge.judge(gid, found["data"], points, exercise["check_source"], judge_setup)
        except Exception as exc:  # noqa: BLE001 - one exercise's judge never stops the rest
            return {"passed": False, "points": 0.0, "message": text(
                "record.judge_failed", error=f"{type(exc).__name__}: {exc}")}
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def grade_submission(path: Path, sources: dict, *, label: str | None = None,
                     timeout: float = DEFAULT_TIMEOUT,
                     cell_timeout: float | None = DEFAULT_CELL_TIMEOUT,
                     kernel_name: str | None = None, sandbox_mode: str = "none",
                     hide: tuple = (), scratch: Path | None = None,
                     secret: str = "") -> SubmissionResult:
    """Grade one submission; the file is only read, never written. Never raises: any failure
    becomes the submission's error, with 0 points. ``cell_timeout=None``: each step's limit is
    derived from the source's own run times (:mod:`labs.exercises.limits`)."""
    start = time.monotonic()
    result = SubmissionResult(submission=label or str(path), notebook=None, sandbox=sandbox_mode)
    settings = _Settings(timeout=timeout,
                         cell_timeout=None if cell_timeout is None else min(cell_timeout, timeout),
                         kernel_name=kernel_name, sandbox=sandbox_mode, hide=tuple(hide),
                         scratch=scratch, secret=secret)
    reference: dict = {}
    try:
        _grade_into(result, Path(path), sources, settings)
    except Exception as exc:  # noqa: BLE001 - one submission never stops the run
        message = _say("worker_failed", error=f"{type(exc).__name__}: {exc}")
        result.error = message
        if result.notebook in sources:
            reference = graded_cells(sources[result.notebook])
            _zeros(result, reference, message)
    finally:
        result.seconds = time.monotonic() - start
    return result


def _grade_into(result: SubmissionResult, path: Path, sources: dict, settings: _Settings) -> None:
    data = path.read_bytes()
    result.sha256 = hashlib.sha256(data).hexdigest()
    try:
        submission = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
        if not isinstance(submission, dict):
            raise ValueError("not a JSON object")
        unreadable = None
    except Exception as exc:  # noqa: BLE001 - any unreadable file scores 0
        submission = nbformat.v4.new_notebook()
        unreadable = _say("unreadable", error=f"{type(exc).__name__}: {exc}")
    try:
        problems = sanitize(submission)
    except Exception as exc:  # noqa: BLE001
        problems, unreadable = [], unreadable or _say("malformed", error=f"{type(exc).__name__}: {exc}")
    name = match_source(path, submission, sources)
    if name is None:
        result.error = unreadable or _say("no_source")
        return
    result.notebook = name
    source = sources[name]
    result.source_sha256 = _source_hashes({name: source})[name]
    reference = graded_cells(source)
    if not unreadable and problems:
        unreadable = _say("malformed", error=", ".join(problems))
    if unreadable:
        result.error = unreadable
        _zeros(result, reference, unreadable)
        return
    nb, positions = prepare(submission, source)
    steps = plan(nb, positions, source)
    lang = _language(submission, name)
    step_limits = _limits(source, settings)
    raw = _run_worker(nb, steps, path, settings, lang, step_limits)
    result.restarts = int(raw.get("restarts", 0))
    status = raw.get("exercises", {})
    by_gid = {e["grade_id"]: e for e in steps["exercises"]}
    timeouts = deaths = 0
    for grade_id, ref_cell in reference.items():
        max_points = _max_points(ref_cell)
        if grade_id not in positions:
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, _say("deleted")))
            continue
        exercise = by_gid[grade_id]
        with _JUDGE_LOCK:  # CPython 3.11's ast is not safe in threads ("AST constructor
            # recursion depth mismatch" when two submissions parse at once): one at a time
            flags = _flags(grade_id, nb, exercise, steps["setup"], source)
        state = status.get(grade_id, {}).get("status", "not_run")
        if state != "ok":
            timeouts += state == "timeout"
            deaths += state == "dead"
            message = {
                "timeout": lambda: _say("timeout", grade_id=grade_id,
                                      seconds=f"{round(step_limits[grade_id], 1):g}"),
                "dead": lambda: _say("dead", grade_id=grade_id),
                "overall": lambda: _say("overall", grade_id=grade_id,
                                      seconds=f"{settings.timeout:g}"),
                "setup": lambda: _say("setup_failed", grade_id=grade_id,
                                    why=status.get(grade_id, {}).get("detail") or "?"),
            }.get(state, lambda: _say("not_run"))()
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, message, flags))
            continue
        # The verdict is the judge's (labs.exercises.judge, here, from the record the kernel
        # handed back), never what the kernel printed or raised.
        verdict = _judge(exercise, raw.get("records", {}).get(grade_id), steps["judge_setup"],
                         lang, settings.secret)
        points = max_points if verdict.get("passed") else 0.0
        result.exercises.append(ExerciseResult(grade_id, points, max_points,
                                               str(verdict.get("message", "")), flags))
    notes = []
    if timeouts or deaths:
        notes.append(_say("faults", count=timeouts + deaths, timeouts=timeouts, deaths=deaths))
    if any(status.get(g, {}).get("status") == "overall" for g in positions):
        notes.append(_say("overall", grade_id=next(g for g in positions
                                                 if status.get(g, {}).get("status") == "overall"),
                        seconds=f"{settings.timeout:g}"))
    setup_failed = [g for g in positions if status.get(g, {}).get("status") == "setup"]
    if setup_failed and not notes:
        notes.append(_say("setup_failed", grade_id=setup_failed[0],
                        why=status[setup_failed[0]].get("detail") or "?"))
    result.error = "; ".join(notes) or None


# --- reports -------------------------------------------------------------------------------

def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _pad(s: str, width: int) -> str:
    return s + " " * (width - _width(s))


def _num(x: float) -> str:
    return f"{x:g}"


def summary_table(results: list[SubmissionResult]) -> str:
    """A plain-text table per source notebook: one row per submission, one column per check."""
    blocks = []
    for notebook in dict.fromkeys(r.notebook for r in results):
        group = [r for r in results if r.notebook == notebook]
        ids = list(dict.fromkeys(e.grade_id for r in group for e in r.exercises))
        header = [_say("col_submission"), *ids, _say("col_total"), _say("col_flags"), _say("col_note")]
        rows = []
        for r in group:
            by_id = {e.grade_id: e for e in r.exercises}
            flagged = [e.grade_id for e in r.exercises if e.flags]
            rows.append([r.submission,
                         *(f"{_num(by_id[i].points)}/{_num(by_id[i].max_points)}" if i in by_id
                           else "-" for i in ids),
                         f"{_num(r.total)}/{_num(r.max_total)}", " ".join(flagged),
                         (r.error or "").replace("\n", " ")])
        widths = [max(_width(row[k]) for row in [header, *rows]) for k in range(len(header))]
        lines = [f"== {notebook or _say('unknown_notebook')} =="]
        for row in [header, ["-" * w for w in widths], *rows]:
            lines.append("  ".join(_pad(cell, w) for cell, w in zip(row, widths)).rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _open_dir(path: Path) -> int:
    """A descriptor of the folder ``path``, refusing a symlink."""
    return os.open(str(path), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))


def _write_atomic(folder: Path, name: str, data: bytes) -> Path:
    """Write ``folder/name`` as a new file then rename it into place: never through a symlink
    (a symlink planted at the name is replaced, its target untouched), never half-written."""
    dfd = _open_dir(folder)
    try:
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            os.unlink(tmp, dir_fd=dfd)
            raise
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)
    return folder / name


def check_out_folder(out: Path) -> Path:
    """Create (or check) the output folder and its ``submissions/``: no symlinks, folders."""
    out = Path(out)
    for folder in (out, out / "submissions"):
        if folder.is_symlink():
            raise GraderError(f"{folder} is a symlink: refusing to write through it")
        if folder.exists() and not folder.is_dir():
            raise GraderError(f"{folder} exists and is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        os.close(_open_dir(folder))
    return out


def result_name(label: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label.replace(os.sep, "__")).strip("._") or "x"
    return f"{safe[:80]}-{hashlib.sha256(label.encode()).hexdigest()[:8]}.json"


def write_result(result: SubmissionResult, out: Path) -> Path:
    data = json.dumps(result.as_dict(), ensure_ascii=False, indent=1).encode() + b"\n"
    return _write_atomic(Path(out) / "submissions", result_name(result.submission), data)


def read_result(out: Path, label: str) -> SubmissionResult | None:
    folder = Path(out) / "submissions"
    path = folder / result_name(label)
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != RESULT_VERSION or data.get("submission") != label:
            return None
        return SubmissionResult.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_reports(results: list[SubmissionResult], out: Path) -> tuple[Path, Path]:
    out = check_out_folder(out)
    report = {"sandbox": sorted({r.sandbox for r in results}),
              "submissions": [r.as_dict() for r in results]}
    json_path = _write_atomic(out, "grades.json", (json.dumps(
        report, ensure_ascii=False, indent=1) + "\n").encode())
    ids = list(dict.fromkeys(e.grade_id for r in results for e in r.exercises))
    header = ["submission", "notebook", "total", "max_total", "error", "flags", "sandbox"]
    for i in ids:
        header += [f"{i}", f"{i} max", f"{i} message", f"{i} flags"]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(header)
    for r in results:
        by_id = {e.grade_id: e for e in r.exercises}
        row = [r.submission, r.notebook or "", _num(r.total), _num(r.max_total), r.error or "",
               " | ".join(r.flags), r.sandbox]
        for i in ids:
            e = by_id.get(i)
            row += ([_num(e.points), _num(e.max_points), e.message, " | ".join(e.flags)]
                    if e else ["", "", "", ""])
        writer.writerow(row)
    # utf-8-sig so that spreadsheet programs read the Chinese messages correctly
    csv_path = _write_atomic(out, "grades.csv", buffer.getvalue().encode("utf-8-sig"))
    return csv_path, json_path


SCRATCH_PREFIX = "labs-grade-"


def _remove_stale_scratch() -> None:
    """Remove the scratch folders (copies of submissions) of earlier runs that were killed
    (``labs-grade-<pid>-*`` whose grader process is gone); a running grader's are kept."""
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        pid = folder.name[len(SCRATCH_PREFIX):].split("-")[0]
        if not pid.isdigit() or not folder.is_dir() or folder.is_symlink():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's grader, alive
            pass


def default_solutions() -> Path:
    here = Path("solutions")
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "solutions"


def default_jobs() -> int:
    """One submission per core: a submission is mostly one busy process (kernel start, torch
    import, a check's few small ranks) or waiting (a hung cell), so one per core keeps the
    cores busy without the ranks of two checks fighting over one core for long."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return _say("seconds", value=f"{seconds:.0f}")
    return _say("minutes", value=f"{seconds / 60:.1f}")


def grade(path: Path, *, solutions: Path | None = None, out: Path = Path("grades"),
          timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
          kernel_name: str | None = None, jobs: int | None = None, sandbox_mode: str = "auto",
          fresh: bool = False, secret: str | None = None, log=print) -> list[SubmissionResult]:
    """Grade every submission under ``path``; write the reports into ``out``.

    ``secret`` (the instructor's, ``--secret``; else the environment's ``LABS_GRADE_SECRET``;
    else a random one for this run) generates the checks' hidden cases
    (:mod:`labs.exercises.secret`)."""
    path = Path(path)
    submissions = find_submissions(path)
    solutions = Path(solutions or default_solutions())
    sources = load_sources(solutions)
    out = check_out_folder(out)
    try:
        mode, why = sandbox.choose(sandbox_mode)
    except RuntimeError as exc:
        raise GraderError(str(exc)) from None
    cell_timeout = None if cell_timeout is None else min(timeout, cell_timeout)
    jobs = max(1, jobs or default_jobs())
    secret = secret or os.environ.get(secret_module.SECRET_ENV) or secrets.token_hex(16)
    hashes = _source_hashes(sources)
    root = path if path.is_dir() else path.parent
    hide = (solutions.resolve(), root.resolve(), out.resolve())
    labels = [str(sub.relative_to(path)) if path.is_dir() else sub.name for sub in submissions]
    sandbox.set_subreaper()
    log(_say("start", total=len(submissions), jobs=jobs,
           sandbox=_say("sandbox_bwrap") if mode == "bwrap" else _say("sandbox_none", why=why)),
        flush=True)
    results: dict[str, SubmissionResult] = {}
    todo = []
    for number, (sub, label) in enumerate(zip(submissions, labels), 1):
        kept = None if fresh else read_result(out, label)
        if kept is not None and kept.sha256 == hashlib.sha256(sub.read_bytes()).hexdigest() \
                and (kept.notebook is None or hashes.get(kept.notebook) == kept.source_sha256):
            results[label] = kept
            log(_say("resumed", number=len(results), total=len(submissions), name=label,
                   score=f"{_num(kept.total)}/{_num(kept.max_total)}"), flush=True)
        else:
            todo.append((sub, label))
    lock = threading.Lock()
    start = time.monotonic()
    _remove_stale_scratch()
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))

    def one(sub, label):
        return grade_submission(sub, sources, label=label, timeout=timeout,
                                cell_timeout=cell_timeout, kernel_name=kernel_name,
                                sandbox_mode=mode, hide=hide, scratch=scratch, secret=secret)

    pool = ThreadPoolExecutor(max_workers=jobs)
    futures: dict = {}
    try:
        futures = {pool.submit(one, sub, label): label for sub, label in todo}
        graded = 0
        for future in as_completed(futures):
            label = futures[future]
            result = future.result()
            with lock:
                write_result(result, out)
                results[label] = result
                graded += 1
                elapsed = time.monotonic() - start
                eta = elapsed / graded * (len(todo) - graded)
                log(_say("progress", number=len(results), total=len(submissions), name=label,
                       score=f"{_num(result.total)}/{_num(result.max_total)}",
                       seconds=f"{result.seconds:.1f}", elapsed=_duration(elapsed),
                       eta=_duration(eta)), flush=True)
                if result.error:
                    log(_say("progress_note", note=result.error), flush=True)
                write_reports([results[lb] for lb in labels if lb in results], out)
    except BaseException:  # Ctrl-C: stop now, not after the submissions being graded
        _STOP.set()
        for future in futures:
            future.cancel()
        sandbox.kill_orphans(keep=set())  # the workers, with their kernels
        raise
    finally:
        if _STOP.is_set():  # a worker started just before the stop
            sandbox.kill_orphans(keep=set())
        pool.shutdown(wait=True, cancel_futures=True)
        _STOP.clear()
        sandbox.kill_orphans(keep=set())
        shutil.rmtree(scratch, ignore_errors=True)
    ordered = [results[lb] for lb in labels]
    csv_path, json_path = write_reports(ordered, out)
    log("", flush=True)
    log(summary_table(ordered), flush=True)
    log("\n" + _say("written", csv=csv_path, json=json_path, folder=out / "submissions"), flush=True)
    return ordered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.grade",
        description="Grade submitted notebooks (one .ipynb or a folder of them).")
    parser.add_argument("path", type=Path, help="a submission .ipynb or a folder of submissions")
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help="folder for grades.csv, grades.json and submissions/ (default: ./grades)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"time limit per submission in seconds (default: {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--cell-timeout", "--exercise-timeout", dest="cell_timeout", type=float,
                        default=None, help="time limit per exercise (its cells and its check) "
                        "and for the setup cell (default: each derived from the source notebook's "
                        f"own run time, {limits.FLOOR:g} s + {limits.FACTOR:g}x it, at most "
                        f"min(--timeout, {DEFAULT_CELL_TIMEOUT:g}))")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="folder of the solution notebooks (default: ./solutions)")
    parser.add_argument("--kernel", default=None, help="Jupyter kernel name (default: python3)")
    parser.add_argument("--jobs", type=int, default=None,
                        help=f"submissions graded at once (default: the cores, {default_jobs()})")
    parser.add_argument("--sandbox", choices=sandbox.MODES, default="auto",
                        help="bwrap: require the bubblewrap sandbox; none: process isolation "
                        "only; auto (default): bwrap when usable")
    parser.add_argument("--secret", default=None,
                        help="the instructor's secret the checks' hidden cases are generated from "
                        "(default: $LABS_GRADE_SECRET, else a random one per run); keep it from "
                        "the students")
    parser.add_argument("--fresh", action="store_true",
                        help="regrade every submission (default: keep the results of an earlier "
                        "run whose notebook and source are unchanged)")
    args = parser.parse_args(argv)
    if args.timeout <= 0 or (args.cell_timeout is not None and args.cell_timeout <= 0):
        parser.error("timeouts must be positive")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        grade(args.path, solutions=args.solutions, out=args.out, timeout=args.timeout,
              cell_timeout=args.cell_timeout, kernel_name=args.kernel, jobs=args.jobs,
              sandbox_mode=args.sandbox, fresh=args.fresh, secret=args.secret)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + _say("interrupted", folder=args.out / "submissions"), file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
