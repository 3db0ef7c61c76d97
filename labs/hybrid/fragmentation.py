"""Memory fragmentation: what it is (a small allocator you can watch), and how to measure it on a
GPU with PyTorch's caching allocator.

PyTorch does not return freed GPU memory to the driver: it keeps the blocks it got from
``cudaMalloc`` ("reserved") and splits them to serve later requests ("allocated"). When freed
pieces lie between live tensors, the reserved memory can hold enough free bytes in total but no
single piece large enough for the next tensor: the allocator must ``cudaMalloc`` a new segment,
and when the card is full it frees its cache and retries (``num_alloc_retries``) or raises OOM
even though ``memory_reserved() - memory_allocated()`` is large. Tensors of many sizes that live
for different times -- the activations of micro-batches in flight in a pipeline, TP buffers, a
dynamic sequence length -- make it worse.

The remedy is the allocator's configuration (PyTorch docs, "CUDA semantics: memory management",
``PYTORCH_CUDA_ALLOC_CONF``): ``expandable_segments:True`` lets a segment grow in place with
virtual memory mapping, so freed neighbours merge and large blocks need no new segment;
``max_split_size_mb`` stops big cached blocks from being split for small requests.
``torch.cuda.set_per_process_memory_fraction`` is *not* a remedy: it is a cap, an allocation
past the fraction raises OOM; it does not compact or defragment anything.

:func:`simulate` is a first-fit allocator over one fixed segment (not PyTorch's algorithm, which
has size classes and many segments; the effect is the same); :func:`measure_cuda` runs an
allocation pattern on a GPU in a fresh process, with and without expandable segments, and reads
``torch.cuda.memory_stats``.

Owns: the toy allocator and the CUDA measurement (in a child process). Must not: print in the kernel
(only the child process prints its JSON), import other labs packages, or import the grader.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from labs.messages import text

__all__ = ["FirstFit", "simulate", "measure_cuda"]


@dataclass
class FirstFit:
    """A segment of ``capacity`` bytes; ``malloc`` takes the first free gap that is big enough."""

    capacity: int

    def __post_init__(self):
        self.live: dict[str, tuple[int, int]] = {}  # name -> (offset, size)

    def gaps(self) -> list[tuple[int, int]]:
        """Free (offset, size) pieces, in address order."""
        edge, out = 0, []
        for offset, size in sorted(self.live.values()):
            if offset > edge:
                out.append((edge, offset - edge))
            edge = offset + size
        if edge < self.capacity:
            out.append((edge, self.capacity - edge))
        return out

    def malloc(self, name: str, size: int) -> bool:
        """Place ``size`` bytes in the first gap that holds them; False if none does."""
        for offset, gap in self.gaps():
            if gap >= size:
                self.live[name] = (offset, size)
                return True
        return False

    def free(self, name: str) -> None:
        del self.live[name]

    def stats(self) -> dict:
        gaps = [size for _, size in self.gaps()]
        free = sum(gaps)
        largest = max(gaps, default=0)
        return {"allocated": self.capacity - free, "free": free, "largest_free": largest,
                "fragmentation": 1 - largest / free if free else 0.0}


def simulate(capacity: int = 100, small: int = 6, large: int = 30) -> dict:
    """Fill a segment with small tensors, free every other one, then ask for a large one.

    Returns the stats after the frees and whether the large request fit. With the defaults:
    16 small tensors of 6 use 96 of 100 units; freeing 8 of them leaves 52 units free, but the
    largest gap is 6 (each freed slot lies between live ones), so 30 does not fit.
    """
    alloc = FirstFit(capacity)
    names = [f"t{i}" for i in range(capacity // small)]
    for name in names:
        alloc.malloc(name, small)
    for name in names[::2]:
        alloc.free(name)
    stats = alloc.stats()
    stats["request"] = large
    stats["fits"] = alloc.malloc("large", large)
    stats["layout"] = alloc.gaps()
    return stats


_PATTERN = r"""
import json, torch
small, large = {small}, {large}
keep = []
for i in range(64):
    t = torch.empty(small + i * 4096, dtype=torch.uint8, device="cuda")
    keep.append(t)
for i in range(0, 64, 2):
    keep[i] = None
after_free = torch.cuda.memory_stats()
big = torch.empty(large, dtype=torch.uint8, device="cuda")
s = torch.cuda.memory_stats()
print(json.dumps({{k: s.get(k, 0) for k in ("allocated_bytes.all.current",
    "reserved_bytes.all.current", "inactive_split_bytes.all.current", "num_alloc_retries",
    "segment.all.current")}} | {{"inactive_after_free": after_free.get("inactive_split_bytes.all.current", 0)}}))
"""


def measure_cuda(expandable: bool, small: int = 2 << 20, large: int = 48 << 20) -> dict | None:
    """On a GPU: allocate 64 tensors of growing size, free every other one, allocate a large
    one; return ``torch.cuda.memory_stats`` figures (bytes). ``expandable`` sets
    ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` for that fresh process (the setting is
    read when CUDA starts, so it cannot change inside a running one). None without a GPU."""
    import os

    import torch

    if not torch.cuda.is_available():
        return None
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=f"expandable_segments:{expandable}")
    proc = subprocess.run([sys.executable, "-c", _PATTERN.format(small=small, large=large)],
                          env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(text("hybrid.cuda_pattern_failed", stderr=proc.stderr[-2000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])
