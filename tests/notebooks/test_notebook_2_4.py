"""Notebook 2.4: the student version is in sync, the grader scores its exercises fairly, and
its errata boxes are checked by tests/notebooks/test_errata.py.

Three submissions are graded in ONE grader run: the solution (full marks), the untouched
student notebook (zero, unfinished), and the solution with a planted wrong layout rule (PP before
TP), which loses exactly that exercise with the check's message. nbval runs the whole notebooks.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog
from labs.messages import text
from tests.support import grading, verdicts

# the first test waits for the one grader run of every selected notebook test
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
NAME = "2.4_hybrid_parallel.ipynb"
SOLUTION = ROOT / "solutions" / NAME
EXERCISES = catalog.points(NAME)  # the declaration's (labs/exercises/text.py)
TOTAL = sum(EXERCISES.values())


def _pipeline_first(nb):
    (cell,) = [c for c in nb.cells if "def my_choose_layout" in c.source]
    cell.source = cell.source.replace("(tp * pp, -tp) < best[0]", "(tp * pp, tp) < best[0]")
    cell.source = cell.source.replace("best = ((tp * pp, -tp), (dp, pp, tp))",
                                      "best = ((tp * pp, tp), (dp, pp, tp))")
    assert "(tp * pp, tp) < best[0]" in cell.source
    return nb


def test_student_notebook_is_generated_from_the_solution():
    grading.assert_student_version(NAME, EXERCISES)


# graded in one run with the other notebook tests' (tests/support/grading.py)
grading.declare_three(__name__, NAME, _pipeline_first)


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    return grading.graded(__name__, tmp_path_factory)


def test_grader_gives_full_marks_to_the_solution(grades):
    grading.assert_full_marks(grades["solution"], EXERCISES, TOTAL)


def test_grader_gives_zero_to_the_untouched_student_notebook(grades):
    grading.assert_zero_for_untouched(grades["untouched"], TOTAL)


def test_grader_gives_partial_marks_with_the_checks_message(grades):
    message = grading.only_lost(grades["wrong"], EXERCISES, "ex2_4_layout")
    assert message.startswith(verdicts.failed(4, 3, "zh")), message
    assert text("checks_2_4.layout_not_best", lang="zh") in message, message


def test_changing_the_mesh_shape_in_one_cell_carries_through():
    """As a new user would: (2, 2, 2) -> (1, 2, 4) in the SHAPE cell, then run sections 1-3
    (the grid, the groups on real ranks, hand-written 3D with and without SP, torch's 3D and
    its memory); everything follows the new shape and still equals one process."""
    from nbclient import NotebookClient

    nb = nbformat.read(str(SOLUTION), as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## 4."):
            break
        if cell.cell_type == "code" and "SHAPE = MeshShape(dp=2, pp=2, tp=2)" in cell.source:
            cell.source = cell.source.replace("MeshShape(dp=2, pp=2, tp=2)",
                                              "MeshShape(dp=1, pp=2, tp=4)", 1)
        cells.append(cell)
    # the numbers the cells computed, read back from the kernel after the run
    cells.append(nbformat.v4.new_code_cell(
        "assert all(r['loss'] is None or abs(r['loss'] - r['hand_loss']) < 1e-5 for r in torch_checked)\n"
        "assert len(torch_checked[0]['names']) > 0 and max(worst, 0) < 0.5  # 0 B beyond the slack\n"
        "print('kernel check:', SHAPE.group_ranks('tp'), probed[5]['coords'], probed[5]['tp']['sum'])"))
    nb.cells = cells
    # killed at the end, not asked to stop: a graceful stop after labs.launch waits 2.6 s
    NotebookClient(nb, timeout=300, kernel_name="python3", shutdown_kernel="immediate",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    out = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                    for o in c.outputs)
    assert "kernel check: [[0, 1, 2, 3], [4, 5, 6, 7]] (0, 1, 1) 22" in out
    assert "[[0, 1, 2, 3], [4, 5, 6, 7]]" in out  # the TP groups the cell printed
    assert re.search(r"rank 5 \(0, 1, 1\)\D*\[4, 5, 6, 7\]\D*22\b", out)  # real ranks: rank 5's TP peers
    assert "tp=4   NVLink" in out and "pp=2   InfiniBand" in out
    assert re.search(r"\b\d+\+ ", out), "torch's 3D cell did not report its compared tensors"
