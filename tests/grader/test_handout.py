"""The student handout (``make handout``, ``python -m grader.handout``): the student notebooks,
labs/, the students' own README, errata and Makefile; no solutions/, no grader/, no tests, no
solution code, no secret. It stands alone: every link of its READMEs and errata resolves inside
it, and ``make lab`` and ``make check`` work there (issue 40, item 6)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader import handout

# the session's background work starts beside this module (tests/support/early.py)
pytestmark = pytest.mark.leaves_a_core

ROOT = Path(__file__).resolve().parents[2]
SECRET = "handout-test-secret-4f1c9e"
BLOCK = re.compile(r"^[ \t]*#+\s*BEGIN SOLUTION\s*$(.*?)^[ \t]*#+\s*END SOLUTION\s*$",
                   re.M | re.S)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("LABS_GRADE_SECRET", SECRET)  # an instructor's secret in the environment
    try:
        out = tmp_path_factory.mktemp("h") / "handout"
        assert handout.main(["--out", str(out), "--zip"]) == 0
    finally:
        mp.undo()
    return out


def _texts(folder: Path) -> dict[str, str]:
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".md", ".ipynb", ".txt", ".toml", ".yml",
                                              ".json", ""}:
            found[str(path.relative_to(folder))] = path.read_text(encoding="utf-8",
                                                                  errors="replace")
    return found


def _answers() -> list[str]:
    """Every solution block of both editions' solution notebooks, long enough to be telling."""
    blocks = []
    for path in sorted((ROOT / "solutions").rglob("*.ipynb")):
        for cell in nbformat.read(str(path), as_version=4).cells:
            for block in BLOCK.findall(cell.source):
                lines = [ln.strip() for ln in block.splitlines()
                         if ln.strip() and not ln.strip().startswith("#")]
                if sum(map(len, lines)) >= 40:
                    blocks.append("\n".join(lines))
    return blocks


