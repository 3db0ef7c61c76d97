"""Every answer of the catalog graded both ways, with the points it must get (issue 37).

A wrong answer gets 0 points, or -- where the catalog says no check can stop it -- is
flagged for the instructor's review; a right answer in an unusual style keeps full marks. The
notebook's verdict and the grader's (the record of the same run, replayed by the judge) are
the same line, the same points.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tests.catalog as package
from grader import copying
from labs.exercises import catalog
from tests.support.both_ways import base_namespace, grade

pytestmark = pytest.mark.slow

ANSWERS = [answer for info in pkgutil.iter_modules(package.__path__)
           if info.name.startswith("answers_")
           for module in [importlib.import_module(f"tests.catalog.{info.name}")]
           for answer in (*module.WRONG, *module.RIGHT)]


@pytest.mark.parametrize("answer", ANSWERS, ids=str)
def test_graded_the_same_both_ways_with_its_points(answer):
    verdicts = grade(answer)
    assert verdicts.grader_message.splitlines()[0] == verdicts.notebook_line
    assert verdicts.grader_message in verdicts.notebook_printed
    assert verdicts.notebook_points == verdicts.grader_points
    if answer.flagged:
        from grader.mutants import notebook_cells

        setup, solutions, _ = notebook_cells(catalog.EXERCISES[answer.exercise].notebook)
        found = copying.flags(answer.exercise, [answer.source], [solutions[answer.exercise]],
                              context=setup)
        assert found["references"] or found["solution"], found
    else:
        assert verdicts.notebook_points == answer.expected, verdicts.notebook_line
