"""Checks of the graded exercises of notebook 2.0 (process groups and collectives).

Each check runs the student's function on real ranks (``labs.launch``, gloo) and compares what
every rank ends with against the reference: the sum over the ranks' inputs, computed here in
float64. A short timeout turns a deadlocked ring into a clear message instead of a frozen
notebook. Student code is reached through the function passed to the check, so the checks do
not care how the notebook is laid out::

    check_ring_all_reduce(my_ring_all_reduce)           # ex2_0_ring_all_reduce, 3 points
    check_all_reduce_from_rs_ag(all_reduce_from_rs_ag)  # ex2_0_rs_ag_all_reduce, 2 points
    check_ring_bytes(ring_bytes_sent_per_rank)          # ex2_0_ring_bytes, 1 point

Owns: 2.0's checks and their hidden cases. Must not: import the grader or the planner widget, print
(the verdict is labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from labs import collectives, numerics
from labs.exercises.checks import (ExerciseFailed, Message, assert_close, case, compare_tensors,
                                   graded, msg)
from labs.exercises import routes, rules
from labs.exercises.ranks import CHECK_TIMEOUT, as_number, run_on_ranks
from labs.exercises.routes import Traffic
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_ring_all_reduce", "check_all_reduce_from_rs_ag", "check_ring_bytes",
           "CHECK_TIMEOUT"]

#: The domain of this module's hidden seeds and sizes (labs.exercises.secret).
TAG = "2.0"

#: Seconds one launch of the student's code may take; a correct solution needs well under 1 s.

# Collectives of torch.distributed (and the lab's own) that an exercise may not call.
COLLECTIVES = routes.COLLECTIVES
LAB_COLLECTIVES = ("ring_all_reduce", "ring_reduce_scatter", "ring_all_gather",
                   "naive_all_reduce")
REDUCE_SCATTERS = ("reduce_scatter_single", "reduce_scatter_tensor", "reduce_scatter")
ALL_GATHERS = ("all_gather_single", "all_gather_into_tensor", "all_gather")


@dataclass(frozen=True)
class Case:
    label: Message  # shown in the language of the moment
    world_size: int
    shape: tuple
    dtype: str = "float32"
    hidden: bool = False
    seed: int = 0
    values: str = "small integers"  # or "normal": random floats, summed in a different order
    # A hidden case's (low, high) per dimension: with the instructor's secret its shape is drawn
    # there (``shape`` otherwise); ``uneven``: a length not divisible by the world size.
    dims: tuple = ()
    uneven: bool = False


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


# --- on the ranks --------------------------------------------------------------------------

def _shape(c: Case) -> tuple:
    """The case's shape: ``c.shape``, or for a hidden case with the instructor's secret one drawn
    from it within ``c.dims`` (the same kind of shape; the label's promise kept)."""
    shape = tuple(hidden_int(TAG, 2000 + 10 * c.seed + d, low, high, default)
                  for d, ((low, high), default) in enumerate(zip(c.dims, c.shape)))
    if not shape:
        return c.shape
    if c.uneven and shape[0] % c.world_size == 0:
        shape = (shape[0] + 1,) + shape[1:]
    return shape


def _inputs(c: Case):
    """One input tensor per rank, deterministic in the case's seed (from the instructor's secret
    when one is set)."""
    import torch

    g = torch.Generator().manual_seed(hidden_seed(TAG, 1000 + c.seed))
    dtype, shape = getattr(torch, c.dtype), _shape(c)
    if c.values == "normal":
        return [torch.randn(shape, generator=g, dtype=dtype) for _ in range(c.world_size)]
    return [torch.randint(-9, 10, shape, generator=g).to(dtype) for _ in range(c.world_size)]


@contextlib.contextmanager
def _guarded(forbidden: tuple, recorded: tuple, calls: list, why: str, traffic: Traffic,
             dtype=None):
    """Inside a rank: refuse every route to a collective in ``forbidden`` (labs.exercises.routes:
    dist, distributed_c10d, ProcessGroup methods, torch.ops, the functional collectives) and the
    lab's own; record calls of ``recorded`` ones and every send/receive in ``traffic``."""
    import torch.distributed as dist

    saved = []

    def refuse(shown):
        raise ExerciseFailed(text("checks_2_0.forbidden_call", shown=shown, why=why))

    def forbid(module, name, shown):
        def refused(*args, **kwargs):
            refuse(shown)
        saved.append((module, name, getattr(module, name)))
        setattr(module, name, refused)

    def record(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls.append(name)
            return original(*args, **kwargs)
        saved.append((module, name, original))
        setattr(module, name, wrapper)

    for name in LAB_COLLECTIVES:
        forbid(collectives, name, f"labs.collectives.{name}")
    allowed = tuple(name for name in routes.COLLECTIVES if name not in forbidden)

    def same_dtype(kind, tensors):  # gloo aborts on a buffer of another dtype: say it first
        for t in tensors:
            if dtype is not None and t.dtype != dtype:
                raise ExerciseFailed(text("checks_2_0.p2p_dtype", kind=kind, got=t.dtype,
                                          dtype=dtype))
    # the lab's own collectives, however reached (a reloaded labs.collectives too)
    with routes.guarded(refuse, allowed=allowed, traffic=traffic, dtype_check=same_dtype), \
            routes.borrowed(("labs.collectives",)) as seen:
        for name in recorded:
            if hasattr(dist, name):
                record(dist, name)
        try:
            yield
            if seen:
                refuse(seen[0])
        finally:
            for module, name, original in reversed(saved):
                setattr(module, name, original)


def _run_student(fn, inputs, forbidden, recorded, why):
    """Rank body: call ``fn`` on this rank's input; return (the input tensor after the call,
    what ``fn`` returned unless None or that tensor itself, names of recorded calls, (sent,
    received) as (peer, bytes) pairs)."""
    import torch.distributed as dist

    tensor = inputs[dist.get_rank()].clone()
    calls: list = []
    traffic = Traffic()
    with _guarded(forbidden, recorded, calls, why, traffic, dtype=tensor.dtype):
        out = fn(tensor)
    if out is tensor:  # returned the input itself: sent once (a record keeps no identity)
        out = None
    return tensor, out, calls, (traffic.sent, traffic.received)


def _count_ring_bytes(numel: int, dtype: str) -> int:
    """Rank body: bytes this rank sends in the lab's ring all-reduce of ``numel`` elements."""
    import torch

    counter = collectives.ByteCounter()
    collectives.ring_all_reduce(torch.ones(numel, dtype=getattr(torch, dtype)), counter=counter)
    return counter.sent


# --- in the notebook's process -------------------------------------------------------------

def _check_sum_on_ranks(student_fn, cases, *, forbidden, recorded, why, required=None,
                        ring=False):
    import torch

    for c in cases:
        with case(c.label, hidden=c.hidden):
            inputs = _inputs(c)
            total = torch.stack([x.double() for x in inputs]).sum(0).to(inputs[0].dtype)
            results = run_on_ranks(_run_student, c.world_size,
                                   (student_fn, inputs, forbidden, recorded, why))
            for rank, (tensor, out, calls, traffic) in enumerate(results):
                if required is not None:
                    required(calls, rank)
                what = text("checks_2_0.what_result")
                try:  # in place: the input tensor itself ends as the sum
                    compare_tensors(total, tensor, what=what, rank=rank)
                except ExerciseFailed:
                    if out is None:
                        raise
                    compare_tensors(total, out, what=what, rank=rank)  # what came back is wrong
                    raise ExerciseFailed(text("checks_2_0.not_in_place", rank=rank)) from None
                if ring:
                    _check_ring_traffic(rank, c.world_size, tensor, traffic)


def _check_ring_traffic(rank: int, n: int, tensor, traffic) -> None:
    """A ring: this rank exchanged data with its two neighbours only and sent 2(N-1) chunks of
    about S/N bytes (between the smallest and the largest chunk of an uneven split)."""
    sent, received = traffic
    left, right = (rank - 1) % n, (rank + 1) % n
    others = sorted({peer for peer, _ in sent + received} - {left, right})
    if others:
        raise ExerciseFailed(text("checks_2_0.not_a_ring", rank=rank, peers=others[0],
                                  left=left, right=right))
    numel, size = tensor.numel(), tensor.numel() * tensor.element_size()
    low = 2 * (n - 1) * (numel // n) * tensor.element_size()
    high = 2 * (n - 1) * -(-numel // n) * tensor.element_size()
    bytes_sent = sum(nbytes for _, nbytes in sent)
    if not low <= bytes_sent <= high:
        why = text("checks_2_0.why_too_many_bytes" if bytes_sent > high
                   else "checks_2_0.why_too_few_bytes")
        raise ExerciseFailed(text("checks_2_0.ring_bytes_off", rank=rank, sent=bytes_sent,
                                  expected=2 * (n - 1) / n * size, size=size, n=n, why=why))


@graded("ex2_0_ring_all_reduce")
def check_ring_all_reduce(student_fn):
    """``student_fn(tensor)`` sums ``tensor`` over the ranks in place with send/recv only."""
    _check_sum_on_ranks(
        student_fn, ALL_REDUCE_CASES, forbidden=COLLECTIVES, recorded=(),
        why=text("checks_2_0.why_ring"), ring=True)


@graded("ex2_0_rs_ag_all_reduce")
def check_all_reduce_from_rs_ag(student_fn):
    """``student_fn(tensor)`` sums ``tensor`` over the ranks with reduce-scatter + all-gather."""

    def required(calls, rank):
        for names, what in ((REDUCE_SCATTERS, "reduce-scatter"), (ALL_GATHERS, "all-gather")):
            if not any(name in calls for name in names):
                raise ExerciseFailed(text("checks_2_0.missing_call", rank=rank, what=what,
                                          example=names[0]))

    _check_sum_on_ranks(
        student_fn, ALL_REDUCE_CASES,
        forbidden=tuple(n for n in COLLECTIVES if n not in REDUCE_SCATTERS + ALL_GATHERS),
        recorded=REDUCE_SCATTERS + ALL_GATHERS, required=required,
        why=text("checks_2_0.why_rs_ag"))


# (size in bytes, world size, hidden); the hidden ones as they are without a secret
BYTES_CASES = ((2**20, 4, False), (1000, 2, False), (3 * 2**20, 3, True), (2**30, 8, True),
               (4096, 1, True), (10**9, 1024, True))


def _bytes_cases() -> tuple:
    """BYTES_CASES, with the instructor's secret the hidden ones drawn from it. Each keeps its
    kind (a few ranks; more ranks and a larger S; one rank; very many ranks and an S that is no
    power of two), and 2(N-1)S/N stays a whole number of bytes, as in the table."""
    def draw(key, low, high, default):
        return hidden_int(TAG, 3000 + key, low, high, default)

    few, more, many = draw(0, 2, 16, 3), draw(2, 4, 64, 8), 2 * draw(5, 128, 2048, 512)
    hidden = ((few * draw(1, 2**10, 2**22, 2**20), few, True),
              (more * draw(3, 2**24, 2**28, 2**27), more, True),
              (draw(4, 1, 2**20, 4096), 1, True),
              (many // 2 * draw(6, 10**5, 10**7, 1953125), many, True))  # S: a multiple of N/2
    shown = tuple(c for c in BYTES_CASES if not c[2])
    return shown + hidden


# The course's own formulas, which the exercise must not call (module file, function name).
FORMULAS = (("labs/cost", "ring_all_reduce_bytes_per_rank"),
            ("labs/collectives", "ring_all_reduce_bytes_per_rank"))

# Measured on real ranks: (world size, elements, dtype); element counts divisible by N.
MEASURED_CASES = ((3, 3 * 1024, "float32"), (4, 4 * 1000, "float64"))


@graded("ex2_0_ring_bytes")
def check_ring_bytes(student_fn):
    """``student_fn(size_bytes, world_size)`` = bytes each rank sends in a ring all-reduce."""
    cases = _bytes_cases()
    calls = [((size, n), {}) for size, n, _ in cases]
    calls += [((numel * (4 if dtype == "float32" else 8), n), {})
              for n, numel, dtype in MEASURED_CASES]
    seen = rules.called(student_fn, calls, functions=FORMULAS)  # recorded: the grader sees it too
    if seen:
        raise ExerciseFailed(text("checks_2_0.forbidden_call", shown=seen[0],
                                  why=text("checks_2_0.why_formula")))
    hidden_count = 0
    for size, n, hidden in cases:
        hidden_count += hidden
        label = (text("checks.case_hidden", n=hidden_count) if hidden
                 else text("checks_2_0.case_bytes", size=size, n=n))
        returned = text("checks.what_returned")
        with case(label, hidden=hidden):
            got = as_number(student_fn(size, n), returned)
            expected = float(collectives.ring_all_reduce_bytes_per_rank(size, n))
            assert_close(expected, got, what=returned, dtype="float64")
    for n, numel, dtype in MEASURED_CASES:
        with case(text("checks_2_0.case_measured", n=n)):
            sent = run_on_ranks(_count_ring_bytes, n, (numel, dtype))
            size = numel * (4 if dtype == "float32" else 8)
            got = as_number(student_fn(size, n), text("checks.what_returned"))
            for rank, measured in enumerate(sent):
                if not numerics.is_close(got, float(measured), dtype="float64"):
                    raise ExerciseFailed(text("checks_2_0.measured_mismatch", rank=rank,
                                              measured=measured, size=size, n=n, got=got))
