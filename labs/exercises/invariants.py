"""What a mechanism implies about what each rank did, stated as data beside its exercise.

A build exercise declares its mechanism as a tuple of invariants over the ranks' traces
(:mod:`labs.exercises.trace`), e.g. the ring all-reduce's ``(only("send", "recv"),
peers(lambda c, rank: {left, right}), wire(most=..., least=...), count("send", ...))``;
:func:`hold` checks them on every rank after the numbers. A parameter is a number or a
``lambda c[, rank]:`` of the case and the rank; a broken invariant raises ExerciseFailed naming
the rank, what it did and what the mechanism does. :data:`ALWAYS` holds on ranks for every
exercise: every ``Work`` waited for.

Owns: the vocabulary of invariants. Must not: run anything on ranks, import torch, or know an
exercise.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from labs.exercises.errors import ExerciseFailed
from labs.exercises.trace import Trace
from labs.messages import text

__all__ = ["Invariant", "only", "uses", "count", "peers", "wire", "groups", "flops", "sharded",
           "order", "waited", "ALWAYS", "hold"]


def _value(spec, c, rank=None):
    """A parameter: a number (or set, list), or a function of the case (and the rank)."""
    if not callable(spec):
        return spec
    return spec(c, rank) if len(inspect.signature(spec).parameters) >= 2 else spec(c)


def _fail(key: str, **fields):
    failed = ExerciseFailed(text(key, **fields))
    failed.kind = "wrong"
    raise failed


def _pass_word(backward):
    return "" if backward is None else text("invariants.in_backward" if backward
                                            else "invariants.in_forward")


@dataclass(frozen=True)
class Invariant:
    """One rule on every rank's trace: ``rule(case, rank, trace)`` raises when broken."""
    rule: Callable[[Any, int, Trace], None]

    def __call__(self, c, traces) -> None:
        for rank, trace in enumerate(traces):
            self.rule(c, rank, trace)


def only(*ops: str) -> Invariant:
    """Every communication of every rank is one of ``ops`` (e.g. "send", "recv")."""
    def rule(c, rank, trace):
        for comm in trace.comms:
            if comm.op not in ops:
                _fail("invariants.only", rank=rank, op=comm.op, what=comm.describe(),
                      allowed=", ".join(ops) or "-")
    return Invariant(rule)


def uses(*ops: str) -> Invariant:
    """Every rank calls each of ``ops`` at least once."""
    def rule(c, rank, trace):
        for op in ops:
            if not trace.ops(op):
                _fail("invariants.uses", rank=rank, op=op)
    return Invariant(rule)


def count(op: str, n, *, backward: bool | None = None) -> Invariant:
    """Every rank calls ``op`` exactly ``n`` times (in one pass when ``backward`` is given);
    ``n`` None for a case: not counted there."""
    def rule(c, rank, trace):
        want, got = _value(n, c, rank), len(trace.ops(op, backward=backward))
        if want is not None and got != want:
            _fail("invariants.count", rank=rank, op=op, got=got, expected=want,
                  where=_pass_word(backward))
    return Invariant(rule)


def peers(allowed) -> Invariant:
    """Every send and receive of a rank goes to one of ``allowed(c, rank)`` (global ranks)."""
    def rule(c, rank, trace):
        ok = set(_value(allowed, c, rank))
        for comm in trace.comms:
            if comm.op in ("send", "recv") and comm.peer not in ok:
                _fail("invariants.peers", rank=rank, what=comm.describe(), peer=comm.peer,
                      allowed=sorted(ok))
    return Invariant(rule)


def wire(*, most=None, least=None, backward: bool | None = None) -> Invariant:
    """The bytes a rank puts on the wire (:func:`labs.exercises.trace.wire_bytes`: a ring for
    collectives) are at most ``most`` and at least ``least``: a rule about bytes on bytes."""
    def rule(c, rank, trace):
        sent = sum(comm.wire for comm in trace.ops(backward=backward))
        high, low = _value(most, c, rank), _value(least, c, rank)
        if high is not None and sent > high * (1 + 1e-9) + 1e-9:
            _fail("invariants.wire_most", rank=rank, sent=sent, most=high,
                  where=_pass_word(backward))
        if low is not None and sent < low * (1 - 1e-9) - 1e-9:
            _fail("invariants.wire_least", rank=rank, sent=sent, least=low,
                  where=_pass_word(backward))
    return Invariant(rule)


