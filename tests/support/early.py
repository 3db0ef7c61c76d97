"""Long test work begun before the tests that need it (issue 37).

The notebook tests' grader run and the pre-layout notebooks take minutes, and mostly wait (on
kernels, ranks and start-ups); started when first needed they ran after the unit tests, one
after another, while the unit tests left about a third of the two cores idle. ``GATE.start`` runs
such work in a background thread instead. tests/conftest.py calls each selected test module's
``start_early(session)`` after collection; ``LABS_TESTS_EARLY=0`` turns it off (the work then
runs when its fixture first asks, as before).

The work waits behind a gate until ``GATE.release()``: tests/conftest.py opens it at the first test
of a module marked ``leaves_a_core`` (mostly one process, or waiting on timeouts and start-ups),
and whoever waits for the work's result opens it first (``GATE.result``), so nothing can wait on a
closed gate. Opened at the session's start, the work ran beside the catalog and the benchmarks,
which use both cores: the catalog took 138 s instead of 49 s, and nothing was gained.

Not every long run starts early: all at once they oversubscribe the cores (measured: adding the
solutions' run made ``make test`` 20 min 13 s instead of 18 min 35 s), and a lower priority does
not hold them back here, since each kernel and grader worker starts a session (and so a
scheduler group) of its own.

Owns: ``Gate``, the session's ``GATE``, ``enabled``. Must not: import labs or grader
code, or assert anything.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["GATE", "Gate", "enabled"]


def enabled() -> bool:
    return os.environ.get("LABS_TESTS_EARLY", "1") != "0"


class Gate:
    """Work started behind one gate: it begins when the gate opens."""

    def __init__(self):
        self._open = threading.Event()
        self._cancelled = threading.Event()

    def start(self, name: str, fn, *args) -> Future:
        """``fn(*args)`` in a background thread once the gate opens (:meth:`release`); its
        Future (its result None when the session ended before the gate opened)."""
        def gated():
            self._open.wait()
            return None if self._cancelled.is_set() else fn(*args)

        pool = ThreadPoolExecutor(1, thread_name_prefix=f"early-{name}")
        future = pool.submit(gated)
        pool.shutdown(wait=False)
        return future

    def release(self) -> None:
        """Open the gate: the work behind it begins (now, or at once when started later)."""
        self._open.set()

    def result(self, futures: list) -> None:
        """Open the gate and wait for ``futures``."""
        self.release()
        concurrent.futures.wait(futures)

    def cancel(self) -> None:
        """At the session's end: work still behind the gate never runs (its thread ends)."""
        self._cancelled.set()
        self._open.set()


GATE = Gate()  # the session's (tests/conftest.py opens it)
