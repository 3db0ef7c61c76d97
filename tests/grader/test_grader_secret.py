"""The instructor's secret never enters a student's process (issue 40, point 1).

The grader derives each submission's key to the hidden cases from the secret and the
submission's id (labs.exercises.secret.submission_key) and hands the kernel and the judge only
that: an answer that prints or raises the environment shows its own key, never the secret, in
every export; a key tells nothing of another submission's cases.
"""
from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from labs.exercises import secret
from tests.support import grader_plants as gp

DEMO = gp.DEMO
SECRET = "correct horse battery staple"

LEAK = ("import os\n\n\ndef list_sum(xs):\n"
        "    print('key', os.environ.get('LABS_GRADE_SECRET'))\n"
        "    raise ValueError(f\"secret={os.environ.get('LABS_GRADE_SECRET')} \"\n"
        "                     f\"env={dict(os.environ)}\")\n")


def test_a_submission_key_is_neither_the_secret_nor_another_submissions():
    alice, bob = (secret.submission_key(SECRET, f"{who}/demo.ipynb") for who in ("alice", "bob"))
    assert alice != bob and SECRET not in alice + bob
    assert alice == secret.submission_key(SECRET, "alice/demo.ipynb")  # stable: a regrade agrees
    assert alice != secret.submission_key("another secret", "alice/demo.ipynb")


@pytest.mark.slow  # grades two submissions through the command line, then every export
def test_an_answer_that_prints_the_environment_finds_no_secret_in_any_export(tmp_path):
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    source = nbformat.read(str(DEMO), as_version=4)
    nbformat.write(source, str(solutions / "demo.ipynb"))
    leaking = gp.demo_with(source, LEAK)
    subs = tmp_path / "submissions"
    for who, nb in (("alice", leaking), ("bob", source)):
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, str(subs / who / "demo.ipynb"))
    out = tmp_path / "grades"
    env_secret = {"LABS_GRADE_SECRET": SECRET}  # the instructor's shell may hold it too
    proc = subprocess.run(
        [sys.executable, "-m", "grader", str(subs), "--out", str(out), "--solutions",
         str(solutions), "--jobs", "1", "--sandbox", "none", "--secret", SECRET],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={**os.environ, **env_secret})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scope = out / "results.json"
    assert subprocess.run([sys.executable, "-m", "grader.gradebook", str(out), "--gradescope",
                           str(scope), "--student", "alice"], cwd=tmp_path, timeout=120,
                          capture_output=True).returncode == 0
    exports = [p for p in out.rglob("*") if p.is_file()]
    assert {"grades.csv", "grades.json", "gradebook.csv", "lms.csv", "results.json"} <= {
        p.name for p in exports}
    for path in exports:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in proc.stdout + proc.stderr
    # the kernel saw alice's own key (her feedback may show it), not bob's
    alice_key = secret.submission_key(SECRET, "alice/demo.ipynb")
    everything = b"".join(p.read_bytes() for p in exports)
    assert alice_key.encode() in everything
    assert secret.submission_key(SECRET, "bob/demo.ipynb").encode() not in everything
