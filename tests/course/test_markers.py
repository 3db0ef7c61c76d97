"""The test markers that choose what `make check` and `make test-portability` run.

``numerics`` (rerun by ``make test-portability`` under other CPU kernels and thread counts) is
decided by a rule on each test module's syntax tree, so that a new numerics test cannot be left
out of the portability passes by forgetting a marker. A test module is *numerics* when it

1. compares computed numbers against a reference with a tolerance or bit for bit: it calls
   ``assert_close``, ``allclose``, ``isclose`` or ``is_close`` (torch's, math's or
   ``labs.numerics``'), ``torch.equal``, or ``approx`` in a module that imports torch; or
2. runs ranks that compute: it calls ``labs.launch`` (or ``launch`` imported from labs): each
   rank's float results depend on its intra-op thread count; or
3. calls a course check imported from ``labs`` (``check_*``: they compare a run against the
   one-process reference with ``labs.numerics``' tolerances).

Such a module carries ``pytest.mark.numerics`` (``pytestmark`` or a decorator), and a module the
rule does not select carries no ``numerics`` marker; the exceptions below say why, one by one.
``slow`` is the other way round: a judgement (grader runs, notebooks, JupyterLab, many
processes), checked only for the modules that run the grader or a notebook kernel.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (ROOT / "tests").rglob("test_*.py") if "fixtures" not in p.parts)
COMPARISONS = {"assert_close", "allclose", "isclose", "is_close"}
# Modules the rule selects whose results do NOT depend on CPU kernels or thread counts.
NOT_NUMERICS = {
    "tests/labs/runtime/test_launcher.py":
        "processes, environments, signals and return values of labs.launch; no float compared "
        "with a tolerance except wall-clock times",
    "tests/labs/runtime/test_launcher_faults.py":
        "crashes, timeouts, kills and their messages; the ranks compute nothing",
    "tests/grader/test_record_judge.py":
        "torch.equal on tensors recorded and read back (serialisation), not on computed ones",
    "tests/labs/exercises/test_library_answers.py":
        "check_1f1b_order is handed torch's Schedule1F1B and refuses it before anything runs; "
        "no value is computed or compared",
}
# Modules the rule does not select whose results DO depend on them.
NUMERICS_TOO: dict[str, str] = {}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _called(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute):
                owner = f.value.id if isinstance(f.value, ast.Name) else ""
                names.add(f"{owner}.{f.attr}" if owner in ("torch", "labs") else f.attr)
            elif isinstance(f, ast.Name):
                names.add(f.id)
    return names


def _imports(tree) -> tuple[set[str], set[str]]:
    """(modules imported, names imported from labs.*)."""
    modules, from_labs = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".")[0])
            if node.module.split(".")[0] == "labs":
                from_labs |= {a.asname or a.name for a in node.names}
    return modules, from_labs


def rule(tree) -> list[str]:
    """Why the rule selects a module (empty: it does not)."""
    called = _called(tree)
    modules, from_labs = _imports(tree)
    why = sorted(called & COMPARISONS)
    if "torch.equal" in called:
        why.append("torch.equal")
    if "approx" in called and "torch" in modules:
        why.append("approx (with torch)")
    if "labs.launch" in called or "launch" in called & from_labs:
        why.append("labs.launch")
    why += sorted(n for n in called & from_labs if n.startswith("check_"))
    return why


def markers(tree) -> set[str]:
    """The pytest.mark.X names used anywhere in the module."""
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"}


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_numerics_marker_follows_the_rule(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name, why, marked = _rel(path), rule(tree), "numerics" in markers(tree)
    expected = (bool(why) or name in NUMERICS_TOO) and name not in NOT_NUMERICS
    assert marked == expected, (
        f"{name}: add `pytestmark = pytest.mark.numerics` (it calls {', '.join(why)}), "
        "or list it in NOT_NUMERICS with the reason" if expected else
        f"{name}: marked numerics but the rule does not select it: remove the marker or list it "
        "in NUMERICS_TOO with the reason")


def test_the_exceptions_name_existing_modules():
    for name in {**NOT_NUMERICS, **NUMERICS_TOO}:
        assert (ROOT / name).is_file(), name


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_modules_that_run_the_grader_or_a_kernel_are_slow(path):
    """The grader in a subprocess, a notebook kernel or JupyterLab: not for `make check`."""
    if path == Path(__file__):
        return  # the strings below
    source = path.read_text(encoding="utf-8")
    heavy = any(s in source for s in ("grading.grade", "NotebookClient", "sync_playwright",
                                      '"-m", "grader"'))
    if heavy:
        assert "slow" in markers(ast.parse(source)), f"{_rel(path)}: mark it pytest.mark.slow"
