"""Function-level imports of the course's own modules only with a reason (issue 25, item 4).

An ``import`` inside a function hides an arrow of the import graph from a reader of the module's
head, so ``labs/`` and ``grader/`` import their own modules (``labs.*``, ``grader.*``, relative)
at the top. One stays inside a function only for a reason that a reader can check, written as a
one-line ``# why`` comment on the line right above the import or at the end of its line, e.g.::

    # why here: labs.notebook.plots imports matplotlib (~3 s), and the ranks import this module
    from labs.notebook.plots import label

Read from the syntax tree only (nothing is imported): a few hundred milliseconds.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("labs", "grader")
MODULES = sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                 if "__pycache__" not in p.parts)
OWN = ("labs", "grader")
REASON = "# why"


def _own_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        name = "." * node.level + (node.module or "")
        return [name] if node.level or name.split(".")[0] in OWN else []
    return [a.name for a in node.names if a.name.split(".")[0] in OWN]


def _has_reason(lines: list[str], node: ast.stmt) -> bool:
    """A ``# why`` comment at the end of the import's line(s), or as the whole line above it."""
    own = any("#" in line and REASON in line[line.index("#"):]
              for line in lines[node.lineno - 1:node.end_lineno])
    above = lines[node.lineno - 2].lstrip() if node.lineno > 1 else ""
    return own or above.startswith(REASON)


def local_imports(source: str, name: str = "<source>") -> list[tuple[str, int, bool]]:
    """``(where, line, has a reason)`` for every import of labs'/grader's own modules inside a
    function (methods and nested functions included) of ``source``."""
    lines = source.splitlines()
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)) \
                    and _own_modules(child):
                found.append((f"{name}:{child.lineno}", child.lineno, _has_reason(lines, child)))
            visit(child, in_function or isinstance(child, (ast.FunctionDef,
                                                           ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source, filename=name), False)
    return found


def without_reason(source: str, name: str = "<source>") -> list[str]:
    return [where for where, _, ok in local_imports(source, name) if not ok]


def test_the_packages_have_modules():
    # a wrong ROOT or a moved package would make the test below pass on nothing
    for package in PACKAGES:
        assert (ROOT / package / "__init__.py").is_file(), package
    assert len(MODULES) > 100


def test_every_function_level_import_of_the_course_says_why():
    missing = [where for path in MODULES
               for where in without_reason(path.read_text(encoding="utf-8"),
                                           str(path.relative_to(ROOT)))]
    assert missing == [], (
        "function-level imports of labs'/grader's own modules without a reason; move each to "
        "the module's top, or write why it must stay (a heavy optional dependency, runs only in "
        "a rank, ...) in a '# why here: ...' comment above it:\n" + "\n".join(missing))


PLANTED = '''\
import os
from labs.messages import text  # at the top: fine


def quiet():
    from labs.formulas.memory import model_state_bytes
    import os.path  # not the course's own: fine
    return model_state_bytes


class Widget:
    def show(self):
        # why here: view imports ipywidgets and matplotlib (compute() needs neither)
        from labs.planner import view
        from . import sibling
        import grader.record  # why: the kernel has no grader before this call
        # why here: a reason two lines above is not this import's
        # (another comment between)
        from labs.notebook import plots
        return view, sibling, grader, plots

    def later(self):
        def inner():
            import labs.notebook.plots
            return labs.notebook.plots
        return inner
'''


def test_the_finder_names_each_import_without_a_reason():
    found = local_imports(PLANTED, "planted.py")
    assert [line for _, line, _ in found] == [6, 14, 15, 16, 19, 24]
    assert without_reason(PLANTED, "planted.py") == ["planted.py:6", "planted.py:15",
                                                     "planted.py:19", "planted.py:24"]


@pytest.mark.parametrize("source", [
    "def f():\n    from labs import cost\n",
    "def f():\n    x = 1  # why not\n    from labs import cost\n",  # a reason of another line
    "async def f():\n    import grader.judge\n",
    "def f():\n    from .. import hooks\n",
])
def test_a_planted_import_without_a_reason_fails(source):
    assert len(without_reason(source)) == 1
