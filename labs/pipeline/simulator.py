"""The simulator: run a schedule on paper, prove it completes, compute its ideal timeline.

Semantics (the executor's): sends never block, a receive waits for its message, compute of
stage s takes its stated time. If every unfinished rank waits for a message no rank will send,
the schedule deadlocks and ``simulate`` says where each rank is stuck. The result is a
:class:`labs.notebook.timeline.Timeline`, the type measured timelines (:mod:`labs.pipeline.executor`) have
too, so one plot draws both. After torch.distributed.pipelining's schedule simulator; PTD-P,
arXiv:2104.04473.

Owns: validate and simulate. Must not: communicate, import torch, or print.
"""
from __future__ import annotations

from typing import Sequence

from labs.messages import joined, text
from labs.pipeline.schedules import (B, COMPUTE, F, KINDS, RECV_B, RECV_F, SEND_B, SEND_F, W,
                                     Action, placement_of, stage_rank)
from labs.notebook.timeline import SIMULATED, Event, Timeline

__all__ = ["ScheduleError", "DeadlockError", "validate", "simulate"]


class ScheduleError(ValueError):
    """A schedule that cannot be run: an action missing, twice, on the wrong rank, out of order."""


class DeadlockError(ScheduleError):
    """Every unfinished rank waits for a message that no rank will ever send."""


# --- the simulator ----------------------------------------------------------------------------

def _per_stage(value, stage: int) -> float:
    return float(value[stage]) if isinstance(value, (list, tuple)) else float(value)


def _message(a: Action) -> tuple:
    """The message a send or receive is about, keyed by the stage that produced it."""
    return {SEND_F: (F, a.mb, a.stage), RECV_F: (F, a.mb, a.stage - 1),
            SEND_B: (B, a.mb, a.stage), RECV_B: (B, a.mb, a.stage + 1)}[a.kind]


def validate(schedule: Sequence[Sequence[Action]]) -> tuple[int, int]:
    """Check every F and B appears exactly once, on the rank holding its stage (and every W
    too, when the schedule splits the backward: one W in the schedule means all of them).

    Returns (n_stages, n_microbatches). Raises ScheduleError saying what is wrong.
    """
    p, placement = len(schedule), placement_of(schedule)
    computes = [(r, a) for r, acts in enumerate(schedule) for a in acts if a.kind in COMPUTE]
    if not computes:
        raise ScheduleError(text("pipeline.computes_nothing"))
    for r, acts in enumerate(schedule):
        for a in acts:
            if a.kind not in KINDS:
                raise ScheduleError(text("pipeline.unknown_kind", r=r, kind=a.kind, kinds=KINDS))
    n_stages = 1 + max(a.stage for _, a in computes)
    m = 1 + max(a.mb for _, a in computes)
    seen: dict[tuple, int] = {}
    for r, a in computes:
        if stage_rank(a.stage, p, placement) != r:
            raise ScheduleError(text("pipeline.wrong_rank", action=a, stage=a.stage, r=r,
                                     owner=stage_rank(a.stage, p, placement)))
        key = (a.kind, a.mb, a.stage)
        if key in seen:
            raise ScheduleError(text("pipeline.twice", action=a, stage=a.stage, r=r))
        seen[key] = r
    kinds = COMPUTE if any(a.kind == W for _, a in computes) else (F, B)
    missing = [text("pipeline.action_of_stage", action=f"{k}{i}", stage=s)
               for k in kinds for s in range(n_stages) for i in range(m) if (k, i, s) not in seen]
    if missing:
        shown = joined(missing[:6])
        raise ScheduleError(text("pipeline.never_runs_more", missing=shown, more=len(missing) - 6)
                            if len(missing) > 6 else text("pipeline.never_runs", missing=shown))
    return n_stages, m


#: (the action is a forward, its input is this rank's own) -> what it says when it runs too early.
_NEEDS = {(True, True): "pipeline.needs_activation_computed",
          (True, False): "pipeline.needs_activation_received",
          (False, True): "pipeline.needs_gradient_computed",
          (False, False): "pipeline.needs_gradient_received"}


