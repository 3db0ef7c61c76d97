"""tests.support.messages, with which the tests assert a message by its key and numbers: it
must accept exactly the message it is given, fields formatted as the template formats them, and
refuse the same message with another number, another key or text around it."""
from __future__ import annotations

import pytest

from labs.messages import text
from tests.support.messages import found_in, opening, pattern, said


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_said_takes_the_message_with_its_numbers_and_returns_the_others(lang):
    got = text("checks.verdict_failed", lang=lang, exercise="X 1", points=3, message="m: n")
    assert said(got, "checks.verdict_failed", lang=lang, points=3) == {"exercise": "X 1",
                                                                     "message": "m: n"}
    for wrong in (dict(points=2), dict(points=3, message="m")):
        with pytest.raises(AssertionError):
            said(got, "checks.verdict_failed", lang=lang, **wrong)
    with pytest.raises(AssertionError):  # another key
        said(got, "checks.verdict_incomplete", lang=lang)
    with pytest.raises(AssertionError):  # more text after it, unless asked for
        said(got + "\nadvice", "checks.verdict_failed", lang=lang, points=3, message="m: n")
    said(got + "\nadvice", "checks.verdict_failed", lang=lang, then=True, points=3,
         message="m: n")


def test_fields_are_formatted_as_the_template_formats_them():
    got = text("checks.verdict_passed", lang="en", exercise="E", points=2)  # {points:g} twice
    said(got, "checks.verdict_passed", lang="en", points=2.0)
    assert said(got, "checks.verdict_passed", lang="en") == {"exercise": "E", "points": "2"}
    odd = got.replace("2/2", "2/3")  # a field used twice must repeat the same text
    assert not pattern("checks.verdict_passed", lang="en").fullmatch(odd)
    quoted = text("record.other_exercise", lang="en", got="a", wanted="b")  # {got!r}
    said(quoted, "record.other_exercise", lang="en", got="a", wanted="b")
    with pytest.raises(AssertionError):
        said(quoted, "record.other_exercise", lang="en", got="'a'", wanted="b")


def test_found_in_and_opening():
    inner = text("checks_2_0.not_in_place", lang="zh", rank=2)
    found_in("rank 2 ...: " + inner + "\n    frame", "checks_2_0.not_in_place", lang="zh", rank=2)
    with pytest.raises(AssertionError):
        found_in("rank 2 ...: " + inner, "checks_2_0.not_in_place", lang="zh", rank=3)
    assert opening("checks.todo_hint", lang="en") == text("checks.todo_hint", lang="en", hint="")
    assert opening("checks.verdict_failed", lang="zh") == "❌ "  # up to its first field
