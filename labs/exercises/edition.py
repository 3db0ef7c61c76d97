"""The English edition, kept in lockstep with the Chinese source.

``solutions/en/X.ipynb`` has the cells of ``solutions/X.ipynb`` in the same order with the same
ids: every markdown cell translated, and every code cell the same code with its strings in
English -- identical after removing string literals (f-strings included) and comments, compared
as syntax trees (:func:`code_shape`), with the same metadata and tags. A notebook's code cell
prints with plain f-strings in its edition's language, so only the strings may differ.

``sync`` copies a Chinese code cell whose code changed (beyond strings and comments) over its
English twin, clears the twin's outputs (``make execute`` reruns it) and marks it for translation
(``metadata.course.translate``); ``check`` lists what differs, marked cells included, until the
twin's strings are translated and the mark removed. An English cell whose code still has the
Chinese cell's shape is kept as it is (its strings, outputs and execution times). ``init`` builds
an English notebook from the Chinese one and a JSON file ``{cell id: English markdown}`` (used
once, when a notebook is first translated). It must not decide anything about what a cell
prints: that is the notebook's own code. :mod:`labs.exercises.edition_runtime` adds what the
strings themselves must keep (the same interpolated expressions, compatible format specs, a one
to one renaming of translated literals), so that one edition's run stands for both.

    python -m labs.exercises.edition check [--src solutions] [--dst solutions/en]
    python -m labs.exercises.edition sync  [--src solutions] [--dst solutions/en]
    python -m labs.exercises.edition init ZH.ipynb EN.ipynb --markdown TRANSLATIONS.json
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import sys
from pathlib import Path

import nbformat

from .edition_runtime import runtime_differences
from .generate import dumps

__all__ = ["code_shape", "differences", "sync", "init", "main"]

LANGUAGE = "en"
#: ``metadata.course.translate`` on an English code cell that ``sync`` replaced by the Chinese
#: code: its strings are still Chinese.
TRANSLATE = "translate"
_STRING = "<str>"


class _Strings(ast.NodeTransformer):
    """Every string literal and f-string becomes one placeholder (their text is the edition's)."""

    def visit_JoinedStr(self, node):
        return ast.copy_location(ast.Constant(_STRING), node)

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(_STRING), node) if isinstance(node.value, str) \
            else node


def code_shape(source: str) -> str:
    """A code cell's code without its string literals and comments: two editions' cells are the
    same code when their shapes are equal. Shell and magic lines (``!``, ``%``) are kept as text."""
    magics, code = [], []
    for line in source.splitlines():
        (magics if line.lstrip().startswith(("%", "!")) else code).append(line)
    try:
        tree = ast.parse("\n".join(code))
    except SyntaxError:
        return source  # not Python: compared as it is
    return "\n".join(magics) + "\n" + ast.dump(_Strings().visit(tree))


def _metadata(cell) -> dict:
    """A code cell's metadata as both editions must have it: the execution timestamps and the
    translation mark left out."""
    metadata = {k: v for k, v in cell.metadata.items() if k not in ("execution", "ExecuteTime")}
    course = {k: v for k, v in metadata.get("course", {}).items() if k != TRANSLATE}
    if course:
        metadata["course"] = course
    else:
        metadata.pop("course", None)
    return metadata


def _code_view(cell) -> dict:
    """What must be identical between the editions: a code cell's shape and metadata."""
    return {"shape": code_shape(cell.source), "metadata": _metadata(cell)}


def _marked(cell) -> bool:
    return bool(cell.metadata.get("course", {}).get(TRANSLATE))