class _PaperRun:
    """One schedule run on paper: each rank's clock and place in its list of actions, what has
    been computed, the messages in flight and received, and the events drawn so far."""

    def __init__(self, schedule: Sequence[Sequence[Action]], n_stages: int, durations: dict,
                 comm_s: float):
        p = len(schedule)
        self.schedule, self.n_stages, self.comm_s = schedule, n_stages, comm_s
        self.durations = durations  # F / B / W -> seconds (a number, or one per stage)
        self.placement = placement_of(schedule)
        self.clock = [0.0] * p
        self.pos = [0] * p  # the index of each rank's next action
        self.done: dict[tuple, float] = {}  # (kind, mb, stage) computed -> end time
        self.received: list[set] = [set() for _ in range(p)]
        self.inbox: dict[tuple, tuple[int, float]] = {}  # message -> (destination, arrival time)
        self.events: list[list[Event]] = [[] for _ in range(p)]

    def owner(self, stage: int) -> int:
        return stage_rank(stage, len(self.schedule), self.placement)

    def step(self, r: int, a: Action) -> bool:
        """Advance rank r past ``a`` if it can; False if it must wait for a message."""
        if a.kind in (SEND_F, SEND_B):
            return self.send(r, a)
        if a.kind in (RECV_F, RECV_B):
            return self.receive(r, a)
        return self.compute(r, a)

    def send(self, r: int, a: Action) -> bool:
        """Post an activation or gradient to the rank of the stage that consumes it: it arrives
        ``comm_s`` later; a send never waits."""
        key = _message(a)
        consumer = a.stage + 1 if a.kind == SEND_F else a.stage - 1
        if a.peer != self.owner(consumer):
            raise ScheduleError(text("pipeline.send_wrong_peer", r=r, action=a, peer=a.peer,
                                     consumer=consumer, owner=self.owner(consumer)))
        if key not in self.done:
            raise ScheduleError(text("pipeline.send_before_compute", r=r, action=a,
                                     kind=key[0], mb=a.mb, stage=a.stage))
        if key in self.inbox:
            raise ScheduleError(text("pipeline.sent_twice", r=r, action=a))
        self.inbox[key] = (a.peer, self.clock[r] + self.comm_s)
        return True

    def receive(self, r: int, a: Action) -> bool:
        """Take the message once it has been sent to r, waiting for it to arrive; False while
        it has not been sent."""
        key = _message(a)
        if key not in self.inbox or self.inbox[key][0] != r:
            return False
        self.clock[r] = max(self.clock[r], self.inbox[key][1])
        self.received[r].add(key)
        return True

    def compute(self, r: int, a: Action) -> bool:
        """Run F, B or W of a micro-batch on its stage: its input must be here already (a
        compute never waits), and it takes its stage's time."""
        self._check_inputs(r, a)
        duration = _per_stage(self.durations[a.kind], a.stage)
        start = self.clock[r]
        self.clock[r] = start + duration
        self.done[(a.kind, a.mb, a.stage)] = self.clock[r]
        self.events[r].append(Event(a.kind, a.mb, a.stage, start, self.clock[r]))
        return True

    def _inputs(self, a: Action) -> list[tuple]:
        """Messages or local results compute action ``a`` depends on (besides its own F)."""
        if a.kind == F:
            return [(F, a.mb, a.stage - 1)] if a.stage > 0 else []
        if a.kind == W:  # its own B, on this rank: checked in _check_inputs
            return []
        return [(B, a.mb, a.stage + 1)] if a.stage < self.n_stages - 1 else []

    def _check_inputs(self, r: int, a: Action) -> None:
        """Raise ScheduleError when rank r runs ``a`` before what it needs: the previous
        stage's activation (F), the next stage's gradient and its own F (B), its own B (W)."""
        for key in self._inputs(a):
            local = self.owner(key[2]) == r
            if (local and key not in self.done) or (not local and key not in self.received[r]):
                raise ScheduleError(text(_NEEDS[a.kind == F, local], r=r, action=a,
                                         stage=a.stage, kind=key[0], mb=key[1], src=key[2]))
        if a.kind == B and (F, a.mb, a.stage) not in self.done:
            raise ScheduleError(text("pipeline.before_forward", r=r, action=a, stage=a.stage))
        if a.kind == W and (B, a.mb, a.stage) not in self.done:
            raise ScheduleError(text("pipeline.weight_before_input", r=r, action=a, stage=a.stage))

    def check_finished(self) -> None:
        """Raise DeadlockError when a rank is stuck before the end of its list (saying where
        each one waits), ScheduleError when a message was sent but never received."""
        stuck = [r for r in range(len(self.schedule)) if self.pos[r] < len(self.schedule[r])]
        if stuck:
            waits = joined((text("pipeline.waits_at", r=r, action=self.schedule[r][self.pos[r]],
                                 pos=self.pos[r]) for r in stuck), "clauses")
            raise DeadlockError(text("pipeline.deadlock", waits=waits))
        unread = [k for k in self.inbox if k not in self.received[self.inbox[k][0]]]
        if unread:
            k = unread[0]
            raise ScheduleError(text("pipeline.never_received", kind=k[0], mb=k[1], stage=k[2],
                                     peer=self.inbox[k][0]))


def simulate(schedule: Sequence[Sequence[Action]], *, forward_s=1.0, backward_s=2.0,
             weight_s=0.0, comm_s: float = 0.0) -> Timeline:
    """Run ``schedule`` on paper: prove it completes and compute its ideal timeline.

    Compute of stage s takes ``forward_s`` / ``backward_s`` / ``weight_s`` seconds (a number, or
    one per stage) for F / B / W: with the backward split, B is the input gradient alone;
    a message arrives ``comm_s`` after it was sent; sends never block, receives wait for their
    message. Raises DeadlockError when every unfinished rank waits for a message no rank will
    send, ScheduleError for a missing, repeated, misplaced or out-of-order action.
    """
    n_stages, m = validate(schedule)
    run = _PaperRun(schedule, n_stages, {F: forward_s, B: backward_s, W: weight_s}, comm_s)
    # the event loop: every rank in turn runs its actions until one must wait for a message;
    # round after round, until a round moves no rank
    progress = True
    while progress:
        progress = False
        for r in range(len(schedule)):
            while run.pos[r] < len(schedule[r]) and run.step(r, schedule[r][run.pos[r]]):
                run.pos[r] += 1
                progress = True
    run.check_finished()
    return Timeline(run.events, mode=SIMULATED,
                    info=dict(n_stages=n_stages, n_microbatches=m, forward_s=forward_s,
                              backward_s=backward_s, weight_s=weight_s, comm_s=comm_s,
                              placement=run.placement))
