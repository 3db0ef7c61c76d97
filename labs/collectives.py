"""Collectives written by hand over point-to-point send/recv, and the bytes they move.

Ring all-reduce is a reduce-scatter followed by an all-gather (Patarasuk & Yuan, "Bandwidth
optimal all-reduce algorithms for clusters of workstations", JPDC 2009; Horovod and NCCL's
ring algorithm work this way). The tensor is cut into N chunks (``tensor_split``, so any size
works); in each of N-1 steps every rank sends one chunk to its right neighbour while it
receives one from its left. Reduce-scatter adds what it receives, all-gather stores it. Each
rank therefore sends 2(N-1)/N·S bytes, below 2S however large N is
(``ring_all_reduce_bytes_per_rank``, a formula of :mod:`labs.cost`); the naive scheme (everyone
sends to rank 0, rank 0 sends the sum back) makes rank 0 send (N-1)·S.

:func:`interpret_sweep` and :func:`interpret_ring_vs_library` read a measured sweep and say in
words (in the notebook's language, :mod:`labs.messages`) what this machine shows -- where
latency turns into bandwidth, which implementation won -- including where it disagrees with the
usual picture and why; notebook 2.0 prints them under its measurements.

Every function takes the process group as ``group=None`` (None: the default group) and an
optional :class:`CommCounter` (also named ``ByteCounter``: the course's one counter of sends,
receives and collectives), both passed explicitly (the only module state is a cache of
receive buffers). With one rank in the group a collective returns its input unchanged. All of
them work in place, like ``torch.distributed.all_reduce``::

    counter = ByteCounter()
    ring_all_reduce(t, counter=counter)     # t now holds the sum over the ranks
    counter.sent == ring_all_reduce_bytes_per_rank(t.numel() * t.element_size(), world_size)

Owns: the hand-written collectives, their byte counts and the bandwidth sweep of notebook 2.0.
Must not: import a parallelism package (data_parallel, tensor_parallel, pipeline, hybrid, planner),
the checks or the grader; print; keep process groups in globals.
"""

from __future__ import annotations

import contextlib
import functools
import math
import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

import labs
from labs.cost import (  # the byte formulas live in labs.cost; re-exported for notebook 2.0
    bus_bandwidth,
    naive_all_reduce_bytes_busiest_rank,
    ring_all_reduce_bytes_per_rank,
)
from labs.messages import text

__all__ = [
    "CommEvent",
    "CommCounter",
    "ByteCounter",
    "ring_chunks",
    "ring_reduce_scatter",
    "ring_all_gather",
    "ring_all_reduce",
    "naive_all_reduce",
    "ring_all_reduce_bytes_per_rank",
    "naive_all_reduce_bytes_busiest_rank",
    "time_collective",
    "bandwidth_sweep",
    "bus_bandwidth",
    "latency_bandwidth_fit",
    "orders_of_magnitude",
    "interpret_sweep",
    "interpret_ring_vs_library",
    "describe_link_gap",
]


# --- counting communication ----------------------------------------------------------------

@dataclass(frozen=True)
class CommEvent:
    """One communication on this rank: what, when in the step, how big, how long it waited."""

    kind: str  # "send", "recv", "all_reduce", "all_gather", "reduce_scatter"
    phase: str  # "forward" or "backward" in a training step, "" outside one
    nbytes: int  # a send / recv: the bytes it moved; a collective: its full message S
    label: str  # what issued it, e.g. the layer "h.0.mlp" or "stage 1"
    start: float  # time.perf_counter() before and after the blocking call
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass
class CommCounter:
    """The one communication counter of the course: every send, receive and collective one rank
    issued, in order (the hand-written collectives here, the tensor-parallel operators, the
    pipeline's messages). Create it inside the launched function, pass it as ``counter=``,
    return it (or ``counter.summary()``).

    ``sent`` / ``received`` (bytes) and ``messages_sent`` / ``messages_received`` count the
    point-to-point traffic; ``summary()`` groups everything by phase and kind. ``with
    counter.layer("h.0.mlp"):`` labels what is issued inside (a backward collective keeps the
    label of the forward that created it).
    """

    events: list = field(default_factory=list)
    label: str = ""

    @contextlib.contextmanager
    def layer(self, label: str):
        saved, self.label = self.label, label
        try:
            yield self
        finally:
            self.label = saved

    def record(self, kind: str, phase: str, tensor: torch.Tensor, label: str | None = None,
               start: float | None = None) -> None:
        end = time.perf_counter()
        self.events.append(CommEvent(kind, phase, tensor.numel() * tensor.element_size(),
                                     self.label if label is None else label,
                                     end if start is None else start, end))

    def record_send(self, tensor: torch.Tensor, *, phase: str = "",
                    start: float | None = None) -> None:
        self.record("send", phase, tensor, start=start)

    def record_recv(self, tensor: torch.Tensor, *, phase: str = "",
                    start: float | None = None) -> None:
        self.record("recv", phase, tensor, start=start)

    def reset(self) -> None:
        self.events.clear()

    def summary(self, by_label: bool = False) -> dict:
        """``{(phase, kind): (count, bytes)}`` (keys start with the label when ``by_label``)."""
        out: dict = {}
        for e in self.events:
            key = (e.label, e.phase, e.kind) if by_label else (e.phase, e.kind)
            count, nbytes = out.get(key, (0, 0))
            out[key] = (count + 1, nbytes + e.nbytes)
        return out

    def _total(self, kind: str) -> int:
        return sum(e.nbytes for e in self.events if e.kind == kind)

    @property
    def sent(self) -> int:
        """Bytes this rank sent point-to-point."""
        return self._total("send")

    @property
    def received(self) -> int:
        """Bytes this rank received point-to-point."""
        return self._total("recv")

    @property
    def messages_sent(self) -> int:
        return sum(e.kind == "send" for e in self.events)

    @property
    def messages_received(self) -> int:
        return sum(e.kind == "recv" for e in self.events)

    @property
    def seconds(self) -> float:
        """Seconds spent inside blocking calls (communication plus waiting for peers)."""
        return sum(e.seconds for e in self.events)


