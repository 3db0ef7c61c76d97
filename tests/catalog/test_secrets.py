"""Every reference answer gets full marks under many random secrets (issue 37, done-when 1).

The hidden cases of a check come from the instructor's secret; a check that refuses the
course's own answer under some secret would cost a whole class its points. Outside the grader
(the check functions themselves): a function exercise's check runs once per secret; an
exercise on ranks (a checks module's ``RANK_EXERCISES``: cases, rank body, judge) gets the
cases of every secret at once -- one launch per world size -- and each case is judged.

``make test`` runs 20 secrets; ``make test-secrets`` (CI) runs 1,000
(``LABS_TEST_SECRETS``); ``LABS_TEST_SECRETS_SEED`` replays a run (every failure names it).
On ranks, a case costs a tenth of a second: of 1,000 secrets, every case of the first
``LABS_TEST_SECRETS_FULL`` (50) runs, and of the others each case whose structure (its fields
but its seeds: sizes, shapes, ranks, dtypes) no earlier secret gave -- where a check's logic can
refuse a right answer (two tensors of the same shape, a size that divides) -- once.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import io
import os
import random

import pytest

from grader.mutants import notebook_cells
from labs.exercises import catalog
from labs.exercises.ranks import check_cases
from labs.exercises.secret import SECRET_ENV
from tests.support.both_ways import base_namespace

# slow: every exercise's check under many secrets; numerics: the checks compare with tolerances
pytestmark = [pytest.mark.slow, pytest.mark.numerics]

COUNT = int(os.environ.get("LABS_TEST_SECRETS", "20"))
FULL = int(os.environ.get("LABS_TEST_SECRETS_FULL", "50"))
SEED = int(os.environ.get("LABS_TEST_SECRETS_SEED", random.randrange(2**31)))
SECRETS = [f"{random.Random(SEED + k).getrandbits(64):016x}" for k in range(COUNT)]


def _check_call(exercise_id: str) -> tuple[str, str, list[str]]:
    """(checks module, check function, the names of the answer's objects it is given)."""
    notebook = catalog.EXERCISES[exercise_id].notebook
    _, _, checks = notebook_cells(notebook)
    tree = ast.parse(checks[exercise_id])
    module = next(n.module for n in tree.body if isinstance(n, ast.ImportFrom))
    call = next(n.value for n in tree.body if isinstance(n, ast.Expr)
                and isinstance(n.value, ast.Call))
    return module, call.func.id, [a.id for a in call.args]


def _structure(c) -> str:
    """A case's fields but its label and its seeds (the values it draws)."""
    if dataclasses.is_dataclass(c):
        return repr(sorted((f.name, repr(getattr(c, f.name))) for f in dataclasses.fields(c)
                           if "seed" not in f.name and f.name != "label"))
    return repr(c)


@contextlib.contextmanager
def _secret(value: str):
    saved = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = saved


@pytest.mark.parametrize("exercise_id", list(catalog.EXERCISES))
def test_the_reference_answer_gets_full_marks_under_every_secret(exercise_id):
    module_name, check_name, names = _check_call(exercise_id)
    module = importlib.import_module(module_name)
    namespace = base_namespace(catalog.EXERCISES[exercise_id].notebook)
    answer = [namespace[n] for n in names]  # a check given several objects passes their tuple
    student = answer[0] if len(answer) == 1 else tuple(answer)
    on_ranks = getattr(module, "RANK_EXERCISES", {}).get(exercise_id)
    if on_ranks is not None:
        cases_of, body, judge = on_ranks
        cases, seen = [], set()
        for k, secret in enumerate(SECRETS):
            with _secret(secret):
                for c in cases_of():
                    if k < FULL or _structure(c) not in seen:
                        seen.add(_structure(c))
                        cases.append(c)
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                check_cases(exercise_id, student, cases, body, judge)
            except Exception as exc:  # noqa: BLE001 - the message names the case
                raise AssertionError(f"LABS_TEST_SECRETS_SEED={SEED}: {exc}") from exc
        return
    check = getattr(module, check_name)
    for secret in SECRETS:
        printed = io.StringIO()
        with _secret(secret), contextlib.redirect_stdout(printed):
            try:
                check(*answer)
            except Exception:  # noqa: BLE001 - said below
                raise AssertionError(f"secret {secret!r} (LABS_TEST_SECRETS_SEED={SEED}): "
                                     f"{printed.getvalue()}") from None
