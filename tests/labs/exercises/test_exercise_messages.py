"""The exercises speak the notebook's language: verdicts, cases, comparisons, stubs, titles.

The Chinese edition's texts are checked by the other exercise tests; here the same checks in
English (``LABS_LANG=en``): no Chinese character reaches the student, a case label defined at
import time (a lazy message) follows the language of the moment, and a stub of either
edition is recognised as an unfinished exercise.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from labs.exercises import catalog, checks, collectives_checks
from labs.exercises import generate as gen
from labs.exercises.checks import (ExerciseFailed, ExerciseIncomplete, assert_close, case,
                                   compare_tensors, msg, run_check)
from labs.messages import text

pytestmark = pytest.mark.numerics

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


@pytest.fixture
def english(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")


def test_a_passing_and_a_failing_check_in_english(english, capsys):
    run_check("ex2_0_ring_bytes", 1, lambda: None)
    assert capsys.readouterr().out == "✅ Exercise 3 passed: 1/1 points\n"

    def wrong():
        with case(msg("checks_2_0.case_bytes", size=1000, n=2)):
            assert_close(1500.0, 1000.0, what=text("checks.what_returned"), dtype="float64")

    with pytest.raises(ExerciseFailed) as info:
        run_check("ex2_0_ring_bytes", 1, wrong)
    out = capsys.readouterr().out
    assert str(info.value) == ("Case S=1000 bytes, N=2: the return value: wrong value, "
                               "expected 1500.0, got 1000.0")
    assert out.startswith("❌ Exercise 3 failed (0/1 points): Case S=1000 bytes, N=2: ")
    assert "What to do: For a way in, open \u201cExercise 3 \u00b7 Hint 1\u201d above." in out
    assert not CJK.search(out), out
    assert info.value._render_traceback_() == ["ExerciseFailed: " + text(ExerciseFailed.SHORT_KEY)]
    assert not CJK.search(text(ExerciseFailed.SHORT_KEY))


def test_a_case_table_defined_at_import_follows_the_language(monkeypatch):
    label = collectives_checks.ALL_REDUCE_CASES[0].label
    monkeypatch.setenv("LABS_LANG", "zh")
    fields = dict(n=1, world_size=4, length=8)
    assert str(label) == text("checks_2_0.case_ranks_length", lang="zh", **fields)
    monkeypatch.setenv("LABS_LANG", "en")
    assert str(label) == text("checks_2_0.case_ranks_length", lang="en", **fields)
    hidden = collectives_checks.ALL_REDUCE_CASES[2].label
    assert str(hidden) == text("checks_2_0.case_hidden_uneven", lang="en", n=1, world_size=3)


def test_comparisons_and_hidden_cases_in_english(english):
    import torch

    with pytest.raises(ExerciseFailed) as info:
        with case(msg("checks.case_hidden", n=2), hidden=True):
            compare_tensors(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]),
                            what=text("checks_2_0.what_result"), rank=1)
    message = str(info.value)
    assert message.startswith("Hidden case 2: the all-reduce result on rank 1: wrong values, "
                              "the first element that differs is at index (1,), expected 2, "
                              "got 3")
    assert "(hidden case)" not in message and not CJK.search(message)
    with pytest.raises(ExerciseFailed, match=r"^Case 7 \(hidden case\): "):
        with case("Case 7", hidden=True):
            assert_close([1, 2], [1], what="the list")


def test_student_errors_in_english(english):
    def student():
        return (1, 2)[5]

    with pytest.raises(ExerciseFailed) as info:
        with case(msg("checks_2_1.case_zero_cap")):
            student()
    lines = str(info.value).splitlines()
    assert lines[0] == "Your code raised an error (Case: make_buckets([4], 0) should raise ValueError)"
    assert lines[1].endswith(", in student:") and "line" in lines[1]
    assert lines[-1].strip() == "IndexError: tuple index out of range"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("stub_lang", ["zh", "en"])
def test_a_stub_of_either_edition_is_unfinished(monkeypatch, capsys, lang, stub_lang):
    monkeypatch.setenv("LABS_LANG", lang)
    stub = gen.stub_message(2, lang=stub_lang)

    def unfinished():
        raise NotImplementedError(stub)

    def from_a_rank():  # a rank's error comes back as text only
        raise RuntimeError(f'Traceback ...\n    raise NotImplementedError("{stub}")\n')

    for fn in (unfinished, from_a_rank):
        with pytest.raises(ExerciseIncomplete) as info:
            run_check("ex2_0_rs_ag_all_reduce", 2, fn)
        after = stub.split(text("checks.stub_marker", lang=stub_lang), 1)[1]
        rest = re.sub(r"^[^\w\s]\s*", "", after)  # the words after the marker and its colon
        assert str(info.value) == text("checks.stub_not_written", lang=lang, rest=rest)
        out = capsys.readouterr().out
        assert out.startswith(text("checks.verdict_incomplete", lang=lang,
                                   exercise=catalog.label("ex2_0_rs_ag_all_reduce"),
                                   message=info.value))


def test_english_stubs_and_generator(tmp_path):
    stub = gen.stub_message(4, lang="en")
    assert stub.startswith("Exercise not done yet: Exercise 4. ") and not CJK.search(stub)
    assert stub.startswith(checks.stub_markers()[1])
    assert not CJK.search(gen.stub_message(None, lang="en"))
    cells = [nbformat.v4.new_code_cell("def f():\n    ### EXERCISE: 4\n    ### BEGIN SOLUTION\n"
                                       "    return 1\n    ### END SOLUTION"),
             nbformat.v4.new_markdown_cell("Answer:\n### BEGIN SOLUTION\nbecause\n### END SOLUTION")]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["course"] = {"language": "en"}
    code, markdown = gen.make_student_notebook(nb).cells
    assert code.source.endswith(f'raise NotImplementedError("{stub}")')
    assert markdown.source == "Answer:\n" + text("checks.stub_markdown", lang="en")
    # solutions/en/: English by its edition folder, whatever the shell's language
    (tmp_path / "en").mkdir()
    del nb.metadata["course"]
    path = tmp_path / "en" / "x.ipynb"
    nbformat.write(nb, str(path))
    assert stub.encode() in gen.render(path)
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, str(path))
    assert gen.stub_message(4, lang="zh").encode() in gen.render(path)


def test_the_catalog_in_english(english):
    assert catalog.label("ex2_0_ring_all_reduce") == "Exercise 1"
    assert catalog.label("ex_sum") == "Exercise ex_sum"
    assert catalog.title("ex2_1_buckets") == "Bucketing"
    assert catalog.difficulty("ex2_1_hours_per_epoch") == "warm-up"
    for exercise in catalog.EXERCISES.values():
        title = catalog.title(exercise.id)
        assert title == exercise.en and title and not CJK.search(title), exercise


def test_last_traceback_in_english(english, capsys):
    checks._last.update(exercise=None, text=None)
    checks.last_traceback()
    assert capsys.readouterr().out == "No check has failed yet.\n"
