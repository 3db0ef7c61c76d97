"""The planner's speed: one :func:`~labs.planner.estimate`, one
:func:`~labs.planner.plan` over a 4,096-GPU search space (GPT-3 175B on 4,096
A100-80GB), and one update of the planner widget (set one control until its outputs are
redrawn), all measured in one run. Medians over repeats; the conditions are printed first.
Targets (printed, not asserted): estimate <= 5 ms, plan <= 1 s, widget update <= 1 s.
``--calibration`` prints instead the planner against published runs
(:mod:`labs.planner.calibration`: each row, its accounting, error and source).

Owns: this benchmark's main and its printed table. Must not: hold planner logic (labs.planner owns
it), assert its targets, or be imported by labs' course modules.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from labs import planner as pl
from labs.planner import calibration
from labs.planner.widgets import planner_widget

__all__ = ["main", "TARGETS", "measure"]

TARGETS = {"estimate": 5e-3, "plan": 1.0, "widget update": 1.0}  # seconds


def _median_s(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(*, repeats: int) -> dict:
    """Median seconds of estimate, plan and two kinds of widget update (a training control,
    which reruns decide and plan, and a layout control, which reuses them)."""
    model = pl.Model(n_layers=96, hidden=12288, n_heads=96, seq_len=2048, vocab=51200)
    cluster = pl.Cluster("A100-80GB", 4096)
    train = pl.Training(global_batch=1536, micro_batch=1, recompute="full")
    out = {"estimate": _median_s(lambda: pl.estimate(model, cluster, train, tp=8, pp=16, dp=32),
                                 repeats * 20)}
    plans = pl.plan(model, cluster, train)
    out["plan"] = _median_s(lambda: pl.plan(model, cluster, train), repeats)
    out["considered"] = plans.considered
    widget = planner_widget(preset="GPT-3 175B", n_gpus=4096, global_batch=1536)
    batches = iter([768, 1536] * repeats)
    out["widget update"] = _median_s(lambda: widget.set(global_batch=next(batches)), repeats)
    degrees = iter([8, 0] * repeats)
    out["layout update"] = _median_s(lambda: widget.set(pp=next(degrees)), repeats)
    return out


def _verdict(name: str, seconds: float) -> str:
    target = TARGETS[name]
    return f"target <= {target * 1e3:g} ms: {'met' if seconds <= target else 'MISSED'}"


def print_calibration() -> None:
    """The planner against published runs, each on its paper's accounting: the table the
    targets apply to, then FSDP on H100 (:data:`labs.planner.calibration.FSDP_RUNS`)."""
    for title, runs in (("A100 and H100 (targets: median |error| <= 15%, every row within 30%)",
                         calibration.RUNS),
                        ("FSDP on H100 (shown beside, not within those targets)",
                         calibration.FSDP_RUNS)):
        rows = calibration.table(runs)
        print(title)
        print(f"{'run':26s} {'layout':>12s} {'acc.':>6s} {'estimate':>9s} {'reported':>9s} "
              f"{'error':>6s}  source")
        for r in rows:
            c = r.estimate.config
            print(f"{r.run.name:26s} {f'{c.tp}x{c.pp}x{c.dp}':>12s} {r.run.accounting:>6s} "
                  f"{r.estimated:9.0f} {r.run.reported:9.0f} {r.error:+6.0%}  {r.run.source}")
        s = calibration.summary(rows)
        print(f"median |error| {s['median_abs_error']:.0%}, largest {s['max_abs_error']:.0%}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench planner", description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one repeat (for the tests)")
    parser.add_argument("--calibration", action="store_true",
                        help="print the planner against published runs and stop")
    args = parser.parse_args(argv)
    if args.calibration:
        print_calibration()
        return 0
    repeats = 1 if args.quick else max(1, args.repeats)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"conditions: Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {load:.2f}, {repeats} repeat(s) (estimate: {20 * repeats}), median")
    r = measure(repeats=repeats)
    print(f"estimate: {r['estimate'] * 1e3:.3f} ms (GPT-3 175B, TP 8 x PP 16 x DP 32 on 4096 "
          f"A100-80GB) -- {_verdict('estimate', r['estimate'])}")
    print(f"plan: {r['plan'] * 1e3:.0f} ms ({r['considered']} layouts estimated for GPT-3 175B "
          f"on 4096 A100-80GB) -- {_verdict('plan', r['plan'])}")
    print(f"widget update: {r['widget update'] * 1e3:.0f} ms (global_batch changed: decide + "
          f"plan + redraw); {r['layout update'] * 1e3:.0f} ms (pp changed: redraw only) -- "
          f"{_verdict('widget update', r['widget update'])}")
    return 0
