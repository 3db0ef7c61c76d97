"""Long test work begun as the session starts, at the lowest CPU priority (issue 37).

The notebook tests' grader run and notebook runs take minutes; started when they are first
needed, they ran after the unit tests, one after another, while the unit tests left a third of
the cores idle (they wait on ranks, timeouts and start-ups). :func:`start` runs such work in a
background thread whose priority (``nice`` 19) every process it starts inherits -- kernels,
ranks, the grader -- so it takes the cores only when the tests in front leave them idle, and the
unit tests run as fast as before. tests/conftest.py calls each selected test module's
``start_early(session)`` after collection; ``LABS_TESTS_EARLY=0`` turns it off (the work then
runs when its fixture first asks, as before).

Owns: ``start``. Must not: import labs or grader code, or assert anything.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["enabled", "start"]

NICE = 19


def enabled() -> bool:
    return os.environ.get("LABS_TESTS_EARLY", "1") != "0"


def _niced(fn, args):
    try:  # Linux: a thread's own priority, which the processes it forks inherit
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
    except (AttributeError, OSError):
        pass
    return fn(*args)


def start(name: str, fn, *args) -> Future:
    """``fn(*args)`` in a background thread at the lowest priority; its Future."""
    pool = ThreadPoolExecutor(1, thread_name_prefix=f"early-{name}")
    future = pool.submit(_niced, fn, args)
    pool.shutdown(wait=False)
    return future
