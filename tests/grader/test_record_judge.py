"""The verdict is decided outside the student's kernel: record (grader.record, written by
grader.recorder in the kernel) and judge (grader.judge).

A check run in grading mode writes what the student's code returned; the judge re-runs the
source's check cell against that record. These tests run real checks of notebook 2.0 (one on
ranks, one in process) through the round trip: the judge agrees with the notebook's own verdict,
and a record that was tampered with -- a wrong value, a missing or extra event, another
exercise's record, results for fewer ranks -- fails the exercise. The codec carries plain data
only and refuses anything it did not write.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
import torch

from grader import copying, judge, record, recorder
from labs.exercises import checks, hooks
from labs.exercises import collectives_checks as cc
from labs.exercises import secret
from labs.exercises.checks import ExerciseFailed, ExerciseIncomplete
from labs.messages import text
from labs.runtime.errors import RankError
from tests.support.exercise_cells import cell_source, define
from tests.support.messages import opening, said

NB = "2.0_collectives.ipynb"
RING, BYTES = "ex2_0_ring_all_reduce", "ex2_0_ring_bytes"
CHECK_CELLS = {
    RING: "from labs.exercises.collectives_checks import check_ring_all_reduce\n\n"
          "check_ring_all_reduce(my_ring_all_reduce)",
    BYTES: "from labs.exercises.collectives_checks import check_ring_bytes\n\n"
           "check_ring_bytes(ring_bytes_sent_per_rank)",
}


# --- the codec ---------------------------------------------------------------------------------

def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", [
    None, True, 3, -2**70, 1.5, float("inf"), float("nan"), "练习", [], (), {},
    [1, (2, 3), {"a": [4.0]}], {1: "one", (2, 3): None},
    torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.tensor(2.5, dtype=torch.float64),
    torch.tensor([True, False]), torch.randn(3, dtype=torch.bfloat16), torch.empty(0, 4),
    torch.tensor([1, -2], dtype=torch.int64), np.arange(4.0), np.float32(1.25), np.int64(7),
])
def test_codec_round_trip(value):
    data = json.loads(json.dumps(record.encode(value), allow_nan=False))
    assert _same(value, record.decode(data))


def test_codec_keeps_strange_objects_as_opaque_and_torch_dtypes_by_name():
    class Mine:
        def __repr__(self):
            return "Mine()"

    out = record.decode(record.encode([Mine(), torch.float16, torch.Size([2, 3])]))
    assert isinstance(out[0], record.Opaque) and repr(out[0]) == "Mine()" and out[0] != out[0]
    assert out[1] is torch.float16 and out[2] == (2, 3)
    assert record.decode(record.encode(torch.nn.Parameter(torch.ones(2)))).dtype == torch.float32


@pytest.mark.parametrize("data", [
    {"__pickle__": "gASV"}, {"__tensor__": {"dtype": "object", "shape": [1], "data": ""}},
    {"__tensor__": {"dtype": "float32", "shape": [3], "data": "AAAA"}},
    {"__tensor__": {"dtype": "float32", "shape": [-1], "data": ""}},
    {"__ndarray__": {"dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="}},
    {"__dict__": [[[1], 2]]}, {"__tuple__": [1], "x": 2}, {"__float__": "1e999"},
])
def test_codec_refuses_what_it_did_not_write(data):
    with pytest.raises(record.RecordError):
        record.decode(data)


def test_codec_refuses_values_nested_too_deep():
    deep = 1
    for _ in range(record.MAX_DEPTH + 3):
        deep = [deep]
    with pytest.raises(record.RecordError):
        record.decode(deep)


def test_exceptions_come_back_as_the_check_reads_them():
    def student():
        raise ValueError("bad cap")

    try:
        student()
    except ValueError as exc:
        back = record.decode_exception(record.encode_exception(exc))
    assert type(back) is ValueError and str(back) == "bad cap"
    assert back.recorded_frame.func == "student" and "raise ValueError" in back.recorded_frame.text
    remote = RankError("rank 1 failed", rank=1, exc_type="ExerciseFailed",
                       remote_traceback="Traceback ...", original=ExerciseFailed("forbidden"))
    back = record.decode_exception(record.encode_exception(remote))
    assert isinstance(back, RankError) and back.rank == 1
    assert isinstance(back.original, ExerciseFailed) and str(back.original) == "forbidden"
    assert isinstance(record.decode_exception(record.encode_exception(
        ExerciseIncomplete("stub"))), ExerciseIncomplete)
    odd = record.decode_exception({"class": "error", "type": "MyError", "message": "m"})
    assert type(odd).__name__ == "MyError" and isinstance(odd, Exception)


# --- round trips through a real check ----------------------------------------------------------

def _student(grade_id: str, replace: tuple[str, str] | None = None):
    source = cell_source(NB, grade_id + "_solution")
    if replace:
        assert source.count(replace[0]) == 1
        source = source.replace(*replace)
    names = {RING: "my_ring_all_reduce", BYTES: "ring_bytes_sent_per_rank"}
    (fn,) = define(source, (names[grade_id],), f"__student_{grade_id}__", torch=torch,
                   dist=torch.distributed)
    return fn


def _record(tmp_path, monkeypatch, grade_id, fn) -> tuple[dict, str]:
    """Run the check on ``fn`` as the grader's kernel would; (the record, what it printed)."""
    monkeypatch.setenv(record.RECORDS_ENV, str(tmp_path))
    monkeypatch.setattr(hooks, "_interceptor", recorder.Interceptor())  # as the grader's kernel
    check = {RING: cc.check_ring_all_reduce, BYTES: cc.check_ring_bytes}[grade_id]
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            check(fn)
        except (ExerciseFailed, ExerciseIncomplete):
            pass
    monkeypatch.delenv(record.RECORDS_ENV)
    monkeypatch.setattr(hooks, "_interceptor", None)
    return record.read(tmp_path / f"{grade_id}.json"), out.getvalue()


