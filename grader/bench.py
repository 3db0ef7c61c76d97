"""Grader throughput: a class of submissions of one course notebook, graded by ``python -m grader``.

    python -m grader.bench [--notebook 2.0_collectives.ipynb ...] [--students 30]  (default: every graded notebook)
                           [--mix class|even] [--jobs N] [--cell-timeout S] [--sandbox auto]

The class (built in a temporary folder) mixes these kinds of submission: the solution
(correct), the untouched student version, a wrong answer (the first exercise cell raises), a
cheat (hides that error with ``set_custom_exc``), a crash (``os._exit`` in the first exercise
cell: the kernel dies), a hang (an infinite loop there, which costs that exercise's time
limit), a /tmp filler (writes until the sandbox's /tmp is full, at most 2 GiB) and a fork loop
(up to 2,000 sleeping children): the last two are stopped by the grader's resource limits
(:mod:`grader.resources`, its defaults unless ``--grader-args`` says otherwise).
``--mix class`` is the class of the grader's issue, per 30 students: 1 hang, 1 crash, 1 /tmp
filler, 1 fork loop, 3 cheats, 5 wrong, 5 untouched, 13 correct; ``--mix even`` cycles through
the eight kinds (4 hangs in 30: a harsh case). Time limits are the grader's default (derived
from the source's own run time) unless ``--cell-timeout`` is given. Prints the grader's sandbox
and limits lines, then, per notebook, the total, the seconds per
submission, each kind's seconds (its own grading, while ``--jobs`` ran at once) and the
projection for 30 students x 4 notebooks at the mean rate of the notebooks measured.
Target: under 15 minutes on 2 cores.

Owns: building a class of submissions and timing ``python -m grader`` on it. Must not: grade or
judge anything itself (it runs the grader as a command), assert a speed target, or be imported by
``grader``'s own modules.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from labs.exercises import catalog
from labs.exercises.generate import graded_cells, make_student_notebook

try:
    import resource
except ImportError:  # Windows
    resource = None

__all__ = ["main", "build_class"]

TARGET_MINUTES = 15.0


def _children_cpu() -> float:
    if resource is None:
        return float("nan")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


KINDS = ("correct", "untouched", "wrong", "cheat", "crash", "hang", "fill", "fork")
# the class of the issue, per 30 students: three try to cheat, one notebook hangs, one fills
# the disk and one forks without end
CLASS_MIX = ("correct",) * 13 + ("untouched",) * 5 + ("wrong",) * 5 + ("cheat",) * 3 + (
    "crash", "hang", "fill", "fork")
PLANTS = {"wrong": "raise ValueError('wrong')",
          "cheat": "get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)\n"
                   "raise ValueError('wrong')",
          "crash": "import os\nos._exit(1)",
          "hang": "while True:\n    pass",
          # bounded even without limits: 2 GiB at most, removed again; 2,000 children at most
          "fill": "import os\n_p = '/tmp/bench-fill-%d' % os.getpid()\ntry:\n"
                  "    with open(_p, 'wb') as _f:\n        for _ in range(256):\n"
                  "            _f.write(b'x' * 2**23); _f.flush()\n"
                  "finally:\n    os.path.exists(_p) and os.remove(_p)",
          "fork": "import os, time\nfor _ in range(2000):\n    if os.fork() == 0:\n"
                  "        time.sleep(60); os._exit(0)"}


def kinds(students: int, mix: str) -> list[str]:
    """The kind of each of ``students`` submissions: ``mix`` "class" (CLASS_MIX, spread out so
    that any prefix has its share) or "even" (KINDS in turn)."""
    if mix == "even":
        return [KINDS[k % len(KINDS)] for k in range(students)]
    if mix != "class":
        raise ValueError(f"mix {mix!r}: class or even")

    def share(i):  # where the i-th of its kind falls in the class, from 0 to 1
        kind = CLASS_MIX[i]
        return (CLASS_MIX[:i + 1].count(kind) - 0.5) / CLASS_MIX.count(kind)

    order = sorted(range(len(CLASS_MIX)), key=lambda i: (share(i), i))
    spread = [CLASS_MIX[i] for i in order]
    return [spread[k % len(spread)] for k in range(students)]


def build_class(root: Path, notebook: str, students: int, mix: str = "class") -> Path:
    course = Path(__file__).resolve().parents[1]  # the repository (grader/ is at its root)
    solution = nbformat.read(str(course / "solutions" / notebook), as_version=4)
    student = make_student_notebook(nbformat.read(str(course / "solutions" / notebook),
                                                  as_version=4), notebook)
    checks = graded_cells(solution)
    first_check = solution.cells.index(next(iter(checks.values())))
    exercise = next(i for i in range(first_check, 0, -1)
                    if solution.cells[i].metadata.get("nbgrader", {}).get("solution"))

    def make(kind):
        if kind == "correct":
            return solution
        if kind == "untouched":
            return student
        nb = nbformat.from_dict(json.loads(json.dumps(solution)))
        nb.cells[exercise].source = PLANTS[kind] + "\n" + nb.cells[exercise].source
        return nb

    subs = root / "submissions"
    for k, kind in enumerate(kinds(students, mix)):
        (subs / f"s{k:02d}_{kind}").mkdir(parents=True)
        nbformat.write(make(kind), str(subs / f"s{k:02d}_{kind}" / notebook))
    return subs


def _grade(notebook: str, args) -> dict:
    """Grade one class of ``notebook``; what was measured."""
    with tempfile.TemporaryDirectory(prefix="labs-bench-grade-") as tmp:
        subs = build_class(Path(tmp), notebook, args.students, args.mix)
        cmd = [sys.executable, "-m", "grader", str(subs), "--out", str(Path(tmp) / "out"),
               "--sandbox", args.sandbox]
        if args.cell_timeout:
            cmd += ["--cell-timeout", str(args.cell_timeout)]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        cmd += args.grader_args.split()
        load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        cpu_before = _children_cpu()
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        cpu = _children_cpu() - cpu_before
        load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        if proc.returncode:
            raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
        report = json.loads((Path(tmp) / "out" / "grades.json").read_text(encoding="utf-8"))
    by_kind: dict = {}
    for sub in report["submissions"]:
        kind = sub["submission"].split("/")[0].split("_", 1)[1]
        by_kind.setdefault(kind, []).append(sub["seconds"])
    return {"seconds": seconds, "cpu": cpu, "load": (load_before, load_after),
            "sandbox": report["sandbox"], "by_kind": by_kind,
            "lines": proc.stdout.splitlines()[:3], "limited": [
                s["submission"].split("/")[0] for s in report["submissions"]
                if any(k in (s["error"] or "") for k in ("limit", "限制"))]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", nargs="+", default=catalog.notebooks(),
                        help="default: every graded notebook")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--mix", choices=("class", "even"), default="class")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--cell-timeout", type=float, default=None,
                        help="a fixed limit per exercise (default: the grader's, derived)")
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--grader-args", default="",
                        help="more options for python -m grader, e.g. \"--memory-limit 2G "
                        "--process-limit 512\" (default: none: the grader's default limits)")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    limit = f"{args.cell_timeout:g} s" if args.cell_timeout else "derived from the source"
    rates = []
    for notebook in args.notebook:
        try:
            got = _grade(notebook, args)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            return 1
        per = got["seconds"] / args.students
        rates.append(per)
        print(f"notebook {notebook}, {args.students} submissions (mix {args.mix}), cell limit "
              f"{limit}, {cores} cores, sandbox {got['sandbox']}, jobs {args.jobs or 'default'}")
        for line in got["lines"]:
            print(f"  grader: {line}")
        print(f"  stopped at a resource limit: {', '.join(got['limited']) or 'none'}")
        print(f"  load average {got['load'][0]:.1f} before, {got['load'][1]:.1f} after (other "
              f"work on the machine slows the grader down)")
        print(f"  total {got['seconds']:.1f} s, {per:.2f} s per submission; CPU time of the "
              f"processes it waited for {got['cpu'] / args.students:.2f} s per submission")
        print("  each kind, seconds of its own grading (mean, n): " + ", ".join(
            f"{kind} {sum(v) / len(v):.1f} ({len(v)})"
            for kind in KINDS for v in [got["by_kind"].get(kind)] if v))
    mean = sum(rates) / len(rates)
    projected = mean * 30 * 4 / 60
    print(f"projected 30 students x 4 notebooks at {mean:.2f} s per submission: {projected:.1f} "
          f"min (target {TARGET_MINUTES:g} min: "
          f"{'met' if projected <= TARGET_MINUTES else 'missed'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
