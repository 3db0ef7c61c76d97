"""Every exercise is declared once (labs/exercises/text.py); everything else agrees with it.

The one consistency test of the exercises: for each edition (solutions/, notebooks/ and their
en/ twins) the notebooks hold exactly the declared exercises -- the heading
``### 练习 n（k 分）：title`` / ``### Exercise n (k points): title`` with the declared number,
points and title, at least three graduated hints ``练习 n · 提示 1..3`` before the graded check
cell, the check cell's nbgrader metadata with the declared id and points, and a call of the
check function declared for that id. The check functions take their points from the
declaration; the README's table is the one the declaration generates; the copy flags' names
exist; the difficulty follows the README's rule.
"""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from pathlib import Path

import nbformat
import pytest

from labs.exercises import catalog, checks, readme
from labs.exercises import generate as gen

ROOT = Path(__file__).resolve().parents[3]
EDITIONS = {"solutions": "zh", "notebooks": "zh", "solutions/en": "en", "notebooks/en": "en"}
HEADING = {
    "zh": re.compile(r"^#{2,4}\s*练习\s*(\d+)\s*（(\d+)\s*分）：\s*(.+?)\s*$", re.M),
    "en": re.compile(r"^#{2,4}\s*Exercise\s+(\d+)\s+\((\d+) points?\):\s*(.+?)\s*$", re.M),
}
HINT = {"zh": re.compile(r"<summary>\s*练习\s*(\d+)\s*·\s*提示\s*(\d+)\s*</summary>"),
        "en": re.compile(r"<summary>\s*Exercise\s+(\d+)\s*·\s*Hint\s+(\d+)\s*</summary>")}
CHECK_MODULES = ("collectives_checks", "data_parallel_checks", "tensor_parallel_checks",
                 "pipeline_checks", "hybrid_checks", "summary_checks")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
NBGRADER = {"grade": True, "locked": True, "schema_version": 3, "solution": False}


def check_functions() -> dict[str, object]:
    """``{grade_id: graded check function}`` over the per-notebook check modules."""
    found = {}
    for name in CHECK_MODULES:
        module = importlib.import_module(f"labs.exercises.{name}")
        for value in vars(module).values():
            if callable(value) and getattr(value, "exercise_id", None) is not None:
                assert found.get(value.exercise_id, value) is value, value.exercise_id
                found[value.exercise_id] = value
    return found