def groups(expected, *, ops=None) -> Invariant:
    """Every collective (of ``ops``, default all) runs over the group ``expected(c, rank,
    comm)`` says: a list of global ranks, or a dict ``{role: ranks}`` of acceptable groups."""
    def rule(c, rank, trace):
        for comm in trace.comms:
            if comm.op in ("send", "recv") or (ops is not None and comm.op not in ops):
                continue
            want = expected(c, rank, comm)
            options = want if isinstance(want, dict) else {"": want}
            if any(sorted(comm.group) == sorted(g) for g in options.values()):
                continue
            role, members = next(iter(options.items()))
            _fail("invariants.group", rank=rank, what=comm.describe(), got=list(comm.group),
                  role=role.upper(), expected=sorted(members))
    return Invariant(rule)


def flops(share, reference, *, tolerance: float = 0.1, backward: bool | None = None) -> Invariant:
    """A rank's matrix-product FLOPs are ``share(c, rank)`` of ``reference(c)`` (the FLOPs of
    the whole computation on one process, traced the same way), within ``tolerance``: sharded
    work is sharded, and done with matrix products."""
    def rule(c, rank, trace):
        want = _value(share, c, rank) * _value(reference, c)
        got = trace.flops(backward=backward)
        if abs(got - want) > tolerance * want + 1:
            _fail("invariants.flops", rank=rank, got=got, expected=round(want),
                  ratio=got / want if want else float("inf"), where=_pass_word(backward))
    return Invariant(rule)


def sharded(weights, *, backward: bool | None = False) -> Invariant:
    """No matrix product of a rank (in the forward pass unless ``backward`` says otherwise)
    takes one of the whole weights ``weights(c)`` (shapes, either way round) as an operand: a
    sharded mechanism multiplies shards only."""
    def rule(c, rank, trace):
        whole = {tuple(s) for s in _value(weights, c, rank)}
        whole |= {s[::-1] for s in whole}
        for p in trace.products:
            hit = next((tuple(s) for s in p.shapes if tuple(s) in whole), None)
            if hit is not None and (backward is None or p.backward == backward):
                _fail("invariants.sharded", rank=rank, op=p.op, shape=hit,
                      where=_pass_word(backward))
    return Invariant(rule)


def order(expected, *, kinds=None) -> Invariant:
    """A rank's marks (a pipeline stage's F0, B0, ...) come in the order ``expected(c, rank)``
    (a list of ``(kind, value)``), or one of several orders when it gives a list of them."""
    def rule(c, rank, trace):
        got = trace.sequence(kinds)
        want = _value(expected, c, rank)
        options = want if want and isinstance(want[0], list) else [want]
        if any(got == [tuple(x) for x in o] for o in options):
            return
        first = options[0]
        at = next((i for i, (a, b) in enumerate(zip(got, first)) if tuple(a) != tuple(b)),
                  min(len(got), len(first)))
        show = lambda seq: " ".join(f"{k}{v}" for k, v in seq)  # noqa: E731
        _fail("invariants.order", rank=rank, index=at + 1, got=show(got[:at + 1]),
              expected=show(first[:at + 1]))
    return Invariant(rule)


def waited() -> Invariant:
    """Every operation's ``Work`` was waited for before the rank's code returned."""
    def rule(c, rank, trace):
        for comm in trace.pending():
            _fail("invariants.not_waited", rank=rank, what=comm.describe(), seq=comm.seq)
    return Invariant(rule)


#: What every exercise on ranks keeps, whatever its mechanism.
ALWAYS = (waited(),)


def hold(invariants, c, traces) -> None:
    """Check ``invariants`` (and :data:`ALWAYS`) on ``traces`` (one per rank, as Trace or as
    the data a rank returned) for case ``c``."""
    traces = [t if isinstance(t, Trace) else Trace.from_data(t) for t in traces]
    for invariant in (*ALWAYS, *invariants):
        invariant(c, traces)
