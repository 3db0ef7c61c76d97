"""2.2's checks (issue 37): hidden cases that keep the prose's shapes and tell the plausible
wrong answers from the right one under every secret, a case's parts cut out of each rank's
trace, and the feedback a wrong mechanism gets -- the catalog's answers (tests/catalog/
answers_2_2.py, graded there) named by what they are, their messages asserted here by key.
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
import torch

from labs.exercises import tensor_parallel_checks as tp_checks
from labs.exercises.secret import SECRET_ENV
from labs.exercises.tensor_parallel_common import parts
from labs.exercises.trace import Trace
from labs.tensor_parallel.layers import shard
from tests.catalog import answers_2_2
from labs.messages import text
from tests.support import verdicts
from tests.support.both_ways import grade
from tests.support.messages import found_in

pytestmark = pytest.mark.numerics

SECRETS = [f"{random.Random(k).getrandbits(64):016x}" for k in range(200)]


@pytest.fixture
def each_secret(monkeypatch):
    """Yields once per secret, the secret set (the hidden cases are drawn anew each time)."""
    def secrets():
        for secret in SECRETS:
            monkeypatch.setenv(SECRET_ENV, secret)
            yield secret
    return secrets


def _right_qkv(weight, bias, rank, tp):  # by the prose's (3C, C): a view on weight.shape[1]
    c = weight.shape[1]
    per = c // tp
    return (weight.view(3, c, c)[:, rank * per:(rank + 1) * per].reshape(3 * per, c),
            bias.view(3, c)[:, rank * per:(rank + 1) * per].reshape(3 * per))


WRONG_QKV = {"contiguous": lambda w, rank, tp: w.chunk(tp)[rank],
             "strided": lambda w, rank, tp: w[rank::tp],
             "mirror rank": lambda w, rank, tp: shard(w, 0, tp - 1 - rank, tp, stride=3),
             "rank 0": lambda w, rank, tp: shard(w, 0, 0, tp, stride=3)}


def test_qkv_hidden_cases_keep_3c_by_c_and_separate_the_wrong_picks(each_secret):
    for _ in each_secret():
        hidden = [case for case in tp_checks._qkv_cases() if case[3]]
        told_apart = set()
        for cols, rank, tp, _ in hidden:
            assert cols % tp == 0 and 0 <= rank < tp
            w = torch.arange(3 * cols * cols, dtype=torch.float32).view(3 * cols, cols)
            right = shard(w, 0, rank, tp, stride=3)
            b = torch.arange(3 * cols, dtype=torch.float32)
            assert all(torch.equal(x, y) for x, y in zip(
                _right_qkv(w, b, rank, tp), (right, shard(b, 0, rank, tp, stride=3))))
            told_apart |= {name for name, pick in WRONG_QKV.items()
                           if pick(w, rank, tp).shape != right.shape
                           or not torch.equal(pick(w, rank, tp), right)}
        assert told_apart == set(WRONG_QKV)


def test_bytes_hidden_cases_are_whole_and_refuse_an_early_floor(each_secret):
    for _ in each_secret():
        floored_early = False
        for b, s, h, t, e, _ in tp_checks._bytes_cases():
            exact = Fraction(8 * (t - 1), t) * b * s * h * e
            assert exact.denominator == 1, (b, s, h, t, e)
            floored_early |= 8 * (t - 1) // t * b * s * h * e != exact
        assert floored_early


def test_tp_cases_keep_their_kind_and_shapes(each_secret):
    for _ in each_secret():
        for c in tp_checks.tp_cases("mlp"):
            tokens, n_in, n_out = c.sizes
            assert tokens % 2 == 1 and n_in % c.tp == 0 and n_out % c.tp == 0, c
        assert [c.world_size // c.tp for c in tp_checks.tp_cases()] == [1, 1, 2]


def test_parts_cut_each_rank_trace_at_its_marks():
    comm = (2, "all_reduce", (0, 1), None, 16, (4,), "sum", True, True)
    data = {"rank": 0, "comms": [comm, (4,) + comm[1:]], "products": [],
            "marks": [(1, "part", "f"), (3, "part", "g")], "warnings": []}
    cut = parts([data, data])
    assert [len(t.comms) for t in cut["f"]] == [1, 1] and cut["g"][1].comms[0].seq == 4
    assert isinstance(cut["g"][0], Trace) and cut["g"][0].rank == 0


def _answer(what: str):
    (answer,) = [a for a in (*answers_2_2.WRONG, *answers_2_2.RIGHT) if a.what == what]
    return answer


NAMED = [  # (the catalog's answer, the message its verdict gives and the fields it must have)
    ("the full output on every rank, sliced", "invariants.sharded", dict(rank=0)),
    ("a reduce-scatter made of an all_gather and a local sum", "invariants.wire_most",
     dict(rank=0)),
    ("g without its group", "invariants.group", dict(rank=0, got=[0, 1, 2, 3], expected=[0, 1])),
    ("f's backward sums an all_gather (more bytes than the all-reduce)", "invariants.only",
     dict(rank=0, op="all_gather", allowed="all_reduce")),
]


@pytest.mark.slow
@pytest.mark.parametrize("what, key, fields", NAMED, ids=[what for what, _, _ in NAMED])
def test_a_wrong_mechanism_is_named(what, key, fields):
    found_in(grade(_answer(what)).notebook_line, key, **fields)


@pytest.mark.slow
def test_the_all_gathers_backward_without_the_sum_is_named_with_its_hint():
    printed = grade(_answer("the all-gather's backward keeps its part without the sum")
                    ).notebook_printed
    assert text("checks_2_2.what_gather_backward") in printed and verdicts.hint(7, 1) in printed


@pytest.mark.slow
def test_the_deprecated_names_warn_once_for_all_ranks_and_cases():
    graded = grade(_answer("functional collectives and the deprecated names"))
    assert graded.notebook_points == 4
    assert graded.notebook_printed.count("reduce_scatter_tensor` is deprecated") == 1
