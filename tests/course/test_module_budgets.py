"""Budgets of the code (issue 25): no module of labs/ or grader/ over 400 lines, so each one reads
in one sitting (DESIGN.md: about 300, never over 400); and (issue 38) a top of labs/ that shows
the architecture."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for folder in ("labs", "grader") for p in (ROOT / folder).rglob("*.py"))
LIMIT = 400


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_no_module_over_400_lines(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= LIMIT, f"{path.relative_to(ROOT)}: {lines} lines; split it by what it holds"


def test_the_top_of_labs_shows_the_architecture():
    """Issue 38: at most 12 module files at the top of labs/ (``__init__`` and ``__main__``
    counted); the rest sits in packages named for what they hold."""
    top = sorted(p.name for p in (ROOT / "labs").glob("*.py"))
    assert len(top) <= 12, top
