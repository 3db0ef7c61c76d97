"""Tensor parallelism: the hand-written TP MLP and block vs the DTensor (ColwiseParallel /
RowwiseParallel) versions, at TP=2 on gloo.

Both run the same layers cut from the same full block, on the same input, in the same ranks;
rounds alternate between them so that both see the same machine load. A step is forward +
backward, timed from a barrier; the slowest rank counts; the median over steps is reported.
The communication share is the time the hand-written layer spent inside its blocking
collectives (waiting for the peer included), over its step time.
Target: hand-written within 1.3x of DTensor's step time.

Owns: this benchmark's main and its printed table. Must not: hold the TP layers
(labs.tensor_parallel owns them), assert its target, or be imported by labs' course modules.
"""
from __future__ import annotations

import argparse
import statistics
import time

import labs
from labs.models import TinyGPT, TinyGPTConfig
from labs.tensor_parallel.comm import CommCounter
from labs.tensor_parallel.dtensor import DTensorBlock, dtensor_mlp
from labs.tensor_parallel.layers import ParallelMLP
from labs.tensor_parallel.model import ParallelBlock

__all__ = ["main"]

TARGET_RATIO = 1.3


def _step(module, x) -> float:
    import torch.distributed as dist

    dist.barrier()
    start = time.perf_counter()
    module(x.requires_grad_()).sum().backward()
    return time.perf_counter() - start


def both(config: TinyGPTConfig, batch: int, steps: int, rounds: int) -> dict:
    """Rank body: {layer: {impl: [step seconds]}, plus the hand-written communication seconds."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", (torch.distributed.get_world_size(),))
    full = TinyGPT(config, seed=0).transformer.h[0]
    counter = CommCounter()
    layers = {"MLP": {"hand": ParallelMLP(full.mlp, counter=counter),
                      "dtensor": dtensor_mlp(full.mlp, mesh)},
              "block": {"hand": ParallelBlock(full, counter=counter),
                        "dtensor": DTensorBlock(full, mesh)}}
    x = torch.randn(batch, config.block_size, config.n_embd)
    out = {}
    for name, impls in layers.items():
        times = {"hand": [], "dtensor": [], "comm": []}
        for impl in impls.values():
            _step(impl, x.clone())  # warm-up
        for _ in range(rounds):
            for impl_name, impl in impls.items():
                for _ in range(steps):
                    counter.reset()
                    times[impl_name].append(_step(impl, x.clone()))
                    if impl_name == "hand":
                        times["comm"].append(counter.seconds)
        out[name] = times
    return out


def measure(config: TinyGPTConfig, batch: int, steps: int, rounds: int, tp: int = 2) -> dict:
    per_rank = labs.launch(both, tp, args=(config, batch, steps, rounds), backend="gloo", timeout=600)
    result = {}
    for name in per_rank[0]:
        n = len(per_rank[0][name]["hand"])
        slowest = {impl: [max(r[name][impl][k] for r in per_rank) for k in range(n)]
                   for impl in ("hand", "dtensor")}
        comm_share = statistics.median(r[name]["comm"][k] / r[name]["hand"][k]
                                       for r in per_rank for k in range(n))
        result[name] = (statistics.median(slowest["hand"]), statistics.median(slowest["dtensor"]),
                        comm_share)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench tp",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=256, help="n_embd of the block")
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5, help="steps per round")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    config = TinyGPTConfig(vocab_size=96, block_size=args.seq, n_layer=1, n_head=8,
                           n_embd=args.width)
    print(f"tensor parallel, TP=2 on gloo, {labs.cpu_count()} CPU cores; one block "
          f"n_embd={args.width}, n_head=8, input {args.batch}x{args.seq}; forward + backward, "
          f"median of {args.steps * args.rounds} steps (slowest rank)")
    print(f"{'layer':<6} {'hand ms':>9} {'DTensor ms':>11} {'hand/DTensor':>13} {'comm share':>11}")
    worst = 0.0
    for name, (hand, dtensor, share) in measure(config, args.batch, args.steps,
                                                args.rounds).items():
        worst = max(worst, hand / dtensor)
        print(f"{name:<6} {hand * 1e3:>9.2f} {dtensor * 1e3:>11.2f} {hand / dtensor:>12.2f}x "
              f"{share:>10.0%}", flush=True)
    print(f"target: hand-written within {TARGET_RATIO}x of DTensor: worst {worst:.2f}x -> "
          f"{'met' if worst <= TARGET_RATIO else 'NOT met'}")
    return 0
