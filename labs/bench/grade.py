"""Grader throughput: a class of submissions of one course notebook, graded by ``labs.grade``.

    python -m labs.bench grade [--notebook 2.0_collectives.ipynb] [--students 30] [--jobs N]
                               [--cell-timeout 60] [--sandbox auto]

The class (built in a temporary folder) mixes, in turn: the solution (correct), the untouched
student version, a wrong answer (the first exercise cell replaced by ``return None`` bodies),
a crash (``os._exit`` in the first exercise cell) and a hang (an infinite loop there, which
costs one ``--cell-timeout``). Prints seconds per submission and the projection for 30
students x 4 notebooks at the same rate. Target: under 15 minutes on 2 cores.
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


def build_class(root: Path, notebook: str, students: int) -> Path:
    from labs.exercises.generate import graded_cells, make_student_notebook

    course = Path(__file__).resolve().parents[2]
    solution = nbformat.read(str(course / "solutions" / notebook), as_version=4)
    student = make_student_notebook(nbformat.read(str(course / "solutions" / notebook),
                                                  as_version=4), notebook)
    checks = graded_cells(solution)
    first_check = solution.cells.index(next(iter(checks.values())))
    exercise = next(i for i in range(first_check, 0, -1)
                    if solution.cells[i].metadata.get("nbgrader", {}).get("solution"))

    def planted(code):
        nb = nbformat.from_dict(json.loads(json.dumps(solution)))
        nb.cells[exercise].source = code + "\n" + nb.cells[exercise].source
        return nb

    kinds = [("correct", lambda: solution), ("untouched", lambda: student),
             ("wrong", lambda: planted("raise ValueError('wrong')")),
             ("crash", lambda: planted("import os\nos._exit(1)")),
             ("hang", lambda: planted("while True:\n    pass"))]
    subs = root / "submissions"
    for k in range(students):
        kind, make = kinds[k % len(kinds)]
        (subs / f"s{k:02d}_{kind}").mkdir(parents=True)
        nbformat.write(make(), str(subs / f"s{k:02d}_{kind}" / notebook))
    return subs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notebook", default="2.0_collectives.ipynb")
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--cell-timeout", type=float, default=60)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="labs-bench-grade-") as tmp:
        subs = build_class(Path(tmp), args.notebook, args.students)
        cmd = [sys.executable, "-m", "labs.grade", str(subs), "--out", str(Path(tmp) / "out"),
               "--cell-timeout", str(args.cell_timeout), "--sandbox", args.sandbox]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        cpu_before = _children_cpu()
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        cpu = _children_cpu() - cpu_before
        load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        if proc.returncode:
            print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
            return 1
        report = json.loads((Path(tmp) / "out" / "grades.json").read_text(encoding="utf-8"))
    per = seconds / args.students
    projected = per * 30 * 4 / 60
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"notebook {args.notebook}, {args.students} submissions (correct/untouched/wrong/"
          f"crash/hang), cell timeout {args.cell_timeout:g} s, {cores} cores, "
          f"sandbox {report['sandbox']}, jobs {args.jobs or 'default'}")
    print(f"load average {load_before:.1f} before, {load_after:.1f} after (other work on the "
          f"machine slows the grader down)")
    print(f"total {seconds:.1f} s, {per:.2f} s per submission; CPU time of the processes it "
          f"waited for {cpu / args.students:.2f} s per submission")
    print(f"projected 30 students x 4 notebooks: {projected:.1f} min "
          f"(target {TARGET_MINUTES:g} min: {'met' if projected <= TARGET_MINUTES else 'missed'})")
    return 0
