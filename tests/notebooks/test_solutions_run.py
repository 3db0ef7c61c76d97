"""The Chinese solution notebooks (solutions/*.ipynb) run end to end in a fresh kernel: every
code cell runs, and none but a cell tagged ``raises-exception`` raises -- what ``nbval
--nbval-lax`` held them to, with outputs not compared. Two notebooks run at a time, each in its
own kernel, the longest first (issue 27: 138 s one after the other on 2 cores).

Marked ``editions``: ``make test-editions`` runs it (CI, after ``make test``), not ``make test``.
The English edition's body runs in ``make test``'s real-browser test
(tests/notebooks/test_browser.py) as student notebooks; tests/notebooks/test_edition.py proves the
two editions' code identical up to strings and their strings unable to change a run
(labs/exercises/edition_runtime.py), and tests/course/test_course_layout.py holds both committed
editions to "no error".
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.notebook_runs import run_notebooks
from tests.support.selection import selected_params

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LONGEST_FIRST = ("2.3", "2.1", "2.4", "2.0", "2.2", "2.5")
AT_ONCE = 2
CELL_TIMEOUT = 300  # seconds, as nbval's --nbval-cell-timeout was


def _rank(path: Path) -> tuple:
    return next((i for i, s in enumerate(LONGEST_FIRST) if path.stem.startswith(s)),
                len(LONGEST_FIRST)), path.name


@pytest.fixture(scope="module")
def solution_runs(request):
    """The selected solution notebooks, run AT_ONCE at a time."""
    name = "test_solution_runs_end_to_end"
    paths = selected_params(request.session, __name__, "path", test=name)
    return run_notebooks(sorted(paths, key=_rank), at_once=AT_ONCE, cwd=lambda p: p.parent,
                         timeout=CELL_TIMEOUT)


@pytest.mark.slow
@pytest.mark.editions
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_solution_runs_end_to_end(path, solution_runs):
    nb = solution_runs[path]
    if isinstance(nb, BaseException):
        raise nb  # nbclient's CellExecutionError names the cell and its traceback
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert code and all(c.execution_count for c in code), f"{path.name}: a cell did not run"
    for cell in code:
        if "raises-exception" not in cell.metadata.get("tags", []):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            assert not errors, f"{path.name}: {cell.source[:80]!r} raised {errors[0]['ename']}"
