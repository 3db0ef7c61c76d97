"""Gradient buckets: which gradients travel together in one all-reduce (no communication here).

DDP packs gradients into buckets of about ``bucket_cap_mb`` and all-reduces a bucket as soon as
backward has produced all of its gradients, in the reverse order of the parameters (Li et al.,
arXiv:2006.15704 §3.2.3). :mod:`labs.data_parallel.ddp` uses this plan for its bucketed and
overlapped variants.

Owns: the bucket plan. Must not: communicate, import torch, or import the rest of
labs.data_parallel.
"""
from __future__ import annotations

from labs.messages import text

__all__ = ["BUCKET_BYTES", "assign_buckets"]

BUCKET_BYTES = 25 * 2**20  # DDP's default bucket_cap_mb=25


def assign_buckets(sizes_bytes, bucket_bytes: int) -> list[list[int]]:
    """Group tensors (given by their sizes in bytes, in parameter order) into buckets.

    Walks the tensors in *reverse* order, the order in which backward produces gradients, and
    starts a new bucket when the next tensor would push the current one past ``bucket_bytes``;
    a tensor larger than the cap gets a bucket of its own. Returns lists of indices.
    """
    if not bucket_bytes > 0:
        raise ValueError(text("data_parallel.bucket_bytes_not_positive", bucket_bytes=bucket_bytes,
                              default=BUCKET_BYTES))
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes_bytes))):
        if current and filled + sizes_bytes[i] > bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes_bytes[i]
    if current:
        buckets.append(current)
    return buckets
