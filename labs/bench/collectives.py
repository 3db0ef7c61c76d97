"""Hand-written ring all-reduce (labs.collectives) against the backend's dist.all_reduce.

Both run on the same ranks, in the same launch, on the same float32 tensor, alternately
size by size; a time is the median over the repeats of the slowest rank (each repeat starts
from a barrier). The ratio is ring time / dist.all_reduce time: below 1, the hand ring is faster.
Target: the hand ring within 2x of dist.all_reduce at 16 MB and 64 MB.

Owns: this benchmark's main and its printed table. Must not: hold the ring's code (labs.collectives
owns it), assert its target, or be imported by labs' course modules.
"""

from __future__ import annotations

import argparse

import torch.distributed as dist

from labs import collectives
from labs.runtime import launcher
from labs.runtime import rank as _rank

__all__ = ["main"]

MB = 2**20
TARGET_RATIO = 2.0
TARGET_SIZES = (16 * MB, 64 * MB)


def _sweep(sizes, repeats):
    """Rank body: seconds of each implementation at each size."""
    return collectives.bandwidth_sweep(
        sizes, {"ring": collectives.ring_all_reduce, "all_reduce": dist.all_reduce},
        repeats=repeats, warmup=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench collectives",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats per size")
    parser.add_argument("--backend", default="auto", choices=["auto", "gloo", "nccl"])
    args = parser.parse_args(argv)
    sizes = [s * MB for s in args.sizes_mb]
    print(f"ring all-reduce (labs.collectives, isend/irecv) vs dist.all_reduce, float32, "
          f"{_rank.cpu_count()} CPU cores")
    print(f"median of {args.repeats} repeats (after 1 warm-up) of the slowest rank; "
          "ratio = ring / all_reduce")
    print(f"{'ranks':>5} {'backend':>7} {'threads/rank':>12} {'size':>6} {'ring ms':>9} "
          f"{'all_reduce ms':>13} {'ratio':>6}")
    worst = {}
    for n in args.ranks:
        backend = launcher.resolve_backend(args.backend, n)
        threads = _rank.threads_per_rank(n) if backend == "gloo" else "-"
        times = launcher.launch(_sweep, n, args=(sizes, args.repeats), backend=backend,
                                timeout=600)[0]
        for size, ring, ref in zip(sizes, times["ring"], times["all_reduce"]):
            ratio = ring / ref
            if size in TARGET_SIZES:
                worst[(n, size)] = ratio
            print(f"{n:>5} {backend:>7} {threads!s:>12} {_size_label(size):>6} "
                  f"{ring * 1e3:>9.1f} {ref * 1e3:>13.1f} {ratio:>5.2f}x", flush=True)
    if worst:
        met = all(r <= TARGET_RATIO for r in worst.values())
        (n, size), ratio = max(worst.items(), key=lambda kv: kv[1])
        print(f"target: ring within {TARGET_RATIO:g}x of dist.all_reduce at 16 MB and 64 MB: "
              f"worst {ratio:.2f}x ({n} ranks, {_size_label(size)}) -> "
              f"{'met' if met else 'NOT met'}")
    return 0


def _size_label(n: int) -> str:
    return f"{n // MB} MB" if n >= MB else f"{n // 1024} KB"
