"""The executor: run exactly one rank's list of actions with send/recv, and record when.

``run_schedule`` walks ``schedule[rank]`` (built by :mod:`labs.pipeline.schedules`) action by
action: a forward runs the stage on the micro-batch's input, a backward runs autograd from the
gradient that came back (split in two when the schedule has W actions: B differentiates the
stage input only, keeping the graph; W later accumulates the weight gradients from it), a send is an ``isend`` (asynchronous: it never blocks the rank), a
receive is an ``irecv`` waited on at once (the messages: :mod:`labs.pipeline.comm`). Before
anything runs, every rank simulates the whole schedule, so a schedule that would deadlock is an
error, not a hang. The loop itself is :func:`run_actions` (short, shown in notebook 2.3); what
a rank keeps between actions, its messages and its clock are :class:`RankContext`'s.
This module runs schedules; it must not build them (:mod:`~labs.pipeline.schedules`) nor
know the model (stages are modules it is given).

Two modes of timing, stated on every plot:
- real compute (``timing=None``): each action takes what it takes. On a machine with fewer
  cores than ranks the ranks fight for cores, so the timeline mixes the schedule with contention.
- fixed time (``timing=FixedTime(...)``): each action still computes for real (the gradients
  stay exact), but counts as taking its stated duration from the moment the rank is free and
  its input is ready; the rank sleeps until then (sleep needs no core). Each message carries the
  time its data was ready, so transport latency and core contention stay out of the timeline
  and 4 ranks on 2 cores show the schedule alone. Actions whose real compute took longer than
  stated end late and are counted as overruns.

Timestamps are ``time.perf_counter()``: CLOCK_MONOTONIC on Linux, one clock for all processes
of a machine, so the ranks' events line up without correction.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
import torch.distributed as dist
from torch import Tensor, nn

from labs.messages import text
from labs.pipeline.comm import recv_message, send_message
from labs.pipeline.schedules import (B, F, LOOP, RECV_B, RECV_F, SEND_B, SEND_F, W, Action,
                                     stage_rank)
from labs.pipeline.simulator import simulate
from labs.notebook.timeline import REAL_COMPUTE, Event, Timeline

__all__ = ["REAL_COMPUTE", "FixedTime", "mode_label", "Recorder", "run_schedule", "run_actions",
           "RankContext", "gather_timeline"]


@dataclass(frozen=True)
class FixedTime:
    """Fixed-time mode: a forward of stage s takes ``forward_s`` seconds, a backward
    ``backward_s`` (a number for every stage, or one per stage); with the backward split, B
    (input gradient) takes ``backward_s`` and W (weight gradient) ``weight_s``."""

    forward_s: float | Sequence[float] = 0.010
    backward_s: float | Sequence[float] = 0.020
    weight_s: float | Sequence[float] = 0.0

    def duration(self, kind: str, stage: int) -> float:
        value = {F: self.forward_s, B: self.backward_s, W: self.weight_s}[kind]
        return float(value[stage]) if isinstance(value, (list, tuple)) else float(value)

    @property
    def label(self) -> str:
        """The mode as a figure's title names it (in the figures' language, when asked)."""
        # why here: labs.notebook.plots imports matplotlib (~3 s), and the ranks import this module
        from labs.notebook.plots import label

        def ms(v):
            return (f"{v * 1e3:g}" if not isinstance(v, (list, tuple))
                    else "/".join(f"{x * 1e3:.3g}" for x in v))
        if self.weight_s:
            return label("pipeline.fig_fixed_time_mode_split", forward=ms(self.forward_s),
                         backward=ms(self.backward_s), weight=ms(self.weight_s))
        return label("pipeline.fig_fixed_time_mode", forward=ms(self.forward_s),
                     backward=ms(self.backward_s))


def mode_label(timing: FixedTime | None) -> str:
    return REAL_COMPUTE if timing is None else timing.label


class Recorder:
    """Per-rank record of a run: (kind, mb, stage, start, end) per action, micro-batches in
    flight (forwarded, not yet backwarded; with the backward split, W not yet run), bytes of activations saved for backward."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.in_flight = self.peak_in_flight = 0
        self.live_bytes = self.peak_bytes = 0
        self.overruns = 0  # fixed-time actions whose real compute took longer than stated
        self._saved: dict[tuple, int] = {}

    def add(self, a: Action, start: float, end: float) -> None:
        self.events.append(Event(a.kind, a.mb, a.stage, start, end))

    def forward_done(self, key: tuple, saved_bytes: int) -> None:
        self._saved[key] = saved_bytes
        self.in_flight += 1
        self.live_bytes += saved_bytes
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)

    def backward_done(self, key: tuple) -> None:
        self.in_flight -= 1
        self.live_bytes -= self._saved.pop(key)

    def summary(self) -> dict:
        return dict(events=self.events, peak_in_flight=self.peak_in_flight,
                    peak_activation_bytes=self.peak_bytes, overruns=self.overruns)


