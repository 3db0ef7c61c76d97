"""``python -m labs.grade PATH ...``: the old command of the grader, kept for one course run.

The grader is its own package now, beside ``labs``: ``python -m grader PATH ...``
(see ``grader.cli``). This module only warns (DeprecationWarning) and hands its arguments
over; nothing in ``labs`` imports the grader otherwise. Must not: grow any grading code.
"""

import importlib
import sys
import warnings

from labs.messages import text

__all__ = ["main"]

NEW = "grader"


def main(argv: list[str] | None = None) -> int:
    """Warn that the command moved, then run ``python -m grader`` with the same arguments."""
    warnings.warn(text("runtime.moved_module", old="labs.grade", new=NEW,
                       removed_in=text("runtime.removed_in")), DeprecationWarning, stacklevel=2)
    return importlib.import_module(f"{NEW}.cli").main(argv)


if __name__ == "__main__":
    warnings.simplefilter("default", DeprecationWarning)  # shown on the command line too
    raise SystemExit(main(sys.argv[1:]))


def __getattr__(name: str):
    if name == "grade":  # the old module's other public name
        warnings.warn(text("runtime.moved_attribute", old="labs.grade.grade", new=f"{NEW}.cli.grade",
                           removed_in=text("runtime.removed_in")), DeprecationWarning, stacklevel=2)
        return importlib.import_module(f"{NEW}.cli").grade
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
