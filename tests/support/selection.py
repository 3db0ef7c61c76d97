"""Which tests of a module this pytest session selected, for module fixtures that start the
work of every selected test at once (issue 27).

Owns: ``items_of``. Must not: import labs or grader code, or start anything.
"""
from __future__ import annotations

__all__ = ["items_of"]


def items_of(session, module_name: str) -> list:
    """The selected items of the module ``module_name``; items without a Python module (nbval's
    notebook cells, collected in the same session by ``make test``) are never among them."""
    return [item for item in session.items
            if getattr(getattr(item, "module", None), "__name__", None) == module_name]
