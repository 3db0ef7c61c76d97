"""Every exercise in the student notebooks: a stub that does not answer, hints a student opens.

- Every stub raises exactly ``labs.exercises.generate.stub_message(n)``: the exercise's number
  and where its hints are, never code or a formula.
- Every exercise heading ``### 练习 n（k 分）`` is followed, before its graded check cell, by at
  least three collapsible hints ``<details><summary>练习 n · 提示 1…3``, graduated (the idea, the
  shape of the code, a near-solution), each closed again; its stubs name the same number.
- The exercises of a notebook are numbered 1, 2, … and their points add up to the check cells'.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import generate as gen
from labs.messages import text
from tests.support.messages import pattern

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
HEADING_RE = re.compile(r"^#{2,4}\s*练习\s*(\d+)\s*（(\d+)\s*分）", re.M)
SUMMARY_RE = re.compile(r"<summary>\s*练习\s*(\d+)\s*·\s*提示\s*(\d+)")
STUB_RE = re.compile(r"raise NotImplementedError\((?P<arg>.*)\)")
STUB_MARKER = text("checks.stub_marker", lang="zh")  # the Chinese notebooks' stubs
STUB = pattern("checks.stub", lang="zh", marker=STUB_MARKER)  # a stub naming its exercise
ASCII_CODE = re.compile(r"[A-Za-z_]\w*\s*\(|[=*/+\[\]{}]|\bdist\.|\breturn\b")


def sections(nb):
    """``[(number, points, cells)]``: each exercise heading with the cells up to its check cell."""
    found, current = [], None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = HEADING_RE.search(cell.source)
            if heading:
                current = (int(heading.group(1)), int(heading.group(2)), [])
                found.append(current)
        if current is not None:
            current[2].append(cell)
            if gen.is_graded(cell):
                current = None
    return found


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.stem)
def student(request):
    return request.param, nbformat.read(str(request.param), as_version=4)


def test_stubs_name_the_exercise_and_give_nothing_away(student):
    path, nb = student
    stubs = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        assert "### HINT" not in cell.source, f"{path.name} cell #{index}"
        for match in STUB_RE.finditer(cell.source):
            stubs += 1
            message = eval(match.group("arg"), {})  # a string literal written by the generator
            number = STUB.fullmatch(message)
            assert number and number["number"].isdigit(), \
                f"{path.name} cell #{index}: stub without an exercise number: {message!r}"
            assert message == gen.stub_message(number["number"]), f"{path.name} cell #{index}"
            assert not ASCII_CODE.search(message), f"{path.name} cell #{index}: code in {message!r}"
    assert stubs, f"{path.name} has no exercise stub"


def test_every_exercise_has_graduated_hints_before_its_check(student):
    path, nb = student
    found = sections(nb)
    assert [n for n, _, _ in found] == list(range(1, len(found) + 1)), f"{path.name}: numbering"
    graded_points = [c.metadata["nbgrader"]["points"] for c in nb.cells if gen.is_graded(c)]
    assert [p for _, p, _ in found] == graded_points, f"{path.name}: heading points vs check cells"
    for number, _, cells in found:
        where = f"{path.name} exercise {number}"
        assert gen.is_graded(cells[-1]), f"{where}: no graded check cell after the heading"
        hints = [int(k) for cell in cells if cell.cell_type == "markdown"
                 for n, k in SUMMARY_RE.findall(cell.source) if int(n) == number]
        assert hints[:3] == [1, 2, 3] and hints == sorted(hints), f"{where}: hints {hints}"
        others = {int(n) for cell in cells if cell.cell_type == "markdown"
                  for n, _ in SUMMARY_RE.findall(cell.source)} - {number}
        assert not others, f"{where}: hints of other exercises {others} in this section"
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        assert text.count("<details") == text.count("</details>"), f"{where}: unclosed <details>"
        stub_numbers = {int(m["number"]) for cell in cells if cell.cell_type == "code"
                        for m in STUB.finditer(cell.source)}
        assert stub_numbers <= {number}, f"{where}: stubs name {stub_numbers}"
