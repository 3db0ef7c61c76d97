"""``python -m grader PATH [--out DIR] [--jobs N] [--sandbox {auto,bwrap,none}] [--fresh]
                    [--secret TEXT] [--timeout SECONDS] [--cell-timeout SECONDS]
                    [--solutions DIR] [--kernel NAME] [--memory-limit SIZE]
                    [--tmp-limit SIZE] [--process-limit N] [--cpu-limit SECONDS]
                    [--output-limit SIZE]``

Scores submitted notebooks: each isolated, exercise by exercise, never modifying them.

PATH is one ``.ipynb`` or a folder searched recursively (``.ipynb_checkpoints`` skipped). The
source of a submission is found in the solutions folder by ``metadata.course.notebook``, else by
file name, else as the longest solution name that ends the submission's name
(``alice_2.0_collectives.ipynb``). Every graded check cell is replaced by the source's version
(matched by ``grade_id``, or by cell id when its metadata was lost), so an edited check does not
count (:mod:`grader.sources`).

What runs: the setup cell (the source's, found by cell id or code), then each exercise: every
code cell after the previous check (for the first exercise: from the heading above its first
exercise cell) up to and including its check; the experiments of the notebook's body are not
run. Each exercise has its own time limit (``--cell-timeout``; by default derived from the source notebook's own
recorded run time of the same cells, :mod:`grader.limits`); on a timeout or a kernel death only
that exercise scores 0, the kernel and everything it started are killed, a new kernel replays
the setup and the finished exercises' cells, and grading goes on (:mod:`grader.runner`).
``--timeout`` bounds a whole submission. Resource limits per submission (:mod:`grader.resources`;
defaults: memory 4 GiB, /tmp and /dev/shm 1 GiB each, 1024 processes and threads, per exercise
300 s of CPU time and 4 MiB of output): past one, that exercise scores 0 with the limit as the
reason and the kernel is restarted as for a timeout; the start line and ``grades.json``
(``limits_weak``) say which limits do not fully hold on this machine.

The verdict is decided here, in the grader's process, not in the student's kernel: the kernel
hands back only a record of what the student's code returned on the check's inputs
(:mod:`grader.recorder`, :mod:`grader.record`), and :mod:`grader.judge` re-runs the source's
check cell against it. ``--secret`` (else ``$LABS_GRADE_SECRET``, else random per run)
generates the hidden cases (:mod:`labs.exercises.secret`): each submission's kernel and judge get
only a key derived from it and the submission's path, never the secret. English submissions
(``metadata.course.language`` "en", or a path through a folder ``en/``) are graded against
``solutions/en/`` and answered in English.

Isolation (:mod:`grader.sandbox`): each submission is graded by its own worker process whose
kernel runs in a bubblewrap sandbox when available (``--sandbox auto``), else in its own session
with a private copy of the course code; the report records which. Results
(:mod:`grader.results`): ``DIR/submissions/<name>.json`` per submission, written atomically as
each is graded (never through a symlink), then ``DIR/grades.csv`` and ``DIR/grades.json``
rebuilt from them; a rerun keeps the results whose notebook and source are unchanged
(``--fresh`` regrades all), and ``DIR/gradebook.csv`` (one row per student across notebooks)
and ``DIR/lms.csv`` (:mod:`grader.gradebook`). Flags for review (:mod:`grader.copying`) go to
the report.
The exit code is 0 whatever the students scored; 2 on misuse (nothing to grade, no solutions,
an output folder that is a symlink).

Owns: the command line and the run over a class (a pool of ``--jobs`` threads, each grading one
submission with :func:`grader.submission.grade_submission`), the progress lines, resuming, and
stopping cleanly on Ctrl-C. Must not: grade a submission itself or judge an exercise.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from labs.exercises import secret as secret_module
from labs.messages import text

from grader import gradebook, limits, lms, resources, sandbox
from grader.results import (GraderError, SubmissionResult, check_out_folder,
                            read_result, summary_table, write_reports, write_result)
from grader.results import number as _num
from grader.sources import find_submissions, load_sources, match_source, source_hashes
from grader.submission import (DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, STOP, cases_fingerprint,
                               grade_submission)

__all__ = ["grade", "list_class", "main", "default_solutions", "default_jobs", "GraderError"]


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
    return Path(__file__).resolve().parents[1] / "solutions"


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
        return text("grade.seconds", value=f"{seconds:.0f}")
    return text("grade.minutes", value=f"{seconds / 60:.1f}")


def grade(path: Path, *, solutions: Path | None = None, out: Path = Path("grades"),
          timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
          kernel_name: str | None = None, jobs: int | None = None, sandbox_mode: str = "auto",
          fresh: bool = False, secret: str | None = None,
          resource_limits: resources.Limits | None = None, log=None) -> list[SubmissionResult]:
    """Grade every submission under ``path``; write the reports into ``out``.

    Progress goes to ``log`` (default: ``print`` to the ``sys.stdout`` of the moment the run
    starts, so that no other thread's redirection hides it).

    ``secret`` (the instructor's, ``--secret``; else the environment's ``LABS_GRADE_SECRET``;
    else a random one for this run) generates the checks' hidden cases
    (:mod:`labs.exercises.secret`). ``resource_limits``: :class:`grader.resources.Limits`."""
    if log is None:
        log = functools.partial(print, file=sys.stdout)
    lims = resource_limits or resources.Limits()
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
    hashes = source_hashes(sources)
    root = path if path.is_dir() else path.parent
    hide = (solutions.resolve(), root.resolve(), out.resolve())
    labels = [str(sub.relative_to(path)) if path.is_dir() else sub.name for sub in submissions]
    sandbox.set_subreaper()
    _log_start(log, len(submissions), jobs, mode, why, lims)
    results, todo = _kept_results(submissions, labels, out, hashes, secret, fresh, log)
    grade_one = functools.partial(grade_submission, sources=sources, timeout=timeout,
                                  cell_timeout=cell_timeout, kernel_name=kernel_name, hide=hide,
                                  sandbox_mode=mode, secret=secret, resource_limits=lims)
    _grade_pending(todo, grade_one, jobs=jobs, out=out, results=results, labels=labels, log=log)
    ordered = [results[lb] for lb in labels]
    _write_class_reports(ordered, out, log)
    return ordered


def _log_start(log, total: int, jobs: int, mode: str, why: str, lims: resources.Limits) -> None:
    """Log the start line, the resource limits and which of them do not fully hold here."""
    log(text("grade.start", total=total, jobs=jobs,
           sandbox=(text("grade.sandbox_bwrap") if mode == "bwrap"
                     else text("grade.sandbox_none", why=why))),
        flush=True)
    log(text("grade.limits", **{kind: resources.shown(kind, lims) for kind in resources.KINDS}),
        flush=True)
    probe = resources.Cgroups(resources.cgroup_name(os.getpid(), "probe"), lims)
    weak = resources.weak(mode, probe)
    probe.close()
    if weak:
        notes = {"memory": lambda: text("grade.weak_memory"), "tmp": lambda: text("grade.weak_tmp"),
                 "processes": lambda: text("grade.weak_processes")}
        log(text("grade.limits_weak", which="; ".join(notes[k]() for k in weak)), flush=True)


def _kept_results(submissions: list[Path], labels: list[str], out: Path, hashes: dict,
                  secret: str, fresh: bool, log) -> tuple[dict[str, SubmissionResult], list]:
    """The earlier run's results still valid (logged as resumed), and the submissions to grade."""
    results: dict[str, SubmissionResult] = {}
    todo = []
    for sub, label in zip(submissions, labels):
        kept = None if fresh else read_result(out, label)
        if kept is not None and kept.sha256 == hashlib.sha256(sub.read_bytes()).hexdigest() \
                and (kept.notebook is None or hashes.get(kept.notebook) == kept.source_sha256) \
                and kept.cases == cases_fingerprint(secret, label) and not kept.failed:
            results[label] = kept
            log(text("grade.resumed", number=len(results), total=len(submissions), name=label,
                   score=f"{_num(kept.total)}/{_num(kept.max_total)}"), flush=True)
        else:
            todo.append((sub, label))
    return results, todo


def _grade_pending(todo: list, grade_one, *, jobs: int, out: Path,
                   results: dict[str, SubmissionResult], labels: list[str], log) -> None:
    """Grade ``todo`` on ``jobs`` threads, saving each result and the reports as it comes."""
    lock = threading.Lock()
    start = time.monotonic()
    _remove_stale_scratch()
    resources.remove_stale()
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures: dict = {}
    try:
        futures = {pool.submit(grade_one, sub, label=label, scratch=scratch): label
                   for sub, label in todo}
        graded = 0
        for future in as_completed(futures):
            label = futures[future]
            result = future.result()
            with lock:
                write_result(result, out)
                results[label] = result
                graded += 1
                elapsed = time.monotonic() - start
                _log_progress(log, label, result, number=len(results), total=len(labels),
                              elapsed=elapsed, eta=elapsed / graded * (len(todo) - graded))
                write_reports([results[lb] for lb in labels if lb in results], out)
    except BaseException:  # Ctrl-C: stop now, not after the submissions being graded
        STOP.set()
        for future in futures:
            future.cancel()
        sandbox.kill_orphans(keep=set())  # the workers, with their kernels
        raise
    finally:
        _shut_down(pool, scratch)


def _log_progress(log, label: str, result: SubmissionResult, *, number: int, total: int,
                  elapsed: float, eta: float) -> None:
    """Log one graded submission's progress line, and its error as a note."""
    log(text("grade.progress", number=number, total=total, name=label,
           score=f"{_num(result.total)}/{_num(result.max_total)}",
           seconds=f"{result.seconds:.1f}", elapsed=_duration(elapsed),
           eta=_duration(eta)), flush=True)
    if result.error:
        log("    " + result.error, flush=True)  # indented under its progress line


def _shut_down(pool: ThreadPoolExecutor, scratch: Path) -> None:
    """End the pool and every worker left (a stop's included), then remove the scratch folder."""
    if STOP.is_set():  # a worker started just before the stop
        sandbox.kill_orphans(keep=set())
    pool.shutdown(wait=True, cancel_futures=True)
    STOP.clear()
    sandbox.kill_orphans(keep=set())
    shutil.rmtree(scratch, ignore_errors=True)


def _write_class_reports(ordered: list[SubmissionResult], out: Path, log) -> None:
    """Write the class's reports, gradebook and LMS files; log the summary and where they are."""
    csv_path, json_path = write_reports(ordered, out)
    log("", flush=True)
    log(summary_table(ordered), flush=True)
    log("\n" + text("grade.written", csv=csv_path, json=json_path,
                     folder=out / "submissions"), flush=True)
    book_path, lms_path = gradebook.write(ordered, out)
    log(text("grade.gradebook_written", gradebook=book_path, lms=lms_path), flush=True)
    log(text("grade.lms_written", paths=", ".join(str(p) for p in lms.write(ordered, out))),
        flush=True)
    failed = [r.submission for r in ordered if r.failed]
    if failed:
        log(text("grade.failed_runs", count=len(failed), names=", ".join(failed)), flush=True)


def list_class(path: Path, solutions: Path | None = None) -> int:
    """``--list``: each student found under ``path`` with the notebooks found for them (by the
    notebook's metadata or its file name), and the files that match no notebook; grades nothing."""
    path = Path(path)
    sources = load_sources(Path(solutions or default_solutions()))
    found: dict[str, list[str]] = {}
    for sub in find_submissions(path):
        label = str(sub.relative_to(path)) if path.is_dir() else sub.name
        try:
            nb = json.loads(sub.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            nb = {}
        notebook = match_source(sub, nb, sources)
        student = gradebook.student_of(SubmissionResult(label, notebook))
        found.setdefault(student, []).append(
            f"{notebook}  ({label})" if notebook else text("grade.list_unknown", file=label))
    for student, notebooks in found.items():
        print(text("grade.list_student", student=student, count=len(notebooks)))
        for line in notebooks:
            print(f"    {line}")
    print(text("grade.list_total", students=len(found),
               files=sum(len(v) for v in found.values())))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line: grade the class (or ``--list`` it); the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    lims = _checked_limits(parser, args)
    if args.list:
        try:
            return list_class(args.path, args.solutions)
        except GraderError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        results = grade(args.path, solutions=args.solutions, out=args.out,
                        timeout=args.timeout, cell_timeout=args.cell_timeout,
                        kernel_name=args.kernel, jobs=args.jobs, sandbox_mode=args.sandbox,
                        fresh=args.fresh, secret=args.secret, resource_limits=lims)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + text("grade.interrupted", folder=args.out / "submissions"), file=sys.stderr)
        return 130
    return 3 if any(r.failed for r in results or []) else 0  # a failed grading: no grade


def _parser() -> argparse.ArgumentParser:
    """The command line's parser: what to grade, where, how, and the resource limits."""
    parser = argparse.ArgumentParser(
        prog="python -m grader",
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
                        "the students (a kernel only sees a key derived per submission)")
    parser.add_argument("--list", action="store_true",
                        help="grade nothing: list who was found with which notebooks")
    parser.add_argument("--fresh", action="store_true",
                        help="regrade every submission (default: keep the results of an earlier "
                        "run whose notebook and source are unchanged)")
    _add_limit_flags(parser)
    return parser


def _add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """Add the resource limits' flags (memory, /tmp, output, processes, CPU), with defaults."""
    defaults = resources.Limits()
    for flag, kind, what in (("--memory-limit", "memory", "memory of the kernel and everything "
                              "it starts (PSS)"),
                             ("--tmp-limit", "tmp", "size of the sandbox's /tmp and of its "
                              "/dev/shm, each"),
                             ("--output-limit", "output", "outputs kept per exercise")):
        parser.add_argument(flag, dest=f"{kind}_limit", type=resources.parse_size,
                            default=getattr(defaults, kind),
                            help=f"{what} (default: {resources.shown(kind, defaults)}; "
                            "e.g. 2G, 300M, 1MB)")
    parser.add_argument("--process-limit", type=int, default=defaults.processes,
                        help="processes and threads of the kernel and everything it starts "
                        f"(default: {defaults.processes})")
    parser.add_argument("--cpu-limit", type=float, default=defaults.cpu,
                        help="CPU seconds per exercise, all its processes together "
                        f"(default: {defaults.cpu:g})")


def _checked_limits(parser: argparse.ArgumentParser, args) -> resources.Limits:
    """The resource limits asked for; a usage error (exit 2) for a limit, timeout or --jobs < 1."""
    if args.process_limit < 1 or args.cpu_limit <= 0:
        parser.error("limits must be positive")
    lims = resources.Limits(memory=args.memory_limit, tmp=args.tmp_limit,
                            processes=args.process_limit, cpu=args.cpu_limit,
                            output=args.output_limit)
    if args.timeout <= 0 or (args.cell_timeout is not None and args.cell_timeout <= 0):
        parser.error("timeouts must be positive")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return lims


if __name__ == "__main__":
    raise SystemExit(main())