def sections(path: Path, lang: str) -> dict[str, dict]:
    """``{grade_id: what the notebook says of it}``: the heading above its check cell, the
    hints of its section, the check cell's metadata and the check functions it calls."""
    nb = nbformat.read(str(path), as_version=4)
    found, heading, hints = {}, None, []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            match = HEADING[lang].search(cell.source)
            if match:
                assert heading is None, f"{path} cell #{index}: a heading before the last one's check"
                heading, hints = match, []
            if heading is not None:
                hints += [(int(n), int(k)) for n, k in HINT[lang].findall(cell.source)]
                assert cell.source.count("<details") == cell.source.count("</details>"), (
                    f"{path} cell #{index}: unclosed <details>")
        if gen.is_graded(cell):
            meta = dict(cell.metadata["nbgrader"])
            assert heading is not None, f"{path}: check {meta.get('grade_id')} without a heading"
            calls = {n.func.id for n in ast.walk(ast.parse(cell.source))
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            found[meta["grade_id"]] = {"number": int(heading.group(1)), "points": int(heading.group(2)),
                                       "title": heading.group(3), "hints": hints, "meta": meta,
                                       "calls": calls}
            heading = None
    assert heading is None, f"{path}: a heading without a graded check cell"
    return found


@pytest.mark.parametrize("folder", EDITIONS)
def test_the_notebooks_hold_the_declared_exercises(folder):
    lang = EDITIONS[folder]
    functions = check_functions()
    for notebook in catalog.notebooks():
        declared = {e.id: e for e in catalog.EXERCISES.values() if e.notebook == notebook}
        found = sections(ROOT / folder / notebook, lang)
        where = f"{folder}/{notebook}"
        assert list(found) == sorted(declared, key=lambda gid: declared[gid].number), where
        for gid, seen in found.items():
            e = declared[gid]
            assert (seen["number"], seen["points"], seen["title"]) == (
                e.number, e.points, catalog.title(gid, lang)), (
                f"{where}: {gid} is {seen}; the declaration says {e}")
            assert seen["meta"] == {**NBGRADER, "grade_id": gid, "points": e.points}, where
            assert functions[gid].__name__ in seen["calls"], f"{where}: {gid}'s cell runs {seen['calls']}"
            own = [k for n, k in seen["hints"] if n == e.number]
            assert own[:3] == [1, 2, 3] and own == sorted(own), f"{where} {gid}: hints {own}"
            assert all(n == e.number for n, _ in seen["hints"]), f"{where} {gid}: others' hints"
            for kind in ("error", "wrong", "timeout"):
                k = catalog.hint(gid, kind)
                assert k is None or (k in own and k < max(own)), (
                    f"{where} {gid}: a {kind} points to hint {k} (never the last, the near-solution)")


def test_the_declaration_is_complete_and_numbered():
    assert catalog.EXERCISES, "no exercise declared"
    for notebook in catalog.notebooks():
        numbers = [e.number for e in catalog.EXERCISES.values() if e.notebook == notebook]
        assert numbers == list(range(1, len(numbers) + 1)), f"{notebook}: numbering {numbers}"
        assert any(e.difficulty == "build" for e in catalog.EXERCISES.values()
                   if e.notebook == notebook), f"{notebook}: no build exercise (README)"
    for e in catalog.EXERCISES.values():
        assert e.id.startswith(f"ex{e.notebook[:3].replace('.', '_')}_"), e.id
        assert e.zh.strip() and e.en.strip() and not CJK.search(e.en), e
        # the README's rule: 1 point 热身, 2 基础, 3 and more 构建
        assert e.difficulty == ("warmup" if e.points <= 1 else "basic" if e.points == 2 else "build"), e


def test_check_functions_take_their_points_from_the_declaration():
    functions = check_functions()
    assert set(functions) == set(catalog.EXERCISES)
    for gid, fn in functions.items():
        assert fn.points == catalog.EXERCISES[gid].points, gid
    with pytest.raises(ValueError, match="ex2_0_ring_bytes"):
        checks.graded("ex2_0_ring_bytes", points=5)
    assert checks.graded("ex2_0_ring_bytes", points=1)(lambda: None).points == 1
    assert checks.graded("ex_sum", points=3)(lambda: None).points == 3  # a test's own check
    assert checks.graded("ex_sum")(lambda: None).points == 1


def test_the_readme_table_is_the_declarations():
    source = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.in_readme(source) == readme.table("zh"), (
        "README.md's exercise table differs from the declaration: "
        "run python -m labs.exercises.readme --write")


def test_the_copy_flags_names_exist():
    from grader import copying

    assert copying.REFERENCES == catalog.REFERENCES
    from labs.exercises import offlimits

    missing = []
    for gid, names in catalog.REFERENCES.items():
        for name in names:  # a function, a class, a method, or a whole module or package
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # old paths still named
                if offlimits.resolve(name) is None:
                    missing.append(f"{gid}: {name}")
    assert not missing, missing


def test_totals_come_from_the_declaration():
    per_notebook = {nb: catalog.points(nb) for nb in catalog.notebooks()}
    assert sum(sum(p.values()) for p in per_notebook.values()) == sum(catalog.points().values())
    assert list(catalog.points("2.0_collectives.ipynb")) == [
        e.id for e in catalog.EXERCISES.values() if e.notebook == "2.0_collectives.ipynb"]