class _SavedBytes(torch.autograd.graph.saved_tensors_hooks):
    """Counts the bytes of the distinct activations autograd saves for backward (parameters
    excluded: they are not activations)."""

    def __init__(self, params: set[int]) -> None:
        self.nbytes, self._seen = 0, set()

        def pack(t: Tensor):
            ptr = t.untyped_storage().data_ptr()
            if ptr not in params and ptr not in self._seen:
                self._seen.add(ptr)
                self.nbytes += t.untyped_storage().nbytes()
            return t

        super().__init__(pack, lambda t: t)


def run_schedule(schedule: Sequence[Sequence[Action]], stages: dict[int, nn.Module], *,
                 inputs: Sequence[Tensor] | None = None, targets: Sequence[Tensor] | None = None,
                 loss_fn: Callable[[Tensor, Tensor], Tensor] | None = None,
                 activation_shape: Sequence[int], dtype: torch.dtype = torch.float32,
                 group: dist.ProcessGroup | None = None, timing: FixedTime | None = None,
                 recorder: Recorder | None = None, counter=None) -> list[Tensor]:
    """Run this rank's part of ``schedule``; gradients accumulate in the stages' parameters.

    stages: {stage index: module} for the stages this rank holds.
    inputs / targets: the micro-batches, needed on the ranks holding the first / last stage.
    loss_fn(output, target): the loss of one micro-batch; each is divided by m before backward,
        so the gradients are those of the mean loss over the whole batch.
    activation_shape: shape of the tensor passed between stages (one micro-batch).
    group: the pipeline's process group (None = the default group); peers are group ranks.
    counter: a ``labs.collectives.CommCounter`` that records every activation and gradient sent
        and received (their stamps in fixed-time mode are not counted).
    Returns this rank's micro-batch losses (unscaled; empty unless it holds the last stage).
    """
    rank, p = dist.get_rank(group), dist.get_world_size(group)
    if len(schedule) != p:
        raise ValueError(text("pipeline.schedule_ranks", n=len(schedule), p=p))
    plan = simulate(schedule).info  # raises DeadlockError / ScheduleError before any message
    split = any(a.kind == W for a in schedule[rank])
    ctx = RankContext(rank=rank, n_ranks=p, n_stages=plan["n_stages"], split=split,
                      placement=plan["placement"],
                      n_microbatches=plan["n_microbatches"],
                      device=next(next(iter(stages.values())).parameters()).device,
                      params={q.untyped_storage().data_ptr()
                              for mod in stages.values() for q in mod.parameters()},
                      activation_shape=activation_shape, dtype=dtype, group=group,
                      timing=timing, recorder=recorder or Recorder(), counter=counter)
    run_actions(schedule[rank], stages, ctx, inputs=inputs, targets=targets, loss_fn=loss_fn)
    ctx.clock.finish()
    for work, _ in ctx.sends:
        work.wait()
    return ctx.losses


