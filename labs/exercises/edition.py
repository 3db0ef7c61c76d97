"""The English edition, kept in lockstep with the Chinese source.

``solutions/en/X.ipynb`` has the cells of ``solutions/X.ipynb`` in the same order with the same
ids: every code cell identical (source, metadata, tags -- the messages layer switches what it
prints by the notebook's language), every markdown cell translated. A code cell is never edited
in the English notebook: ``sync`` copies the Chinese code cells over it (clearing the outputs of
any cell whose source changed, so ``make execute`` reruns it), ``check`` lists what differs.
``init`` builds an English notebook from the Chinese one and a JSON file ``{cell id: English
markdown}`` (used once, when a notebook is first translated).

    python -m labs.exercises.edition check [--src solutions] [--dst solutions/en]
    python -m labs.exercises.edition sync  [--src solutions] [--dst solutions/en]
    python -m labs.exercises.edition init ZH.ipynb EN.ipynb --markdown TRANSLATIONS.json
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import nbformat

from .generate import dumps

__all__ = ["differences", "sync", "init", "main"]

LANGUAGE = "en"


def _code_view(cell) -> dict:
    """What must be identical between the editions: a code cell's source and metadata (the
    execution timestamps left out)."""
    metadata = {k: v for k, v in cell.metadata.items() if k not in ("execution", "ExecuteTime")}
    return {"source": cell.source, "metadata": metadata}


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
            problems.append(f"{where}: code differs from the Chinese source (run sync)")
    return problems


def _language_metadata(nb) -> None:
    nb.metadata["course"] = {**nb.metadata.get("course", {}), "language": LANGUAGE}


def sync(zh, en):
    """A copy of ``en`` whose code cells are the Chinese ones (outputs kept where the source
    did not change); markdown stays English. The cell lists must line up (same ids)."""
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
        if cell.cell_type == "code":  # changed: run it again in English (make execute)
            new.outputs, new.execution_count = [], None
            new.metadata.pop("execution", None)
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
