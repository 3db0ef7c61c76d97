"""tests.support.selection: module fixtures that start every selected test's work at once must
skip the items without a Python module -- nbval's notebook cells, which ``make test`` collects
in the same session (the first version read ``item.module`` of every item and raised)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

from tests.support.selection import items_of


class NotebookCell:  # like nbval's IPyNbCell: no ``module`` attribute
    pass


def test_items_without_a_module_are_left_out():
    here = SimpleNamespace(module=sys.modules[__name__])
    elsewhere = SimpleNamespace(module=sys.modules["tests.support.selection"])
    session = SimpleNamespace(items=[NotebookCell(), here, elsewhere, NotebookCell()])
    assert items_of(session, __name__) == [here]
