"""What a student sees around the notebooks agrees with itself.

- The time estimate of each notebook (its ``## 预计用时`` section) is the README course map's.
- Solution notebooks store no absolute machine paths in their outputs (a user name, a virtual
  environment or a kernel's temporary file would show up in every student's copy of the course).
- Submissions and grades never end up in git.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
MINUTES = re.compile(r"(\d+)\s*分钟")
ABSOLUTE = re.compile(r"(?<![\w.])(/work/|/root/|/home/\w|/Users/\w|/tmp/|/private/var/|/opt/"
                      r"|[A-Z]:\\\\)")


def readme_minutes() -> dict[str, int]:
    found = {}
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        row = re.match(r"\|\s*`(2\.\d_\w+\.ipynb)`[^|]*\|\s*(\d+)\s*分钟\s*\|", line)
        if row:
            found[row.group(1)] = int(row.group(2))
    return found


def test_readme_map_lists_every_notebook():
    assert sorted(readme_minutes()) == [p.name for p in SOLUTIONS]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_time_estimate_matches_the_readme(path):
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    section = first.split("## 预计用时", 1)
    assert len(section) == 2, f"{path.name}: no 预计用时 section in the first cell"
    minutes = MINUTES.search(section[1])
    assert minutes, f"{path.name}: the 预计用时 section gives no minutes"
    assert int(minutes.group(1)) == readme_minutes()[path.name], \
        f"{path.name} says {minutes.group(0)}, the README {readme_minutes()[path.name]} 分钟"


def output_texts(path: Path):
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            parts = [output.get("text", ""), output.get("evalue", ""),
                     *output.get("traceback", [])]
            for kind, value in output.get("data", {}).items():
                if kind.startswith("text/"):
                    parts.append(value)
            for part in parts:
                yield index, "".join(part) if isinstance(part, list) else part


def test_the_check_finds_an_absolute_path():
    assert ABSOLUTE.search('File "/work/main/.venv/lib/python3.11/site-packages/torch/x.py"')
    assert ABSOLUTE.search("/tmp/ipykernel_29594/3893432126.py")
    assert not ABSOLUTE.search("torch/distributed/distributed_c10d.py line 5 in <cell>")
    assert not ABSOLUTE.search("1.2 GB/s over 4/8 ranks")


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_solutions_store_no_absolute_machine_paths(path):
    found = [(index, text[max(0, m.start() - 40):m.end() + 40])
             for index, text in output_texts(path) for m in ABSOLUTE.finditer(text)]
    assert not found, f"{path.name}: absolute paths in stored outputs (cell, text): {found[:3]}"


def test_submissions_and_grades_are_ignored_by_git():
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"submissions/", "grades/", "artifacts/"} <= set(ignored)


# The README's exercise table: tests/labs/exercises/test_exercise_declaration.py.
