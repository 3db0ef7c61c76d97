"""Every reference answer gets full marks under many random secrets (issue 37, done-when 1).

The hidden cases of a check come from the instructor's secret; a check that refuses the
course's own answer under some secret would cost a whole class its points. Outside the grader
(the check functions themselves): a function exercise's check runs once per secret; an
exercise on ranks (a checks module's ``RANK_EXERCISES``: cases, rank body, judge) gets the
cases of every secret at once -- one launch per world size -- and each case is judged.

``make test-secrets`` (CI) runs 1,000 secrets (``LABS_TEST_SECRETS``);
``LABS_TEST_SECRETS_SEED`` replays a run (every failure names it). A function exercise's check
runs under every secret, its reference answer computed once per distinct call. On ranks a case
costs a few hundredths of a second: every case of the first ``LABS_TEST_SECRETS_FULL`` (10)
secrets runs, and of the others each case that brings a field no earlier case had -- a field
read as the checks can trip on it: numbers up to 4 (ranks, groups, a size of 1) as they are,
larger ones only by which other numbers of the case they equal (two tensors of the same
shape), seeds and labels not at all.
"""

from __future__ import annotations

import ast
import contextlib
import copy
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

# secrets: its own target (make test-secrets), not in make test; numerics: the checks compare
# with tolerances
pytestmark = [pytest.mark.secrets, pytest.mark.slow, pytest.mark.numerics]

COUNT = int(os.environ.get("LABS_TEST_SECRETS", "1000"))
FULL = int(os.environ.get("LABS_TEST_SECRETS_FULL", "10"))
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


def _fields(c) -> set:
    """A case's fields as a check can trip on them: numbers up to 4 as they are, larger numbers
    only by which of the case's numbers they equal (in order of appearance); no seed, no label."""
    seen: dict = {}

    def token(v):
        if isinstance(v, (list, tuple)):
            return tuple(token(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted((k, token(x)) for k, x in v.items()))
        if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) > 4:
            return ("=", seen.setdefault(v, len(seen)))
        return repr(v)

    if not dataclasses.is_dataclass(c):
        return {token(c)}
    return {(f.name, token(getattr(c, f.name))) for f in dataclasses.fields(c)
            if "seed" not in f.name and f.name != "label"}


def _memo(fn):
    """``fn`` computed once per distinct arguments (by their repr) across the secrets: the
    reference answer is deterministic, and the same hidden case recurs under many secrets."""
    seen: dict = {}

    def call(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        if key not in seen:
            seen[key] = fn(*args, **kwargs)
        return copy.deepcopy(seen[key])

    return call


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
                    if k < FULL or not _fields(c) <= seen:
                        seen |= _fields(c)
                        cases.append(c)
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                check_cases(exercise_id, student, cases, body, judge)
            except Exception as exc:  # noqa: BLE001 - the message names the case
                raise AssertionError(f"LABS_TEST_SECRETS_SEED={SEED}: {exc}") from exc
        return
    check = getattr(module, check_name)
    answer = [_memo(a) for a in answer]  # the reference, once per distinct call (a planner search)
    for secret in SECRETS:
        printed = io.StringIO()
        with _secret(secret), contextlib.redirect_stdout(printed):
            try:
                check(*answer)
            except Exception:  # noqa: BLE001 - said below
                raise AssertionError(f"secret {secret!r} (LABS_TEST_SECRETS_SEED={SEED}): "
                                     f"{printed.getvalue()}") from None
