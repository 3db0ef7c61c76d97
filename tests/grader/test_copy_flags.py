"""The review flags mean something (issue 37, item 3).

- A course function reached through a package's re-export (``pp.gpipe_order`` for the declared
  ``labs.pipeline.schedules.gpipe_order``) is flagged like the declared name.
- An honest short answer equal to the reference (what the third hint walks through) is not
  flagged as "the solution cell"; a substantial solution copied still is.
- A cell the course provides, left as provided (an import cell), is not the student's: it raises
  no tampering flag, and the names it imports are not the student's references.
"""

from __future__ import annotations

import copy

from nbformat.v4 import new_code_cell, new_notebook

from grader import copying
from grader import verdicts
from grader.mutants import notebook_cells

SETUP_2_3 = "import torch\nfrom labs import pipeline as pp"


def test_a_re_exported_course_function_is_flagged_as_declared():
    code = "def my_gpipe_order(p, m, s):\n    return pp.gpipe_order(p, m, s)\n"
    found = copying.references_in(code, ("labs.pipeline.schedules.gpipe_order",),
                                  context=SETUP_2_3)
    assert found == ["labs.pipeline.schedules.gpipe_order"]
    other = "def my_gpipe_order(p, m, s):\n    return pp.one_f_one_b_order(p, m, s)\n"
    assert copying.references_in(other, ("labs.pipeline.schedules.gpipe_order",),
                                 context=SETUP_2_3) == []


def test_an_honest_short_answer_is_not_the_solution_cell_but_a_long_copy_is():
    _, solutions, _ = notebook_cells("2.3_pipeline_parallel.ipynb")
    short = solutions["ex2_3_bubble"]
    renamed = "def my_bubble_fraction(stages, micro):\n    return (stages - 1) / (micro + stages - 1)\n"
    assert not copying.matches_solution(renamed, short)
    long = solutions["ex2_3_balanced_partition"]
    assert copying._solution_size(long) >= copying.MIN_SOLUTION_NODES
    assert copying.matches_solution(long.replace("best", "table"), long)


def test_a_provided_cell_left_as_provided_is_not_the_students():
    setup = new_code_cell("import labs\nfrom labs import planner as pl")
    provided = new_code_cell("from labs.exercises import summary_checks\nprint(summary_checks.REASONS)")
    answer = new_code_cell("def f(x):\n    return pl.plan(x)\n")
    answer.metadata["nbgrader"] = {"grade_id": "ex_t_solution", "solution": True, "grade": False}
    check = new_code_cell("check(f)")
    check.metadata["nbgrader"] = {"grade_id": "ex_t", "solution": False, "grade": True,
                                  "points": 1}
    source = new_notebook(cells=[setup, provided, answer, check])
    exercise = {"cells": [1, 2, 3], "check": 3}
    assert verdicts._flags("ex_t", source, exercise, [0], source) == []
    changed = copy.deepcopy(source)
    changed.cells[1] = new_code_cell("import labs.exercises.checks as c\nc.run_check = print")
    flags = verdicts._flags("ex_t", changed, exercise, [0], source)
    assert flags and "run_check" in flags[0]
