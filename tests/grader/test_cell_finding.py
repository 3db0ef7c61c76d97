"""The setup cell and the exercise cells are found by their ids and metadata, not by position: a
cell inserted above the setup, an exercise's cells reordered, and a notebook saved by Colab
(nbformat 4.0, ids in ``metadata.id``, the checks' nbgrader metadata lost) run the same cells as
the honest submission. (Their grades, by a real grading run: tests/grader/test_grader_resources.)"""

from __future__ import annotations

import collections

import nbformat
import pytest

from tests.support import grader_plants as gp
from grader.sources import plan, prepare


def _ran(nb, source) -> dict:
    """What runs: the setup's code, and per exercise the multiset of its cells' code."""
    prepared, positions = prepare(nb, source)
    steps = plan(prepared, positions, source)
    return {"setup": [prepared.cells[i].source for i in steps["setup"]],
            **{e["grade_id"]: collections.Counter(prepared.cells[i].source for i in e["cells"])
               for e in steps["exercises"]}}


@pytest.mark.parametrize("name", sorted(gp.MOVED))
def test_moved_cells_run_as_the_honest_ones(name, tmp_path):
    gp.write_course(tmp_path)
    source = gp.solution_copy(tmp_path)
    honest = _ran(gp.honest(tmp_path), source)
    path = tmp_path / "moved.ipynb"
    gp.write_raw(gp.MOVED[name](tmp_path), path)
    moved = _ran(nbformat.read(str(path), as_version=4), source)
    assert moved["setup"] == honest["setup"] == [gp.SETUP]
    assert set(moved) == set(honest) == {"setup", *gp.POINTS}
    for gid in ("ex_a", "ex_b"):
        assert moved[gid] == honest[gid], gid
    extra = moved["ex_c"] - honest["ex_c"]
    if name == "reordered":  # the same exercise, in three cells
        assert len(extra) == 3 and "NOTE = 'scratch'" in extra
    else:
        assert moved["ex_c"] == honest["ex_c"]


def test_without_ids_or_metadata_the_checks_are_not_found(tmp_path):
    """The ids are what finds them: the Colab copy less its ids has no check left to run."""
    gp.write_course(tmp_path)
    nb = gp.colab(tmp_path)
    for c in nb.cells:
        c.metadata.pop("id", None)
    _, positions = prepare(nb, gp.solution_copy(tmp_path))
    assert positions == {}