ByteCounter = CommCounter  # the name notebook 2.0 introduces it by: the same class


# --- point-to-point plumbing -------------------------------------------------------------

def _rank_and_size(group) -> tuple[int, int]:
    return dist.get_rank(group), dist.get_world_size(group)


def _p2p(*, send: torch.Tensor | None = None, to: int | None = None,
         recv: torch.Tensor | None = None, source: int | None = None, group,
         counter: CommCounter | None) -> None:
    """Send ``send`` to group rank ``to`` while receiving ``recv`` from ``source``; wait both.

    Posting the receive and the send together, before waiting, is what keeps a ring from
    deadlocking: every rank sends and receives at the same time (and the two overlap).
    Empty tensors are skipped; both sides skip them, since every rank knows the chunk sizes.
    """
    ops = []
    if recv is not None and recv.numel():
        ops.append(dist.P2POp(dist.irecv, recv, group=group, group_peer=source))
    if send is not None and send.numel():
        ops.append(dist.P2POp(dist.isend, send, group=group, group_peer=to))
    if not ops:
        return
    start = time.perf_counter()
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    if counter is not None:
        for op in ops:
            (counter.record_send if op.op is dist.isend else counter.record_recv)(op.tensor,
                                                                                 start=start)


def ring_chunks(tensor: torch.Tensor, world_size: int) -> list[torch.Tensor]:
    """The N chunks of the ring: views of the flattened (contiguous) tensor, sizes differing
    by at most one element (``torch.tensor_split``). Chunk r is the one rank r ends up owning
    after the reduce-scatter."""
    return tensor.view(-1).tensor_split(world_size)


# Receive buffers kept between calls, one per (device, dtype), grown on demand. A fresh
# buffer per call is page-faulted (and zeroed by the OS) on first touch, which at tens of MB
# costs about as much as the reduction itself; NCCL likewise keeps its buffers allocated.
_RECV_BUFFERS: dict = {}


def _recv_buffer(like: torch.Tensor, numel: int) -> torch.Tensor:
    key = (like.device, like.dtype)
    buffer = _RECV_BUFFERS.get(key)
    if buffer is None or buffer.numel() < numel:
        buffer = _RECV_BUFFERS[key] = torch.empty(numel, dtype=like.dtype, device=like.device)
    return buffer[:numel]


def _check_contiguous(tensor: torch.Tensor) -> None:
    if not tensor.is_contiguous():
        raise ValueError(text("collectives.not_contiguous"))


# --- the ring ----------------------------------------------------------------------------