def test_it_holds_what_students_need_and_nothing_of_the_instructor(built):
    names = {p.relative_to(built).parts[0] for p in built.iterdir()}
    assert {"labs", "notebooks", "README.md", "README.en.md", "requirements.txt",
            "pyproject.toml", "Makefile"} <= names
    assert not {"solutions", "grader", "tests", "grades", "scripts", "requirements-dev.txt",
                "CHANGELOG.md", "CITATION.cff", ".devcontainer", ".ci", "tools"} & names
    assert sorted(p.name for p in (built / "notebooks").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(list((built / "notebooks" / "en").glob("*.ipynb"))) == len(
        list((ROOT / "notebooks" / "en").glob("*.ipynb"))) >= 6
    assert not list(built.rglob("__pycache__"))
    assert (built.parent / "handout.zip").stat().st_size > 0


# What a student's README must not talk about: the solutions, the tests, the grader, CI, the
# developers' files and folders the handout does not ship.
NOT_FOR_STUDENTS = re.compile(
    r"solutions|grader|tests/|pytest|requirements-dev|make test|\bCI\b|\.ci/|devcontainer|"
    r"scripts/|CHANGELOG|CITATION|[Cc]ontributor|[Ii]nstructor guide|讲师指南|答案版|mutants|"
    r"LABS_GRADE|<!--", flags=re.M)


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """The one-edition handouts, by edition."""
    return {ed: handout.build(tmp_path_factory.mktemp(ed) / "handout", ed) for ed in ("zh", "en")}


def _readmes(folder: Path) -> list[Path]:
    return sorted(folder.glob("README*.md"))


def test_the_readmes_are_the_students_own(built, single):
    for name in ("README.md", "README.en.md"):
        assert (built / name).read_text(encoding="utf-8") == handout.readme(name, both=True)
    assert (single["zh"] / "README.md").read_text(encoding="utf-8") == handout.readme(
        "README.md", both=False)
    assert (single["en"] / "README.md").read_text(encoding="utf-8") == handout.readme(
        "README.en.md", both=False)
    for folder in (built, *single.values()):
        for path in _readmes(folder):
            body = path.read_text(encoding="utf-8")
            assert not NOT_FOR_STUDENTS.findall(body), (path, NOT_FOR_STUDENTS.findall(body))
            for needed in ("make lab", "make check", "make doctor", "environment.yml",
                           "pip install", "Colab", "LaunchTimeoutError"):
                assert needed in body, (path, needed)
    # the switch between the two READMEs only where both are handed out
    assert "README.en.md" in (built / "README.md").read_text(encoding="utf-8")
    assert "README.en.md" not in (single["zh"] / "README.md").read_text(encoding="utf-8")
    assert "notebooks/en/" not in (single["zh"] / "README.md").read_text(encoding="utf-8")


def test_every_link_of_the_readmes_and_errata_resolves_inside_the_handout(built, single):
    for folder in (built, *single.values()):
        pages = _readmes(folder) + sorted(folder.glob("ERRATA*.md"))
        assert len(pages) >= 2, folder
        found = 0
        for page in pages:
            for target in handout.links(page.read_text(encoding="utf-8")):
                found += 1
                assert (folder / target).exists(), (folder.parent.name, page.name, target)
        assert found >= 20, folder
    # the English errata's link to the Chinese errata: kept where ERRATA.md is, text elsewhere
    assert "](ERRATA.md)" in (built / "ERRATA.en.md").read_text(encoding="utf-8")
    assert "](ERRATA.md)" not in (single["en"] / "ERRATA.en.md").read_text(encoding="utf-8")
    # the check finds a broken link
    assert handout.links("[a](x.md#y) [b](https://e.org) [c](#z) ![d](img/p.png)") == [
        "x.md", "img/p.png"]


def test_the_makefile_is_the_students_and_shares_the_install_with_the_repositorys(built, single):
    body = (built / "Makefile").read_text(encoding="utf-8")
    assert "EDITION ?= zh" in body and "@EDITION@" not in body
    assert "EDITION ?= en" in (single["en"] / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", body, flags=re.M))
    assert targets == {"setup", "lab", "check", "doctor", "clean"}
    assert not re.search(r"requirements-dev|pytest|grader|solutions|tests", body)
    # the Python guard, the virtual environment and its install are the repository's own lines:
    # a change there is made in both Makefiles
    repo = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    rule = body.split("\nsetup: $(READY)\n\n", 1)[1].split("\n\n")[0]  # $(READY)'s recipe
    install = body.split("\n.PHONY", 1)[0] + "\n" + rule
    shared = [ln for ln in install.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(shared) >= 20
    assert [ln for ln in shared if ln not in repo] == []


def _leaks(folder: Path) -> list[str]:
    """What of the answers, the solution markers or the secret is in ``folder``'s files."""
    texts = _texts(folder)
    cells = "\n".join(c.source for name, body in texts.items() if name.endswith(".ipynb")
                      for c in nbformat.reads(body, as_version=4).cells)
    found = ["BEGIN SOLUTION"] if "BEGIN SOLUTION" in cells else []
    found += [a[:80] for a in _answers() if a in cells]
    return found + [SECRET for body in texts.values() if SECRET in body]


def test_no_solution_cell_answer_or_secret_is_in_it(built, tmp_path):
    assert len(_answers()) >= 30  # every notebook's exercises, both editions
    assert _leaks(built) == []
    # the check can fail: a solution notebook slipped into a handout is caught
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "x.ipynb").write_bytes((ROOT / "solutions" / "2.0_collectives.ipynb").read_bytes())
    assert "BEGIN SOLUTION" in _leaks(planted) and len(_leaks(planted)) > 2


def test_an_english_only_handout_and_a_foreign_folder(tmp_path):
    out = handout.build(tmp_path / "en-only", "en")
    assert (out / "notebooks" / "en").is_dir() and not list((out / "notebooks").glob("*.ipynb"))
    assert (out / "README.md").read_text().startswith("# Distributed Training, hands-on")
    assert not (out / "README.en.md").exists() and not (out / "ERRATA.md").exists()
    handout.build(out, "zh")  # an earlier handout is rebuilt
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        handout.build(tmp_path / "mine", "zh")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


MAKE = shutil.which("make")


@pytest.mark.slow
@pytest.mark.skipif(MAKE is None, reason="make is not installed")
def test_make_lab_and_make_check_work_in_the_handout(built, tmp_path):
    """Issue 40, item 6: `make check` failed in the handout (it wanted requirements-dev.txt and
    the tests). Here the handout's `make lab` (a dry run: it would start a server) and a real
    `make check` (the environment check, then notebook 2.0 end to end) run in a handout, on this
    test run's virtual environment (VENV=..., READY=a stamp newer than the requirements: nothing
    is installed)."""
    edition = "en"  # English output, for the assertions
    ready = tmp_path / "ready"
    ready.touch()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LABS_", "MAKEFLAGS", "MFLAGS", "JPY_"))}
    make = [MAKE, "-C", str(built), f"VENV={sys.prefix}", f"READY={ready}", f"EDITION={edition}"]
    lab = subprocess.run([*make, "-n", "lab"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert lab.returncode == 0, lab.stdout + lab.stderr
    assert f"--LabApp.default_url=/lab/tree/notebooks/{edition} " in lab.stdout
    assert "-m labs doctor" in lab.stdout and "pip install" not in lab.stdout
    notebook = built / "notebooks" / edition / "2.0_collectives.ipynb"
    before = notebook.read_bytes()
    check = subprocess.run([*make, "check"], capture_output=True, text=True, env=env,
                           timeout=900)
    said = check.stdout + check.stderr
    assert check.returncode == 0, said[-4000:]
    assert "All good" in said and "install check passed" in said, said[-4000:]
    assert notebook.read_bytes() == before  # the student's notebook is not changed
