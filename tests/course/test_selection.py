"""tests.support.selection: module fixtures that start every selected test's work at once must
skip the items without a Python module -- nbval's notebook cells, which ``make test`` collects
in the same session (the first version read ``item.module`` of every item and raised)."""
from __future__ import annotations

import sys
from types import SimpleNamespace

from tests.support.selection import items_of, selected_params


class NotebookCell:  # like nbval's IPyNbCell: no ``module`` attribute
    pass


def test_items_without_a_module_are_left_out():
    here = SimpleNamespace(module=sys.modules[__name__])
    elsewhere = SimpleNamespace(module=sys.modules["tests.support.selection"])
    session = SimpleNamespace(items=[NotebookCell(), here, elsewhere, NotebookCell()])
    assert items_of(session, __name__) == [here]


def test_selected_params_are_this_modules_values_of_one_test_each_once():
    def item(test, **params):
        return SimpleNamespace(module=sys.modules[__name__], originalname=test,
                               callspec=SimpleNamespace(params=params))
    session = SimpleNamespace(items=[
        NotebookCell(), item("run", path="b"), item("run", path="a"), item("run", path="b"),
        item("other", path="c"), SimpleNamespace(module=sys.modules[__name__])])
    assert selected_params(session, __name__, "path", test="run") == ["b", "a"]
    assert selected_params(session, __name__, "path") == ["b", "a", "c"]
    assert selected_params(session, __name__, "mode") == []