def run_actions(actions: Sequence[Action], stages: dict[int, nn.Module], ctx: RankContext, *,
                inputs, targets, loss_fn) -> None:
    """The executor's core loop: run one rank's actions in order.

    A forward runs the stage on its input and keeps input and output for the backward (the last
    stage's output is its loss / m); a backward runs autograd from the gradient of the output
    (split, B differentiates the stage input only and W the weights later); a send ships an
    output forward or an input's gradient back. ``ctx`` (:class:`RankContext`)
    holds what arrived, the messages, the clock and the saved-bytes count."""
    for a in actions:
        key = (a.mb, a.stage)
        if a.kind == RECV_F:  # the previous stage's output: this stage's input
            ctx.x_in[key] = ctx.recv(a, F).requires_grad_()
        elif a.kind == RECV_B:  # the gradient of this stage's output, from the next stage
            ctx.grad_out[key] = ctx.recv(a, B)
        elif a.kind == SEND_F:
            ctx.send(a, F, ctx.y_out[key].detach())
        elif a.kind == SEND_B:
            ctx.send(a, B, ctx.x_in[key].grad)
        elif a.kind == F:
            with ctx.computing(a):
                if a.stage == 0:
                    x = inputs[a.mb].to(ctx.device)
                elif ctx.holds(a.stage - 1):  # previous stage on this rank (interleaved)
                    x = ctx.y_out[(a.mb, a.stage - 1)].detach().requires_grad_()
                else:
                    x = ctx.x_in[key]
                ctx.x_in[key] = x
                out = stages[a.stage](x)
                if a.stage == ctx.n_stages - 1:
                    loss = loss_fn(out, targets[a.mb].to(ctx.device))
                    ctx.losses.append(loss.detach())
                    out = loss / ctx.n_microbatches  # sums to the batch's mean loss
                ctx.y_out[key] = out
        elif a.kind == B:
            with ctx.computing(a):
                out, grad = ctx.output_and_grad(key)  # the loss / m on the last stage: grad None
                if ctx.split:  # zero-bubble: the input's gradient now, the weights' at W
                    ctx.input_gradient(key, out, grad)
                else:
                    torch.autograd.backward(out, grad)
        elif a.kind == W:
            with ctx.computing(a):
                ctx.weight_gradient(key, stages[a.stage])


class RankContext:
    """One rank's state while :func:`run_actions` runs: what it keeps per (micro-batch, stage),
    its messages (:mod:`labs.pipeline.comm`), its clock and its recorder."""

    def __init__(self, *, rank: int, n_ranks: int, n_stages: int, n_microbatches: int, device,
                 params: set[int], activation_shape: Sequence[int], dtype: torch.dtype,
                 group, timing: FixedTime | None, recorder: Recorder, counter=None,
                 split: bool = False, placement: str = LOOP) -> None:
        self.rank, self.n_ranks, self.device, self.split = rank, n_ranks, device, split
        self.placement = placement  # where stages live (labs.pipeline.schedules.stage_rank)
        self.n_stages, self.n_microbatches = n_stages, n_microbatches
        self.params, self.activation_shape, self.dtype = params, activation_shape, dtype
        self.group, self.timing, self.recorder, self.counter = group, timing, recorder, counter
        self.x_in: dict[tuple, Tensor] = {}  # stage input (requires grad after stage 0)
        self.y_out: dict[tuple, Tensor] = {}  # stage output, or the loss / m on the last stage
        self.grad_out: dict[tuple, Tensor] = {}  # gradient of the stage output
        self.losses: list[Tensor] = []  # the last stage's micro-batch losses (unscaled)
        self.owed_w: dict[tuple, tuple] = {}  # split backward: (output, its gradient) until W
        self.sends: list[tuple[dist.Work, Tensor]] = []  # waited on at the end
        self.clock = _Clock(timing, recorder)

    def holds(self, stage: int) -> bool:
        """Whether this rank holds ``stage`` (interleaved and ZB-V give a rank several)."""
        return stage_rank(stage, self.n_ranks, self.placement) == self.rank

    def output_and_grad(self, key: tuple) -> tuple:
        """For a backward: the stage output (the loss / m on the last stage, gradient None)
        and the gradient of it that came back (or, interleaved, from this rank's next stage)."""
        mb, stage = key
        if stage == self.n_stages - 1:
            return self.y_out.pop(key), None  # the loss / m: its gradient is 1
        grad = self.grad_out.pop(key, None)
        if grad is None:  # next stage on this rank (interleaved)
            grad = self.x_in[(mb, stage + 1)].grad
        return self.y_out.pop(key), grad

    def input_gradient(self, key: tuple, out: Tensor, grad: Tensor | None) -> None:
        """Split backward, B: the gradient of the stage input only (what the previous stage
        waits for), the graph kept for W. The first stage's input (token ids) has none: its B
        computes nothing and its W the whole backward."""
        x = self.x_in.get(key)
        if x is not None and x.requires_grad:
            (x.grad,) = torch.autograd.grad(out, x, grad, retain_graph=True)
        self.owed_w[key] = (out, grad)

    def weight_gradient(self, key: tuple, stage: nn.Module) -> None:
        """Split backward, W: accumulate the stage's weight gradients from the graph B kept,
        then free it. It walks the stage's graph again (torch's stage_backward_weight keeps
        the intermediate gradients instead), so in real compute B + W cost more than one
        backward; fixed-time mode states their durations."""
        out, grad = self.owed_w.pop(key)
        torch.autograd.backward(out, grad, inputs=[q for q in stage.parameters()
                                                   if q.requires_grad])

    def recv(self, a: Action, kind: str) -> Tensor:
        src_stage = a.stage - 1 if kind == F else a.stage + 1
        buf, ready_at = recv_message(self.activation_shape, kind=kind, mb=a.mb, stage=src_stage,
                                     n_stages=self.n_stages, peer=a.peer, group=self.group,
                                     dtype=self.dtype, device=self.device,
                                     with_stamp=self.timing is not None, counter=self.counter)
        if ready_at is not None:  # when the data was ready at the sender (fixed-time mode)
            self.clock.ready[(kind, a.mb, src_stage)] = ready_at
        return buf

    def send(self, a: Action, kind: str, t: Tensor) -> None:
        ready_at = None if self.timing is None else self.clock.done[(kind, a.mb, a.stage)]
        self.sends.extend(send_message(t, kind=kind, mb=a.mb, stage=a.stage,
                                       n_stages=self.n_stages, peer=a.peer, group=self.group,
                                       ready_at=ready_at, counter=self.counter))

    @contextmanager
    def computing(self, a: Action):
        """Around a forward or backward: its start and end on the clock; for a forward, the
        bytes of activations autograd saves for its backward."""
        needs = {F: (F, a.mb, a.stage - 1), B: (B, a.mb, a.stage + 1),
                 W: (B, a.mb, a.stage)}[a.kind]  # W: its own B, on this rank
        start = self.clock.begin(a, needs)
        if a.kind == F:
            saved = _SavedBytes(self.params)
            with saved:
                yield
            self.recorder.forward_done((a.mb, a.stage), saved.nbytes)
        else:
            yield
            if not (self.split and a.kind == B):  # split: the activations stay until W
                self.recorder.backward_done((a.mb, a.stage))
        self.clock.end(a, start)


