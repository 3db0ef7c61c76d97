"""The course's errata page (ERRATA.md) and the notebooks' 勘误 boxes agree.

- Rows are numbered 1..N without gaps, each with its anchor ``<a id="n">`` and the four fields
  (教材, 正确, 课程中, 出处); the 课程中 field links a notebook that exists.
- Every 勘误 box (a markdown cell whose text has ``**勘误``; a box whose numbers are computed
  cites the lines a code cell beside it prints) links ``../ERRATA.md#n`` for rows that exist,
  and every row number it names exists.
- Every row is linked by at least one notebook; nothing cites the internal "FACTCHECK" list.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
ERRATA = ROOT / "ERRATA.md"
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
STUDENTS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LINK_RE = re.compile(r"\]\(\.\./ERRATA\.md#(\d+)\)")


def rows() -> dict[int, str]:
    text = ERRATA.read_text(encoding="utf-8")
    parts = re.split(r'<a id="(\d+)"></a>\n', text)
    return {int(number): body.split("\n## ")[0] for number, body in zip(parts[1::2], parts[2::2])}


def boxes(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(str(path), as_version=4)
    in_code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "**勘误" in c.source]
    assert not in_code, f"{path.name} cells {in_code}: a 勘误 box belongs in a markdown cell"
    return [(i, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "markdown" and "**勘误" in c.source]


def test_rows_are_numbered_and_complete():
    table = rows()
    assert sorted(table) == list(range(1, len(table) + 1)), sorted(table)
    assert len(table) >= 23
    for number, body in table.items():
        assert body.startswith(f"### #{number} "), f"row {number}: heading"
        for field in ("**教材**", "**正确**" if "**正确**" in body else "**核对**", "**课程中**", "**出处**"):
            assert field in body, f"row {number} lacks {field}"
        targets = re.findall(r"\]\((notebooks)/([^)#]+\.ipynb)", body)
        assert targets, f"row {number}: 课程中 links no student notebook (notebooks/…)"
        assert "](solutions/" not in body, f"row {number}: students have notebooks/, not solutions/"
        for folder, name in targets:
            assert (ROOT / folder / name).exists(), f"row {number} links a missing {folder}/{name}"


def test_every_box_links_rows_that_exist_and_every_row_is_linked():
    table, linked = rows(), set()
    for path in SOLUTIONS:
        for index, source in boxes(path):
            where = f"{path.name} cell #{index}"
            links = {int(n) for n in LINK_RE.findall(source)}
            assert links, f"{where}: a 勘误 box without a link to ../ERRATA.md#n: {source[:80]!r}"
            assert links <= set(table), f"{where}: links missing rows {links - set(table)}"
            named = {int(n) for n in re.findall(r"勘误表 ?#(\d+)", source)}
            assert named <= set(table), f"{where}: names missing rows {named - set(table)}"
            linked |= links | named
    assert linked == set(table), f"rows no notebook links: {sorted(set(table) - linked)}"


def test_nothing_cites_the_internal_fact_check_list():
    for path in [*SOLUTIONS, *STUDENTS, ROOT / "README.md", ERRATA]:
        assert "FACTCHECK" not in path.read_text(encoding="utf-8"), path
