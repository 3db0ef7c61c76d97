"""Pipeline schedules as data, and a simulator that checks them and computes their ideal timeline.

A schedule is, for every rank, the ordered list of what that rank does: ``F3`` (forward of
micro-batch 3), ``B3`` (its backward), and the sends and receives that move activations forward
and gradients backward. As in ``torch.distributed.pipelining.schedules``, the list is data: the
simulator (:mod:`labs.pipeline.simulator`) proves it cannot deadlock and computes its ideal
timeline, the executor (:mod:`labs.pipeline.executor`) runs exactly that list on real ranks, and
the plot draws both::

    orders = [one_f_one_b_order(4, 8, stage) for stage in range(4)]    # compute only: F/B
    schedule = add_communication(orders, n_stages=4)                     # + SEND/RECV
    timeline = simulate(schedule, forward_s=1.0, backward_s=2.0)         # labs.pipeline.simulator

Stage ``s`` lives on rank ``s % p`` (p ranks): with one stage per rank that is rank s; with v
model chunks per rank (interleaved 1F1B) rank r holds stages r, r + p, r + 2p, ... ZB-V places
its 2p stages in a V instead: rank r holds r and 2p - 1 - r (:func:`stage_rank`,
:func:`placement_of` reads the placement off a schedule).

GPipe: Huang et al., arXiv:1811.06965. 1F1B (PipeDream-Flush) and interleaved 1F1B:
Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM" (PTD-P), arXiv:2104.04473 §2.2. ZB-H1: Qi et al., "Zero Bubble Pipeline
Parallelism", ICLR 2024, arXiv:2401.10241 §2.1; ZB-V: not in the ICLR paper but in its arXiv
version and in Qi et al., "Pipeline Parallelism with Controllable Memory", arXiv:2405.15362
(torch's ScheduleInterleavedZeroBubble with one chunk per rank and ScheduleZBVZeroBubble compute
the same orders).

Owns: actions, placements and the GPipe / 1F1B / interleaved / ZB-H1 / ZB-V orders. Must not: communicate, import
torch, hold the bubble formulas (labs.formulas.cost) or print.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

from labs.formulas.cost import bubble_fraction, min_microbatches  # the formulas live in labs.formulas.cost
from labs.messages import text

__all__ = ["F", "B", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "COMPUTE", "KINDS", "Action",
           "Schedule", "LOOP", "V_SHAPE", "stage_rank", "placement_of", "gpipe_order", "one_f_one_b_warmup", "one_f_one_b_order",
           "interleaved_order", "zb_h1_order", "zb_v_order", "in_flight_bound", "add_communication",
           "SCHEDULES", "build_schedule", "torch_schedule_error", "compute_order", "bubble_fraction",
           "min_microbatches"]

F, B = "F", "B"  # compute: forward / backward of one micro-batch on one stage
W = "W"  # weight gradient, when the backward is split: B is then the input gradient only
SEND_F, RECV_F = "SEND_F", "RECV_F"  # the activation leaving stage s / entering stage s
SEND_B, RECV_B = "SEND_B", "RECV_B"  # the gradient leaving stage s backwards / entering stage s
COMPUTE = (F, B, W)
KINDS = (F, B, W, SEND_F, RECV_F, SEND_B, RECV_B)


class Action(NamedTuple):
    """One step of one rank: ``kind`` of micro-batch ``mb`` at pipeline stage ``stage``.

    For a send, ``stage`` is the stage whose result leaves; for a receive, the stage that needs
    it. ``peer`` is the other rank of a send or receive (None for compute).
    """

    kind: str
    mb: int
    stage: int
    peer: int | None = None

    def __str__(self) -> str:
        if self.kind in COMPUTE:
            return f"{self.kind}{self.mb}"
        return f"{self.kind}{self.mb}{'->' if self.kind.startswith('SEND') else '<-'}{self.peer}"


Schedule = list[list[Action]]  # schedule[rank] = that rank's actions, in order


LOOP, V_SHAPE = "loop", "v"  # where stages live: r, r + p, r + 2p ... / r and 2p - 1 - r


def stage_rank(stage: int, n_ranks: int, placement: str = LOOP) -> int:
    """The rank that holds ``stage``: looping placement, rank r holds r, r + p, r + 2p, ...; V
    placement (ZB-V: two chunks per rank), rank r holds r and 2p - 1 - r, so the last stage
    sits on rank 0 beside the first, and the turn of the V (stages p - 1, p) on rank p - 1."""
    if placement == V_SHAPE:
        return stage if stage < n_ranks else 2 * n_ranks - 1 - stage
    return stage % n_ranks


def placement_of(schedule: Sequence[Sequence[Action]]) -> str:
    """V_SHAPE when the schedule computes stage p on rank p - 1 (it turns back at the bottom of
    the V), else LOOP: the placement is read off the schedule, which is data."""
    p = len(schedule)
    turn = any(a.stage == p and a.kind in COMPUTE for a in schedule[p - 1])
    return V_SHAPE if p > 1 and turn else LOOP


def _check_counts(n_stages: int, n_microbatches: int) -> None:
    for name, value in (("n_stages", n_stages), ("n_microbatches", n_microbatches)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(text("memory.not_positive_integer", name=name, value=value))


# --- compute orders: what each rank computes, in order --------------------------------------

def gpipe_order(n_stages: int, n_microbatches: int, stage: int) -> list[Action]:
    """GPipe: every micro-batch forward, then every micro-batch backward (arXiv:1811.06965).

    All m micro-batches' activations are alive at once before the first backward.
    """
    _check_counts(n_stages, n_microbatches)
    return ([Action(F, i, stage) for i in range(n_microbatches)]
            + [Action(B, i, stage) for i in range(n_microbatches)])


def one_f_one_b_warmup(n_stages: int, n_microbatches: int, stage: int) -> int:
    """Forwards stage ``stage`` runs before its first backward: min(p - stage - 1, m).

    The last stage starts backward at once; the first waits for p - 1 more forwards to fill
    the pipeline. (torch's Schedule1F1B counts p - stage warmup forwards, its last one fused
    with the first backward: the same order of computation.)
    """
    return min(n_stages - stage - 1, n_microbatches)


def one_f_one_b_order(n_stages: int, n_microbatches: int, stage: int) -> list[Action]:
    """1F1B (PipeDream-Flush, PTD-P §2.2): warmup forwards, steady one-forward-one-backward,
    cooldown backwards. At most p micro-batches are in flight on a stage, whatever m is.
    """
    _check_counts(n_stages, n_microbatches)
    m, warmup = n_microbatches, one_f_one_b_warmup(n_stages, n_microbatches, stage)
    order = [Action(F, i, stage) for i in range(warmup)]  # warmup: fill the pipeline
    for k in range(m - warmup):  # steady: forward of micro-batch warmup + k, backward of k
        order += [Action(F, warmup + k, stage), Action(B, k, stage)]
    order += [Action(B, i, stage) for i in range(m - warmup, m)]  # cooldown: drain it
    return order


def interleaved_order(n_ranks: int, n_chunks: int, n_microbatches: int, rank: int) -> list[Action]:
    """Interleaved 1F1B (PTD-P §2.2.2): rank r holds v = ``n_chunks`` model chunks (stages
    r, r + p, ...); micro-batches go through the chunks in groups of p. The bubble shrinks by v
    at the price of v times more point-to-point messages. Needs m to be a multiple of p.
    """
    _check_counts(n_ranks, n_microbatches)
    p, v, m = n_ranks, n_chunks, n_microbatches
    if not isinstance(v, int) or v < 1:
        raise ValueError(text("memory.not_positive_integer", name="n_chunks", value=v))
    if m % p:
        raise ValueError(text("pipeline.interleaved_multiple", p=p, m=m))

    def unit(k: int, forward: bool) -> Action:  # the k-th forward (or backward) of this rank
        chunk = (k % (p * v)) // p
        mb = (k // (p * v)) * p + k % p
        chunk = chunk if forward else v - 1 - chunk  # backwards go through the chunks in reverse
        return Action(F if forward else B, mb, chunk * p + rank)

    total = m * v
    warmup = min((p - rank - 1) * 2 + (v - 1) * p, total)  # Megatron-LM's warmup count
    order = [unit(k, True) for k in range(warmup)]
    for k in range(total - warmup):
        order += [unit(warmup + k, True), unit(k, False)]
    order += [unit(k, False) for k in range(total - warmup, total)]
    return order


def zb_h1_order(n_stages: int, n_microbatches: int, stage: int) -> list[Action]:
    """ZB-H1 (Qi et al. 2024 §2.1): 1F1B's order with each backward split into B (input
    gradient) and W (weight gradient). Stage s runs 1F1B's warmup, then its first s backwards
    without their W (those W wait: the rank would otherwise idle in the cooldown), then one W
    after every B, and the W still owed at the end. Nothing waits for a W, so the previous
    stage gets its gradient a W earlier; the bubble shrinks to (p-1)(t_F + t_B - t_W). A
    micro-batch is in flight from its F to its W: at most p on every stage (1F1B's peak).
    """
    _check_counts(n_stages, n_microbatches)
    m, warmup = n_microbatches, one_f_one_b_warmup(n_stages, n_microbatches, stage)
    order, owed = [Action(F, i, stage) for i in range(warmup)], []

    def backward(i: int) -> None:
        owed.append(i)
        order.append(Action(B, i, stage))
        if i >= stage:  # the first ``stage`` backwards leave their W for later
            order.append(Action(W, owed.pop(0), stage))

    for k in range(m - warmup):
        order.append(Action(F, warmup + k, stage))
        backward(k)
    for i in range(m - warmup, m):
        backward(i)
    return order + [Action(W, i, stage) for i in owed]


def in_flight_bound(name: str, n_ranks: int, n_microbatches: int, rank: int) -> int:
    """The most micro-batches a rank of schedule ``name`` holds activations for (forwarded,
    weight gradient not yet computed), one stage per rank unless said: GPipe m; 1F1B
    min(p - r, m) (PTD-P §2.2); ZB-H1 min(p, m) on every rank (Qi et al. §2.1: 1F1B's peak,
    p); ZB-V, counted per chunk (half a stage each): min(2p, m + min(r + 1, m)), that is 2p
    chunks = p stages once m >= 2p - 1 (1F1B's memory, arXiv:2405.15362). Interleaved: not bounded here."""
    p, m, r = n_ranks, n_microbatches, rank
    bounds = {"gpipe": m, "1f1b": min(p - r, m), "zb-h1": min(p, m),
              "zb-v": min(2 * p, m + min(r + 1, m))}
    if name not in bounds:
        raise ValueError(text("pipeline.unknown_schedule", name=name, schedules=tuple(bounds)))
    return bounds[name]


def zb_v_order(n_ranks: int, n_microbatches: int, rank: int) -> list[Action]:
    """ZB-V (Qi et al., arXiv:2405.15362; not in the ICLR 2024 paper): 2p stages in a V (rank r holds stages r and 2p - 1 - r, see
    :func:`stage_rank`), every backward split into B and W. Warmup forwards of the first chunk,
    then of both, a steady F-B-W on each chunk in turn, a cooldown whose B come first and whose
    W fill the tail. With t_F = t_B = t_W (per chunk) it idles only while the pipeline fills, at
    1F1B's activation memory. The same order as torch's ScheduleZBVZeroBubble (computed for
    max(m, 2p - 1) micro-batches, the surplus ones dropped)."""
    _check_counts(n_ranks, n_microbatches)
    p, m = n_ranks, n_microbatches
    n = max(2 * p - 1, m)
    low, high = rank, 2 * p - 1 - rank  # this rank's two stages
    order: list[Action] = []
    count = {(k, s): 0 for k in COMPUTE for s in (low, high)}

    def act(kind: str, stage: int, mb: int | None = None) -> None:
        i = count[(kind, stage)] if mb is None else mb
        if mb is None:
            count[(kind, stage)] += 1
        order.append(Action(kind, i, stage))

    for _ in range(2 * (p - rank) - 1):  # warmup: first chunk
        act(F, low)
    for _ in range(rank):  # warmup: both chunks
        act(F, high)
        act(F, low)
    for _ in range(p - rank):  # the second chunk turns at once
        act(F, high)
        act(B, high)
        act(W, high)
    while count[(F, high)] < count[(F, low)] or count[(F, low)] < n:  # steady
        if count[(F, low)] < n:
            act(F, low)
        act(B, low)
        act(W, low)
        act(F, high)
        act(B, high)
        act(W, high)
    done_w = {low: count[(B, low)], high: count[(B, high)]}
    for _ in range(rank):  # cooldown: B first, W later
        act(B, low)
        act(B, high)
    for _ in range(p - rank):
        act(B, low)
        act(W, low, done_w[low])
        done_w[low] += 1
    for stage in (high, low):  # the W still owed
        while done_w[stage] < count[(B, stage)]:
            act(W, stage, done_w[stage])
            done_w[stage] += 1
    return [a for a in order if a.mb < m]


def add_communication(orders: Sequence[Sequence[Action]], n_stages: int | None = None,
                      placement: str = LOOP) -> Schedule:
    """Insert the sends and receives into per-rank compute orders.

    A receive goes right before the compute that needs it; a send right after the compute
    that produced it. Sends are asynchronous (the executor uses isend), receives block.
    """
    p = len(orders)
    n_stages = n_stages or 1 + max(a.stage for order in orders for a in order)
    schedule: Schedule = []
    for rank, order in enumerate(orders):
        out: list[Action] = []
        for a in order:
            prev_rank = stage_rank(a.stage - 1, p, placement)
            next_rank = stage_rank(a.stage + 1, p, placement)
            if a.kind == F and a.stage > 0 and prev_rank != rank:
                out.append(Action(RECV_F, a.mb, a.stage, prev_rank))
            if a.kind == B and a.stage < n_stages - 1 and next_rank != rank:
                out.append(Action(RECV_B, a.mb, a.stage, next_rank))
            out.append(Action(a.kind, a.mb, a.stage))
            if a.kind == F and a.stage < n_stages - 1 and next_rank != rank:
                out.append(Action(SEND_F, a.mb, a.stage, next_rank))
            if a.kind == B and a.stage > 0 and prev_rank != rank:
                out.append(Action(SEND_B, a.mb, a.stage, prev_rank))
        schedule.append(out)
    return schedule


SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "zb-v")


def build_schedule(name: str, n_ranks: int, n_microbatches: int, n_chunks: int = 1) -> Schedule:
    """The full schedule (compute + communication) of ``name`` in SCHEDULES, for every rank.
    torch's own schedule classes (``Schedule1F1B``...) are refused by name: they are executors,
    not tables (:func:`torch_schedule_error`)."""
    refused = torch_schedule_error(name)
    if refused is not None:
        raise refused
    if name == "gpipe":
        orders = [gpipe_order(n_ranks, n_microbatches, r) for r in range(n_ranks)]
    elif name == "1f1b":
        orders = [one_f_one_b_order(n_ranks, n_microbatches, r) for r in range(n_ranks)]
    elif name == "interleaved":
        orders = [interleaved_order(n_ranks, n_chunks, n_microbatches, r) for r in range(n_ranks)]
    elif name == "zb-h1":
        orders = [zb_h1_order(n_ranks, n_microbatches, r) for r in range(n_ranks)]
    elif name == "zb-v":  # two chunks per rank by construction (n_chunks 1 or 2 alike)
        if n_chunks not in (1, 2):
            raise ValueError(text("pipeline.one_chunk", name=name, n_chunks=n_chunks))
        orders = [zb_v_order(n_ranks, n_microbatches, r) for r in range(n_ranks)]
        return add_communication(orders, 2 * n_ranks, V_SHAPE)
    else:
        raise ValueError(text("pipeline.unknown_schedule", name=name, schedules=SCHEDULES))
    if name not in ("interleaved", "zb-v") and n_chunks != 1:
        raise ValueError(text("pipeline.one_chunk", name=name, n_chunks=n_chunks))
    return add_communication(orders, n_ranks * n_chunks)


def torch_schedule_error(schedule) -> ValueError | None:
    """The error for a torch.distributed.pipelining schedule (class or instance) given where the
    course's own is expected (a name of SCHEDULES, or one table of actions per rank); else None."""
    cls = schedule if isinstance(schedule, type) else type(schedule)
    if not (getattr(cls, "__module__", "") or "").startswith("torch.distributed.pipelining"):
        return None
    return ValueError(text("pipeline.torch_schedule_given", shown=cls.__name__,
                           schedules=SCHEDULES))


def compute_order(actions: Sequence[Action]) -> list[str]:
    """A rank's compute actions as strings, e.g. ['F0', 'F1', 'B0', ...] (and 'W0' ... when the
    backward is split)."""
    return [str(a) for a in actions if a.kind in COMPUTE]
