"""Pipeline parallelism: the hand-written 1F1B executor vs torch.distributed.pipelining.

Both run the same TinyGPT, split the same way, on the same ranks and batches, in real-compute
mode; each step is timed from a barrier to the end of the schedule on every rank (the slowest
rank counts), and the median over the steps is reported. Then the bubble: the measured idle
share per rank in fixed-time mode vs the formula (p-1)/(m+p-1).
Target: the hand-written executor within 1.2x of torch's step time.

Owns: this benchmark's main and its printed table. Must not: hold the executor or the schedules
(labs.pipeline owns them), assert its target, or be imported by labs' course modules.
"""

from __future__ import annotations

import argparse
import statistics

import labs
from labs import pipeline as pp
from labs.models import TinyGPTConfig
from labs.pipeline import experiments as px
from labs.pipeline import step

__all__ = ["main"]

BENCH_CONFIG = TinyGPTConfig(vocab_size=step.VOCAB, block_size=64, n_layer=8, n_head=4, n_embd=128)
TARGET_RATIO = 1.2


def both_executors(run: step.PipelineRun, rounds: int) -> dict:
    """On a rank: alternate blocks of steps of torch's Schedule1F1B and the hand-written 1F1B,
    so that both see the same machine load; returns every step's time."""
    times = {"torch": [], "hand": []}
    for _ in range(rounds):
        times["torch"] += step.torch_pipeline_step(run)["step_s"][1:]  # first step: warm-up
        times["hand"] += step.pipeline_step(run)["step_s"][1:]
    return times


def step_times(n_ranks: int, m: int, steps: int, rounds: int) -> dict:
    run = step.PipelineRun(schedule="1f1b", n_microbatches=m, batch_size=4 * m,
                           config=BENCH_CONFIG, steps=steps + 1)
    per_rank = labs.launch(both_executors, n_ranks, args=(run, rounds), timeout=600)
    # a step ends when its slowest rank ends
    return {name: statistics.median(max(r[name][k] for r in per_rank)
                                    for k in range(len(per_rank[0][name])))
            for name in ("torch", "hand")}


def bubble_table(sizes, ms, timing: pp.FixedTime) -> list[tuple]:
    rows = []
    for p in sizes:
        runs = px.bubble_grid(p, ms, timing)
        per_rank = labs.launch(px.sweep, p, args=(runs,), timeout=600)
        for i, run in enumerate(runs):
            timeline = pp.gather_timeline([r[i] for r in per_rank], pp.mode_label(timing))
            idle = timeline.idle_fraction()
            rows.append((p, run.n_microbatches, sum(idle) / len(idle), max(idle),
                         pp.bubble_fraction(p, run.n_microbatches), timeline.info["overruns"]))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench pp",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2, help="pipeline stages for the step time")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="the bubble of p = 2 only, m = 1, 2, 4 (a smoke run)")
    args = parser.parse_args(argv)
    c = BENCH_CONFIG
    print(f"pipeline step time, 1F1B, real compute: TinyGPT n_layer={c.n_layer} n_embd={c.n_embd} "
          f"T={c.block_size}, p={args.ranks}, m={args.microbatches}, micro-batch 4 sequences, gloo, "
          f"{labs.cpu_count()} CPU cores; median of {args.steps * args.rounds} steps")
    times = step_times(args.ranks, args.microbatches, args.steps, args.rounds)
    ratio = times["hand"] / times["torch"]
    print(f"{'executor':<36} {'step ms':>8}")
    print(f"{'torch.distributed.pipelining 1F1B':<36} {times['torch'] * 1e3:>8.1f}")
    print(f"{'labs.pipeline run_schedule 1F1B':<36} {times['hand'] * 1e3:>8.1f}")
    print(f"ratio hand / torch = {ratio:.2f}x -> target <= {TARGET_RATIO}x "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}")
    timing = pp.FixedTime(0.020, 0.040)
    print(f"\nbubble, 1F1B, {timing.label}: measured idle share vs (p-1)/(m+p-1)")
    print(f"{'p':>2} {'m':>3} {'measured mean':>14} {'max rank':>9} {'formula':>8} {'rel err':>8} "
          f"{'overruns':>8}")
    worst = 0.0
    for p, m, mean, high, formula, overruns in bubble_table(
            [2] if args.quick else [2, 4], [1, 2, 4] if args.quick else [1, 2, 4, 8, 16], timing):
        rel = abs(mean - formula) / formula
        if m >= p:
            worst = max(worst, rel)
        print(f"{p:>2} {m:>3} {mean:>14.3f} {high:>9.3f} {formula:>8.3f} {rel:>7.1%} {overruns:>8}")
    print(f"largest relative error for m >= p: {worst:.1%} -> target <= 10% "
          f"{'met' if worst <= 0.10 else 'NOT met'}")
    return 0
