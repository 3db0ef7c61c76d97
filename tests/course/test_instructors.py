"""The workshop kit (INSTRUCTORS.md, INSTRUCTORS.en.md; issue 40, item 7) agrees with the course.

- The two-day plan keeps the course map's minutes: its blocks of each notebook add up to the README
  map, each lecture block is the notebook's own reading-and-running time (its 预计用时 section), and
  every row's clock times match its minutes, one row after the other.
- Every exercise of the catalog is in the live/after table once, with its points, live exactly when it
  is a warm-up or core exercise; the totals the text gives are the catalog's.
- The TA notes are ten, and every message they quote is the course's own (the catalog key they name,
  the Makefile, JupyterLab's server or gloo); the checkpoints quote what the solutions print.
- Both READMEs link the kit from their instructor section, and every relative link resolves.
"""
from __future__ import annotations

import json
import mmap
import re
from pathlib import Path

import pytest

from labs.exercises import catalog
from labs.messages import areas
from labs.messages import catalog as messages
from tests.notebooks.test_student_view import readme_minutes

ROOT = Path(__file__).resolve().parents[2]
KITS = {"zh": ROOT / "INSTRUCTORS.md", "en": ROOT / "INSTRUCTORS.en.md"}
READMES = {"zh": (ROOT / "README.md", "## 讲师指南"), "en": (ROOT / "README.en.md", "## Instructor guide")}
ROW = re.compile(r"^\|\s*(\d\d):(\d\d)–(\d\d):(\d\d)\s*\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|", re.M)
BLOCK = re.compile(r"^(2\.\d)\s+(\S+)")
LECTURE, EXERCISES, WHOLE = ("lecture", "讲解"), ("exercises", "练习"), ("summary", "总结")
WHEN = {"live": "live", "after": "after", "课上": "live", "课后": "after"}
TA_HEADING = {"zh": "## 助教手册", "en": "## TA notes"}
CHECKPOINTS = {"zh": "## 检查点", "en": "## Checkpoints"}


def _text(lang: str) -> str:
    return KITS[lang].read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _reading_minutes() -> dict[str, int]:
    """Each notebook's reading-and-running minutes, from its 预计用时 section (where it gives one)."""
    found = {}
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        reading = re.search(r"阅读和运行约\s*(\d+)\s*分钟", first.split("## 预计用时", 1)[1])
        if reading:
            found[path.name[:3]] = int(reading.group(1))
    return found


def _rows(lang: str) -> list[tuple[int, int, int, str]]:
    """(start, end, minutes, block) of every row of the plan, minutes since midnight."""
    return [(int(h1) * 60 + int(m1), int(h2) * 60 + int(m2), int(minutes), block)
            for h1, m1, h2, m2, minutes, block in ROW.findall(_text(lang))]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_row_takes_its_minutes_and_follows_the_one_before(lang):
    rows = _rows(lang)
    assert len(rows) > 15
    days = 0
    for i, (start, end, minutes, block) in enumerate(rows):
        assert end - start == minutes, f"{block}: {minutes} min is not its clock times"
        if i and start != rows[i - 1][1]:
            assert start == 9 * 60, f"{block} does not follow {rows[i - 1][3]}"
            days += 1
    assert days == 1  # two days


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_plan_keeps_the_course_map_minutes(lang):
    per_notebook, lectures = {}, {}
    for _, _, minutes, block in _rows(lang):
        found = BLOCK.match(block)
        if not found:
            continue
        notebook, kind = found.groups()
        assert kind.startswith(LECTURE + EXERCISES + WHOLE), block
        per_notebook[notebook] = per_notebook.get(notebook, 0) + minutes
        if kind.startswith(LECTURE):
            lectures[notebook] = minutes
    course_map = {name[:3]: minutes for name, minutes in readme_minutes().items()}
    assert per_notebook == course_map
    assert sum(per_notebook.values()) == 615
    assert lectures == _reading_minutes()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_day_totals_in_the_text_are_the_plan_s(lang):
    rows, totals, day = _rows(lang), [0, 0], 0
    for i, (start, _, minutes, block) in enumerate(rows):
        day += bool(i and start != rows[i - 1][1])
        totals[day] += minutes if BLOCK.match(block) else 0
    assert all(str(total) in _text(lang) for total in totals), totals


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_exercise_is_live_or_after_by_its_difficulty(lang):
    text = _text(lang)
    counts = {"live": [0, 0], "after": [0, 0]}
    for exercise in catalog.EXERCISES.values():
        rows = re.findall(rf"^\|[^|]*\|\s*`{exercise.id}`\s*\|\s*(\d+)\s*\|\s*(\S+)\s*\|", text, re.M)
        assert len(rows) == 1, f"{exercise.id}: {len(rows)} rows"
        points, when = int(rows[0][0]), WHEN[rows[0][1]]
        assert points == exercise.points, exercise.id
        assert when == ("after" if exercise.difficulty == "build" else "live"), exercise.id
        counts[when][0] += 1
        counts[when][1] += points
    (live, live_points), (after, after_points) = counts["live"], counts["after"]
    total = live_points + after_points
    said = (rf"{live} exercises \({live_points} points\) are live, {after} \({after_points} points\)"
            rf" after; the course has {total} points" if lang == "en" else
            rf"课上 {live} 道（{live_points} 分）， ?课后 {after} 道（{after_points} 分）；全课共 {total} 分")
    assert re.search(said, _flat(text)), said