class _Clock:
    """When compute actions start and end.

    Real compute: the wall clock. Fixed time: an action starts when the rank is free and its
    input is ready (the stamp its producer sent with the data), and ends its stated duration
    later; the rank sleeps until then. Transport latency and core contention are thereby kept
    out of the timeline; an action whose real compute takes longer than stated ends late and
    counts as an overrun.
    """

    def __init__(self, timing: FixedTime | None, recorder: Recorder) -> None:
        self.timing, self.recorder = timing, recorder
        self.free_at = time.perf_counter()
        self.ready: dict[tuple, float] = {}  # message -> when its data was ready at the sender
        self.done: dict[tuple, float] = {}  # (kind, mb, stage) computed here -> its end

    def begin(self, a: Action, needs: tuple) -> float:
        if self.timing is None:
            return time.perf_counter()
        start = max(self.free_at, self.ready.get(needs, 0.0), self.done.get(needs, 0.0))
        _sleep_until(start)
        return start

    def end(self, a: Action, start: float) -> None:
        now = time.perf_counter()
        end = now
        if self.timing is not None:
            end = start + self.timing.duration(a.kind, a.stage)
            if now > end:
                self.recorder.overruns += 1
                end = now
        self.free_at = self.done[(a.kind, a.mb, a.stage)] = end
        self.recorder.add(a, start, end)

    def finish(self) -> None:
        if self.timing is not None:
            _sleep_until(self.free_at)


def _sleep_until(t: float) -> None:
    while (left := t - time.perf_counter()) > 0:
        time.sleep(left)


def gather_timeline(per_rank: Sequence[dict], mode: str) -> Timeline:
    """A Timeline from what each rank's recorder returned, with time 0 at the first start."""
    return Timeline.from_ranks(
        [r["events"] for r in per_rank], mode=mode,
        peak_in_flight=[r["peak_in_flight"] for r in per_rank],
        peak_activation_bytes=[r["peak_activation_bytes"] for r in per_rank],
        overruns=sum(r["overruns"] for r in per_rank))
