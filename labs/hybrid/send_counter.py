"""The course's communication counter (:class:`labs.collectives.CommCounter`) for code that
reports each message by kind and size: every message is something this rank *sent*.

Context parallelism (:mod:`labs.hybrid.context_parallel`) and expert parallelism
(:mod:`labs.hybrid.expert_parallel`) call ``counter.add(kind, nbytes, phase=...)`` once per
message they send; any object with that method can be passed as ``counter=``. Create the
counter inside the launched function (one per rank) and return it or its :meth:`summary`::

    counter = SendCounter()
    out = ring_attention(q, k, v, group=cp_group, counter=counter)
    counter.sent                     # bytes this rank sent
    counter.summary()                # {("forward", "kv"): (messages, bytes)}, as CommCounter's

Only bytes sent to *another* rank are counted: what a rank keeps for itself never crosses a
link. The formulas these counts are checked against are :mod:`labs.formulas.cost`'s
(``ring_attention_traffic``, ``expert_parallel_traffic``).

Owns: counting sent messages by kind. Must not: communicate, or keep a counter at module level (one
object per rank, made inside the launched function).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from labs.collectives import CommCounter, CommEvent

__all__ = ["SendCounter"]


@dataclass
class SendCounter(CommCounter):
    """A :class:`~labs.collectives.CommCounter` whose events are sends named by their kind
    (``"kv"``, ``"dispatch"``, ...): ``summary()`` is ``{(phase, kind): (count, bytes)}``."""

    def add(self, kind: str, nbytes: int, *, phase: str = "forward") -> None:
        """Record one message of ``nbytes`` bytes (``phase``: "forward" or "backward")."""
        now = time.perf_counter()
        self.events.append(CommEvent(kind, phase, int(nbytes), self.label, now, now))

    def bytes(self, phase: str | None = None) -> int:
        """Bytes sent in ``phase`` (None: both phases)."""
        return sum(e.nbytes for e in self.events if phase in (None, e.phase))

    @property
    def sent(self) -> int:
        """All bytes this rank sent."""
        return self.bytes()
