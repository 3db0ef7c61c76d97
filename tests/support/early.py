"""Long test work begun as the session starts (issue 37).

The notebook tests' grader run and the pre-layout notebooks take minutes, and mostly wait (on
kernels, ranks and start-ups); started when first needed they ran after the unit tests, one
after another, while the unit tests left about a third of the two cores idle. :func:`start` runs
such work in a background thread from the session's start instead. tests/conftest.py calls each
selected test module's ``start_early(session)`` after collection; ``LABS_TESTS_EARLY=0`` turns it
off (the work then runs when its fixture first asks, as before).

Not every long run starts at once: all together they oversubscribe the cores (measured: adding
the solutions' run made ``make test`` 20 min 13 s instead of 18 min 35 s), and a lower priority
does not hold them back here, since each kernel and grader worker starts a session (and so a
scheduler group) of its own. A run started with ``at="tests/labs/"`` waits until the session
reaches the first test under that path (tests/conftest.py tells :func:`reached`), or until its
fixture asks for it first (:func:`now`). The browser's Run All (tests/notebooks/test_browser.py)
waits so for labs' unit tests, which leave a core idle about half the time (launcher, fault and
sleep-bound tests), rather than run beside the grader tests, which keep both cores busy: started
as soon as the earlier background runs had ended, it made ``make test`` only 17 s shorter, and
started when the cores first looked half idle (``/proc/stat``), 1 min 25 s longer.

Owns: ``start``, ``reached``, ``now``, ``cancel_waiting``, ``enabled``. Must not: import labs or grader code, or
assert anything.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["cancel_waiting", "enabled", "now", "reached", "start"]


def enabled() -> bool:
    return os.environ.get("LABS_TESTS_EARLY", "1") != "0"


_GATES: dict[Future, tuple[str | None, threading.Event]] = {}
_CANCELLED = threading.Event()


def start(name: str, fn, *args, at: str | None = None) -> Future:
    """``fn(*args)`` in a background thread; its Future. With ``at`` (a path prefix of test ids),
    the thread first waits until the session reaches a test there, or :func:`now` is called."""
    gate = threading.Event()
    if at is None:
        gate.set()

    def run():
        gate.wait()
        if _CANCELLED.is_set():
            return None
        return fn(*args)

    pool = ThreadPoolExecutor(1, thread_name_prefix=f"early-{name}")
    future = pool.submit(run)
    pool.shutdown(wait=False)
    _GATES[future] = (at, gate)
    return future


def reached(nodeid: str) -> None:
    """The session is about to run the test ``nodeid``: start the runs waiting for it."""
    for at, gate in _GATES.values():
        if at is not None and nodeid.startswith(at):
            gate.set()


def now(future: Future) -> Future:
    """Start ``future``'s run now if it is still waiting (its fixture needs it); ``future``."""
    _GATES[future][1].set()
    return future


def cancel_waiting() -> None:
    """The session ends: runs still waiting never start (their threads end, so the interpreter
    can exit)."""
    _CANCELLED.set()
    for _, gate in _GATES.values():
        gate.set()