def ring_reduce_scatter(tensor: torch.Tensor, *, group=None,
                        counter: ByteCounter | None = None) -> torch.Tensor:
    """Sum chunk r of ``tensor`` over the ranks onto rank r; returns that chunk (a view).

    In place: ``tensor`` is the workspace, and on return only chunk ``rank`` of
    ``ring_chunks(tensor, N)`` holds a full sum (the other chunks hold partial sums).
    Step s (s = 0..N-2): send chunk (r-s-1) mod N to rank r+1, receive chunk (r-s-2) mod N
    from rank r-1 and add it to our copy; after N-1 steps chunk r has every rank's share.
    """
    _check_contiguous(tensor)
    rank, n = _rank_and_size(group)
    chunks = ring_chunks(tensor, n)
    if n == 1:
        return chunks[0]
    right, left = (rank + 1) % n, (rank - 1) % n
    buffer = _recv_buffer(tensor, chunks[0].numel())  # chunk 0 is the largest
    for step in range(n - 1):
        send = chunks[(rank - step - 1) % n]
        target = chunks[(rank - step - 2) % n]
        incoming = buffer[: target.numel()]
        _p2p(send=send, to=right, recv=incoming, source=left, group=group, counter=counter)
        target.add_(incoming)
    return chunks[rank]


def ring_all_gather(tensor: torch.Tensor, *, group=None,
                    counter: ByteCounter | None = None) -> torch.Tensor:
    """Fill every chunk of ``tensor`` from the rank that owns it; returns ``tensor``.

    In place: on entry chunk r of ``ring_chunks(tensor, N)`` is valid on rank r (the rest is
    overwritten). Step s: send chunk (r-s) mod N to the right, receive chunk (r-s-1) mod N
    from the left straight into its place, no copy.
    """
    _check_contiguous(tensor)
    rank, n = _rank_and_size(group)
    if n == 1:
        return tensor
    chunks = ring_chunks(tensor, n)
    right, left = (rank + 1) % n, (rank - 1) % n
    for step in range(n - 1):
        _p2p(send=chunks[(rank - step) % n], to=right, recv=chunks[(rank - step - 1) % n],
             source=left, group=group, counter=counter)
    return tensor


def ring_all_reduce(tensor: torch.Tensor, *, group=None,
                    counter: ByteCounter | None = None) -> torch.Tensor:
    """Sum ``tensor`` over the ranks, in place, as reduce-scatter then all-gather; returns it.

    Same result as ``dist.all_reduce(tensor)`` (up to the order of float additions); each rank
    sends ``ring_all_reduce_bytes_per_rank(S, N)`` bytes.
    """
    ring_reduce_scatter(tensor, group=group, counter=counter)
    return ring_all_gather(tensor, group=group, counter=counter)


def naive_all_reduce(tensor: torch.Tensor, *, group=None, counter: ByteCounter | None = None,
                     root: int = 0) -> torch.Tensor:
    """Sum ``tensor`` over the ranks, in place, through one root: the contrast to the ring.

    Every rank sends its tensor to ``root`` (a group rank), which adds them and sends the sum
    back to every rank. The root moves ``naive_all_reduce_bytes_busiest_rank(S, N)`` bytes each
    way; it is the bottleneck, and grows with N while the ring's per-rank bytes stay below 2S.
    """
    _check_contiguous(tensor)
    rank, n = _rank_and_size(group)
    if n == 1:
        return tensor
    if rank != root:
        _p2p(send=tensor, to=root, group=group, counter=counter)
        _p2p(recv=tensor, source=root, group=group, counter=counter)
        return tensor
    buffer = _recv_buffer(tensor, tensor.numel()).view_as(tensor)
    peers = [peer for peer in range(n) if peer != root]
    for peer in peers:  # one at a time: the root's link is the bottleneck either way
        _p2p(recv=buffer, source=peer, group=group, counter=counter)
        tensor.add_(buffer)
    for peer in peers:
        _p2p(send=tensor, to=peer, group=group, counter=counter)
    return tensor


# --- timing ------------------------------------------------------------------------------

def time_collective(fn, tensor: torch.Tensor, *, repeats: int = 3, warmup: int = 1,
                    group=None) -> float:
    """Median over ``repeats`` of the slowest rank's seconds for ``fn(tensor)``.

    Call on every rank of ``group``. Each repeat starts from a barrier; the per-rank times are
    combined with a MAX all-reduce, so every rank returns the same number.
    """
    for _ in range(warmup):
        fn(tensor)
    times = torch.zeros(repeats, dtype=torch.float64, device=tensor.device)  # nccl: on GPU
    for i in range(repeats):
        dist.barrier(group=group)
        start = time.perf_counter()
        fn(tensor)
        if tensor.is_cuda:
            torch.cuda.synchronize(tensor.device)
        times[i] = time.perf_counter() - start
    dist.all_reduce(times, op=dist.ReduceOp.MAX, group=group)
    return statistics.median(times.cpu().tolist())