def differences(zh, en, name: str = "notebook") -> list[str]:
    """Every way the English notebook ``en`` is out of step with the Chinese ``zh``."""
    problems = []
    if len(zh.cells) != len(en.cells):
        problems.append(f"{name}: {len(en.cells)} cells, the Chinese source has {len(zh.cells)}")
    for index, (a, b) in enumerate(zip(zh.cells, en.cells)):
        where = f"{name} cell #{index} (id {a.get('id')})"
        if a.cell_type != b.cell_type or a.get("id") != b.get("id"):
            problems.append(f"{where}: is {b.cell_type} id {b.get('id')} in the English edition")
        elif a.cell_type == "code" and _code_view(a) != _code_view(b):
            problems.append(f"{where}: code differs from the Chinese source beyond its strings "
                            "and comments (run sync, then translate the cell's strings)")
        elif a.cell_type == "code" and _marked(b):
            problems.append(f"{where}: marked for translation: translate its strings, then "
                            f"remove metadata.course.{TRANSLATE}")
    if not problems:  # same code: can its strings still make one edition run differently?
        problems += [f"{name} {p}" for p in runtime_differences(
            [c.source for c in zh.cells if c.cell_type == "code"],
            [c.source for c in en.cells if c.cell_type == "code"])]
    return problems


def _language_metadata(nb) -> None:
    nb.metadata["course"] = {**nb.metadata.get("course", {}), "language": LANGUAGE}


def sync(zh, en):
    """A copy of ``en`` whose code cells have the Chinese cells' code: an English cell of the
    same shape (same code up to strings and comments) is kept with its outputs; any other is
    replaced by the Chinese cell, outputs cleared and marked for translation. Markdown stays
    English. The cell lists must line up (same ids)."""
    by_id = {c.get("id"): c for c in en.cells}
    out = copy.deepcopy(en)
    cells = []
    for cell in zh.cells:
        mine = by_id.get(cell.get("id"))
        if cell.cell_type == "markdown":
            if mine is None or mine.cell_type != "markdown":
                raise ValueError(f"markdown cell {cell.get('id')} has no English translation")
            cells.append(mine)
            continue
        if mine is not None and mine.cell_type == "code" and _code_view(mine) == _code_view(cell):
            cells.append(mine)  # unchanged: its English outputs and execution stay
            continue
        new = copy.deepcopy(cell)
        if cell.cell_type == "code":  # changed: translate its strings, run it again in English
            new.outputs, new.execution_count = [], None
            new.metadata.pop("execution", None)
            new.metadata.setdefault("course", {})[TRANSLATE] = True
        cells.append(new)
    out.cells = cells
    _language_metadata(out)
    return out


def init(zh, translations: dict[str, str]):
    """The English notebook: ``zh`` with each markdown cell's source from ``translations``
    (by cell id) and the code cells' outputs cleared (to be executed in English)."""
    en = copy.deepcopy(zh)
    missing = [c.get("id") for c in en.cells
               if c.cell_type == "markdown" and c.get("id") not in translations]
    if missing:
        raise ValueError(f"no translation for markdown cells {missing}")
    for cell in en.cells:
        if cell.cell_type == "markdown":
            cell.source = translations[cell.get("id")].rstrip("\n")
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    _language_metadata(en)
    return en


def _read(path: Path):
    return nbformat.read(str(path), as_version=4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.exercises.edition",
                                     description="Keep the English edition in step.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "sync"):
        p = sub.add_parser(name)
        p.add_argument("--src", type=Path, default=Path("solutions"))
        p.add_argument("--dst", type=Path, default=Path("solutions") / "en")
    p = sub.add_parser("init")
    p.add_argument("zh", type=Path)
    p.add_argument("en", type=Path)
    p.add_argument("--markdown", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "init":
        translations = json.loads(args.markdown.read_text(encoding="utf-8"))
        try:
            en = init(_read(args.zh), translations)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        args.en.parent.mkdir(parents=True, exist_ok=True)
        args.en.write_bytes(dumps(en))
        print(f"wrote {args.en}")
        return 0
    status = 0
    for zh_path in sorted(args.src.glob("*.ipynb")):
        en_path = args.dst / zh_path.name
        if not en_path.exists():
            print(f"missing: {en_path}")
            status = 1
            continue
        zh, en = _read(zh_path), _read(en_path)
        if args.command == "sync":
            try:
                data = dumps(sync(zh, en))
            except ValueError as exc:
                print(f"error: {en_path}: {exc}", file=sys.stderr)
                return 2
            if en_path.read_bytes() != data:
                en_path.write_bytes(data)
                print(f"wrote {en_path}")
        else:
            for line in differences(zh, en, str(en_path)):
                print(line)
                status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
