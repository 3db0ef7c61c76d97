"""Graded exercises: the checks' framework and the student-notebook generator.

- :mod:`labs.exercises.checks` -- what a check function uses (verdict line, comparisons, case
  labels; every message in the notebook's language, from :mod:`labs.messages`);
  :mod:`labs.exercises.catalog` -- lookups over the exercises, each declared once in
  labs/exercises/text.py (id, notebook, 练习 n, points, difficulty, titles, copy-flag
  names); :mod:`labs.exercises.feedback` -- the student's own line
  first when their code raised; :mod:`labs.exercises.ranks` -- a check's launches on ranks
  (it registers the checks' modules with the forkserver's preloads);
  :mod:`labs.exercises.secret` -- the hidden cases drawn from the instructor's secret;
  ``*_checks`` -- each notebook's checks.
- :mod:`labs.exercises.hooks` -- the one interceptor slot a check consults: empty in a
  notebook; the grader (the separate package ``grader``, ``python -m grader PATH``) fills it
  with its recorder in the student's kernel and with its judge in its own process. Nothing here
  imports the grader.
- :mod:`labs.exercises.generate` -- ``python -m labs.exercises.generate``: solutions/ -> notebooks/;
  :mod:`labs.exercises.readme` -- ``python -m labs.exercises.readme --write``: the README's
  exercise table, from the declaration.

Only the checks are imported here, so a notebook's check cell stays cheap to import.

A failed check shows the student's own line and the exception, not the checks' or torch's
frames; ``labs.exercises.last_traceback()`` prints the full traceback of the last failed check
(also kept as the exception's ``full_traceback``), and ``LABS_FULL_TRACEBACK=1`` shows it in
every failed check's error output.

Must not: hold logic of its own, import the grader, or import the per-notebook checks, the generator
or anything heavy at import time.
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
