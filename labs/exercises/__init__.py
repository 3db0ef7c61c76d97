"""Graded exercises: the checks' framework, the student-notebook generator and the grader.

- :mod:`labs.exercises.checks` -- what a check function uses (verdict line, Chinese messages).
- :mod:`labs.exercises.generate` -- ``python -m labs.exercises.generate``: solutions/ -> notebooks/.
- :mod:`labs.exercises.grade` -- ``python -m labs.grade PATH``: score submissions.

Only the checks are imported here, so a notebook's check cell stays cheap to import.
"""

from .checks import (
    ExerciseFailed,
    ExerciseIncomplete,
    assert_close,
    assert_equal,
    case,
    compare_tensors,
    graded,
    run_check,
)

__all__ = [
    "ExerciseFailed",
    "ExerciseIncomplete",
    "assert_close",
    "assert_equal",
    "case",
    "compare_tensors",
    "graded",
    "run_check",
]
