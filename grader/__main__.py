"""``python -m grader PATH ...``: see :mod:`grader.cli`. Owns nothing else."""

from grader.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
