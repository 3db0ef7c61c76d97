"""The notebook tests' one grader run (tests/support/grading.py, issue 27): every selected notebook
test module's variants are graded in a single run, each module gets back its own records, a
module whose plant no longer applies fails alone, and a deselected module is not graded.

The grader itself is replaced by a recorder here: the real runs are the notebook tests'."""
from __future__ import annotations

import os

import pytest

# as `support`: test_markers would take the usual name and call for a real grader run
from tests.support import early
from tests.support import grading as support


class _Factory:
    def mktemp(self, name):
        return f"/tmp/{name}"


@pytest.fixture
def runs():
    """A grading state of the test's own (never the session's, whose run may be under way):
    each grader run's folders and time limit; the records name their folder."""
    calls = []

    def grade_folders(root, folders, timeout):
        calls.append((sorted(folders), timeout))
        return {folder: {"folder": folder, "notebook": name} for folder, (name, _) in
                folders.items()}

    return support.Runs(grade_folders, early.Gate()), calls


def _gone():
    raise AssertionError("the planted line is no longer in the solution")


def test_one_run_grades_every_selected_module_and_each_gets_its_own(runs):
    state, runs = runs
    state.declare("test_notebook_a", "a.ipynb", lambda: {"solution": 1, "wrong": 2},
                    timeout=100)
    state.declare("notebooks.test_notebook_b", "b.ipynb", lambda: {"solution": 3}, timeout=500)
    state.declare("test_notebook_c", "c.ipynb", _gone)
    state.declare("test_notebook_deselected", "d.ipynb", lambda: {"solution": 4})
    state.selected = {"test_notebook_a", "notebooks.test_notebook_b", "test_notebook_c"}

    a = state.graded("test_notebook_a", _Factory())
    assert a == {"solution": {"folder": "test_notebook_a--solution", "notebook": "a.ipynb"},
                 "wrong": {"folder": "test_notebook_a--wrong", "notebook": "a.ipynb"}}
    assert runs == [(["test_notebook_a--solution", "test_notebook_a--wrong",
                      "test_notebook_b--solution"], 500)]  # one run, the largest limit
    assert state.graded("notebooks.test_notebook_b", _Factory()) == {
        "solution": {"folder": "test_notebook_b--solution", "notebook": "b.ipynb"}}
    with pytest.raises(AssertionError, match="no longer in the solution"):
        state.graded("test_notebook_c", _Factory())
    assert len(runs) == 1  # b's records came from the first run, c built nothing to grade
    assert state.graded("test_notebook_deselected", _Factory())["solution"]["notebook"] \
        == "d.ipynb"  # asked for all the same: graded then, in a run of its own
    assert runs[1] == (["test_notebook_deselected--solution"], 300)


def test_a_failed_run_fails_every_module_in_it_and_is_not_repeated():
    runs = []

    def broken(root, folders, timeout):
        runs.append(sorted(folders))
        raise AssertionError("grader exited 1")

    state = support.Runs(broken, early.Gate())
    state.declare("test_notebook_a", "a.ipynb", lambda: {"solution": 1})
    state.declare("test_notebook_b", "b.ipynb", lambda: {"solution": 2})
    for module in ("test_notebook_a", "test_notebook_b"):
        with pytest.raises(AssertionError, match="grader exited 1"):
            state.graded(module, _Factory())
    assert runs == [["test_notebook_a--solution", "test_notebook_b--solution"]]


def test_the_early_run_is_the_one_run_and_its_records_are_kept(runs):
    """start_early's background run grades every selected module; a module's test then waits for
    it and gets its records, with no second run (a second one cost make test two minutes)."""
    state, runs = runs
    state.declare("test_notebook_a", "a.ipynb", lambda: {"solution": 1})
    state.declare("test_notebook_b", "b.ipynb", lambda: {"solution": 2})
    state.selected = {"test_notebook_a", "test_notebook_b"}
    state.start_early(_Factory())
    assert len(state.early) == 1 and runs == []  # behind its gate until someone waits
    assert state.graded("test_notebook_b", _Factory())["solution"]["notebook"] == "b.ipynb"
    assert state.graded("test_notebook_a", _Factory())["solution"]["notebook"] == "a.ipynb"
    assert runs == [(["test_notebook_a--solution", "test_notebook_b--solution"], 300)]
    assert support.RUNS.gate is early.GATE is not state.gate


def test_work_behind_a_gate_the_session_never_opened_does_not_run():
    ran = []
    gate = early.Gate()
    future = gate.start("test", ran.append, 1)
    gate.cancel()  # tests/conftest.py at the session's end
    assert future.result(timeout=10) is None and ran == []


def test_background_commands_and_theirs_alone_move_into_the_cgroup(monkeypatch, tmp_path):
    """One rule for tests/support/early.py's cgroup: a command run from the background work (a
    thread of a Gate's, or a pool it made) moves itself in first; a test's own does not."""
    monkeypatch.setattr(early, "_CGROUP", [])
    monkeypatch.setattr(early, "CPU_CGROUPS", tmp_path)  # as cgroup v1's cpu controller
    folder = tmp_path / f"labs-tests-{os.getpid()}"
    wrapped = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(folder / "cgroup.procs"), "cmd"]

    def in_a_pool():
        with early.pool(2) as pool:
            return list(pool.map(lambda _: early.command(["cmd"]), range(2)))

    gate = early.Gate()
    assert early.command(["cmd"]) == ["cmd"]  # a test's own
    assert gate.result(gate.start("test", early.command, ["cmd"])) == wrapped
    assert gate.result(gate.start("test", in_a_pool)) == [wrapped, wrapped]
    assert early.command(["cmd"]) == ["cmd"] and in_a_pool() == [["cmd"], ["cmd"]]
    assert (folder / "cpu.shares").read_text() == str(early.SHARES)  # made once, when first used
    monkeypatch.setattr(early, "_CGROUP", [None])  # where no cgroup could be made
    assert gate.result(gate.start("test", early.command, ["cmd"])) == ["cmd"]


def test_a_modules_selected_work_runs_once_begun_early_or_when_asked():
    calls = []

    def work(chosen):
        calls.append(chosen)
        return sorted(chosen)

    begun = early.Selected("test", work, lambda session: session, early.Gate())
    begun.start({"b", "a"})
    assert begun.result(None) == ["a", "b"] and calls == [{"a", "b"}]  # selected once
    asked = early.Selected("test", work, lambda session: session, early.Gate())
    asked.start(set())  # nothing selected: nothing begun
    assert asked.future is None and asked.result({"c"}) == ["c"] and calls[-1] == {"c"}


@pytest.mark.slow  # two kernels
def test_notebooks_run_apart_come_back_executed_or_with_why_they_failed(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from tests.support.notebook_runs import run_notebooks_apart

    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("import os; print(os.getcwd())")]), good)
    nbformat.write(new_notebook(cells=[new_code_cell("raise ValueError('planted')")]), bad)
    runs = run_notebooks_apart([good, bad], at_once=2, cwd=tmp_path, timeout=60)
    assert runs[good].cells[0].outputs[0].text.strip() == str(tmp_path)
    assert isinstance(runs[bad], RuntimeError) and "planted" in str(runs[bad])
