"""The verdict lines a check prints, built from their message keys, for tests to look for.

``passed(7, 4)`` is the line exercise 7 of its notebook prints when it earns its 4 points;
``failed(7, 4)`` and ``incomplete(7)`` are how a failed or an unfinished check's verdict starts;
``hint(7, 1)`` points to "Exercise 7 · Hint 1". All in the language of the moment (or ``lang``).

Owns: these four renderings. Must not: pin a sentence (everything comes from labs.messages) or
run a check.
"""
from __future__ import annotations

from labs.messages import text


def label(number: int | str, lang: str | None = None) -> str:
    """How a verdict names exercise ``number`` (an undeclared exercise: its id)."""
    return text("exercises.label", lang=lang, number=number)


def passed(number: int | str, points: int, lang: str | None = None) -> str:
    return text("checks.verdict_passed", lang=lang, exercise=label(number, lang), points=points)


def failed(number: int | str, points: int, lang: str | None = None) -> str:
    """The start of a failed check's verdict (its message follows)."""
    return text("checks.verdict_failed", lang=lang, exercise=label(number, lang), points=points,
                message="")


def incomplete(number: int | str, lang: str | None = None) -> str:
    """The start of an unfinished exercise's verdict (its message follows)."""
    return text("checks.verdict_incomplete", lang=lang, exercise=label(number, lang), message="")


def hint(number: int | str, k: int, lang: str | None = None) -> str:
    """The pointer to hint ``k`` of exercise ``number``."""
    return text("checks.hint_pointer", lang=lang, exercise=label(number, lang), number=k)
