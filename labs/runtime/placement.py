"""Where a rank runs: its device and its share of the CPU cores (``labs.device()``,
``labs.cpu_count()``).

Apart from :mod:`labs.runtime.rank` (which imports torch at import time) so that ``import labs``
can offer these names explicitly and stay cheap: torch is imported when :func:`device` is first
called (inside a rank it is already loaded).

Owns: the rank's device, the usable cores and their share per rank. Must not: import torch at
import time, start ranks, or import labs' course modules or the grader.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from labs.messages import text
from labs.runtime import host as _host

if TYPE_CHECKING:
    import torch

__all__ = ["cpu_count", "threads_per_rank", "device"]


def cpu_count() -> int:
    """CPU cores this process may use (its affinity, within the container's CPU quota)."""
    return _host.cpu_count()


def threads_per_rank(local_world_size: int) -> int:
    """Share the cores out so that ranks on one machine do not oversubscribe them.

    ``LABS_THREADS_PER_RANK`` (a positive integer) overrides the share, e.g. to run the tests
    with the intra-op thread count of another machine (CI runs them with 1 and with 2).
    """
    override = os.environ.get("LABS_THREADS_PER_RANK", "").strip()
    if override:
        try:
            threads = int(override)
        except ValueError:
            threads = 0
        if threads < 1:
            raise ValueError(text("runtime.threads_per_rank_invalid", value=override))
        return threads
    return max(1, cpu_count() // max(1, local_world_size))


def device() -> torch.device:
    """The device of the calling rank: its own GPU under nccl, else the CPU.

    Outside a launched rank it is the first GPU if there is one, else the CPU.
    """
    # why here: `import labs` offers labs.device() without importing torch (~0.8 s)
    import torch

    name = os.environ.get("LABS_DEVICE")
    if name:
        return torch.device(name)
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
