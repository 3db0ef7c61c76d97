"""What the grader's own processes leave out when they import nbformat and nbclient.

jsonschema, which nbformat imports, builds about 35 Lark parsers at import when
``rfc3987_syntax`` is installed (jupyter-events pulls it in through ``jsonschema[format-nongpl]``),
for the ``iri`` and ``iri-reference`` formats that no notebook schema uses: 1.3 s of CPU in every
process that reads a notebook (python-jsonschema/jsonschema#1428), and the grader starts one
worker per submission. With ``rfc3987_syntax`` left out, jsonschema skips those two formats and
validates notebooks exactly as before.

Owns: :func:`leave_out_unused_format_checkers`. Must not: run in the student's kernel (it changes
``sys.modules``), or import anything but the standard library.
"""
from __future__ import annotations

import sys

__all__ = ["leave_out_unused_format_checkers"]


def leave_out_unused_format_checkers() -> None:
    """Make ``import rfc3987_syntax`` fail in this process, unless it is imported already; call
    it before anything imports jsonschema (nbformat, nbclient)."""
    sys.modules.setdefault("rfc3987_syntax", None)
