"""The public surface: every package has ``__all__``, and the notebooks use only public names.

A notebook may use a ``labs`` name only if the module's ``__all__`` lists it (so no
``comm._CopyToRegion``), may use a submodule only after importing it (no ``labs.models.TinyGPT``
after a bare ``import labs``, no ``labs.launcher.cpu_count()``: ``labs.cpu_count()``), and may not
import an old module path (those are kept for notebooks handed out before, with a warning).
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import nbformat
import pytest

from labs import _moved
from labs.messages import CATALOGS

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
PACKAGES = ["labs", "labs.runtime", "labs.data_parallel", "labs.tensor_parallel", "labs.pipeline",
            "labs.hybrid", "labs.planner", "labs.exercises", "labs.bench"]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_package_declares_its_public_names(name):
    package = importlib.import_module(name)
    assert isinstance(package.__all__, list) and package.__all__
    for public in package.__all__:
        assert not public.startswith("_")
        assert getattr(package, public) is not None, f"{name}.__all__ lists a missing {public}"


def test_every_public_module_declares_its_public_names():
    runtime = {"__main__"}  # a command-line entry, nothing to import
    for path in sorted((ROOT / "labs").rglob("*.py")):
        rel = path.relative_to(ROOT / "labs")
        if path.stem.startswith("_") and path.stem != "__init__" or path.stem in runtime:
            continue
        if ".".join(("labs",) + rel.with_suffix("").parts) in CATALOGS.values():
            continue  # a message catalog: data (MESSAGES), read through labs.messages.text
        assert "__all__" in path.read_text(), f"labs/{rel} has no __all__"


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def _public(module_name: str, attr: str) -> bool:
    module = importlib.import_module(module_name)
    return not attr.startswith("_") and attr in getattr(module, "__all__", dir(module))


def problems_in(source: str) -> list[str]:
    """What in one cell's code breaks the public surface (the cell's own names are fine)."""
    source = "\n".join(line for line in source.splitlines()
                       if not line.lstrip().startswith(("%", "!")))  # IPython magics
    tree = ast.parse(source)
    problems, aliases, imported = [], {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != "labs":
                    continue
                parts = a.name.split(".")
                imported.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                aliases[a.asname or "labs"] = a.name if a.asname else "labs"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "labs":
            imported.add(node.module)
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if _is_module(full):
                    imported.add(full)
                    aliases[a.asname or a.name] = full
                elif not _public(node.module, a.name):
                    problems.append(f"from {node.module} import {a.name}: not public")
    for module in imported:
        if module in _moved.MOVED_MODULES:
            problems.append(f"{module}: an old path, use {_moved.MOVED_MODULES[module]}")
        elif any(part.startswith("_") for part in module.split(".")):
            problems.append(f"{module}: a private module")
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:  # whole chains only
            continue
        chain, base = [], node
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in aliases):
            continue
        module = aliases[base.id]
        for attr in chain:
            full = f"{module}.{attr}"
            if _is_module(full):
                if full not in imported:
                    problems.append(f"{base.id}.{'.'.join(chain)}: {full} is used without "
                                    "being imported")
                    break
                module = full
                continue
            if not _public(module, attr):
                problems.append(f"{base.id}.{'.'.join(chain)}: {module}.{attr} is not public")
            break
    return sorted(set(problems))


def test_the_check_finds_what_it_should():
    found = problems_in("from labs import tp_communications as comm\ncomm._CopyToRegion")
    assert found == ["comm._CopyToRegion: labs.tp_communications._CopyToRegion is not public",
                     "labs.tp_communications: an old path, use labs.tensor_parallel.comm"]
    assert problems_in("import labs\nlabs.launcher.cpu_count()") == [
        "labs.launcher.cpu_count: labs.launcher is used without being imported"]
    assert problems_in("import labs\nlabs.models.TinyGPT") == [
        "labs.models.TinyGPT: labs.models is used without being imported"]
    assert problems_in("from labs.tensor_parallel import comm\ncomm._size(None)") == [
        "comm._size: labs.tensor_parallel.comm._size is not public"]
    assert problems_in("import labs\nlabs.cpu_count()\nfrom labs.models import TinyGPT") == []
    # the later move too: the formulas into labs.formulas
    assert problems_in("from labs import memory\nimport labs.plots_pp as plots") == [
        "labs.memory: an old path, use labs.formulas.memory",
        "labs.plots_pp: an old path, use labs.pipeline.plots"]
    assert problems_in("from labs.formulas import memory\nmemory.model_state_bytes(1)") == []


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_notebook_uses_only_public_names(path):
    nb = nbformat.read(str(path), as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert problems_in(code) == []
