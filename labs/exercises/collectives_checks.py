"""Checks of the graded exercises of notebook 2.0 (process groups and collectives): each build
check runs the student's function on real ranks, compares what every rank ends with against the
sum of the ranks' inputs (in float64), and holds the mechanism's invariants over what they did::

    check_ring_all_reduce(my_ring_all_reduce)           # ex2_0_ring_all_reduce, 3 points
    check_all_reduce_from_rs_ag(all_reduce_from_rs_ag)  # ex2_0_rs_ag_all_reduce, 2 points
    check_ring_bytes(ring_bytes_sent_per_rank)          # ex2_0_ring_bytes, 1 point

Owns: 2.0's cases, rank bodies and mechanisms. Must not: import the grader or the planner
widget, print (the verdict is labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import torch
import torch.distributed as dist

from labs import collectives, numerics
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, Message, assert_close, case, compare_tensors, \
    graded, msg
from labs.exercises.invariants import count, hold, only, peers, uses, wire
from labs.exercises.ranks import CHECK_TIMEOUT, as_number, check_cases, run_on_ranks
from labs.exercises.secret import drawing, hidden_int, hidden_seed
from labs.exercises.trace import before_comm
from labs.messages import text

__all__ = ["check_ring_all_reduce", "check_all_reduce_from_rs_ag", "check_ring_bytes",
           "CHECK_TIMEOUT", "RING", "RS_AG"]

#: The domain of this module's hidden seeds and sizes (labs.exercises.secret).
TAG = "2.0"


@dataclass(frozen=True)
class Case:
    label: Message  # shown in the language of the moment
    world_size: int
    shape: tuple
    dtype: str = "float32"
    hidden: bool = False
    seed: int = 0  # the number the inputs' seed is derived from (the secret's, when hidden)
    values: str = "small integers"  # or "normal": random floats, summed in a different order
    dims: tuple = ()  # a hidden case's (low, high) per dimension: its shape, with a secret
    uneven: bool = False  # a hidden case's length not divisible by the world size

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return 8 if self.dtype in ("float64", "int64") else 4


# Shown in the notebook's markdown: small integer values, so a message reads easily.
ALL_REDUCE_CASES = (
    Case(msg("checks_2_0.case_ranks_length", n=1, world_size=4, length=8), 4, (8,)),
    Case(msg("checks_2_0.case_ranks_length", n=2, world_size=2, length=6), 2, (6,), seed=1),
    Case(msg("checks_2_0.case_hidden_uneven", n=1, world_size=3), 3, (10,), hidden=True, seed=2,
         dims=((4, 40),), uneven=True),
    Case(msg("checks_2_0.case_hidden_2d", n=2, world_size=4, dtype="float64"), 4, (3, 5),
         "float64", hidden=True, seed=3, dims=((2, 6), (2, 7))),
    Case(msg("checks_2_0.case_hidden_dtype", n=3, world_size=4, dtype="int64"), 4, (9,), "int64",
         hidden=True, seed=4, dims=((5, 40),)),
    Case(msg("checks_2_0.case_hidden_few", n=4, world_size=4), 4, (2,), hidden=True, seed=5,
         dims=((1, 3),)),  # fewer elements than the 4 ranks
    Case(msg("checks_2_0.case_hidden_long", n=5, world_size=3), 3, (1001,), hidden=True, seed=6,
         values="normal", dims=((500, 2000),)),
)


def all_reduce_cases() -> list[Case]:
    """ALL_REDUCE_CASES made concrete: a hidden case's shape (within its ``dims``) and every
    case's seed drawn from the instructor's secret when one is set (the label's promise kept)."""
    cases = []
    for c in ALL_REDUCE_CASES:
        shape = tuple(hidden_int(TAG, 2000 + 10 * c.seed + d, low, high, default)
                      for d, ((low, high), default) in enumerate(zip(c.dims, c.shape)))
        if shape and c.uneven and shape[0] % c.world_size == 0:
            shape = (shape[0] + 1,) + shape[1:]
        cases.append(replace(c, shape=shape or c.shape, seed=hidden_seed(TAG, 1000 + c.seed),
                             dims=()))
    return cases


#: A ring's bytes per rank: 2(N-1) chunks of an even split over the ranks, each of the
#: smallest (floor) to the largest (ceil) chunk's size.
RING_BYTES = wire(most=lambda c: 2 * (c.world_size - 1) * -(-c.numel // c.world_size) * c.itemsize,
                  least=lambda c: 2 * (c.world_size - 1) * (c.numel // c.world_size) * c.itemsize)
#: The ring: point-to-point only, with the two neighbours only; reduce-scatter then all-gather,
#: N-1 steps each, one chunk of about S/N per step: 2(N-1) sends, 2(N-1)/N·S bytes per rank;
#: 2(N-1) messages each way (fewer elements than ranks: empty chunks may be skipped).
RING = (only("send", "recv"),
        peers(lambda c, rank: {(rank - 1) % c.world_size, (rank + 1) % c.world_size}), RING_BYTES,
        *(count(op, lambda c: 2 * (c.world_size - 1) if c.numel >= c.world_size else None)
          for op in ("send", "recv")))
#: All-reduce = reduce-scatter + all-gather: both collectives and nothing else, and no more
#: bytes than the ring's (an all-gather of the whole tensor plus a local sum sends N/2 times more).
RS_AG = (only("reduce_scatter", "all_gather"), uses("reduce_scatter", "all_gather"), RING_BYTES)


# --- on the ranks --------------------------------------------------------------------------

def _inputs(c: Case):
    """One input tensor per rank, deterministic in the case's seed."""
    g = torch.Generator().manual_seed(c.seed)
    dtype, shape = getattr(torch, c.dtype), c.shape
    if c.values == "normal":
        return [torch.randn(shape, generator=g, dtype=dtype) for _ in range(c.world_size)]
    return [torch.randint(-9, 10, shape, generator=g).to(dtype) for _ in range(c.world_size)]


class _SameDtype:
    """Before a send or receive: its tensors have the input's dtype (gloo aborts on another)."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, op, args):
        tensors = args[0] if op in ("send", "recv") and args else []
        for t in tensors if isinstance(tensors, (list, tuple)) else [tensors]:
            if isinstance(t, torch.Tensor) and t.dtype != self.dtype:
                raise ExerciseFailed(text("checks_2_0.p2p_dtype", kind=op, got=t.dtype,
                                          dtype=self.dtype))


def _sum_body(student_fn, c: Case, run):
    """Rank body: the student's function on this rank's input; the input after it, and what it
    returned (None: the input itself)."""
    tensor = _inputs(c)[dist.get_rank()].clone()
    with before_comm(_SameDtype(tensor.dtype)):
        out = run(student_fn, tensor)
    return {"tensor": tensor, "out": None if out is tensor else out}


def _count_ring_bytes(numel: int, dtype: str) -> int:
    """Rank body: bytes this rank sends in the lab's ring all-reduce of ``numel`` elements."""
    counter = collectives.ByteCounter()
    collectives.ring_all_reduce(torch.ones(numel, dtype=getattr(torch, dtype)), counter=counter)
    return counter.sent


@functools.lru_cache(maxsize=None)
def _measured_ring_bytes(n: int, numel: int, dtype: str) -> tuple:
    """Each rank's bytes sent in the lab's ring all-reduce on ``n`` ranks, launched once per
    process (the count is exact and deterministic: a second check needs no second launch)."""
    return tuple(run_on_ranks(_count_ring_bytes, n, (numel, dtype)))


# --- in the notebook's process -------------------------------------------------------------

def _judge_sums(mechanism, c: Case, values, traces) -> None:
    """Every rank's input tensor ends as the sum of the ranks' inputs (in place); ``mechanism``."""
    inputs = _inputs(c)
    total = torch.stack([x.double() for x in inputs]).sum(0).to(inputs[0].dtype)
    what = text("checks_2_0.what_result")
    for rank, value in enumerate(values):
        try:  # in place: the input tensor itself ends as the sum
            compare_tensors(total, value["tensor"], what=what, rank=rank,
                            factors={"N": c.world_size})
        except ExerciseFailed:
            if value["out"] is None:
                raise
            compare_tensors(total, value["out"], what=what, rank=rank)  # what came back
            raise ExerciseFailed(text("checks_2_0.not_in_place", rank=rank)) from None
    hold(mechanism, c, traces)


#: The exercises on ranks: ``id -> (cases, rank body, judge)`` (tests/catalog/test_secrets.py).
RANK_EXERCISES = {
    "ex2_0_ring_all_reduce": (all_reduce_cases, _sum_body, functools.partial(_judge_sums, RING)),
    "ex2_0_rs_ag_all_reduce": (all_reduce_cases, _sum_body, functools.partial(_judge_sums, RS_AG)),
}


@graded("ex2_0_ring_all_reduce")
def check_ring_all_reduce(student_fn):
    """``student_fn(tensor)`` sums ``tensor`` over the ranks in place with send/recv only."""
    check_cases("ex2_0_ring_all_reduce", student_fn, *RANK_EXERCISES["ex2_0_ring_all_reduce"])


@graded("ex2_0_rs_ag_all_reduce")
def check_all_reduce_from_rs_ag(student_fn):
    """``student_fn(tensor)`` sums ``tensor`` over the ranks with reduce-scatter + all-gather."""
    check_cases("ex2_0_rs_ag_all_reduce", student_fn, *RANK_EXERCISES["ex2_0_rs_ag_all_reduce"])


def _hidden_bytes() -> list:
    """(size in bytes, world size) from the secret, each of its kind: a few ranks; more ranks and
    a larger S; one rank; very many ranks and an S no power of two; 2(N-1)S/N a whole number."""
    draw = drawing(TAG, 3000)
    few, more, many = draw(0, 2, 16, 3), draw(2, 4, 64, 8), 2 * draw(5, 128, 2048, 512)
    return [(few * draw(1, 2**10, 2**22, 2**20), few), (more * draw(3, 2**24, 2**28, 2**27), more),
            (draw(4, 1, 2**20, 4096), 1),
            (many // 2 * draw(6, 10**5, 10**7, 1953125), many)]  # S: a multiple of N/2


@graded("ex2_0_ring_bytes")
def check_ring_bytes(student_fn):
    """``student_fn(size_bytes, world_size)`` = bytes each rank sends in a ring all-reduce."""
    returned = text("checks.what_returned")
    each_case([(2**20, 4), (1000, 2)], _hidden_bytes(),
              lambda size, n: text("checks_2_0.case_bytes", size=size, n=n),
              lambda size, n: assert_close(
                  float(collectives.ring_all_reduce_bytes_per_rank(size, n)),
                  as_number(student_fn(size, n), returned), what=returned, dtype="float64",
                  factors={"N": n, "2": 2}))
    for n, numel, dtype in ((3, 3 * 1024, "float32"), (4, 4 * 1000, "float64")):  # measured
        with case(text("checks_2_0.case_measured", n=n)):
            sent = _measured_ring_bytes(n, numel, dtype)
            size = numel * (4 if dtype == "float32" else 8)
            got = as_number(student_fn(size, n), returned)
            for rank, measured in enumerate(sent):
                if not numerics.is_close(got, float(measured), dtype="float64"):
                    raise ExerciseFailed(text("checks_2_0.measured_mismatch", rank=rank,
                                              measured=measured, size=size, n=n, got=got))
