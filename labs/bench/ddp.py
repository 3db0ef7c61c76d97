"""Data parallel step time: the hand-written variants (labs.data_parallel) vs torch DDP, and the
speedup of 2 ranks over 1 for a compute-heavy configuration.

The measurements are :mod:`labs.data_parallel.experiments` (notebook 2.1 calls the same
functions); the conditions are described there and printed with the results.
Targets on a 2-core machine: overlapped within 1.2× of torch DDP; speedup >= 1.5×.

Owns: this benchmark's main and its printed table. Must not: hold a measurement of its own
(labs.data_parallel.experiments owns them), assert its targets, or be imported by labs' course
modules.
"""
from __future__ import annotations

import argparse
import os

import labs
from labs._moved import moved_attribute
from labs.data_parallel.experiments import COMPUTE_HEAVY, SMALL, speedup, step_times
from labs.models import MLP

__all__ = ["main"]

TARGET_OVERLAP_RATIO = 1.2
TARGET_SPEEDUP = 1.5


def scaling_verdict_allowed(load: float, cores: int, ranks: int) -> bool:
    """Whether a speedup of ``ranks`` over 1 rank says anything: the N-rank run needs ``ranks``
    idle cores, so other work (the 1-minute load average before the runs) must leave them, give or
    take half a core."""
    return cores - load >= ranks - 0.5


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def __getattr__(name):  # the experiments used to live here (notebooks before the move)
    return moved_attribute(__name__, name)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench ddp",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per measurement")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    parser.add_argument("--rounds", type=int, default=2, help="repeat and keep the minimum")
    parser.add_argument("--quick", action="store_true",
                        help="the small MLP of notebook 2.1 (a smoke run: the targets are for "
                             "the compute-heavy one)")
    args = parser.parse_args(argv)
    load_before = _load()
    heavy = SMALL if args.quick else COMPUTE_HEAVY
    params = MLP(heavy["sizes"]).num_params()
    print(f"data parallel step time: MLP {heavy['sizes']} ({params / 1e6:.1f} M params, "
          f"{4 * params / 2**20:.0f} MB of gradients), SGD, {heavy['batch_per_rank']} samples "
          f"per rank, gloo, {args.threads} thread(s) per rank, {labs.cpu_count()} CPU cores; "
          f"min of {args.steps} steps x {args.rounds} rounds of the slowest rank; load average {load_before:.2f} before the runs")
    times = {}
    for _ in range(args.rounds):
        got = labs.launch(step_times, args.ranks, args=(heavy["sizes"], heavy["batch_per_rank"]),
                              kwargs=dict(steps=args.steps, threads=args.threads), timeout=600)[0]
        times = {v: min(t, times.get(v, t)) for v, t in got.items()}
    print(f"{'variant':<18} {'ranks':>5} {'step ms':>9} {'vs torch DDP':>13}")
    for variant, seconds in times.items():
        print(f"{variant:<18} {args.ranks:>5} {seconds * 1e3:>9.1f} "
              f"{seconds / times['ddp']:>12.2f}x", flush=True)
    ratio = times["overlapped"] / times["ddp"]
    print(f"target: overlapped within {TARGET_OVERLAP_RATIO}x of torch DDP: {ratio:.2f}x -> "
          f"{'met' if ratio <= TARGET_OVERLAP_RATIO else 'NOT met'}")
    result = speedup(heavy["sizes"], heavy["batch_per_rank"], world_size=args.ranks,
                     steps=args.steps, threads=args.threads, rounds=args.rounds)
    print(f"speedup (torch DDP, weak scaling, per-rank batch {result['batch_per_rank']}): "
          f"1 rank {result['t1'] * 1e3:.1f} ms/step, {args.ranks} ranks "
          f"{result['tn'] * 1e3:.1f} ms/step -> speedup {result['speedup']:.2f}x, scaling "
          f"efficiency {result['efficiency']:.0%} (limit {args.ranks}x)")
    cores = labs.cpu_count()
    if not scaling_verdict_allowed(load_before, cores, args.ranks):
        print(f"target: speedup >= {TARGET_SPEEDUP}x: no verdict: the machine's load average was "
              f"{load_before:.2f} on {cores} cores, so {args.ranks} ranks did not have "
              f"{args.ranks} idle cores (rerun on an idle machine)")
    else:
        print(f"target: speedup >= {TARGET_SPEEDUP}x: "
              f"{'met' if result['speedup'] >= TARGET_SPEEDUP else 'NOT met'} (load average "
              f"{load_before:.2f} before, {_load():.2f} after, {cores} cores)")
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
