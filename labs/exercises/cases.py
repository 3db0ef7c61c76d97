"""The loop the function exercises' checks share: the shown cases named, then the hidden ones
numbered, each inside :func:`labs.exercises.checks.case`. Owns: that loop. Must not: draw from
the secret (a check resolves its cases first), import the grader, or print.
"""
from __future__ import annotations

from labs.exercises.checks import case
from labs.messages import text

__all__ = ["each_case"]


def each_case(shown, hidden, label, compare) -> None:
    """``compare(*args)`` of every case: the shown named ``label(*args)`` (``label`` a str: the
    call ``label.format(*args)``), then the hidden numbered."""
    named = label if callable(label) else \
        lambda *args: text("checks.case_call", call=label.format(*args))
    for k, args in enumerate([*shown, *hidden]):
        n = k - len(shown) + 1  # a hidden case's number
        with case(text("checks.case_hidden", n=n) if n > 0 else named(*args), hidden=n > 0):
            compare(*args)
