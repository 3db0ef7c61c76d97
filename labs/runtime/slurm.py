"""The torchrun command of one Slurm node: N nodes x G GPUs meeting at a c10d rendezvous.

Owns: turning a Slurm job's environment (``SLURM_JOB_NODELIST``, ``SLURM_NNODES``, ``SLURM_NODEID``,
``SLURM_JOB_ID``, ``SLURM_GPUS_ON_NODE`` / ``SLURM_GPUS_PER_NODE``) into the torchrun command that
node runs (:func:`torchrun_command`), and ``python -m labs.runtime.slurm`` which runs it (one srun
task per node, see ``scripts/slurm/train.sbatch``). The head node (the first host of the node
list, from ``scontrol show hostnames``) holds the rendezvous; the job id is the rendezvous id.

Must not: import torch, or train anything itself (the training script is
``labs.data_parallel.script``, the same one 2.5 runs on one node and on two local "nodes").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

from labs.messages import text

__all__ = ["SCRIPT", "DEFAULT_PORT", "SlurmEnvironmentError", "head_node", "gpus_per_node",
           "torchrun_command", "main"]

SCRIPT = "labs.data_parallel.script"
DEFAULT_PORT = 29500


class SlurmEnvironmentError(ValueError):
    """A Slurm variable the command needs is missing or malformed."""


def _first_host_of(nodelist: str) -> str:
    """The first host of a Slurm node list without scontrol: ``gpu[03-05,09],cpu1`` -> gpu03."""
    first = re.match(r"([^,\[]+)(\[([^\]]+)\])?", nodelist.strip())
    if not first:
        raise SlurmEnvironmentError(text("runtime.slurm_unreadable", name="SLURM_JOB_NODELIST",
                                         value=nodelist))
    prefix, ranges = first.group(1), first.group(3)
    return prefix + ranges.split(",")[0].split("-")[0] if ranges else prefix


def head_node(nodelist: str, *, scontrol: str | None = None) -> str:
    """The first host of ``nodelist``: ``scontrol show hostnames`` where Slurm is installed
    (it knows every form of node list), else read here."""
    scontrol = scontrol if scontrol is not None else shutil.which("scontrol")
    if scontrol:
        out = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True,
                             text=True, timeout=30, check=True).stdout.split()
        if out:
            return out[0]
    return _first_host_of(nodelist)


def gpus_per_node(env: Mapping[str, str]) -> int:
    """GPUs on this node: SLURM_GPUS_ON_NODE, else SLURM_GPUS_PER_NODE (``4``, ``a100:4`` or
    ``gpu:a100:4``), else 0 (a CPU job: one gloo process per node)."""
    for name in ("SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE"):
        value = env.get(name, "").strip()
        if value:
            count = value.split("(")[0].split(",")[0].split(":")[-1]
            if not count.isdigit():
                raise SlurmEnvironmentError(text("runtime.slurm_unreadable", name=name,
                                                 value=value))
            return int(count)
    return 0


def _integer(env: Mapping[str, str], *names: str) -> int:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            if not value.isdigit():
                raise SlurmEnvironmentError(text("runtime.slurm_unreadable", name=name,
                                                 value=value))
            return int(value)
    raise SlurmEnvironmentError(text("runtime.slurm_unset", name=" / ".join(names)))


def torchrun_command(env: Mapping[str, str], script_args: Sequence[str] = (), *,
                     head: str | None = None, python: str = sys.executable) -> list[str]:
    """The torchrun command this node runs, from the Slurm variables in ``env``.

    ``--nnodes`` is SLURM_NNODES, ``--node-rank`` SLURM_NODEID, ``--nproc-per-node`` the node's
    GPUs (1 with gloo on a CPU job), the c10d rendezvous at the head node on LABS_RDZV_PORT
    (default 29500) with SLURM_JOB_ID as its id. ``head`` overrides the head node (tests).
    """
    nnodes = _integer(env, "SLURM_NNODES", "SLURM_JOB_NUM_NODES")
    node_rank = _integer(env, "SLURM_NODEID")
    job_id = _integer(env, "SLURM_JOB_ID")
    if not node_rank < nnodes:
        raise SlurmEnvironmentError(text("runtime.slurm_node_rank", node_rank=node_rank,
                                         nnodes=nnodes))
    if head is None:
        nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
        if not nodelist:
            raise SlurmEnvironmentError(text("runtime.slurm_unset", name="SLURM_JOB_NODELIST"))
        head = head_node(nodelist)
    port = int(env.get("LABS_RDZV_PORT", DEFAULT_PORT))
    gpus = gpus_per_node(env)
    backend = ["--backend", "nccl" if gpus else "gloo"]
    args = list(script_args)
    if "--backend" in args:
        backend = []
    return [python, "-m", "torch.distributed.run", f"--nnodes={nnodes}",
            f"--node-rank={node_rank}", f"--nproc-per-node={max(1, gpus)}",
            "--rdzv-backend=c10d", f"--rdzv-endpoint={head}:{port}", f"--rdzv-id={job_id}",
            "-m", SCRIPT, *backend, *args]


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m labs.runtime.slurm [--print] [SCRIPT ARGS...]``: run (or print) this node's
    torchrun command; srun starts one per node."""
    argv = list(sys.argv[1:] if argv is None else argv)
    show = argv[:1] == ["--print"]
    command = torchrun_command(os.environ, argv[1:] if show else argv)
    if show:
        print(" ".join(command))
        return
    print("node", os.environ.get("SLURM_NODEID"), ":", " ".join(command), file=sys.stderr,
          flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
