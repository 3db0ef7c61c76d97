"""A small counter of the bytes one rank puts on the wire, by phase and kind of message.

Context parallelism (:mod:`labs.hybrid.context_parallel`) and expert parallelism
(:mod:`labs.hybrid.expert_parallel`) call ``counter.add(kind, nbytes, phase=...)`` once per
message they send; any object with that method can be passed as ``counter=``. Create the
counter inside the launched function (one per rank) and return it or its :meth:`summary`::

    counter = SendCounter()
    out = ring_attention(q, k, v, group=cp_group, counter=counter)
    counter.sent                     # bytes this rank sent
    counter.summary()                # {("forward", "kv"): (messages, bytes)}

Only bytes sent to *another* rank are counted: what a rank keeps for itself never crosses a
link.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SendCounter"]


@dataclass
class SendCounter:
    """Messages one rank sent: ``(phase, kind) -> (count, bytes)``."""

    totals: dict = field(default_factory=dict)

    def add(self, kind: str, nbytes: int, *, phase: str = "forward") -> None:
        """Record one message of ``nbytes`` bytes (``phase``: "forward" or "backward")."""
        count, total = self.totals.get((phase, kind), (0, 0))
        self.totals[(phase, kind)] = (count + 1, total + int(nbytes))

    def summary(self) -> dict:
        """``{(phase, kind): (messages, bytes)}``, a copy."""
        return dict(self.totals)

    def bytes(self, phase: str | None = None) -> int:
        """Bytes sent in ``phase`` (None: both phases)."""
        return sum(b for (p, _), (_, b) in self.totals.items() if phase in (None, p))

    @property
    def sent(self) -> int:
        """All bytes this rank sent."""
        return self.bytes()

    def reset(self) -> None:
        self.totals.clear()
