"""2.4's exercise 4 names the rule an answer breaks (issue 39): the constraints are checked
first, each with its own message (a pp that does not divide the layers included); "reversed"
only adds to the constraint's message; None against a layout, or a layout where none fits, says
why. Asserted by message key and fields (tests.support.messages), without ranks."""
from __future__ import annotations

import pytest

from labs.exercises import hybrid_checks as hc
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from tests.support.messages import recorded_keys

SHOWN = (175e9, 96, 96, 1024, 8, 60e9)  # the first shown case: (dp, pp, tp) = (16, 8, 8)


@pytest.fixture
def keys(monkeypatch):
    return recorded_keys(monkeypatch, hc)


def _fails(fn):
    with pytest.raises(ExerciseFailed):
        hc.check_choose_layout(fn)


def test_the_shown_case_is_what_these_tests_assume():
    assert hc.choose_layout(*SHOWN) == (16, 8, 8)


def test_a_reversed_tuple_is_judged_by_the_constraints_first(keys, capsys):
    _fails(lambda *args: tuple(reversed(_reference(*args))) if _reference(*args) else None)
    order = [k for k, _ in keys]
    # (8, 8, 16) read as (dp, pp, tp): tp = 16 is more than a node's 8 GPUs, said first
    assert order.index("checks_2_4.layout_tp") < order.index("checks_2_4.layout_reversed")
    fields = dict(keys)["checks_2_4.layout_reversed"]
    assert fields["why"] == "<checks_2_4.layout_tp>"
    assert fields["got"] == (8, 8, 16) and fields["expected"] == (16, 8, 8)
    assert dict(keys)["checks_2_4.layout_wrong"]["why"] == "<checks_2_4.layout_reversed>"
    capsys.readouterr()


def test_a_pp_that_does_not_divide_the_layers_has_its_own_message(keys, capsys):
    _fails(lambda *args: (2, 64, 8))  # 1024 GPUs, but 64 stages do not divide 96 layers
    assert dict(keys)["checks_2_4.layout_pp"] == {"pp": 64, "layers": 96}
    assert dict(keys)["checks_2_4.layout_wrong"]["why"] == "<checks_2_4.layout_pp>"
    assert "checks_2_4.layout_reversed" not in dict(keys)
    assert "checks_2_4.layout_not_best" not in dict(keys)
    capsys.readouterr()


def test_a_layout_where_none_fits_says_which_rule_it_breaks(keys):
    args = (24e6 * 100, 8, 8, 8 * 3, 8, 1.0)  # a budget of 1 byte: nothing fits
    assert hc.choose_layout(*args) is None
    failure = hc._layout_failure(None, (1, 3, 8), args)  # pp = 3 does not divide 8 layers
    assert str(failure) == "<checks_2_4.layout_none_expected>"
    fields = dict(keys)["checks_2_4.layout_none_expected"]
    assert fields["got"] == (1, 3, 8) and fields["why"] == "<checks_2_4.layout_pp>"


def test_none_where_a_layout_fits_is_named(keys, capsys):
    _fails(lambda *args: None)
    assert dict(keys)["checks_2_4.layout_none_but_fits"] == {"expected": (16, 8, 8)}
    capsys.readouterr()


def test_a_right_answer_still_passes(capsys):
    hc.check_choose_layout(_reference)
    capsys.readouterr()


def _reference(n, layers, heads, gpus, per_node, budget):  # a right answer (the course's is refused)
    fits = [(tp * pp, -tp, (gpus // (tp * pp), pp, tp))
            for tp in range(1, min(per_node, heads) + 1) for pp in range(1, layers + 1)
            if not (heads % tp or layers % pp or gpus % (tp * pp))
            and 16 * n / (tp * pp) <= budget]
    return min(fits)[2] if fits else None


def test_the_messages_exist_in_both_languages():
    for lang in ("zh", "en"):
        reversed_text = text("checks_2_4.layout_reversed", why="WHY", expected=(16, 8, 8),
                             got=(8, 8, 16), lang=lang)
        assert reversed_text.startswith("WHY") and "(8, 8, 16)" in reversed_text
        assert "(16, 8, 8)" in text("checks_2_4.layout_none_but_fits", expected=(16, 8, 8),
                                    lang=lang)
        assert "WHY" in text("checks_2_4.layout_none_expected", got=(1, 3, 8), why="WHY",
                             lang=lang)
