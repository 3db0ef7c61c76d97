"""``python -m grader PATH ...``: see :mod:`grader.cli`. Owns nothing else.

Must not: hold any logic of its own."""

from grader.imports import leave_out_unused_format_checkers

leave_out_unused_format_checkers()  # before grader.cli imports nbformat

from grader.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
