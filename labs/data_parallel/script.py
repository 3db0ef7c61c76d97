"""The data-parallel training of notebook 2.1 as a script for torchrun: the path to a cluster.

One machine, 2 processes::

    torchrun --standalone --nproc-per-node=2 -m labs.data_parallel.script --steps 20

Two machines (run on each, with its own --node-rank; the endpoint is node 0's address)::

    torchrun --nnodes=2 --node-rank=0 --nproc-per-node=8 \\
        --rdzv-backend=c10d --rdzv-endpoint=node0.example:29500 -m labs.data_parallel.script

The script trains TinyGPT (AdamW) with torch DDP (``labs.data_parallel.train_data_parallel``) on the
same seeded global batches as the notebook; with ``--check`` rank 0 also trains one process on
the whole batch and compares (labs.numerics.assert_close: float32 rounding differs a little).
The same function runs from a notebook: ``labs.launch(train_tinygpt, 2)``.

Owns: the torchrun script's arguments, training run and printed result. Must not: hold a DDP variant
of its own (labs.data_parallel.ddp owns them), or import the checks or the grader.
"""
from __future__ import annotations

import argparse
from typing import NoReturn

import torch.distributed as dist

import labs
from labs.data import get_batch
from labs.data_parallel.ddp import VARIANTS, train_data_parallel
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig
from labs.numerics import assert_close
from labs.reference import train_reference
from labs.runtime.rank import exit_rank
from labs.runtime.torchrun import init_from_torchrun

__all__ = ["CONFIG", "train_tinygpt", "main"]

CONFIG = TinyGPTConfig(vocab_size=96, block_size=32, n_layer=2, n_head=4, n_embd=64)


def train_tinygpt(steps: int = 20, batch_size: int = 16, lr: float = 1e-3,
                  variant: str = "ddp", check: bool = False) -> list[float]:
    """Train TinyGPT data-parallel on the ranks of the default group; returns the losses.

    ``batch_size`` is the global batch (split over the ranks)."""
    def batches(step):
        return get_batch(step, batch_size, CONFIG.block_size)

    model = TinyGPT(CONFIG).to(labs.device())
    result = train_data_parallel(model, batches, steps=steps, lr=lr, variant=variant)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print(text("data_parallel.script_result", variant=variant, world_size=world_size,
                   backend=dist.get_backend(), batch_size=batch_size, first=result.losses[0],
                   last=result.losses[-1]), flush=True)
        if check:
            ref = train_reference(TinyGPT(CONFIG), batches, steps=steps, lr=lr)
            # Looser than the float32 policy of labs.numerics: the reference runs on this CPU
            # while the ranks may run on GPUs (other kernels), and over many steps Adam enlarges
            # rounding differences (its update divides by sqrt(v), so a gradient that is only
            # rounding noise still takes a full-size step)
            tol = dict(atol=1e-3, rtol=1e-2)
            assert_close(result.losses, ref.losses, **tol, msg="losses")
            for name, value in ref.state_dict.items():
                assert_close(result.state_dict[name].cpu(), value, **tol, msg=name)
            print(text("data_parallel.script_check_passed"), flush=True)
    return result.losses


def main(argv=None) -> NoReturn:
    parser = argparse.ArgumentParser(prog="torchrun ... -m labs.data_parallel.script",
                                     description=text("data_parallel.script_description"))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16,
                        help=text("data_parallel.script_help_batch_size"))
    parser.add_argument("--lr", type=float, default=1e-3, help=text("data_parallel.script_help_lr"))
    parser.add_argument("--variant", default="ddp", choices=VARIANTS)
    parser.add_argument("--backend", default="auto", choices=["auto", "gloo", "nccl"])
    parser.add_argument("--check", action="store_true",
                        help=text("data_parallel.script_help_check"))
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    init_from_torchrun(backend=args.backend, timeout=args.timeout,
                       command="-m labs.data_parallel.script")
    try:
        train_tinygpt(args.steps, args.batch_size, args.lr, args.variant, args.check)
    except BaseException:
        dist.destroy_process_group()
        raise
    exit_rank(0)  # destroys the group and leaves without finalization (see its docstring)


if __name__ == "__main__":
    main()