def _judge(grade_id, data, points=3):
    return judge.judge(grade_id, data, points, CHECK_CELLS[grade_id], "import torch")


def label(number: int) -> str:
    return text("exercises.label", number=number)


def refused(verdict: dict) -> str:
    """Why the judge refused the record of the ring exercise (asserting it did)."""
    assert not verdict["passed"] and verdict["points"] == 0
    return said(verdict["message"], "grade.record_refused", exercise=label(1), points=3)["why"]


def wrong_answer(verdict: dict) -> dict:
    """The fields of the wrong element the ring exercise's verdict names (asserting it is the
    verdict of a wrong value, judged from the record, not a refused record)."""
    assert not verdict["passed"] and verdict["points"] == 0
    case = said(verdict["message"], "checks.verdict_failed", exercise=label(1), points=3)["message"]
    return said(said(case, "checks.case_failed")["message"], "checks.wrong_elements")


def test_a_correct_solution_passes_in_the_judge(tmp_path, monkeypatch):
    data, printed = _record(tmp_path, monkeypatch, BYTES, _student(BYTES))
    passed = text("checks.verdict_passed", exercise=label(3), points=1)
    assert printed == passed + "\n" and data["outcome"] == "passed"
    assert _judge(BYTES, data, 1) == {"passed": True, "points": 1.0, "message": passed}


def test_the_judge_says_what_the_notebook_said(tmp_path, monkeypatch):
    # the ring forgets the all-gather phase: wrong on rank 0 of the first case
    fn = _student(RING, ("    for step in range(n - 1):  # all-gather",
                         "    return tensor\n    for step in range(n - 1):  # all-gather"))
    data, printed = _record(tmp_path, monkeypatch, RING, fn)
    verdict = _judge(RING, data)
    assert not verdict["passed"] and verdict["points"] == 0
    assert verdict["message"] == printed.splitlines()[0] + "".join(
        "\n" + line for line in printed.splitlines()[1:] if line.startswith("    "))
    assert "rank" in verdict["message"]


