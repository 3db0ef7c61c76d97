"""The messages layer (labs.messages) and the figures' font (labs.notebook.fonts).

Every message exists in every language with the same fields; every key the code asks for
exists; no Chinese string is left in labs/ outside the catalogs (so the English edition
switches all of them); each catalog lives beside the code that says it; the language follows LABS_LANG, then the notebook's edition folder; a
machine without a CJK font draws English labels after one notice, never boxes.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
from pathlib import Path

import pytest

from labs import messages
from labs.notebook import fonts

ROOT = Path(__file__).resolve().parents[3]
LABS = ROOT / "labs"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def test_every_message_in_every_language_with_the_same_fields():
    assert messages.areas(), "no catalogs in labs.messages.CATALOGS"
    clashes = set(messages.areas()) & set(messages.__all__)
    assert not clashes, f"a catalog named like the package's functions hides them: {clashes}"
    for area in messages.areas():
        for name, entry in messages.catalog(area).items():
            key = f"{area}.{name}"
            assert set(entry) == set(messages.LANGUAGES), f"{key}: languages {sorted(entry)}"
            assert all(isinstance(t, str) and t.strip() for t in entry.values()), key
            assert not CJK.search(entry["en"]), f"{key}: Chinese in the English text"
            wanted = messages.fields(entry["zh"])
            for lang, template in entry.items():
                assert messages.fields(template) == wanted, (
                    f"{key}: {lang} fills {sorted(messages.fields(template))}, zh {sorted(wanted)}")


def _catalog_files() -> set[Path]:
    return {ROOT / (module.replace(".", "/") + ".py") for module in messages.CATALOGS.values()}


def _python_files():
    """labs/ outside its catalogs and the language core (whose docstring shows examples)."""
    catalogs = _catalog_files()
    return [p for p in sorted(LABS.rglob("*.py"))
            if p not in catalogs and p.parent.name != "messages"]


def _code_files():
    """labs/ and the grader outside their catalogs: every file that asks for a message."""
    catalogs = _catalog_files()
    return _python_files() + [p for p in sorted((ROOT / "grader").rglob("*.py"))
                              if p not in catalogs]


def test_each_catalog_lives_beside_the_code_that_says_it():
    """A catalog is its package's ``text*.py`` (issue 38), listed in labs.messages.CATALOGS;
    labs/messages/ holds the language core alone."""
    catalogs = _catalog_files()
    assert all(p.is_file() for p in catalogs), sorted(p for p in catalogs if not p.is_file())
    found = {p for d in ("labs", "grader") for p in (ROOT / d).rglob("text*.py")}
    assert found == {p for p in catalogs if p.name.startswith("text")}, \
        f"catalog files not in labs.messages.CATALOGS: {sorted(found - catalogs)}"
    for area, module in messages.CATALOGS.items():
        owner = module.rsplit(".", 1)[0]
        assert owner != "labs.messages", f"{area}: its catalog is in labs/messages, not beside its code"


def _docstrings(tree) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def test_no_chinese_string_outside_the_catalogs():
    found = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docs and CJK.search(node.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:40]!r}")
    assert not found, (f"{len(found)} Chinese string(s) outside the catalogs "
                       "(move them into a catalog):\n" + "\n".join(found[:40]))


KEY_CALL = re.compile(r"""\b(?:text|_t|label|_label|msg|lazy|why)\(\s*["']([a-z0-9_]+(?:\.[a-z0-9_]+)?)["']""")


def test_every_key_the_code_asks_for_exists():
    missing = []
    for path in _code_files():
        for match in KEY_CALL.finditer(path.read_text(encoding="utf-8")):
            key = match.group(1)
            area, _, name = key.partition(".")
            if not name:  # every key is area.name, in full
                missing.append(f"{path.relative_to(ROOT)}: {key} (not area.name)")
                continue
            try:
                catalog = messages.catalog(area)
            except KeyError:
                missing.append(f"{path.relative_to(ROOT)}: {key} (no catalog {area})")
                continue
            if name not in catalog:
                missing.append(f"{path.relative_to(ROOT)}: {key}")
    assert not missing, "messages asked for but not in a catalog:\n" + "\n".join(missing)


def test_no_key_is_built_at_run_time():
    """grep finds every use of a message: a key is written out in full where it is used (or in
    a dict literal from a value to its key), never assembled from parts."""
    areas = "|".join(messages.areas())
    built = re.compile(rf"""\b(?:text|_t|label|_label|msg|lazy|why)\(\s*f["']|\bf["'](?:{areas})\.\w*\{{""")
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in _code_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if built.search(line)]
    assert not found, "message keys built at run time:\n" + "\n".join(found)


SHORT = 20  # characters of English: a shorter text is a label, or a piece of a sentence
MOST_SHORT_NON_LABELS = 20  # issue 38: at most this many short texts that are not labels


def test_no_sentence_is_assembled_from_short_pieces():
    """Issue 38: a sentence is one key, whole, with named fields -- never pieces ("the return
    value", "higher", ", nor ") that code splices into another template. A catalog text shorter
    than 20 characters is therefore a complete label (a column header, a legend entry, a
    control's label, a unit, a case's name; a label in front of a colon) that its module lists
    in ``LABELS``, or one of at most 20 others (a whole short sentence). Every label listed is
    a short text of its module."""
    others, misplaced = [], []
    for area, module in messages.CATALOGS.items():
        catalog = importlib.import_module(module)
        labels = getattr(catalog, "LABELS", frozenset())
        texts = catalog.MESSAGES
        misplaced += [f"{area}.{name}" for name in sorted(labels)
                      if name not in texts or len(texts[name]["en"]) >= SHORT]
        others += [f"{area}.{name}: {entry['en']!r} / {entry['zh']!r}"
                   for name, entry in texts.items()
                   if len(entry["en"]) < SHORT and name not in labels]
    assert not misplaced, f"LABELS that are not short texts of their catalog: {misplaced}"
    assert len(others) <= MOST_SHORT_NON_LABELS, (
        f"{len(others)} short texts are not labels (at most {MOST_SHORT_NON_LABELS}): rewrite "
        "the sentences that splice a piece in as whole sentences, one key each, or list a "
        "complete label in its module's LABELS:\n" + "\n".join(others))


def test_language_rules(monkeypatch, tmp_path):
    monkeypatch.delenv(messages.LANG_ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert messages.language() == "zh"
    (tmp_path / "en").mkdir()
    monkeypatch.chdir(tmp_path / "en")
    assert messages.language() == "en"  # nbval / nbconvert / grader: the notebook's folder
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "notebooks" / "2.0_collectives.ipynb"))
    assert messages.language() == "zh"  # JupyterLab: the notebook's path wins over the cwd
    monkeypatch.setenv("JPY_SESSION_NAME", "notebooks/en/2.0_collectives.ipynb")
    assert messages.language() == "en"
    # an English notebook a student copied out of notebooks/en/ still speaks English (its
    # metadata); a Chinese one, or a file that cannot be read, speaks Chinese
    desktop = tmp_path / "desktop"
    desktop.mkdir()
    (desktop / "mine.ipynb").write_text('{"metadata": {"course": {"language": "en"}}}')
    (desktop / "zh.ipynb").write_text('{"metadata": {"course": {"notebook": "x.ipynb"}}}')
    (desktop / "broken.ipynb").write_text('{"metadata": ')
    for name, lang in (("mine", "en"), ("zh", "zh"), ("broken", "zh")):
        monkeypatch.setenv("JPY_SESSION_NAME", str(desktop / f"{name}.ipynb"))
        assert messages.language() == lang, name
    monkeypatch.chdir(desktop)
    monkeypatch.setenv("JPY_SESSION_NAME", "mine.ipynb")  # a path relative to the server
    assert messages.language() == "en"
    monkeypatch.setenv(messages.LANG_ENV, "zh")
    assert messages.language() == "zh"
    messages.set_language("en")
    assert messages.language() == "en"
    messages.set_language(None)
    monkeypatch.setenv(messages.LANG_ENV, "fr")
    with pytest.raises(ValueError, match="LABS_LANG=zh or LABS_LANG=en"):
        messages.language()
    with pytest.raises(ValueError, match="choose one of zh, en"):
        messages.set_language("fr")


