"""Running a function on N ranks, from a notebook, a test or a script.

Read in this order:

1. :mod:`labs.runtime.launcher` -- ``labs.launch(fn, world_size)``: input checks, the run
   folder, starting ranks, watching them, one clear error about the rank that failed.
2. :mod:`labs.runtime.forkserver` -- the course's own forkserver (torch imported once, so a
   warm launch only forks), code shipped by value; :mod:`labs.runtime.forkserver_preload`
   shields it from Ctrl-C.
3. :mod:`labs.runtime.rank` -- what runs inside one rank: device, threads, process group,
   the user's function, reporting back; :mod:`labs.runtime.placement` -- the rank's device and
   share of the cores, without torch at import (so ``import labs`` offers them).
4. :mod:`labs.runtime.processes` -- process trees and groups, the temporary folder, held
   interrupts; :mod:`labs.runtime.output` -- rank output tailed live with ``[rank r]``.
5. :mod:`labs.runtime.errors` -- LaunchError and its kinds.
6. :mod:`labs.runtime.torchrun` -- the same functions under torchrun (``python -m labs run``);
   :mod:`labs.runtime.examples` -- small functions for both.
7. :mod:`labs.runtime.doctor` -- ``python -m labs doctor`` and every notebook's environment cell.
8. :mod:`labs.runtime.host` -- the cores and memory ranks may use (container cgroup limits
   honoured) and the one-sentence refusal on Windows.
9. :mod:`labs.runtime.slurm` -- one Slurm node's torchrun command (N nodes x G GPUs, c10d
   rendezvous from SLURM_* variables), run by ``scripts/slurm/train.sbatch``.

``import labs.runtime`` is cheap: torch is imported when a name below is first used.

Must not: hold logic of its own, import torch at import time, or import labs' course modules
(models, parallelism packages, planner, checks) or the grader: the runtime sits below everything.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "launch": "launcher", "max_world_size": "launcher", "resolve_backend": "launcher",
    "shutdown": "forkserver", "warm_up": "forkserver",
    "device": "placement", "cpu_count": "placement", "threads_per_rank": "placement",
    "LaunchError": "errors", "RankError": "errors", "RankCrashedError": "errors",
    "LaunchTimeoutError": "errors", "HelperError": "errors",
    "doctor": "doctor", "environment": "doctor",
}

__all__ = sorted(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        return getattr(importlib.import_module(f"labs.runtime.{_NAMES[name]}"), name)
    raise AttributeError(f"module 'labs.runtime' has no attribute {name!r}")
