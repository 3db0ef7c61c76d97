"""Launch overhead: labs.launch vs torch.multiprocessing.spawn vs torchrun.

Every method runs the same job, a 1-element all-reduce on N gloo ranks, and is timed from
the call to the return of all ranks. "cold" is the first launch in a fresh Python process
(for labs.launch it includes starting the forkserver that imports torch); "warm" is the
median of the following launches in the same process. torchrun is a new command each time, so
it has only a cold time (the median of its runs). Ratios compare like with like: cold with cold
(labs.launch in a fresh interpreter vs torchrun), warm with warm (labs.launch vs mp.spawn in this
process, torch imported): a warm forkserver against a fresh torchrun would mostly measure
interpreter and torch start-up.

Owns: this benchmark's main and its printed table. Must not: change the launcher (it only times it),
assert a target, or be imported by labs' course modules.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch.distributed as dist

from labs.runtime import examples, launcher
from labs.runtime import rank as _rank

COLD_SNIPPET = """
import time, labs
from labs.runtime import examples
t = time.perf_counter()
labs.launch(examples.all_reduce_demo, {n}, backend="gloo", timeout=300)
print(time.perf_counter() - t)
"""


def _spawn_worker(rank: int, world_size: int, store_dir: str) -> None:
    store = dist.FileStore(os.path.join(store_dir, "store"), world_size)
    _rank.setup_rank(backend="gloo", rank=rank, world_size=world_size, local_rank=rank,
                     local_world_size=world_size, timeout=300, store=store)
    examples.all_reduce_demo()
    _rank.exit_rank(0)  # destroys the group; leaves without finalization (its docstring)


def time_spawn(n: int) -> float:
    import torch.multiprocessing as tmp
    with tempfile.TemporaryDirectory() as store_dir:
        start = time.perf_counter()
        tmp.spawn(_spawn_worker, args=(n, store_dir), nprocs=n, join=True)
        return time.perf_counter() - start


SPAWN_COLD_SNIPPET = """
import time
from labs.bench.launch import time_spawn

__all__ = ["main"]
print(time_spawn({n}))
"""


def time_torchrun(n: int) -> float:
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    cmd = ([torchrun] if os.path.exists(torchrun) else
           [sys.executable, "-m", "torch.distributed.run"])
    cmd += ["--standalone", f"--nproc-per-node={n}", "-m", "labs", "run",
            "labs.runtime.examples:all_reduce_demo", "--backend", "gloo"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - start


def _fresh_python(snippet: str) -> float:
    out = subprocess.run([sys.executable, "-c", snippet], check=True, capture_output=True,
                         text=True, timeout=300)
    return float(out.stdout.strip().splitlines()[-1])


def measure(n: int, repeats: int) -> dict:
    """Cold and warm launch times (seconds) of each method at world size n."""
    quiet = dict(stream_out=None, stream_err=None)

    def labs_launch():
        start = time.perf_counter()
        launcher._Run(examples.all_reduce_demo, n, (), {}, "gloo", 300.0, **quiet).run()
        return time.perf_counter() - start

    labs_launch()  # this process's forkserver is started: the next launches are warm
    rows = {
        "labs.launch": (_fresh_python(COLD_SNIPPET.format(n=n)),
                        [labs_launch() for _ in range(repeats)]),
        "mp.spawn": (_fresh_python(SPAWN_COLD_SNIPPET.format(n=n)),
                     [time_spawn(n) for _ in range(repeats)]),
    }
    # torchrun starts a new interpreter (and torch) every time: each run is cold, none is warm
    torchrun_times = [time_torchrun(n) for _ in range(repeats + 1)]
    measured = {name: (cold, statistics.median(warm)) for name, (cold, warm) in rows.items()}
    measured["torchrun"] = (statistics.median(torchrun_times), None)
    return measured


def comparisons(results: dict) -> dict:
    """Like with like: cold labs.launch against cold torchrun (a fresh interpreter that imports
    torch, each), warm labs.launch against warm mp.spawn (torch already imported); ratio > 1 means
    labs.launch is faster."""
    labs_cold, labs_warm = results["labs.launch"]
    return {"cold": ("torchrun", results["torchrun"][0] / labs_cold),
            "warm": ("mp.spawn", results["mp.spawn"][1] / labs_warm)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench launch",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--repeats", type=int, default=3, help="warm launches per method")
    args = parser.parse_args(argv)
    print(f"launch overhead: 1-element all-reduce on gloo, {_rank.cpu_count()} CPU cores, "
          f"median of {args.repeats} warm launches, cold = first launch in a fresh process")
    print(f"{'ranks':>5}  {'method':<12} {'cold s':>8} {'warm s':>8}")
    results = {}
    for n in args.sizes:
        results[n] = measure(n, args.repeats)
        for name, (cold, warm) in results[n].items():
            shown = f"{warm:>8.3f}" if warm is not None else f"{'-':>8}"
            print(f"{n:>5}  {name:<12} {cold:>8.2f} {shown}", flush=True)
        versus = comparisons(results[n])
        print(f"{n:>5}  like with like: cold labs.launch vs cold {versus['cold'][0]} "
              f"{versus['cold'][1]:.1f}x, warm labs.launch vs warm {versus['warm'][0]} "
              f"{versus['warm'][1]:.1f}x (> 1: labs.launch is faster)", flush=True)
    if 4 in results:
        warm4 = results[4]["labs.launch"][1]
        cold = comparisons(results[4])["cold"][1]
        met = warm4 <= 0.3 and cold >= 1
        print(f"target (4 ranks): labs.launch warm <= 0.3 s, and cold no slower than a cold "
              f"torchrun: {warm4:.3f} s, {cold:.1f}x -> {'met' if met else 'NOT met'}")
    return 0
