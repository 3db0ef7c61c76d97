"""The communication of pipeline parallelism: point-to-point messages between stages.

Between stage s and stage s+1 travel, per micro-batch, its activation forward and the gradient
of that activation backward (PTD-P, arXiv:2104.04473 §2.2). Each message has its own tag, made
from (kind, micro-batch, producing stage), so sends and receives pair up whatever order they are
posted in. A send is an ``isend`` (asynchronous: it never blocks the rank; the caller keeps the
work and the tensor alive until it waits), a receive an ``irecv`` waited on at once.

In fixed-time mode (:mod:`labs.pipeline.executor`) every message is followed by a one-element
float64 "stamp": the time its data was ready at the sender. Peers are ranks of the pipeline's
process group, passed explicitly (``group=None``: the default group)::

    pending = send_message(y, kind="F", mb=3, stage=1, n_stages=4, peer=2, group=pp_group)
    x, ready_at = recv_message(shape, kind="F", mb=3, stage=1, n_stages=4, peer=1,
                               group=pp_group, device=device)

Owns: message tags and the stage-to-stage send/recv. Must not: decide the order of actions (the
schedule does), print, keep process groups in globals, or import anything of labs but the schedules.
"""
from __future__ import annotations

import time
from typing import Sequence

import torch
import torch.distributed as dist
from torch import Tensor

from labs.pipeline.schedules import B, F

__all__ = ["message_tag", "send_message", "recv_message"]


def message_tag(kind: str, mb: int, stage: int, n_stages: int) -> int:
    """One tag per message, so sends and receives match whatever order they are posted in.

    ``stage`` is the stage that produced the message: s for the activation leaving stage s,
    s for the gradient leaving stage s backwards. Even tags carry data, odd ones its stamp.
    """
    return 2 * ((mb * n_stages + stage) * 2 + (kind == B))


def _record(counter, kind: str, direction: str, tensor: Tensor, stage: int, start: float) -> None:
    if counter is not None:
        with counter.layer(f"stage {stage}"):
            counter.record(direction, "forward" if kind == F else "backward", tensor, start=start)


def send_message(tensor: Tensor, *, kind: str, mb: int, stage: int, n_stages: int, peer: int,
                 group=None, ready_at: float | None = None,
                 counter=None) -> list[tuple[dist.Work, Tensor]]:
    """``isend`` the activation (``kind="F"``) or gradient (``"B"``) of micro-batch ``mb`` that
    stage ``stage`` produced to group rank ``peer``; with ``ready_at``, also its stamp.
    ``counter`` (a ``labs.collectives.CommCounter``) records the data message.

    Returns the pending (work, tensor) pairs: wait on them before the tensors may change.
    """
    tag = message_tag(kind, mb, stage, n_stages)
    tensor = tensor.contiguous()
    _record(counter, kind, "send", tensor, stage, time.perf_counter())
    pending = [(dist.isend(tensor, group=group, group_dst=peer, tag=tag), tensor)]
    if ready_at is not None:
        stamp = torch.tensor([ready_at], dtype=torch.float64, device=tensor.device)
        pending.append((dist.isend(stamp, group=group, group_dst=peer, tag=tag + 1), stamp))
    return pending


def recv_message(shape: Sequence[int], *, kind: str, mb: int, stage: int, n_stages: int,
                 peer: int, group=None, dtype: torch.dtype = torch.float32, device,
                 with_stamp: bool = False, counter=None) -> tuple[Tensor, float | None]:
    """Receive what stage ``stage`` sent (see :func:`send_message`) from group rank ``peer``;
    returns (the tensor, its "ready at" stamp or None). Blocks until it has arrived."""
    tag = message_tag(kind, mb, stage, n_stages)
    buf = torch.empty(tuple(shape), dtype=dtype, device=device)
    start = time.perf_counter()
    dist.irecv(buf, group=group, group_src=peer, tag=tag).wait()
    _record(counter, kind, "recv", buf, stage, start)
    ready_at = None
    if with_stamp:
        stamp = torch.empty(1, dtype=torch.float64, device=device)
        dist.irecv(stamp, group=group, group_src=peer, tag=tag + 1).wait()
        ready_at = stamp.item()
    return buf, ready_at
