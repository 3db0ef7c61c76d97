"""Run a course function under torchrun, the path from the notebook to a real cluster.

``labs.launch`` starts ranks on one machine; torchrun starts them on many. The same function
runs under both: ``torchrun --nproc-per-node=4 -m labs run labs.runtime.examples:all_reduce_demo``
(add ``--nnodes``, ``--node-rank`` and ``--rdzv-endpoint`` for several machines).

Owns: loading ``module:function`` and running it under torchrun. Must not: start ranks itself
(torchrun does), or import labs' course modules (models, parallelism packages, planner, checks) or
the grader: the runtime sits below everything (the target is loaded by name).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import NoReturn

import torch.distributed as dist

from labs.messages import text
from labs.runtime import rank as _rank
from labs.runtime.launcher import resolve_backend

__all__ = ["load_function", "init_from_torchrun", "run"]


def load_function(target: str):
    """``package.module:function`` or ``path/to/file.py:function`` -> the function."""
    module_name, sep, attr = target.partition(":")
    if not sep or not attr:
        raise SystemExit(text("runtime.torchrun_bad_target", target=target))
    if module_name.endswith(".py"):
        spec = importlib.util.spec_from_file_location("labs_user_script", module_name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise SystemExit(text("runtime.torchrun_no_function", module=module_name,
                              name=attr)) from None


def init_from_torchrun(*, backend: str = "auto", timeout: float = 600.0,
                       command: str = "-m labs run MODULE:FUNCTION") -> int:
    """Initialise the default process group from torchrun's environment; returns the rank.

    ``backend="auto"`` picks nccl when this node has one GPU per local rank, else gloo (the
    same rule as ``labs.launch``). Outside torchrun it exits with the command to use.
    """
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
               if v not in os.environ]
    if missing:
        raise SystemExit(text("runtime.torchrun_needed", missing=", ".join(missing),
                              command=command))
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    local_world_size = int(os.environ.get("LOCAL_WORLD_SIZE", world_size))
    _rank.setup_rank(backend=resolve_backend(backend, local_world_size), rank=rank,
                     world_size=world_size, local_rank=local_rank,
                     local_world_size=local_world_size, timeout=timeout)
    return rank


def run(target: str, *, backend: str = "auto", timeout: float = 600.0) -> NoReturn:
    """Initialise the process group from torchrun's environment, run the function once, leave
    with ``labs.runtime.rank.exit_rank`` (an exception propagates after the group is destroyed)."""
    fn = load_function(target)
    rank = init_from_torchrun(backend=backend, timeout=timeout, command=f"-m labs run {target}")
    try:
        result = fn()
        print(text("runtime.torchrun_returned", rank=rank, name=fn.__name__, result=result),
              flush=True)
    except BaseException:
        dist.destroy_process_group()
        raise
    _rank.exit_rank(0)


if __name__ == "__main__":  # pragma: no cover
    run(sys.argv[1])
