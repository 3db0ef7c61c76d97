"""Benchmarks: ``python -m labs.bench NAME``, the command-line mains only (the measurements they
run live in the packages, e.g. :mod:`labs.data_parallel.experiments`). Speed targets live here,
never in the tests.

Owns: the table of benchmarks. Must not: measure anything itself, or be imported by the course's
notebooks, checks or tests' assertions (targets are printed, never asserted)."""

__all__ = ["BENCHMARKS"]

BENCHMARKS = {
    "launch": "labs.bench.launch",
    "collectives": "labs.bench.collectives",
    "ddp": "labs.bench.ddp",
    "gpu": "labs.bench.gpu",
    "pp": "labs.bench.pp",
    "tp": "labs.bench.tp",
    "hybrid": "labs.bench.hybrid",
    "planner": "labs.bench.planner",
    "grade": "grader.bench",  # run as `python -m grader.bench` (labs imports no grader)
}
