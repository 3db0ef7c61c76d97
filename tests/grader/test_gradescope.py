"""`make gradescope` builds the autograder zip Gradescope takes (issue 40, point 4): setup.sh and
run_autograder at its root, the course and its solutions, the secret in one place; unpacked as
Gradescope unpacks it, its run_autograder grades a student and writes a results.json in
Gradescope's documented format, tests named by the exercises' titles, review flags hidden."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import gradescope
from labs.exercises import catalog
from tests.grader.test_gradebook import TEST_KEYS, TOP_KEYS, VISIBILITY

# the session's background work starts beside this module (tests/support/early.py)
pytestmark = pytest.mark.leaves_a_core

ROOT = Path(__file__).resolve().parents[2]


def test_the_zip_holds_the_autograder_and_the_course_and_the_secret_once(tmp_path):
    path = gradescope.build(tmp_path / "gradescope.zip", secret="correct horse battery")
    with zipfile.ZipFile(path) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        for name in ("setup.sh", "run_autograder"):  # at the root, executable
            assert infos[name].external_attr >> 16 & 0o111, name
        assert {"labs/__init__.py", "grader/cli.py", "solutions/2.0_collectives.ipynb",
                "solutions/en/2.0_collectives.ipynb", "requirements.txt",
                "pyproject.toml"} <= set(infos)
        assert not [n for n in infos if "__pycache__" in n or n.startswith(("tests/", "notebooks/"))]
        assert archive.read("secret.txt") == b"correct horse battery"
        holding = [n for n in infos if b"correct horse battery" in archive.read(n)]
        assert holding == ["secret.txt"]
        setup = archive.read("setup.sh").decode()
    assert "python3.11" in setup and "bubblewrap" in setup and "download.pytorch.org/whl/cpu" in setup
    with zipfile.ZipFile(gradescope.build(tmp_path / "none.zip")) as archive:
        assert "secret.txt" not in archive.namelist()


@pytest.mark.slow  # grades one notebook as Gradescope would
@pytest.mark.timeout(400)
def test_the_unpacked_autograder_grades_a_student_in_gradescopes_format(tmp_path):
    source = tmp_path / "source"
    with zipfile.ZipFile(gradescope.build(tmp_path / "g.zip", secret="s3cret")) as archive:
        archive.extractall(source)
    submission = tmp_path / "submission"
    submission.mkdir()
    shutil.copy(ROOT / "notebooks" / "en" / "2.0_collectives.ipynb", submission)
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps({"users": [{"id": "4242", "name": "A Student"}]}))
    results = tmp_path / "results" / "results.json"
    proc = subprocess.run(
        ["bash", str(source / "run_autograder")], capture_output=True, text=True, timeout=380,
        env={**os.environ, "AUTOGRADER_SOURCE": str(source), "AUTOGRADER_SUBMISSION": str(submission),
             "AUTOGRADER_RESULTS": str(results), "AUTOGRADER_METADATA": str(metadata),
             "PYTHON": sys.executable, "LABS_GRADE_EXTRA_ARGS": "--sandbox none",
             "LABS_GRADE_SECRET": "", "PYTHONPATH": str(source)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert set(data) <= TOP_KEYS and data["score"] == 0  # untouched: nothing done yet
    ids = [gid for gid, e in catalog.EXERCISES.items() if e.notebook == "2.0_collectives.ipynb"]
    shown = [t for t in data["tests"] if t["visibility"] == "visible"]
    assert [t["name"] for t in shown] == [
        f"2.0_collectives · {catalog.label(g, 'en')}: {catalog.title(g, 'en')}" for g in ids]
    for t in data["tests"]:
        assert set(t) <= TEST_KEYS and t["visibility"] in VISIBILITY
    assert b"s3cret" not in results.read_bytes()
