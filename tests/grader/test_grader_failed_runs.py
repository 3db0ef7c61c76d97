"""A failure is never a grade (issue 40, point 2).

When the grader's own worker cannot run a submission (a reason outside the student's code), that
submission is marked as an error in every export (no 0), the run says which and exits 3, and the
next run grades it again; a result is kept only under the same secret and the same checks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from labs.messages import text
from tests.support import grader_plants as gp
from tests.support.messages import pattern

DEMO = gp.DEMO

# the grader as `python -m grader` runs it, but bob's worker fails to start while FAIL is set
RUN = """
import os, sys
from grader import cli, submission
real = submission._run_worker
def broken(nb, steps, path, *args, **kwargs):
    if os.environ.get("FAIL") and "bob" in str(path):
        raise RuntimeError("worker exit 1: cannot start")
    return real(nb, steps, path, *args, **kwargs)
submission._run_worker = broken
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.slow  # three grading runs of two small submissions
def test_a_worker_that_could_not_run_leaves_an_error_and_is_graded_again(tmp_path):
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    source = nbformat.read(str(DEMO), as_version=4)
    nbformat.write(source, str(solutions / "demo.ipynb"))
    subs = tmp_path / "submissions"
    for who in ("alice", "bob"):
        (subs / who).mkdir(parents=True)
        nbformat.write(source, str(subs / who / "demo.ipynb"))
    out = tmp_path / "grades"

    def run(fail: bool, secret: str = "s"):
        return subprocess.run(
            [sys.executable, "-c", RUN, str(subs), "--out", str(out), "--solutions",
             str(solutions), "--jobs", "1", "--sandbox", "none", "--secret", secret],
            capture_output=True, text=True, cwd=tmp_path, timeout=600,
            env={**os.environ, "FAIL": "1" if fail else "", "LABS_LANG": "en"})

    first = run(fail=True)
    assert first.returncode == 3, first.stdout + first.stderr
    assert pattern("grade.failed_runs", lang="en").search(first.stdout), first.stdout
    by = {s["submission"]: s for s in json.loads((out / "grades.json").read_text())["submissions"]}
    assert by["bob/demo.ipynb"]["failed"] and not by["alice/demo.ipynb"]["failed"]
    lms = (out / "lms.csv").read_text(encoding="utf-8-sig").splitlines()
    assert lms[2].startswith("bob,,") and "cannot start" in lms[2]  # no score, the reason
    assert text("grade.gradebook_error", lang="en") in (out / "gradebook.csv").read_text(
        encoding="utf-8-sig")
    resumed = pattern("grade.resumed", lang="en")
    second = run(fail=False)
    assert second.returncode == 0, second.stdout + second.stderr
    kept = [ln for ln in second.stdout.splitlines() if resumed.fullmatch(ln)]
    assert len(kept) == 1 and "alice" in kept[0]  # bob graded again, alice kept
    by = {s["submission"]: s for s in json.loads((out / "grades.json").read_text())["submissions"]}
    assert not by["bob/demo.ipynb"]["failed"] and by["bob/demo.ipynb"]["total"] == 5
    third = run(fail=False, secret="another")  # other hidden cases: nothing kept
    assert third.returncode == 0 and not [
        ln for ln in third.stdout.splitlines() if resumed.fullmatch(ln)], third.stdout
