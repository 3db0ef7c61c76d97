"""Grading one submission: its worker and its records; its exercises scored by grader.verdicts.

Owns: :func:`grade_submission` -- read the file (never written), plan it
(:mod:`grader.sources`), run it in a worker process (:mod:`grader.runner`, its kernel in the
sandbox of :mod:`grader.sandbox`, the recorder injected), read the records the checks left,
have each exercise judged and flagged (:mod:`grader.verdicts`) -- and each step's time limit
(:mod:`grader.limits`). Must not: run the student's code in this process, unpickle anything the
student made, print, or write the reports (:mod:`grader.results`, :mod:`grader.cli`).
"""

from __future__ import annotations

import functools
import hashlib
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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import nbformat

from labs.exercises import secret as secret_module
from labs.exercises.generate import graded_cells
from labs.messages import EDITION_FOLDERS, LANGUAGES, text

from grader import limits, record, resources, sandbox, verdicts
from grader.results import ExerciseResult, SubmissionResult
from grader.sources import match_source, plan, prepare, sanitize, source_hashes
from grader.sources import max_points as cell_points

__all__ = ["DEFAULT_TIMEOUT", "DEFAULT_CELL_TIMEOUT", "STOP", "grade_submission", "cases_fingerprint"]

DEFAULT_TIMEOUT = 900.0
DEFAULT_CELL_TIMEOUT = 300.0
STOP = threading.Event()  # set when the run is interrupted: start no more workers


@dataclass
class _Settings:
    timeout: float = DEFAULT_TIMEOUT
    cell_timeout: float | None = DEFAULT_CELL_TIMEOUT  # None: derived per step (limits.derive)
    kernel_name: str | None = None
    sandbox: str = "none"
    hide: tuple = ()
    scratch: Path | None = None
    case_key: str = ""  # this submission's key to the hidden cases (never the secret itself)
    resources: resources.Limits = resources.Limits()


def _limits(source, settings: _Settings) -> dict:
    """The time limit of each step (``"setup"``, each grade_id): ``--cell-timeout`` when given,
    else derived from the source's own recorded run times (:mod:`grader.limits`)."""
    if settings.cell_timeout is not None:
        return defaultdict(lambda: settings.cell_timeout)
    cap = min(settings.timeout, DEFAULT_CELL_TIMEOUT)
    nb, positions = prepare(source, source)  # a few milliseconds
    return defaultdict(lambda: cap, limits.derive(source, plan(nb, positions, source), cap))


def _zeros(result: SubmissionResult, reference: dict, message: str) -> None:
    result.exercises = [ExerciseResult(gid, 0.0, cell_points(c), message)
                        for gid, c in reference.items()]


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
        work, course, ipc, records = _fill_scratch(scratch, path)
        token = secrets.token_hex(8)
        env = _kernel_env(work, course, ipc, records, token, settings.case_key, lang)
        exercises = [{**e, "limit": step_limits[e["grade_id"]]} for e in steps["exercises"]]
        job = {"notebook": nb, "setup": steps["setup"], "exercises": exercises,
               "setup_timeout": step_limits["setup"], "timeout": settings.timeout,
               "kernel_name": settings.kernel_name, "sandbox": settings.sandbox,
               "workdir": str(work.resolve()), "course": str(course.resolve()),
               "ipc": str(ipc.resolve()), "hide": [str(p) for p in settings.hide], "env": env,
               "records": str(records.resolve()), "judge_setup": steps.get("judge_setup", ""),
               "limits": settings.resources.as_dict(),
               "cgroup": resources.cgroup_name(os.getpid(), token),
               "unset_env": ["JPY_SESSION_NAME", "LABS_LANG"] if not lang else ["JPY_SESSION_NAME"]}
        job_path, result_path = scratch / "job.json", scratch / "result.json"
        job_path.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")
        # a safety net only: the worker keeps its own time limits
        limit = settings.timeout + 60 + 30 * (len(steps["exercises"]) + 1)
        if STOP.is_set():
            raise RuntimeError("grading stopped")
        output, returncode = _start_and_wait(scratch, job_path, result_path, limit, token,
                                             settings.case_key)
        if not result_path.is_file():
            tail = output.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise RuntimeError(f"worker exit {returncode}: {' | '.join(tail)}")
        raw = json.loads(result_path.read_text(encoding="utf-8"))
        raw["records"] = _read_records(records, steps["exercises"])
        return raw
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _fill_scratch(scratch: Path, path: Path) -> tuple[Path, Path, Path, Path]:
    """The worker's folders (work, course, ipc, records), the course and submission copied in."""
    work, course, ipc = scratch / "work", scratch / "course", scratch / "ipc"
    records = work / ".records"  # the checks' records (grader.record), judged here
    for folder in (work, ipc, work / ".home", records):
        folder.mkdir()
    sandbox.copy_course(course)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", path.name) or "submission.ipynb"
    (work / name).write_bytes(path.read_bytes())  # its own copy, the only writable file
    return work, course, ipc, records


def _kernel_env(work: Path, course: Path, ipc: Path, records: Path, token: str, case_key: str,
                lang: str | None) -> dict:
    """The kernel's environment: its mark, the course copy, a private home, the records, the key."""
    home = work / ".home"
    env = {"LABS_GRADE_MARK": token,
           "PYTHONPATH": str(course.resolve()), "HOME": str(home),
           "IPYTHONDIR": str(home / ".ipython"), "MPLCONFIGDIR": str(home / ".mpl"),
           "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "JUPYTER_RUNTIME_DIR": str(ipc), "JUPYTER_PLATFORM_DIRS": "1",
           record.RECORDS_ENV: str(records.resolve()),
           secret_module.SECRET_ENV: case_key}
    if lang:
        env["LABS_LANG"] = lang
    return env


