"""The closing "notebook ran in N s" counts the cells' own run time, not the reader's pauses."""
from __future__ import annotations

from labs.notebook import cell_clock


class Events:
    def __init__(self):
        self.callbacks = {}

    def register(self, name, fn):
        self.callbacks.setdefault(name, []).append(fn)

    def unregister(self, name, fn):
        self.callbacks[name].remove(fn)

    def fire(self, name):
        for fn in list(self.callbacks.get(name, [])):
            fn(None)


class Shell:
    def __init__(self):
        self.events = Events()


def test_pauses_between_cells_do_not_count():
    now = [100.0]
    shell = Shell()
    clock = cell_clock.CellClock(shell, clock=lambda: now[0])
    now[0] += 2.0                      # the setup cell runs 2 s after starting the clock
    shell.events.fire("post_run_cell")
    now[0] += 180.0                    # the reader reads for three minutes
    shell.events.fire("pre_run_cell")
    now[0] += 5.0                      # a 5 s cell
    shell.events.fire("post_run_cell")
    now[0] += 60.0                     # another pause
    shell.events.fire("pre_run_cell")
    now[0] += 0.5                      # the closing cell reads the clock while it runs
    assert clock.seconds() == 7.5
    clock.stop()
    assert not shell.events.callbacks["pre_run_cell"]


def test_without_ipython_it_is_the_time_since_start():
    clock = cell_clock.start()
    assert 0 <= clock.seconds() < 5
