"""Collectives written by hand over point-to-point send/recv, and the bytes they move.

Ring all-reduce is a reduce-scatter followed by an all-gather (Patarasuk & Yuan, "Bandwidth
optimal all-reduce algorithms for clusters of workstations", JPDC 2009; Horovod and NCCL's
ring algorithm work this way). The tensor is cut into N chunks (``tensor_split``, so any size
works); in each of N-1 steps every rank sends one chunk to its right neighbour while it
receives one from its left. Reduce-scatter adds what it receives, all-gather stores it. Each
rank therefore sends 2(N-1)/N·S bytes, below 2S however large N is
(``ring_all_reduce_bytes_per_rank``, a formula of :mod:`labs.formulas.cost`); the naive scheme (everyone
sends to rank 0, rank 0 sends the sum back) makes rank 0 send (N-1)·S.

:mod:`labs.bandwidth` times them over message sizes and reads the sweep
(:func:`interpret_sweep`, :func:`interpret_ring_vs_library`); its names are re-exported here,
where notebook 2.0 reads them.

Every function takes the process group as ``group=None`` (None: the default group) and an
optional :class:`CommCounter` (also named ``ByteCounter``: the course's one counter of sends,
receives and collectives), both passed explicitly (the only module state is a cache of
receive buffers). With one rank in the group a collective returns its input unchanged. All of
them work in place, like ``torch.distributed.all_reduce``::

    counter = ByteCounter()
    ring_all_reduce(t, counter=counter)     # t now holds the sum over the ranks
    counter.sent == ring_all_reduce_bytes_per_rank(t.numel() * t.element_size(), world_size)

Owns: the hand-written collectives and the course's one counter of their bytes.
Must not: import a parallelism package (data_parallel, tensor_parallel, pipeline, hybrid, planner),
the checks or the grader; print; keep process groups in globals.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from labs.formulas.cost import (  # the byte formulas live in labs.formulas.cost; re-exported for notebook 2.0
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


# The timing and the sweep's readings live in labs.bandwidth; notebook 2.0 reads them here.
from labs.bandwidth import (  # noqa: E402
    time_collective,
    bandwidth_sweep,
    latency_bandwidth_fit,
    orders_of_magnitude,
    interpret_sweep,
    interpret_ring_vs_library,
    describe_link_gap,
)
