"""Every module of ``labs/`` and ``grader/`` says in its docstring what it owns and what it must not
do (issue 25, item 8): a reader opening any file learns its boundary before its code, e.g.
"Must not: import the grader; print; keep process groups in globals", or for a message catalog
"Holds only the zh/en texts ... no logic. Must not: import anything".

Read from the syntax tree only (nothing is imported), so the test is cheap and runs everywhere.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("labs", "grader")
MODULES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                 if "__pycache__" not in p.parts)
MUST_NOT = re.compile(r"\bmust\s+not\b", re.IGNORECASE)


def _docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))


def test_the_packages_have_modules():
    # a wrong ROOT or a moved package would make every check below pass on nothing
    for package in PACKAGES:
        assert (ROOT / package / "__init__.py").is_file(), package
    assert len(MODULES) > 100


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_docstring_says_what_it_must_not_do(path):
    doc = _docstring(path)
    where = path.relative_to(ROOT)
    assert doc and doc.strip(), f"{where} has no module docstring (say what it owns and must not do)"
    assert MUST_NOT.search(doc), (
        f"{where}: its docstring says what the module is but not what it must not do; add a line "
        f"such as 'Owns: ...  Must not: import the grader; print; keep process groups in globals'")
