"""The public names of the former ``labs.exercises.grade``, gathered in one module for scripts
that used them (the old path maps here, with a DeprecationWarning: ``labs._moved``).

Owns nothing: each name is defined by :mod:`grader.cli`, :mod:`grader.sources`,
:mod:`grader.submission` or :mod:`grader.results`. Must not: hold any code of its own.
"""

from grader.cli import default_jobs, default_solutions, grade, main
from grader.results import (ExerciseResult, GraderError, SubmissionResult, summary_table,
                            write_reports)
from grader.sources import find_submissions, load_sources, match_source, plan, prepare, sanitize
from grader.submission import DEFAULT_CELL_TIMEOUT, DEFAULT_TIMEOUT, grade_submission

__all__ = ["ExerciseResult", "SubmissionResult", "GraderError", "find_submissions",
           "load_sources", "match_source", "sanitize", "prepare", "plan", "grade_submission",
           "summary_table", "write_reports", "default_solutions", "default_jobs", "grade", "main",
           "DEFAULT_TIMEOUT", "DEFAULT_CELL_TIMEOUT"]
