"""The student handout (``make handout``, ``python -m grader.handout``): the student notebooks,
labs/ and the README's student part; no solutions/, no grader/, no solution code, no secret."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from grader import handout

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
    assert not {"solutions", "grader", "tests", "grades", "scripts"} & names
    assert sorted(p.name for p in (built / "notebooks").glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(list((built / "notebooks" / "en").glob("*.ipynb"))) == len(
        list((ROOT / "notebooks" / "en").glob("*.ipynb"))) >= 6
    assert not list(built.rglob("__pycache__"))
    assert (built.parent / "handout.zip").stat().st_size > 0


def test_the_readmes_stop_before_the_instructor_guide(built):
    for name, heading in handout.INSTRUCTOR_HEADINGS.items():
        text = (built / name).read_text(encoding="utf-8")
        assert heading not in text and "python -m grader" not in text
        assert (ROOT / name).read_text(encoding="utf-8").startswith(text.rstrip())


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
    assert handout.INSTRUCTOR_HEADINGS["README.en.md"] not in (out / "README.md").read_text()
    assert "Instructor" not in (out / "README.md").read_text().split("\n")[0]
    handout.build(out, "zh")  # an earlier handout is rebuilt
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        handout.build(tmp_path / "mine", "zh")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
