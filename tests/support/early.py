"""Long test work begun as the session starts (issue 37).

The notebook tests' grader run and the pre-layout notebooks take minutes, and mostly wait (on
kernels, ranks and start-ups); started when first needed they ran after the unit tests, one
after another, while the unit tests left about a third of the two cores idle. :func:`start` runs
such work in a background thread from the session's start instead. tests/conftest.py calls each
selected test module's ``start_early(session)`` after collection; ``LABS_TESTS_EARLY=0`` turns it
off (the work then runs when its fixture first asks, as before).

Not every long run starts early: all at once they oversubscribe the cores (measured: adding the
solutions' run made ``make test`` 20 min 13 s instead of 18 min 35 s), and a lower priority does
not hold them back here, since each kernel and grader worker starts a session (and so a
scheduler group) of its own.

Owns: ``start``, ``enabled``. Must not: import labs or grader code, or assert anything.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["enabled", "start"]


def enabled() -> bool:
    return os.environ.get("LABS_TESTS_EARLY", "1") != "0"


def start(name: str, fn, *args) -> Future:
    """``fn(*args)`` in a background thread; its Future."""
    pool = ThreadPoolExecutor(1, thread_name_prefix=f"early-{name}")
    future = pool.submit(fn, *args)
    pool.shutdown(wait=False)
    return future
