"""Which tests of a module this pytest session selected, for module fixtures that start the
work of every selected test at once (issue 27).

Owns: ``items_of``, ``selected_params``. Must not: import labs or grader code, or start anything.
"""
from __future__ import annotations

__all__ = ["items_of", "selected_params"]


def items_of(session, module_name: str) -> list:
    """The selected items of the module ``module_name``; items without a Python module (nbval's
    notebook cells, collected in the same session by ``make test``) are never among them."""
    return [item for item in session.items
            if getattr(getattr(item, "module", None), "__name__", None) == module_name]


def selected_params(session, module_name: str, param: str, test: str | None = None) -> list:
    """The values of parameter ``param`` among the selected items of ``module_name`` (of the
    test function ``test`` only, when given), in collection order, each once."""
    values = []
    for item in items_of(session, module_name):
        params = getattr(getattr(item, "callspec", None), "params", {})
        if (param in params and params[param] not in values
                and (test is None or getattr(item, "originalname", None) == test)):
            values.append(params[param])
    return values
