"""``python -m grader PATH ...``: see :mod:`grader.cli`. Owns nothing else.

Must not: hold any logic of its own."""

from grader.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