def _template(key: str, lang: str) -> str:
    area, _, name = key.partition(".")
    return _flat(re.sub(r"\{[^}]*\}", "…", messages(area)[name][lang]))


def _source_of(origin: str, lang: str) -> str | None:
    """The text a quote of the TA notes comes from: a message's template (its fields as …), the
    Makefile, JupyterLab's server, or None for gloo (checked in torch's library)."""
    if origin == "Makefile":
        return _flat((ROOT / "Makefile").read_text(encoding="utf-8"))
    if origin == "jupyter_server":
        import jupyter_server.serverapp
        return Path(jupyter_server.serverapp.__file__).read_text(encoding="utf-8")
    if origin == "gloo":
        return None
    return _template(origin, lang)


def _in_torch(words: str) -> bool:
    import torch
    for library in Path(torch.__file__).parent.joinpath("lib").glob("libtorch_cpu.*"):
        with library.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return data.find(words.encode()) >= 0
    pytest.skip("no libtorch_cpu here")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_ta_notes_are_ten_and_quote_the_course_s_own_messages(lang):
    notes = _section(_text(lang), TA_HEADING[lang])
    assert [int(n) for n in re.findall(r"^\s*(\d+)\. \*\*", notes, re.M)] == list(range(1, 11))
    quotes = re.findall(r"`([^`]+)`\s*[（(]`([\w.]+)`", notes)
    assert len(quotes) >= 10, quotes
    for quote, origin in quotes:
        source = _source_of(origin, lang)
        for piece in filter(None, (p.strip() for p in _flat(quote).split("…"))):
            if source is None:
                assert _in_torch(piece), (origin, piece)
            else:
                assert piece in source, f"({origin}) does not say {piece!r}"


def _printed(lang: str) -> str:
    """Everything the solution notebooks of an edition printed."""
    folder = ROOT / "solutions" / ("en" if lang == "en" else "")
    parts = []
    for path in sorted(folder.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                parts += [output.get("text", ""), output.get("evalue", ""),
                          output.get("data", {}).get("text/plain", "")]
    return _flat(" ".join("".join(p) if isinstance(p, list) else p for p in parts))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_checkpoints_quote_what_the_course_prints(lang):
    printed = _printed(lang)
    said = " ".join(_template(f"{area}.{name}", lang) for area in areas()
                    for name in messages(area) if lang in messages(area)[name])
    quotes = [q for q in re.findall(r"`([^`]+)`", _section(_text(lang), CHECKPOINTS[lang]))
              if re.search(r"[=:：]", q)]
    assert len(quotes) >= 8, quotes
    for quote in quotes:
        for piece in filter(None, (p.strip() for p in _flat(quote).split("…"))):
            assert piece in printed or piece in said, f"nothing prints {piece!r}"


def test_the_fewer_ranks_advice_fits_the_notebooks():
    """2.1-2.3 set WORLD_SIZE = 4 in their environment cell (the fallback lowers it to 2); 2.0's
    process-group demo needs 4 ranks, 2.4 runs 8."""
    for path in sorted((ROOT / "solutions").glob("2.[0-4]_*.ipynb")):
        code = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][2]["source"])
        assert f"WORLD_SIZE = {8 if path.name.startswith('2.4') else 4}" in code, path.name
    demo = (ROOT / "solutions" / "2.0_collectives.ipynb").read_text(encoding="utf-8")
    assert "dist.new_group([0, 2])" in demo
    for lang in KITS:
        assert "WORLD_SIZE = 2" in _text(lang)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_readme_links_the_kit_from_its_instructor_section(lang):
    readme, heading = READMES[lang]
    section = _section(readme.read_text(encoding="utf-8"), heading)
    assert f"]({KITS[lang].name})" in section
    other = KITS["en" if lang == "zh" else "zh"].name
    assert f"]({other})" in _text(lang)  # each kit links the other edition


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_relative_link_resolves(lang):
    links = re.findall(r"\]\(([^)\s]+)\)", _text(lang))
    assert links
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        target, _, anchor = link.partition("#")
        path = ROOT / target
        assert path.exists(), link
        if anchor:
            headings = re.findall(r"^#+\s+(.+)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, link


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_kit_names_the_make_targets_it_relies_on(lang):
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("doctor", "slides", "handout", "grade", "notebooks"):
        assert re.search(rf"^{target}:", makefile, re.M), target
        assert f"make {target}" in _text(lang), target
