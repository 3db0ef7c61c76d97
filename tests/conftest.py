"""Shared test setup: the fixture notebooks are data for the exercise tests, not tests; the
run's numerics variant in the header; which notebook tests were selected (for their one grader
run). Must not: import tests.support.grading itself (only the notebook tests that grade do)."""

import os
import sys

collect_ignore_glob = ["support/fixtures/*"]


def pytest_report_header(config):
    """Which kernels and thread counts this run uses (CI runs the tests under several)."""
    import torch

    from labs.runtime import rank as _rank

    capability = os.environ.get("ATEN_CPU_CAPABILITY") or "unset"
    threads = os.environ.get("LABS_THREADS_PER_RANK") or "unset"
    try:
        per_rank = _rank.threads_per_rank(2)
    except ValueError as exc:
        per_rank = f"invalid ({exc})"
    return (f"numerics variant: ATen CPU kernels {torch.backends.cpu.get_cpu_capability()} "
            f"(ATEN_CPU_CAPABILITY={capability}), threads per rank of 2: {per_rank} "
            f"(LABS_THREADS_PER_RANK={threads})")


def pytest_collection_finish(session):
    """Tell the notebook grading (tests/support/grading.py) which test modules were selected, so
    that its one grader run grades only the notebooks whose tests will run."""
    grading = sys.modules.get("tests.support.grading")  # imported only by the notebook tests
    if grading is not None:
        grading.SELECTED = {item.module.__name__ for item in session.items
                            if getattr(item, "module", None) is not None}
