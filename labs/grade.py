"""``python -m labs.grade PATH [--out DIR] [--timeout SECONDS] [--solutions DIR]``.

Scores submitted notebooks; see :mod:`labs.exercises.grade`.
"""

from labs.exercises.grade import grade, main

__all__ = ["grade", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
