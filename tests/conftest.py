"""Shared test setup: the fixture notebooks are data for the exercise tests, not tests; the
run's numerics variant in the header; which notebook tests were selected (for their one grader
run), and the long background work, started behind a gate that opens at the first test of a
module marked ``leaves_a_core``. Must not: import tests.support.grading
itself (only the notebook tests that grade do)."""

import os
import sys

from tests.support import early

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
    that its one grader run grades only the notebooks whose tests will run; then start the
    session's long background work (issue 37): that grader run, and each selected test module's
    ``start_early(session)`` (its notebook runs), behind the gate that
    :func:`pytest_runtest_setup` opens."""
    grading = sys.modules.get("tests.support.grading")  # imported only by the notebook tests
    modules = {item.module for item in session.items if getattr(item, "module", None) is not None}
    if grading is not None:
        grading.RUNS.selected = {module.__name__ for module in modules}
    if not early.enabled() or session.config.option.collectonly:
        return
    if grading is not None:
        grading.start_early(session.config._tmp_path_factory)
    for module in sorted(modules, key=lambda m: m.__name__):
        start = getattr(module, "start_early", None)
        if callable(start):
            start(session)


def pytest_collection_modifyitems(session, config, items):
    """The tests of a module whose long work runs in the background (it defines
    ``start_early``) run last, in their order: the work then has the session to run in, where
    the cores are idle (tests/support/early.py), before its tests ask for it."""
    def waits(item) -> bool:
        return callable(getattr(getattr(item, "module", None), "start_early", None))

    items[:] = [i for i in items if not waits(i)] + [i for i in items if waits(i)]


def pytest_runtest_setup(item):
    """Open the background work's gate at the first test of a module marked ``leaves_a_core``
    (tests/support/early.py: beside it, not beside the tests that keep both cores busy)."""
    if item.get_closest_marker("leaves_a_core") is not None:
        early.GATE.release()


def pytest_sessionfinish(session):
    """Background work the session never opened the gate for does not run (its thread ends);
    the background's cgroup goes."""
    early.GATE.cancel()
    early.remove_cgroup()
