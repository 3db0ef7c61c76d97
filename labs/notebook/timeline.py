"""One timeline type: what each rank (or lane) did and when, simulated or measured.

Layer-wise model parallelism (2.2), the pipeline schedules (2.3, simulated by
:mod:`labs.pipeline.simulator` and measured by :mod:`labs.pipeline.executor`) and the hybrid
steps of 2.4 all produce a :class:`Timeline`, and :func:`labs.notebook.plots.plot_timeline` draws any of
them. An :class:`Event` is one bar: its kind (``"F"`` / ``"B"`` for a pipeline micro-batch,
``"forward"``, ``"backward"``, ``"send"``, ``"all-reduce"`` ...), the micro-batch and stage when
there are some, and its start and end in seconds::

    timeline = Timeline.from_ranks(per_rank_events, mode=REAL_COMPUTE)
    timeline.idle_fraction()          # per rank: the share of the step it did not compute

Owns: Event and Timeline. Must not: import torch, matplotlib or any other labs module (it is drawn
by labs.notebook.plots), or print.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

__all__ = ["Event", "Timeline", "COMPUTE_KINDS", "REAL_COMPUTE", "SIMULATED"]

REAL_COMPUTE = "real compute"  # measured, every action taking what it takes
SIMULATED = "simulated (ideal)"  # computed on paper from stated durations

# kinds of event that count as a rank being busy computing (the rest is communication or waiting)
COMPUTE_KINDS = ("F", "B", "W", "forward", "backward", "compute", "grad input", "grad weight")


class Event(NamedTuple):
    """One bar of a timeline: ``kind`` of micro-batch ``mb`` at ``stage`` from ``start`` to
    ``end`` (seconds; ``mb`` and ``stage`` are None where they do not apply)."""

    kind: str
    mb: int | None
    stage: int | None
    start: float
    end: float


@dataclass
class Timeline:
    """``events[row]``: the events of one rank (or, with ``rows``, of one named lane) in time order.

    ``mode`` says how the times were made (simulated, real compute, fixed time), and goes into
    every plot's title; ``info`` carries what the maker knew (stage times, peaks, overruns).
    """

    events: list[list[Event]]
    mode: str = ""
    info: dict = field(default_factory=dict)
    rows: list[str] | None = None  # row labels; None: the rows are ranks 0, 1, ...

    @classmethod
    def from_ranks(cls, per_rank: Sequence[Sequence], *, mode: str = "", **info) -> "Timeline":
        """From each rank's events (``(kind, mb, stage, start, end)``, in a shared clock), with
        time 0 at the first start."""
        starts = [e[3] for events in per_rank for e in events]
        t0 = min(starts) if starts else 0.0
        events = [[Event(k, mb, s, a - t0, b - t0) for (k, mb, s, a, b) in rank_events]
                  for rank_events in per_rank]
        return cls(events, mode=mode, info=info)

    @property
    def n_ranks(self) -> int:
        """Number of rows (ranks, or lanes when ``rows`` names them)."""
        return len(self.events)

    def row_labels(self) -> list[str]:
        return list(self.rows) if self.rows is not None else [f"rank {r}"
                                                                for r in range(self.n_ranks)]

    def span(self) -> tuple[float, float]:
        """(first start, last end) over all rows."""
        starts = [e[3] for row in self.events for e in row]
        ends = [e[4] for row in self.events for e in row]
        return min(starts), max(ends)

    def busy_seconds(self) -> list[float]:
        """Per row: seconds spent computing (events whose kind is in COMPUTE_KINDS)."""
        return [sum(e[4] - e[3] for e in row if e[0] in COMPUTE_KINDS) for row in self.events]

    def idle_fraction(self) -> list[float]:
        """Per row: the share of the step (first start to last end, all rows) not computing."""
        t0, t1 = self.span()
        return [1.0 - busy / (t1 - t0) for busy in self.busy_seconds()]

    def peak_in_flight(self) -> list[int]:
        """Per row: the most micro-batches (per stage summed) forwarded but not yet backwarded
        (with the backward split into B and W: whose W has not run yet)."""
        peaks = []
        for row in self.events:
            live = peak = 0
            done = "W" if any(e[0] == "W" for e in row) else "B"
            for e in sorted(row, key=lambda e: e[3]):
                live += 1 if e[0] == "F" else -1 if e[0] == done else 0
                peak = max(peak, live)
            peaks.append(peak)
        return peaks
