"""The English edition stays in lockstep with the Chinese one.

- ``solutions/en/X.ipynb`` exists for every ``solutions/X.ipynb``, with the same cells (same ids,
  same order) and code cells identical up to their string literals and comments, compared as
  syntax trees (``python -m labs.exercises.edition check``); the student versions
  ``notebooks/en/`` are generated from it like the Chinese ones.
- It is English: no CJK character in any markdown cell or output (the chapter's claims are
  quoted in translation), stubs and check verdicts in English, the same headings and hint
  blocks as the Chinese (exercise headings as declared: tests/labs/exercises/test_exercise_declaration.py).
- Its corrections: ERRATA.en.md has the same rows (anchors) as ERRATA.md, each row links its
  English notebook, and every English notebook links the same rows as its Chinese one.
- It was executed in English: every code cell that has outputs in the Chinese edition has them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from labs.exercises import edition
from labs.exercises import generate as gen
from labs.messages import text

ROOT = Path(__file__).resolve().parents[2]
ZH = sorted((ROOT / "solutions").glob("*.ipynb"))
NAMES = [p.name for p in ZH]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
HEADING = re.compile(r"^(#{1,6})\s", re.M)
EN_HINT = re.compile(r"<summary>\s*Exercise\s+(\d+)\s*·\s*Hint\s+(\d+)\s*</summary>")
ZH_HINT = re.compile(r"<summary>\s*练习\s*(\d+)\s*·\s*提示\s*(\d+)\s*</summary>")
ERRATA_LINK = {"zh": re.compile(r"\(\.\./ERRATA\.md#(\d+)\)"),
               "en": re.compile(r"\(\.\./\.\./ERRATA\.en\.md#(\d+)\)")}
ANCHOR = re.compile(r'<a id="(\d+)"></a>')


def read(path: Path):
    return nbformat.read(str(path), as_version=4)


def outside_code_fences(source: str) -> str:
    return re.sub(r"```.*?```", "", source, flags=re.S)


def outputs_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(str(out["text"]))
        for kind, value in out.get("data", {}).items():
            if kind.startswith("text/") or kind == "application/json":
                parts.append(value if isinstance(value, str) else "".join(map(str, value)))
        if out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
    return "".join(parts)


@pytest.fixture(params=NAMES)
def pair(request):
    name = request.param
    return name, read(ROOT / "solutions" / name), read(ROOT / "solutions" / "en" / name)


def test_every_notebook_has_its_english_edition():
    assert sorted(p.name for p in (ROOT / "solutions" / "en").glob("*.ipynb")) == NAMES
    assert sorted(p.name for p in (ROOT / "notebooks" / "en").glob("*.ipynb")) == NAMES


def test_same_cells_and_identical_code(pair):
    name, zh, en = pair
    assert edition.differences(zh, en, name) == []
    assert en.metadata["course"]["language"] == "en"


def test_student_versions_are_generated_from_the_english_solutions():
    assert gen.out_of_sync(ROOT / "solutions" / "en", ROOT / "notebooks" / "en") == []
    for name in NAMES:
        student = read(ROOT / "notebooks" / "en" / name)
        code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
        assert "BEGIN SOLUTION" not in code
        assert text("checks.stub_marker", lang="en") in code
        assert text("checks.stub_marker", lang="zh") not in code


def test_no_cjk_in_the_english_edition(pair):
    name, _, en = pair
    found = []
    for index, cell in enumerate(en.cells):
        for where, body in (("source", cell.source), ("outputs", outputs_text(cell))):
            for m in CJK.finditer(body):
                found.append((index, where, body[max(0, m.start() - 30):m.end() + 30]))
    assert not found, f"{name}: CJK characters in the English edition: {found[:5]}"


def test_same_headings_and_hint_blocks(pair):
    name, zh, en = pair
    for index, (a, b) in enumerate(zip(zh.cells, en.cells)):
        if a.cell_type != "markdown":
            continue
        where = f"{name} cell #{index}"
        levels = [len(h) for h in HEADING.findall(outside_code_fences(a.source))]
        assert [len(h) for h in HEADING.findall(outside_code_fences(b.source))] == levels, where
        for tag in ("<details>", "</details>", "<summary>", "</summary>"):
            assert a.source.count(tag) == b.source.count(tag), (where, tag)
        assert ZH_HINT.findall(a.source) == EN_HINT.findall(b.source), where


# The English exercise headings, hints and points: tests/labs/exercises/test_exercise_declaration.py.


def test_english_notebooks_were_executed_in_english(pair):
    name, zh, en = pair
    for index, (a, b) in enumerate(zip(zh.cells, en.cells)):
        if a.cell_type == "code" and a.get("outputs"):
            assert b.get("outputs"), f"{name} cell #{index}: run `make execute` (no outputs)"


def _anchors(path: Path) -> list[str]:
    return ANCHOR.findall(path.read_text(encoding="utf-8"))


def test_errata_pages_have_the_same_rows():
    zh, en = _anchors(ROOT / "ERRATA.md"), _anchors(ROOT / "ERRATA.en.md")
    assert zh and zh == en
    page = (ROOT / "ERRATA.en.md").read_text(encoding="utf-8")
    assert not CJK.search(page)
    rows = re.split(r'<a id="\d+"></a>', page)[1:]
    for number, row in zip(en, rows):
        links = re.findall(r"\]\((notebooks/en/[\w.]+\.ipynb)\)", row)
        assert links, f"ERRATA.en.md #{number} links no English student notebook (notebooks/en/…)"
        assert "](solutions/" not in row, f"ERRATA.en.md #{number}: students have notebooks/en/"
        for link in links:
            assert (ROOT / link).is_file(), link
        assert "(translated)" in row, f"ERRATA.en.md #{number}: the chapter's words, translated"


def test_english_notebooks_link_the_same_errata_rows(pair):
    name, zh, en = pair
    anchors = set(_anchors(ROOT / "ERRATA.en.md"))

    def links(nb, lang):
        found = set()
        for cell in nb.cells:
            found |= set(ERRATA_LINK[lang].findall(cell.source + outputs_text(cell)))
        return found

    assert links(en, "en") == links(zh, "zh"), name
    assert links(en, "en") <= anchors
    for cell in en.cells:
        assert "../ERRATA.md" not in cell.source.replace("../../ERRATA.en.md", "")


def test_the_readme_lists_both_editions():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in NAMES:
        assert f"notebooks/en/{name}" in readme, name
    assert "ERRATA.en.md" in readme


def test_code_shape_ignores_strings_and_comments_only():
    zh = 'n = 4  # 四个 rank\nprint(f"{n} 个 rank：{n * 2} 条消息", "好")'
    assert edition.code_shape(zh) == edition.code_shape(
        'n = 4  # four ranks\nprint(f"{n} ranks: {n * 2} messages", "fine")')
    for other in ('n = 5\nprint(f"{n} ranks", "fine")',  # another number
                  'm = 4\nprint(f"{m} ranks", "fine")',  # another name
                  'n = 4\nprint(f"{n} ranks")',  # one argument fewer
                  'n = 4\nprint(f"{n} ranks", "fine", sep="")'):  # one more
        assert edition.code_shape(zh) != edition.code_shape(other), other
    assert edition.code_shape("!ls\nx = 1") != edition.code_shape("!pwd\nx = 1")


def test_sync_copies_changed_code_and_keeps_the_rest():
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    def notebook(code, markdown, outputs):
        cells = [new_markdown_cell(markdown)] + [new_code_cell(c) for c in code]
        for cell, out in zip(cells[1:], outputs):
            cell.outputs = [new_output("stream", text=out)] if out else []
        for k, cell in enumerate(cells):
            cell.id = f"c{k}"
        return new_notebook(cells=cells)

    zh = notebook(("x = 1", "print(x + 1)", 'print(f"结果：{x}")  # 中文'), "# 标题", ("", "2", "结果：1"))
    en = notebook(("x = 1", "print(x)", 'print(f"result: {x}")  # English'), "# Title",
                  ("", "1", "result: 1"))
    en.cells[1].metadata["execution"] = {"shell.execute_reply": "t"}
    synced = edition.sync(zh, en)
    assert [c.source for c in synced.cells] == [
        "# Title", "x = 1", "print(x + 1)", 'print(f"result: {x}")  # English']
    assert synced.cells[1].metadata["execution"] == {"shell.execute_reply": "t"}  # kept
    assert synced.cells[3].outputs[0]["text"] == "result: 1"  # only its strings differ: kept
    assert synced.cells[2].outputs == []  # changed: to be run again in English
    assert synced.cells[2].metadata["course"][edition.TRANSLATE] is True  # ... once translated
    assert edition.differences(zh, synced) == [
        "notebook cell #2 (id c2): marked for translation: translate its strings, then remove "
        f"metadata.course.{edition.TRANSLATE}"]
    del synced.cells[2].metadata["course"]
    assert edition.differences(zh, synced) == []
    assert edition.differences(zh, en) == [
        "notebook cell #2 (id c2): code differs from the Chinese source beyond its strings and "
        "comments (run sync, then translate the cell's strings)"]
    zh.cells.append(new_markdown_cell("新的"))
    zh.cells[-1].id = "c4"
    with pytest.raises(ValueError, match="no English translation"):
        edition.sync(zh, en)


def test_strings_that_could_make_one_edition_fail_are_named():
    """What code_shape leaves out (the strings) still cannot make the Chinese body run
    differently: each kind of difference that could is planted and named (edition_runtime)."""
    from labs.exercises.edition_runtime import runtime_differences

    ok = (['d = {"小": 1}\nprint(f"{n:<12} 个 {d[\'小\']}")', 'x = d["小"]'],
          ['d = {"small": 1}\nprint(f"{d[\'small\']} of {n:<17}")', 'x = d["small"]'])
    assert runtime_differences(*ok) == []
    plants = {
        "another expression": (['print(f"{n} 个")'], ['print(f"{len(n)} ranks")']),
        "one expression fewer": (['print(f"{n} 个 {m}")'], ['print(f"{n} ranks")']),
        "a spec for floats only": (['print(f"{x:s}")'], ['print(f"{x:.2f}")']),
        "another conversion": (['print(f"{x!r}")'], ['print(f"{x!s}")']),
        "a key translated two ways": (['d = {"小": 1}', 'x = d["小"]'],
                                      ['d = {"small": 1}', 'x = d["tiny"]']),
        "two keys as one": (['d = {"小": 1, "大": 2}'], ['d = {"size": 1, "size": 2}']),
        "a template's field renamed": (['"{n} 个".format(n=1)'], ['"{m} ranks".format(n=1)']),
        "a % conversion changed": (['"%d 个" % 3'], ['"%s ranks" % 3']),
        "a key inside an f-string": (['d = {"小": 1}', 'print(f"{d[\'小\']}")'],
                                     ['d = {"small": 1}', 'print(f"{d[\'tiny\']}")']),
    }
    for kind, (zh, en) in plants.items():
        assert runtime_differences(zh, en), kind
