"""Long test work begun before the tests that need it (issue 37).

The notebook tests' grader run, the pre-layout notebooks and the benchmarks' smoke runs take
minutes, and partly wait (on kernels, ranks and start-ups); run by the tests that need them, they
ran one after another while other stretches of the session left a core idle. ``GATE.start``
runs such work in a background thread instead: tests/conftest.py calls each selected test
module's ``start_early(session)`` after collection and puts those modules' tests last, so that
the work has the session to run in; ``LABS_TESTS_EARLY=0`` turns it off (the work then runs
when its fixture first asks).

Where the machine lets the tests make a cgroup (cgroup v1's ``cpu`` controller, writable: root
in a container, as CI runs), every process the background work starts goes into that one cgroup
(:func:`command`), whatever sessions its grader workers, kernels and ranks start. It is then one
scheduler group with one group's share: it takes the cores the tests leave idle and at most an
even share of those they use. Without it, each of those sessions was a group of its own with a
full share, so the background took most of the machine and the tests beside it slowed by up to
four times; a lower cgroup share starved it instead (100 of 1024: a check's 20 s launch
deadline passed in a grader run). The work waits behind a gate that tests/conftest.py opens at
the first test of a module marked ``leaves_a_core`` (mostly one process, or waiting on timeouts
and start-ups): begun at the session's start it slowed the answer catalog, whose ranks exchange
many small messages, from 55 s to over 120 s. Whoever waits for the work's result opens the gate
first (``GATE.result``), so nothing waits on a closed gate.

The background's own Python stays out of the test process: the pre-layout notebooks' nbclient
runs in a process of its own (tests/support/notebook_runs.py); in a thread here it held the GIL
and slowed the tests beside it 2.5 times, whatever the cgroup did.

Measured on 2 cores, ``make test``: 20 min 9 s with the work at the session's start and no cgroup
(and, by a bug since fixed, the grader run twice), 17 min 44 s gated; 15 min 34 s and (the next
session, same code) 15 min 50 s "with the cgroup behind the gate" -- but until 2026-12-07 no
command made the cgroup, so those runs had none; 14 min 53 s with the cgroup made and the
notebooks' client in a process of its own (and 17 min 4 s in a slower hour of the same machine,
where the answer catalog, which runs before the gate opens, took 80 s instead of 48 s; 13 min
28 s in a faster one, 2026-12-08, the catalog 40 s, where ``LABS_TESTS_EARLY=0`` took 15 min 6 s
80 minutes later, the catalog 44 s: 1,245 core-seconds of CPU against 1,202). Tried
and dropped: the gate at the launcher tests, whose idle time it was to fill: no faster, and a
launcher test failed (a rank that spins took its group's one share, so its peer never reached
the barrier it waits at -- the tests' own ranks are one group beside the background's).
Tried and dropped (2026-12-08): the browser's Run All as background work too, the modules that
count time (launcher, grader limits and faults, measured bubbles, the answer catalog) run first
and every other test beside the background: 16 min 3 s against 13 min 28 s for this code in an
equally fast hour (each of those first modules took the same time in both runs). CPU-bound
tests beside CPU-bound background work cost about a fifth more CPU in all (1,429 against 1,202
core-seconds, by process accounting), a test that times a pipeline's bubble failed beside it,
and the launcher tests took 277 s beside three spinning processes in the cgroup, 112 s alone
(their timeouts count at the machine's pace). Overlap pays only where the tests leave a core
idle and count no time.

Owns: ``Gate``, the session's ``GATE``, ``Selected``, ``enabled``, the background's cgroup
(``command``, ``pool``, ``cgroup_available``, ``remove_cgroup``). Must not: import labs or
grader code, or assert anything.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

__all__ = ["GATE", "Gate", "Selected", "cgroup_available", "command", "enabled", "pool",
           "remove_cgroup"]

# cgroup v1's cpu controller; the background's cgroup has the share of one of the tests' own
# (auto)groups: all the cores they leave idle, half of what they use when one group is busy.
CPU_CGROUPS = Path("/sys/fs/cgroup/cpu")
SHARES = 1024
_CGROUP: list = []  # [the cgroup's folder, or None where none could be made]
_PREFIX = "early-"  # the names of the background work's threads


def enabled() -> bool:
    return os.environ.get("LABS_TESTS_EARLY", "1") != "0"


class Gate:
    """Work started behind one gate: it begins when the gate opens."""

    def __init__(self):
        self._open = threading.Event()
        self._cancelled = threading.Event()

    def start(self, name: str, fn, *args, gated: bool = True) -> Future:
        """``fn(*args)`` in a background thread once the gate opens (:meth:`release`), or at
        once when not ``gated``; its Future (None when the session ended before it began)."""
        def gated_fn():
            if gated:
                self._open.wait()
            return None if self._cancelled.is_set() else fn(*args)

        pool = ThreadPoolExecutor(1, thread_name_prefix=f"{_PREFIX}{name}")
        future = pool.submit(gated_fn)
        pool.shutdown(wait=False)
        return future

    def release(self) -> None:
        """Open the gate: the work behind it begins (now, or at once when started later)."""
        self._open.set()

    def result(self, future: Future):
        """Open the gate, wait for ``future`` (one of :meth:`start`'s) and return its result."""
        self.release()
        return future.result()

    def cancel(self) -> None:
        """At the session's end: work still behind the gate never runs (its thread ends)."""
        self._cancelled.set()
        self._open.set()


GATE = Gate()  # the session's (tests/conftest.py opens it)


class Selected:
    """A test module's long work on its selected parameters: ``fn(select(session))``, begun
    behind :data:`GATE` by the module's ``start_early`` (:meth:`start`), or run when its
    fixture first asks (:meth:`result`) where it was not begun."""

    def __init__(self, name: str, fn, select, gate: Gate | None = None):
        self.name, self.fn, self.select = name, fn, select
        self.gate = gate or GATE  # a test of this machinery passes its own
        self.future: Future | None = None

    def start(self, session) -> None:
        chosen = self.select(session)
        if chosen and self.future is None:
            self.future = self.gate.start(self.name, self.fn, chosen)

    def result(self, session):
        if self.future is not None:
            return self.gate.result(self.future)
        return self.fn(self.select(session))


def _cgroup() -> Path | None:
    """The session's background cgroup, made on first use; None where it cannot be made."""
    if not _CGROUP:
        folder = CPU_CGROUPS / f"labs-tests-{os.getpid()}"
        try:
            folder.mkdir(exist_ok=True)
            (folder / "cpu.shares").write_text(str(SHARES))
            _CGROUP.append(folder)
        except OSError:
            _CGROUP.append(None)
    return _CGROUP[0]


def cgroup_available() -> bool:
    """Whether commands started by the background work run in a cgroup of their own here."""
    return enabled() and _cgroup() is not None


def command(cmd: list[str]) -> list[str]:
    """``cmd`` as this thread runs it: in the background work (a thread of :class:`Gate`'s, or
    one of a :func:`pool` it made) and where the cgroup exists, it first moves itself into the
    cgroup (its children stay there, whatever sessions they start); else ``cmd`` unchanged."""
    if not threading.current_thread().name.startswith(_PREFIX):
        return list(cmd)
    folder = _cgroup()  # made by the first background command
    if folder is None:
        return list(cmd)
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(folder / "cgroup.procs"), *cmd]


def pool(workers: int) -> ThreadPoolExecutor:
    """A thread pool whose threads count as this thread for :func:`command`: background work's
    pool runs its commands in the cgroup, a test's pool outside it."""
    return ThreadPoolExecutor(workers, thread_name_prefix=threading.current_thread().name)


def remove_cgroup() -> None:
    """At the session's end: remove the cgroup (possible once its processes have ended)."""
    if _CGROUP and _CGROUP[0] is not None:
        try:
            _CGROUP[0].rmdir()
        except OSError:
            pass