def _start_and_wait(scratch: Path, job_path: Path, result_path: Path, limit: float, token: str,
                    case_key: str) -> tuple[bytes, int]:
    """Run the worker up to ``limit`` seconds, then kill what it left; its output and exit code."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader.runner", str(job_path), str(result_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True, cwd=str(scratch),
        env={**os.environ, secret_module.SECRET_ENV: case_key,  # not the secret
             "LABS_GRADE_PARENT": str(os.getpid())})
    try:
        output, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        output = b"worker timed out"
    finally:
        sandbox.kill_tree(proc.pid)
        sandbox.kill_marked(token)
        proc.wait()
        resources.remove(resources.cgroup_name(os.getpid(), token))
    return output, proc.returncode


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


@functools.lru_cache(maxsize=1)
def _checks_digest() -> str:
    """The course's checks as graded now (every module of labs.exercises): a change to them
    regrades what an earlier run kept."""
    folder = Path(secret_module.__file__).parent
    digest = hashlib.sha256()
    for module in sorted(folder.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


def cases_fingerprint(secret: str, label: str) -> str:
    """What a kept result must share with this run besides the notebook and its source: the key
    to the submission's hidden cases and the checks (a hash; neither the secret nor the key)."""
    key = secret_module.submission_key(secret, label) if secret else ""
    return hashlib.sha256(f"{key}\0{_checks_digest()}".encode()).hexdigest()[:16]


def grade_submission(path: Path, sources: dict, *, label: str | None = None,
                     timeout: float = DEFAULT_TIMEOUT,
                     cell_timeout: float | None = DEFAULT_CELL_TIMEOUT,
                     kernel_name: str | None = None, sandbox_mode: str = "none",
                     hide: tuple = (), scratch: Path | None = None,
                     secret: str = "", resource_limits: resources.Limits | None = None
                     ) -> SubmissionResult:
    """Grade one submission; the file is only read, never written. Never raises: any failure
    becomes the submission's error, with 0 points. ``cell_timeout=None``: each step's limit is
    derived from the source's own run times (:mod:`grader.limits`); ``resource_limits``: memory,
/tmp, processes, CPU and outputs (:mod:`grader.resources`, its defaults when None)."""
    start = time.monotonic()
    result = SubmissionResult(submission=label or str(path), notebook=None, sandbox=sandbox_mode,
                              cases=cases_fingerprint(secret, label or Path(path).name))
    # the instructor's secret stays here: the kernel and the judge get this submission's key only
    key = secret_module.submission_key(secret, label or Path(path).name) if secret else ""
    settings = _Settings(timeout=timeout,
                         cell_timeout=None if cell_timeout is None else min(cell_timeout, timeout),
                         kernel_name=kernel_name, sandbox=sandbox_mode, hide=tuple(hide),
                         scratch=scratch, case_key=key,
                         resources=resource_limits or resources.Limits())
    reference: dict = {}
    try:
        _grade_into(result, Path(path), sources, settings)
    except Exception as exc:  # noqa: BLE001 - one submission never stops the run
        message = text("grade.worker_failed", error=f"{type(exc).__name__}: {exc}")
        result.error, result.failed = message, True  # no grade: the next run grades it again
        if result.notebook in sources:
            reference = graded_cells(sources[result.notebook])
            _zeros(result, reference, message)
    finally:
        result.seconds = time.monotonic() - start
    return result


def _grade_into(result: SubmissionResult, path: Path, sources: dict, settings: _Settings) -> None:
    """Grade the notebook at ``path`` into ``result``: read, match its source, run, judge."""
    data = path.read_bytes()
    result.sha256 = hashlib.sha256(data).hexdigest()
    submission, problems, unreadable = _read_notebook(data)
    name = match_source(path, submission, sources)
    if name is None:
        result.error = unreadable or text("grade.no_source")
        return
    result.notebook = name
    source = sources[name]
    result.source_sha256 = source_hashes({name: source})[name]
    reference = graded_cells(source)
    if not unreadable and problems:
        unreadable = text("grade.malformed", error=", ".join(problems))
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
    result.limits_weak = [str(k) for k in raw.get("limits_weak", [])]
    limited = verdicts.score_exercises(
        result, reference, positions, nb, source, steps, raw, lang=lang, step_limits=step_limits,
        timeout=settings.timeout, lims=settings.resources, case_key=settings.case_key)
    result.error = verdicts.notes(raw.get("exercises", {}), reference, positions, limited,
                                  settings.timeout)


def _read_notebook(data: bytes) -> tuple[dict, list[str], str | None]:
    """The submitted notebook (empty if unreadable), its problems, and why it cannot be graded."""
    try:
        submission = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
        if not isinstance(submission, dict):
            raise ValueError("not a JSON object")
        unreadable = None
    except Exception as exc:  # noqa: BLE001 - any unreadable file scores 0
        submission = nbformat.v4.new_notebook()
        unreadable = text("grade.unreadable", error=f"{type(exc).__name__}: {exc}")
    try:
        problems = sanitize(submission)
    except Exception as exc:  # noqa: BLE001
        problems, unreadable = [], unreadable or text("grade.malformed",
                                                      error=f"{type(exc).__name__}: {exc}")
    return submission, problems, unreadable