def test_an_exception_of_the_students_code_is_reported_by_the_judge(tmp_path, monkeypatch):
    def ring_bytes_sent_per_rank(size, n):
        return 2 * size / (n / (n - 1))  # ZeroDivisionError for the hidden one-rank case

    data, printed = _record(tmp_path, monkeypatch, BYTES, ring_bytes_sent_per_rank)
    verdict = _judge(BYTES, data, 1)
    assert not verdict["passed"] and "ZeroDivisionError" in verdict["message"]
    assert "return 2 * size / (n / (n - 1))" in verdict["message"]  # the student's line, from the record
    assert verdict["message"] == printed.split("\n" + opening("checks.todo_fix_error"))[0].strip()


def test_a_stub_is_unfinished_in_the_judge_too(tmp_path, monkeypatch):
    def ring_bytes_sent_per_rank(size, n):
        raise NotImplementedError(text("checks.stub_marker") + ": exercise 3")

    data, _ = _record(tmp_path, monkeypatch, BYTES, ring_bytes_sent_per_rank)
    assert _judge(BYTES, data, 1)["message"] == text(
        "checks.verdict_incomplete", exercise=label(3),
        message=text("checks.stub_not_written", rest="exercise 3"))


@pytest.fixture(scope="module")
def ring_record(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        data, _ = _record(tmp_path_factory.mktemp("ring"), mp, RING, _student(RING))
    finally:
        mp.undo()
    assert _judge(RING, data)["passed"]
    return data


def _tensors(node, path=()):
    if isinstance(node, dict) and "__tensor__" in node:
        yield path
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _tensors(v, path + (i,))
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _tensors(v, path + (k,))


def test_every_answer_changed_in_the_record_fails(ring_record):
    paths = list(_tensors(ring_record["events"]))
    assert len(paths) >= 20  # every rank's result of every case
    for path in paths:
        forged = copy.deepcopy(ring_record)
        node = forged["events"]
        for key in path[:-1]:
            node = node[key]
        tensor = record.decode(node[path[-1]])
        node[path[-1]] = record.encode(tensor + 1)
        wrong = wrong_answer(_judge(RING, forged))
        assert round(float(wrong["got"]) - float(wrong["expected"])) == 1, path  # printed .6g


@pytest.mark.parametrize("forge, why, fields", [  # fields: of the record before the forgery
    (lambda d: d["events"].pop(), "record.ends_early", lambda d: dict(n=len(d["events"]))),
    (lambda d: d["events"].append(copy.deepcopy(d["events"][0])), "record.extra_events",
     lambda d: dict(n=1)),
    (lambda d: d["events"][0].update(result=d["events"][0]["result"][:1]), "record.per_rank",
     lambda d: dict(n=1)),
    (lambda d: d["events"][0].update(world_size=1), "record.wrong_event", lambda d: dict(n=1)),
    (lambda d: d["events"][0].update(body="labs.collectives.ring_all_reduce"),
     "record.wrong_event", lambda d: dict(n=1)),
    (lambda d: d.update(exercise="ex2_0_ring_bytes"), "record.other_exercise",
     lambda d: dict(got="ex2_0_ring_bytes", wanted=RING)),
    (lambda d: d.update(args=2), "record.arguments", lambda d: {}),
    (lambda d: d["events"][0].pop("result"), "record.no_outcome", lambda d: dict(n=1)),
    (lambda d: d["events"][0].update(result={"__pickle__": "gASV"}), "record.codec", lambda d: {}),
])
def test_a_record_that_does_not_follow_the_check_is_refused(ring_record, forge, why, fields):
    forged = copy.deepcopy(ring_record)
    forge(forged)
    said(refused(_judge(RING, forged)), why, **fields(ring_record))


def test_no_record_and_a_broken_record_score_zero(tmp_path):
    missing = judge.judge_file(RING, tmp_path / "none.json", 3, CHECK_CELLS[RING])
    assert not missing["passed"]
    assert missing["message"] == text("grade.no_record", exercise=label(1), points=3)
    (tmp_path / "bad.json").write_text("{not json")
    broken = judge.judge_file(RING, tmp_path / "bad.json", 3, CHECK_CELLS[RING])
    said(refused(broken), "record.not_json")


def test_the_judge_runs_only_the_source_check_cell(ring_record):
    silent = judge.judge(RING, ring_record, 3, "x = 1")
    assert refused(silent) == text("record.not_called")
    other = judge.judge(RING, ring_record, 3, CHECK_CELLS[BYTES])
    assert not other["passed"]  # a check of another exercise is not this one's verdict


def test_the_recorder_is_off_outside_grading(monkeypatch, capsys):
    monkeypatch.delenv(record.RECORDS_ENV, raising=False)
    cc.check_ring_bytes(_student(BYTES))
    assert recorder.current() is None and judge.pending() is None and hooks.installed() is None
    assert capsys.readouterr().out == text("checks.verdict_passed", exercise=label(3), points=1) + "\n"


def test_hidden_cases_follow_the_instructors_secret(tmp_path, monkeypatch):
    monkeypatch.delenv(secret.SECRET_ENV, raising=False)
    assert secret.hidden_seed("2.0", 5) == 5 and secret.hidden_int("2.0", 1, 2, 9, 4) == 4
    monkeypatch.setenv(secret.SECRET_ENV, "s1")
    first = secret.hidden_seed("2.0", 5)
    data, printed = _record(tmp_path, monkeypatch, RING, _student(RING))
    assert printed == text("checks.verdict_passed", exercise=label(1), points=3) + "\n"
    assert _judge(RING, data)["passed"]
    monkeypatch.setenv(secret.SECRET_ENV, "s2")
    assert secret.hidden_seed("2.0", 5) != first
    other = _judge(RING, data)  # the answers recorded are for the inputs of another secret
    wrong_answer(other)


def test_tampering_with_the_grading_machinery_is_flagged():
    source = ["import random\nfrom labs.exercises.checks import assert_equal, case, graded"]
    assert copying.tampering_in(["def f(xs):\n    return sum(xs)"], source) == []
    assert copying.tampering_in(["graded = lambda *a: None"], source) == ["graded"]
    assert copying.tampering_in(["get_ipython().set_custom_exc((Exception,), print)"],
                                source) == ["get_ipython", "set_custom_exc"]
    assert copying.tampering_in(["import labs.exercises.checks as c\nc.run_check = print"],
                                source) == ["run_check"]  # the source imports labs.exercises too
    assert copying.tampering_in(["import os\nos.environ['LABS_GRADE_RECORDS']"],
                                source) == ["LABS_GRADE_RECORDS"]
    assert checks.run_check  # the real one, untouched by these strings


def test_the_judge_keeps_the_cells_prints_without_swapping_sys_stdout(ring_record, capsys):
    """The grader's other threads print progress while a judge runs (--jobs 2): the judge keeps
    what the check cell prints, but never swaps the process-wide sys.stdout to do so."""
    cell = ("import sys\nprint('from the cell')\nsys.stdout.write('stdout untouched\\n')\n"
            + CHECK_CELLS[RING])
    verdict = judge.judge(RING, ring_record, 3, cell, "import torch")
    assert verdict["passed"], verdict["message"]
    out = capsys.readouterr().out
    assert "from the cell" not in out and "stdout untouched" in out


def test_the_course_never_imports_the_grader():
    """labs (the checks a notebook imports, the runtime its ranks fork from) imports no grader
    module; the grader's recorder reaches a kernel only by the grader's own start line."""
    import subprocess
    import sys

    code = ("import sys, importlib, labs, labs.exercises\n"
            "from labs.runtime import forkserver\n"
            "for m in ('checks', 'ranks', 'collectives_checks', 'summary_checks', 'hooks'):\n"
            "    importlib.import_module('labs.exercises.' + m)\n"
            "assert not [n for n in sys.modules if n.split('.')[0] == 'grader'], sys.modules\n"
            "assert not [n for n in forkserver.PRELOAD if n.startswith('grader')]\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