def bandwidth_sweep(sizes_bytes, implementations: dict, *, repeats: int = 3, warmup: int = 1,
                    dtype=torch.float32, device=None, group=None) -> dict:
    """``{name: [seconds per size]}`` for each all-reduce in ``implementations``.

    ``implementations`` maps a name to a function ``f(tensor)`` that all-reduces in place, e.g.
    ``{"ring (hand)": ring_all_reduce, "gloo": dist.all_reduce}``. Call on every rank;
    sizes are rounded down to whole elements of ``dtype``; ``device`` defaults to the rank's
    (``labs.device()``).
    """
    if device is None:
        device = labs.device()
    element = dtype.itemsize
    results = {name: [] for name in implementations}
    for size in sizes_bytes:
        # zeros stay zeros however often they are summed: no overflow over the repeats
        tensor = torch.zeros(max(1, int(size) // element), dtype=dtype, device=device)
        for name, fn in implementations.items():
            call = fn if group is None else functools.partial(fn, group=group)
            results[name].append(time_collective(call, tensor, repeats=repeats,
                                                 warmup=warmup, group=group))
    return results


# --- reading a sweep: what the measurement says about this machine --------------------------
#
# The notebook states the general picture; these functions print what *this* machine measured,
# including when it disagrees with that picture and why (few cores shared by several ranks,
# loopback instead of NVLink). They return text in the notebook's language (labs.messages).

SAME_WITHIN = 0.15  # two timings closer than 15 % are a tie on a shared, noisy machine


def latency_bandwidth_fit(sizes_bytes, seconds) -> dict:
    """The α-β model t ≈ α + S/β read off a sweep (sizes ascending).

    α (``latency_s``) is the shortest time measured: a small message's time is almost all
    fixed cost, and noise only ever adds time, so the minimum is the least disturbed estimate.
    β (``bandwidth``, algorithm bytes/s S/t) is the slope from α at the smallest message to the
    largest message's time; ``crossover_bytes`` = α·β is the size at which S/β equals α: below
    it a message is latency-bound, above it bandwidth-bound. A sweep whose time does not grow
    gives β = inf (no bandwidth-bound region measured).
    """
    sizes, times = [float(s) for s in sizes_bytes], [float(t) for t in seconds]
    if len(sizes) != len(times) or len(sizes) < 2:
        raise ValueError(text("collectives.fit_needs_two_sizes"))
    alpha = min(times)
    grow = times[-1] - alpha
    beta = (sizes[-1] - sizes[0]) / grow if grow > 0 else math.inf
    return dict(latency_s=alpha, bandwidth=beta, crossover_bytes=alpha * beta)


def orders_of_magnitude(ratio: float) -> str:
    """12 -> '一到两个数量级', 390 -> '两到三个数量级' (the decade the ratio falls in; in English
    'one to two orders of magnitude')."""
    if not ratio > 0 or math.isinf(ratio):
        raise ValueError(text("collectives.ratio_not_positive", ratio=ratio))
    if ratio < 10:
        return text("collectives.under_one_order")
    words = text("collectives.numerals").split()  # one .. ten
    decade = min(int(math.log10(ratio)), len(words) - 1)
    return text("collectives.orders_between", low=words[decade - 1], high=words[decade])


def _duration(seconds: float) -> str:
    """0.0031 -> '3.10 ms', 2e-05 -> '20 µs'."""
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def _window_reading(sizes, times, i, j, fit, size) -> str:
    """One window of sizes (i, j), read against the alpha-beta fit of the whole sweep."""
    alpha, beta, crossover = fit["latency_s"], fit["bandwidth"], fit["crossover_bytes"]
    k, r = sizes[j] / sizes[i], times[j] / times[i]
    model = [alpha + s / beta for s in (sizes[i], sizes[j])]  # beta = inf: alpha alone
    predicted, fixed = model[1] / model[0], alpha / model[0]  # fixed: alpha's share at the start
    window = dict(start=size(sizes[i]), end=size(sizes[j]), k=k, r=r)
    if r >= 0.7 * k:
        reading = text("collectives.window_bandwidth_bound", **window)
    elif sizes[j] <= crossover:
        reading = text("collectives.window_latency_bound", fixed=fixed, **window)
    else:
        where = text("collectives.still_below_crossover" if sizes[i] < crossover
                     else "collectives.just_past_crossover")
        reading = text("collectives.window_transition", where=where, fixed=fixed, **window)
    if not 0.5 * predicted <= r <= 2 * predicted:
        reading += text("collectives.window_disturbed", predicted=predicted)
    return reading


def interpret_sweep(sizes_bytes, sweep: dict, world_size: int, *, windows=((0, 3), (5, 8)),
                    cores: int | None = None) -> str:
    """What a :func:`bandwidth_sweep` measured, in words: per implementation α, β and the
    crossover α·β, and for each ``(i, j)`` window of sizes whether its time grew like the size
    (bandwidth-bound) or not (latency-bound). Ends with where latency turns into bandwidth on
    this machine and why it lies there (``cores``: CPU cores, default this machine's)."""
    from labs.plots import format_bytes as size  # why here: no matplotlib in the ranks' imports

    if cores is None:
        cores = labs.cpu_count()
    sizes = [float(s) for s in sizes_bytes]
    lines, crossovers = [], []
    for name, times in sweep.items():
        times = [float(t) for t in times]
        fit = latency_bandwidth_fit(sizes, times)
        alpha, crossover = fit["latency_s"], fit["crossover_bytes"]
        crossovers.append(crossover)
        busbw = bus_bandwidth(sizes[-1], times[-1], world_size)
        line = dict(name=name, alpha=_duration(alpha), size=size(sizes[-1]), busbw=busbw / 1e9)
        lines.append(text("collectives.sweep_line", crossover=size(crossover), **line)
                     if math.isfinite(crossover)
                     else text("collectives.sweep_line_no_bandwidth", **line))
        for i, j in windows:
            if 0 <= i < j < len(sizes):
                lines.append("  " + _window_reading(sizes, times, i, j, fit, size))
    low, high = min(crossovers), max(crossovers)
    if low >= sizes[-1]:
        lines.append(text("collectives.conclusion_no_bandwidth_region", size=size(sizes[-1])))
    elif high >= sizes[-1]:
        lines.append(text("collectives.conclusion_one_latency_bound", size=size(low)))
    else:
        where = (size(low) if size(low) == size(high)
                 else text("collectives.size_range", low=size(low), high=size(high)))
        lines.append(text("collectives.conclusion_crossover", where=where))
    if world_size > cores:
        lines.append(text("collectives.why_here_crowded", world_size=world_size, cores=cores))
    else:
        lines.append(text("collectives.why_elsewhere"))
    return "\n".join(lines)


def _ratio_words(ratio: float, tolerance: float, library: str) -> str:
    if abs(ratio - 1) <= tolerance:
        return text("collectives.ratio_tie", tolerance=tolerance, library=library, ratio=ratio)
    if ratio > 1:
        return text("collectives.ratio_ring_slower", library=library, ratio=ratio)
    return text("collectives.ratio_ring_faster", library=library, ratio=ratio)


def interpret_ring_vs_library(sizes_bytes, ring_s, library_s, *, world_size: int,
                              library: str = "dist.all_reduce", cores: int | None = None,
                              tolerance: float = SAME_WITHIN) -> str:
    """Hand ring against the library's all-reduce at the smallest and the largest size, in
    words: what was measured, what is expected (large: a tie, both send the minimum bytes;
    small: the ring slower, 2(N-1) steps each paying the fixed cost) and, when this machine
    disagrees, why. Ratios within ``tolerance`` of 1 count as a tie."""
    from labs.plots import format_bytes as size  # why here: as above, no matplotlib on the ranks

    if cores is None:
        cores = labs.cpu_count()
    small, large = ring_s[0] / library_s[0], ring_s[-1] / library_s[-1]
    steps = 2 * (world_size - 1)
    large_reading = text("collectives.large_expected" if abs(large - 1) <= tolerance
                         else "collectives.large_implementation")
    if small > 1 + tolerance:
        small_reading = text("collectives.small_expected", steps=steps)
    else:
        crowded = (text("collectives.crowded_cores", world_size=world_size, cores=cores)
                   if world_size > cores else "")
        small_reading = text("collectives.small_disagrees_tie" if small >= 1 - tolerance
                             else "collectives.small_disagrees_faster", crowded=crowded)
    return "\n".join([
        text("collectives.ratio_line", size=size(sizes_bytes[-1]),
             words=_ratio_words(large, tolerance, library), reading=large_reading),
        text("collectives.ratio_line", size=size(sizes_bytes[0]),
             words=_ratio_words(small, tolerance, library), reading=small_reading)])


def describe_link_gap(measured_bytes_per_s: float, link_bytes_per_s: float, *,
                      link: str = "NVLink", here: str | None = None) -> str:
    """'NVLink 每个方向 300 GB/s，是本机实测 0.75 GB/s 的约 400 倍（两到三个数量级）'
    (``here`` names the measurement; default "measured here" in the notebook's language)."""
    ratio = link_bytes_per_s / measured_bytes_per_s
    return text("collectives.link_gap", link=link, link_gbps=link_bytes_per_s / 1e9,
                here=here if here is not None else text("collectives.here_measured"),
                measured_gbps=measured_bytes_per_s / 1e9, ratio=ratio,
                orders=orders_of_magnitude(ratio))
