"""The student install and the developers' install: requirements.txt holds what the course needs at
run time, requirements-dev.txt what only the tests use, and only the test targets install the latter;
the distribution's name does not collide with the unrelated "labs" on PyPI."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCAL = {"labs", "grader", "tests", "tools", "conftest"} | {p.stem for p in (ROOT / "tests").rglob("*.py")}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / name).read_text()
    return {_norm(k): v for k, v in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", text, flags=re.M)}


def _imported_distributions(folder: Path) -> set[str]:
    modules = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    modules -= set(sys.stdlib_module_names) | LOCAL
    owners = importlib.metadata.packages_distributions()
    return {_norm(dist) for m in modules for dist in owners.get(m, [m])}


def test_the_two_requirement_files_do_not_overlap():
    assert not set(_pins("requirements.txt")) & set(_pins("requirements-dev.txt"))


def test_test_tools_are_not_in_the_student_install():
    runtime = _pins("requirements.txt")
    for tool in ["pytest", "pytest-timeout", "nbval", "markdown-it-py", "playwright"]:
        assert tool not in runtime, tool
        assert tool in _pins("requirements-dev.txt"), tool


def test_every_distribution_the_tests_import_is_pinned():
    pinned = set(_pins("requirements.txt")) | set(_pins("requirements-dev.txt"))
    # installed as dependencies of the pinned ones (jupyterlab, ipykernel)
    indirect = {"ipython", "jupyter-client", "traitlets", "jupyter-server"}
    missing = _imported_distributions(ROOT / "tests") - pinned - indirect
    assert not missing, f"tests import {sorted(missing)}: pin them in requirements-dev.txt"


def test_only_the_test_targets_install_the_test_tools():
    makefile = (ROOT / "Makefile").read_text()
    assert "$(DEV_READY): $(READY) requirements-dev.txt" in makefile
    for target in ["test", "check", "test-portability"]:
        assert re.search(rf"^{target}: \$\(DEV_READY\)$", makefile, flags=re.M), target
    for target in ["lab", "setup", "grade", "doctor"]:
        line = re.search(rf"^{target}:(.*)$", makefile, flags=re.M).group(1)
        assert "DEV_READY" not in line, target
    recipe = makefile.split("$(READY): requirements.txt pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "requirements-dev" not in recipe


def test_the_distribution_is_not_named_like_the_pypi_package_labs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "dist-training-course"
    assert sorted(project["optional-dependencies"]["test"]) == sorted(_pins("requirements-dev.txt"))


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_opens_the_english_edition_in_english():
    make = shutil.which("make")

    def dry(*args):
        proc = subprocess.run([make, "-n", "-C", str(ROOT), "lab", *args], capture_output=True,
                              text=True, timeout=60)
        return proc.returncode, proc.stdout + proc.stderr
    code, out = dry("EDITION=en")
    assert code == 0 and "--LabApp.default_url=/lab/tree/notebooks/en " in out
    assert "LABS_LANG=en .venv/bin/python -m labs doctor" in out
    code, out = dry()
    assert code == 0 and "--LabApp.default_url=/lab/tree/notebooks " in out and "LABS_LANG" not in out
    code, out = dry("EDITION=fr")
    assert code != 0 and "EDITION is zh or en, not fr" in out


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_grade_hands_a_secret_of_several_words_to_the_grader_whole(tmp_path):
    """Issue 40: `make grade SECRET="correct horse battery"` failed (the words were split); the
    secret reaches the grader whole, in its environment, and not on its command line."""
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    seen = tmp_path / "seen.txt"
    fake.write_text("#!/bin/sh\nprintf '%s\\n' \"$*\" \"$LABS_GRADE_SECRET\" > " + str(seen) + "\n")
    fake.chmod(0o755)
    ready = tmp_path / "ready"
    ready.touch()  # newer than requirements.txt: the setup step has nothing to do
    secret = "correct horse 'battery\" staple"  # spaces and quotes (a $ is make's)
    proc = subprocess.run([shutil.which("make"), "-s", "-C", str(ROOT), "grade",
                           f"BIN={fake.parent}", f"READY={ready}", f"SECRET={secret}",
                           "SUBMISSIONS=subs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    args, got = seen.read_text().splitlines()
    assert got == secret and "battery" not in args
    assert args == "-m grader subs --out grades"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target, command", [("grade", "-m grader "), ("doctor", "-m labs doctor"),
                                             ("handout", "-m grader.handout ")])
def test_edition_en_makes_the_instructors_targets_speak_english(target, command, tmp_path):
    """Issue 40, point 5: `make grade`, `make handout` and `make doctor` printed Chinese in an
    English course unless LABS_LANG=en was set by hand; EDITION=en sets it for each."""
    ready = tmp_path / "ready"
    ready.touch()

    def dry(*args):
        proc = subprocess.run([shutil.which("make"), "-n", "-C", str(ROOT), target,
                               f"READY={ready}", *args], capture_output=True, text=True,
                              timeout=60)
        line = next(ln for ln in proc.stdout.splitlines() if command in ln)
        return line
    assert dry("EDITION=en").startswith("LABS_LANG=en ")
    assert "LABS_LANG" not in dry()
