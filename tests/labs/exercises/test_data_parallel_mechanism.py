"""2.1's hidden cases separate the plausible wrong algorithms from the right one under every
secret (issue 37, item 4), not only under the one a test happens to use.

Each wrong formula of the catalog (tests/catalog/answers_2_1.py: buckets filled from the front
and flipped, ``>=`` for ``>``, an empty first bucket, an integer batch ratio, the warmup counted
from step 1, the partial batch left out, mixed precision without master weights, the course's
own functions) fails its check under every one of many secrets; the catalog grades each once,
both ways, with its exact points. The exercises on ranks keep the same structure under every
secret (two groups of two, a partition with no even split): tests/catalog/test_secrets.py runs
their reference answers on many secrets.
"""
from __future__ import annotations

import random

import pytest

from labs.exercises import data_parallel_checks as checks
from labs.exercises.checks import ExerciseFailed
from labs.exercises.secret import SECRET_ENV
from tests.catalog import answers_2_1
from tests.support.both_ways import base_namespace

SECRETS = [f"{random.Random(k).getrandbits(64):016x}" for k in range(40)]
FORMULAS = {  # exercise: (the check, the function the answer defines)
    "ex2_1_buckets": (checks.check_buckets, "make_buckets"),
    "ex2_1_model_state_bytes": (checks.check_model_state_bytes, "model_state_bytes"),
    "ex2_1_warmup_lr": (checks.check_warmup_lr, "warmup_lr"),
    "ex2_1_hours_per_epoch": (checks.check_hours_per_epoch, "hours_per_epoch"),
}


def _defined(answer):
    namespace = dict(base_namespace("2.1_data_parallel.ipynb"))
    exec(compile(answer.source, "<answer>", "exec", dont_inherit=True), namespace)
    check, name = FORMULAS[answer.exercise]
    return check, namespace[name]


@pytest.mark.parametrize("answer", [a for a in answers_2_1.WRONG if a.exercise in FORMULAS],
                         ids=str)
def test_a_wrong_formula_fails_under_every_secret(answer, monkeypatch, capsys):
    check, student = _defined(answer)
    for secret in SECRETS:
        monkeypatch.setenv(SECRET_ENV, secret)
        with pytest.raises(ExerciseFailed):
            check(student)
    capsys.readouterr()


@pytest.mark.parametrize("answer", [a for a in answers_2_1.RIGHT if a.exercise in FORMULAS],
                         ids=str)
def test_a_right_formula_written_unusually_passes_under_every_secret(answer, monkeypatch,
                                                                      capsys):
    check, student = _defined(answer)
    for secret in SECRETS:
        monkeypatch.setenv(SECRET_ENV, secret)
        check(student)
    capsys.readouterr()