def test_text_fills_fields_and_names_a_missing_key():
    zh = messages.text("plots.no_cjk_font", lang="zh", family="F")
    en = messages.text("plots.no_cjk_font", lang="en", family="F")
    assert "F" in zh and "F" in en and CJK.search(zh) and not CJK.search(en)
    with pytest.raises(KeyError, match="no message 'plots.nope'"):
        messages.text("plots.nope")
    with pytest.raises(KeyError, match="no message catalog 'nope'"):
        messages.text("nope.x")


def test_the_cjk_font_is_registered_and_draws_chinese():
    import matplotlib.pyplot as plt
    from tests.support.figure_checks import draw

    assert fonts.setup(), "no CJK font: requirements.txt pins mplfonts, which provides one"
    assert fonts.plot_language("zh") == "zh"
    fig, ax = plt.subplots()
    ax.set_title("消息大小与 all-reduce 耗时（毫秒）")
    draw(fig)  # fails on a missing glyph
    plt.close(fig)


def test_without_a_cjk_font_labels_are_english_after_one_notice(monkeypatch):
    monkeypatch.setattr(fonts, "_state", {"done": False, "file": None, "noticed": False})
    monkeypatch.setattr(fonts, "font_file", lambda: None)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    assert fonts.plot_language("zh") == "en"
    assert fonts.plot_language("zh") == "en"
    assert fonts.plot_language("en") == "en"
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1 and "mplfonts" in lines[0], lines


def test_every_message_of_the_checks_is_used():
    """A check's message that no code asks for any more is deleted (issue 37: the checks'
    catalogs shrink with the checks): every key of the checks' catalogs appears, written out in
    full, in labs/ or grader/."""
    code = "\n".join(p.read_text(encoding="utf-8") for p in _code_files())
    areas = [a for a in messages.CATALOGS if a == "invariants" or a.startswith("checks_2_")]
    assert len(areas) == 7, areas
    unused = [f"{area}.{key}" for area in areas for key in messages.catalog(area)
              if f'"{area}.{key}"' not in code]
    assert not unused, f"messages no check uses (delete them): {unused}"
