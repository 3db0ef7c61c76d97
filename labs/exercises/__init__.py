"""Graded exercises: the checks' framework, the student-notebook generator and the grader.

- :mod:`labs.exercises.checks` -- what a check function uses (verdict line, comparisons, case
  labels; every message in the notebook's language, from :mod:`labs.messages`);
  :mod:`labs.exercises.catalog` -- exercise ids (the graders' ``grade_id``) to 练习 n of a
  notebook, as students read them; :mod:`labs.exercises.feedback` -- the student's own line
  first when their code raised; :mod:`labs.exercises.ranks` -- a check's launches on ranks.
- :mod:`labs.exercises.generate` -- ``python -m labs.exercises.generate``: solutions/ -> notebooks/.
- :mod:`labs.exercises.grade` -- ``python -m labs.grade PATH``: score submissions.

Only the checks are imported here, so a notebook's check cell stays cheap to import.

A failed check shows the student's own line and the exception, not the checks' or torch's
frames; ``labs.exercises.last_traceback()`` prints the full traceback of the last failed check
(also kept as the exception's ``full_traceback``), and ``LABS_FULL_TRACEBACK=1`` shows it in
every failed check's error output.
"""

from .checks import (
    ExerciseFailed,
    ExerciseIncomplete,
    Message,
    assert_close,
    assert_equal,
    case,
    compare_tensors,
    graded,
    last_traceback,
    msg,
    run_check,
)

__all__ = [
    "ExerciseFailed",
    "ExerciseIncomplete",
    "Message",
    "assert_close",
    "assert_equal",
    "case",
    "compare_tensors",
    "graded",
    "last_traceback",
    "msg",
    "run_check",
]
