"""The cells of a notebook's exercise, as the exercise tests run them against its check.

A test takes the solution cell (or the student's stub) by its ``grade_id``, defines what it
defines the way the notebook's kernel would (the setup cell's imports given as ``namespace``),
under a module name nobody can import, so that cloudpickle ships the functions to the ranks by
value. Mistakes are planted by replacing one piece of the solution's text.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def cell_source(notebook: str, grade_id: str, folder: str = "solutions") -> str:
    """The source of the code cell of ``notebook`` whose nbgrader ``grade_id`` is given."""
    nb = nbformat.read(str(ROOT / folder / notebook), as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell.source


def define(source: str, names: tuple[str, ...], module: str, **namespace):
    """Run ``source`` as a cell with ``namespace`` as its globals; the objects named ``names``."""
    namespace["__name__"] = module
    exec(compile(source, "<cell>", "exec"), namespace)
    return tuple(namespace[name] for name in names)


def replaced(source: str, old: str, new: str) -> str:
    """``source`` with its one ``old`` replaced by ``new`` (a planted mistake)."""
    assert source.count(old) == 1, f"{old!r} occurs {source.count(old)} times"
    return source.replace(old, new)


def verdict(capsys) -> str:
    """What the check printed (its verdict line and what follows it)."""
    captured = capsys.readouterr()
    return captured.out + captured.err
