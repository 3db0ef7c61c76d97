"""Asserting which message a test got -- its key and its numbers -- instead of pinning its sentence.

``said(got, "checks.wrong_value", where="x", expected="3", got="1")`` asserts that ``got`` is the
message ``checks.wrong_value`` (in the language of the moment, or ``lang``) with the fields given,
and returns the text of the fields not given, so a test can check those numbers as well::

    seconds = said(message, "grade.timeout", grade_id="ex_reverse")["seconds"]

``then=True`` accepts text after the message (a verdict followed by advice lines). A field named
like an option (``lang``, ``then``) cannot be given: leave it to be captured.

Owns: turning a message template into a pattern. Must not: know any particular message (the tests
say which key they expect) or loosen a comparison: a field given is matched exactly, formatted as
the template formats it.
"""
from __future__ import annotations

import re
import string

from labs.messages import catalog, language

_FORMATTER = string.Formatter()


def pattern(key: str, /, *, lang: str | None = None, then: bool = False, **known) -> re.Pattern:
    """The message ``key`` as a regular expression: the ``known`` fields formatted in, the other
    fields captured (a field used twice must repeat the same text)."""
    area, _, name = key.partition(".")
    template = catalog(area)[name][lang or language()]
    parts, seen = [], set()
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        parts.append(re.escape(literal))
        if field is None:
            continue
        if field in known:
            one = "{0" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            parts.append(re.escape(one.format(known[field])))
        elif field in seen:
            parts.append(f"(?P={field})")
        else:
            seen.add(field)
            parts.append(f"(?P<{field}>.*?)")
    return re.compile("".join(parts) + (".*" if then else ""), re.DOTALL)


def said(got, key: str, /, *, lang: str | None = None, then: bool = False, **known) -> dict:
    """Assert that ``got`` (a string, or anything whose ``str`` is one) is message ``key`` with
    the ``known`` fields; return the text of the other fields."""
    text = str(got)
    found = pattern(key, lang=lang, then=then, **known).fullmatch(text)
    assert found is not None, f"not the message {key} with {known}: {text!r}"
    return found.groupdict()


def opening(key: str, /, *, lang: str | None = None) -> str:
    """The text message ``key`` starts with, up to its first field (where a test splits output)."""
    area, _, name = key.partition(".")
    return next(_FORMATTER.parse(catalog(area)[name][lang or language()]))[0]


def found_in(got, key: str, /, *, lang: str | None = None, **known) -> dict:
    """Assert that message ``key`` with the ``known`` fields occurs inside ``got`` (after a case
    label that itself holds the separator, say); return the other fields' text. A field not given
    at the very end of the message comes back as short as the pattern allows: give it."""
    text = str(got)
    found = pattern(key, lang=lang, **known).search(text)
    assert found is not None, f"no message {key} with {known} in: {text!r}"
    return found.groupdict()


def recorded_keys(monkeypatch, *modules) -> list:
    """Replace the catalog lookup ``text`` in ``modules``: every message becomes '<key>', and its
    key and fields are recorded, in order, in the list returned (for tests that ask which message
    a function chose and with which numbers, whatever the language)."""
    seen = []

    def record(key, **fields):
        seen.append((key, fields))
        return f"<{key}>"

    for module in modules:
        monkeypatch.setattr(module, "text", record)
    return seen
