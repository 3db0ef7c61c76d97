"""The grader under attack and under faults: planted submissions, each with its exact grade.

One grader run per isolation mode over planted submissions of the tiny course of
tests/support/grader_plants.py (exercises ex_a 1 point, ex_b 2, ex_c 3): ``--sandbox bwrap`` grades the
whole planted class (skipped, with the reason, when bwrap is not usable; CI installs it);
``--sandbox none``, the fallback, grades a smaller class (honest, copying, crash, hang, a killed
parent, escaping processes, rigged course code, a malformed notebook). Around each run: the
course tree (labs/, solutions/, tests/support/fixtures) and the submissions folder hash the same before
and after, the target of a symlink planted at ``<out>/grades.csv`` is unchanged, and no process
a submission started is alive afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tests.support import grader_plants as gp
from tests.support.messages import pattern, said
from tests.support.selection import items_of, selected_params
from grader import sandbox
from labs.messages import text

FULL = dict(gp.POINTS)
# Per exercise (it was 20 s; issue 27): the loop plant burns a core for it once per run; the
# slowest honest exercise, the probe's gloo launch in the sandbox, took its whole submission 7 s
# with two busy loops beside it, 9 s with the two runs at once.
CELL_TIMEOUT = 15
MARK = "labsgraderplant"  # then the run's mode: each run looks for its own escaped processes
# one grader run of up to 19 submissions, on 2 busy cores
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]
# the fallback's class: every kind of fault once, without the sandbox-only attacks
FALLBACK = ("honest", "solution", "calls_reference", "loop", "crash", "kill_parent", "escape",
            "rig_checks", "bad_grade_id", *("custom_exc", "patch_run_check", "rebind_graded",
                                            "transformer", "forge_record"))
# The in-kernel attacks of issue 15, each with a wrong list_sum: the verdict is the grader's
# (grader.judge, from the record), so none of them earns ex_a. Those whose effect lasts
# in the kernel (a patched run_check, a rebound decorator, an input transformer) also stop the
# later checks from handing back a record: those exercises score 0 as well.
ATTACKS = {
    # hides every error the check raises (its verdict was read from the cell's error before)
    "custom_exc": ("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
                   {**FULL, "ex_a": 0}),
    # replaces the check framework's run_check: prints a pass and returns
    "patch_run_check": ("import labs.exercises.checks as _c\n"
                        "_c.run_check = lambda gid, points, fn, *a, **k: "
                        "print(f'\u2705 {gid} passed: {points}/{points}')\n",
                        {g: 0 for g in FULL}),
    # replaces the check function the check cell defines (its decorator) with a no-op
    "rebind_graded": ("graded = lambda gid, points=1: (lambda check: (lambda *a, **k: None))\n",
                      {g: 0 for g in FULL}),
    # blanks every cell that calls a check
    "transformer": ("get_ipython().input_transformers_cleanup.append(\n"
                    "    lambda lines: [] if any('check(' in ln for ln in lines) else lines)\n",
                    {g: 0 for g in FULL}),
    # writes a record of its own (answers of its own, which are wrong) and skips the check
    "forge_record": ("import json, os\n"
                     "import labs.exercises.checks as _c\n"
                     "_c.run_check = lambda gid, points, fn, *a, **k: None\n"
                     "_events = [{'kind': 'call', 'arg': 0, 'result': 0} for _ in range(4)]\n"
                     "with open(os.path.join(os.environ['LABS_GRADE_RECORDS'], 'ex_a.json'), 'w') as _f:\n"
                     "    json.dump({'version': 1, 'exercise': 'ex_a', 'args': 1,\n"
                     "               'events': _events, 'outcome': 'passed'}, _f)\n",
                     {g: 0 for g in FULL}),
}


def _plants(folder: Path, subs: Path, mark: str) -> dict:
    """{student: (notebook, {grade_id: points} in bwrap, in the fallback)}; ``mark`` in the
    command lines of the processes the escape plant leaves behind."""
    solutions = folder / "solutions" / gp.NAME
    victim = subs / "victim" / gp.NAME
    honest = gp.honest(folder)
    p = {}
    p["honest"] = (honest, FULL, FULL)
    p["solution"] = (gp.solution_copy(folder), FULL, FULL)  # flagged ex_c: the solution cell
    p["untouched"] = (nbformat.read(str(folder / "student.ipynb"), as_version=4),
                      {g: 0 for g in FULL}, {g: 0 for g in FULL})
    # the infinite loop at top level of one exercise cell: only that exercise is lost
    p["loop"] = (gp.edit(folder, "def reverse", "while True:\n    pass"),
                 {**FULL, "ex_b": 0}, {**FULL, "ex_b": 0})
    # a hang in the body (not an exercise section) is never run
    body = gp.honest(folder)
    gp.cell(body, "BODY_RAN").source = "import time\ntime.sleep(10_000)"
    p["body_hang"] = (body, FULL, FULL)
    p["crash"] = (gp.edit(folder, "def reverse", "import os\nos._exit(3)"),
                  {**FULL, "ex_b": 0}, {**FULL, "ex_b": 0})
    # kills its parent: in the sandbox that is the namespace's init, which ignores it; in the
    # fallback that is the shim, so the kernel counts as dead for this exercise only
    p["kill_parent"] = (gp.edit(folder, "def reverse",
                                "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
                                "import time\ntime.sleep(2)"),
                        FULL, {**FULL, "ex_b": 0})
    # copies the answer from solutions/ on disk: not there in the sandbox
    p["read_solutions"] = (gp.edit(folder, "def list_sum", (
        "import json\n"
        "try:\n"
        f"    _src = json.load(open({str(solutions)!r}))\n"
        "    exec(''.join(c['source'] if isinstance(c['source'], str) else ''.join(c['source'])\n"
        "                 for c in _src['cells'] if 'def list_sum' in ''.join(c['source'])))\n"
        "    _copied = True\n"
        "except OSError:\n"
        "    _copied = False\n"), prepend=False, base=_broken_sum(folder)),
        {**FULL, "ex_a": 0}, FULL)
    # overwrites another student's notebook, and appends an always-pass run_check to the
    # course's checks.py: neither reaches the real files (sandbox: invisible / read-only;
    # fallback: the victim is hashed unchanged only in the sandbox run, see below)
    p["rig_checks"] = (gp.edit(folder, "def list_sum", (
        "import labs.exercises.checks as _c\n"
        "try:\n"
        "    with open(_c.__file__, 'a') as _f:\n"
        "        _f.write('\\ndef run_check(*a, **k):\\n    print(\"rigged\")\\n')\n"
        "except OSError:\n"
        "    pass\n"), prepend=False, base=_broken_sum(folder)),
        {**FULL, "ex_a": 0}, {**FULL, "ex_a": 0})
    p["overwrite"] = (gp.edit(folder, "def list_sum", (
        "try:\n"
        f"    open({str(victim)!r}, 'w').write('{{}}')\n"
        "except OSError:\n"
        "    pass\n")), FULL, None)
    p["victim"] = (gp.honest(folder), FULL, FULL)
    # processes that try to outlive the grader: a new session, and a double fork with an
    # empty environment (no marker): both must be gone after grading
    p["escape"] = (gp.edit(folder, "def running_max", (
        "import subprocess, sys, os\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{mark}1'],\n"
        "                 start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    os.execve('/bin/sleep', ['/bin/sleep', '600', '{mark}2'], {{}})\n")), FULL, FULL)
    for who, (code, expected) in ATTACKS.items():
        p[who] = (gp.edit(folder, "def list_sum", code, prepend=False, base=_broken_sum(folder)),
                  expected, expected)
    # copying flagged (not penalised): the course's reference (this course names sum)
    p["calls_reference"] = (gp.edit(folder, "def list_sum",
                                    "def list_sum(xs):\n    return sum(xs)", prepend=False),
                            FULL, FULL)
    # malformed but valid JSON: 0 with the reason, the run goes on
    for who, spoil in [("bad_course", _spoil_course), ("bad_nbgrader", _spoil_nbgrader),
                       ("bad_grade_id", _spoil_grade_id)]:
        nb = gp.honest(folder)
        spoil(nb)
        p[who] = (nb, {g: 0 for g in FULL}, {g: 0 for g in FULL})
    return p


def _broken_sum(folder):
    nb = gp.honest(folder)
    gp.cell(nb, "def list_sum").source = "def list_sum(xs):\n    return 0"
    return nb


def _spoil_course(nb):
    nb.metadata["course"] = {"notebook": ["quick.ipynb"]}


def _spoil_nbgrader(nb):
    gp.cell(nb, "def reverse").metadata["nbgrader"] = "yes"


def _spoil_grade_id(nb):
    (check,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex_b"]
    check.metadata["nbgrader"]["grade_id"] = ["ex_b"]


def _sandbox_probe(folder):
    """Passes ex_a only when each sandbox property holds inside the kernel, and ex_c only when
    labs.launch runs two gloo ranks there (loopback works, the network is otherwise cut)."""
    probe = (
        "import os, socket, labs\n"
        "_ok = []\n"
        "_ok.append(sorted(n for _, n in socket.if_nameindex()) == ['lo'])\n"
        "_ok.append(len([p for p in os.listdir('/proc') if p.isdigit()]) < 10)\n"
        "try:\n"
        "    open(labs.__file__, 'a').close(); _ok.append(False)\n"
        "except OSError:\n"
        "    _ok.append(True)\n"
        f"_ok.append(not os.path.exists({str(gp.ROOT / 'solutions')!r}))\n"
        f"_ok.append(not os.path.exists({str(folder / 'solutions')!r}))\n"
        f"_ok.append(not os.path.exists({str(folder / 'submissions' / 'victim')!r}))\n"
        # a private /tmp: of the grader's scratch folder, only this submission's own mounts
        "_mine = os.path.dirname(os.getcwd())\n"
        "_ok.append(set(os.listdir(_mine)) <= {'work', 'course', 'ipc'})\n"
        "_ok.append(os.listdir(os.path.dirname(_mine)) == [os.path.basename(_mine)])\n"
        # ... and the Python environment, when it lives under /tmp (a course cloned there)
        "import sys\n"
        "_top = lambda p: os.path.relpath(p, '/tmp').split(os.sep)[0]\n"
        "_allowed = {_top(_mine)} | {_top(p) for p in {os.path.realpath(sys.prefix),\n"
        "                                             os.path.realpath(sys.base_prefix)}\n"
        "                            if p.startswith('/tmp/')}\n"
        "_ok.append(set(os.listdir('/tmp')) == _allowed)\n"
        "print('probe', _ok)\n"
        "if not all(_ok):\n"
        "    def list_sum(xs):\n"
        "        return -1\n")
    nb = gp.edit(folder, "def list_sum", probe, prepend=False)
    gp.edit(folder, "def running_max",
            "import labs\nfrom labs.runtime import examples\n"
            "assert labs.launch(examples.all_reduce_demo, 2, backend='gloo', timeout=60) == [3.0, 3.0]",
            base=nb)
    return nb


def _grade(tmp: Path, mode: str) -> dict:
    folder = tmp / "course"
    gp.write_course(folder)
    subs = folder / "submissions"
    mark = f"{MARK}{mode}"
    plants = _plants(folder, subs, mark)
    if mode == "bwrap":
        plants["probe"] = (_sandbox_probe(folder), FULL, None)
        # the in-kernel attacks do not depend on the sandbox: graded once, in the fallback run
        plants = {who: v for who, v in plants.items() if who not in ATTACKS}
    else:
        plants = {who: plants[who] for who in FALLBACK}
    plants = {who: v for who, v in plants.items() if (v[1] if mode == "bwrap" else v[2]) is not None}
    for who, (nb, *_) in plants.items():
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, str(subs / who / gp.NAME))
    (subs / "truncated").mkdir()
    (subs / "truncated" / gp.NAME).write_bytes(b'{"cells": [')
    out = folder / "grades"
    out.mkdir()
    target = tmp / "precious.txt"
    target.write_text("keep me\n")
    os.symlink(target, out / "grades.csv")
    before = (gp.course_hash(), gp.tree_hash(subs))
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "grader", str(subs), "--out", str(out), "--solutions",
         str(folder / "solutions"), "--timeout", "200", "--cell-timeout", str(CELL_TIMEOUT),
         "--jobs", "2", "--sandbox", mode],
        capture_output=True, text=True, cwd=tmp, timeout=900)
    seconds = time.monotonic() - start
    time.sleep(0.5)
    return {"proc": proc, "out": out, "target": target, "before": before,
            "after": (gp.course_hash(), gp.tree_hash(subs)), "plants": plants,
            "seconds": seconds, "alive": gp.alive_with(mark), "mode": mode}


def label(grade_id: str) -> str:
    """How a verdict names an exercise of the tiny course (not declared: its id)."""
    return text("exercises.label", number=grade_id)


def _bwrap_or_skip():
    ok, why = sandbox.bwrap_available()
    if not ok and shutil.which("bwrap") and os.geteuid() == 0:
        # installed, and root may create namespaces: a sandbox that cannot start is a bug (as
        # when the course and its .venv lived under /tmp, hidden by the sandbox's own /tmp)
        pytest.fail(f"bwrap is installed but the sandbox does not start: {why}")
    if not ok:
        pytest.skip(f"bwrap sandbox not usable here: {why}")


def test_the_sandbox_keeps_a_python_under_tmp_or_in_the_course_readable(monkeypatch):
    monkeypatch.setattr(sys, "prefix", "/tmp/clone/.venv")
    monkeypatch.setattr(sys, "base_prefix", "/usr/local")
    assert sandbox.python_binds([]) == ["--ro-bind", "/tmp/clone/.venv", "/tmp/clone/.venv"]
    monkeypatch.setattr(sys, "prefix", "/work/course/.venv")
    assert sandbox.python_binds([Path("/work/course")]) == [
        "--ro-bind", "/work/course/.venv", "/work/course/.venv"]
    assert sandbox.python_binds([Path("/elsewhere")]) == []


_RUNS: dict = {}  # one grader run per mode for the whole module


def _run_once(request, tmp_path_factory, mode: str) -> dict:
    """``mode``'s run; the first call starts the runs of every selected mode at the same time
    (issue 27: 48 s one after the other, 35 s together on 2 cores)."""
    if mode not in _RUNS:
        modes = set(selected_params(request.session, __name__, "graded"))
        if any("fallback" in item.fixturenames for item in items_of(request.session, __name__)):
            modes.add("none")
        modes = [m for m in sorted(modes | {mode})
                 if m not in _RUNS and (m != "bwrap" or sandbox.bwrap_available()[0])]
        folders = {m: tmp_path_factory.mktemp(f"faults-{m}") for m in modes}
        with ThreadPoolExecutor(len(modes)) as pool:
            runs = {m: pool.submit(_grade, folders[m], m) for m in modes}
            _RUNS.update({m: run.result() for m, run in runs.items()})
    return _RUNS[mode]


@pytest.fixture(scope="module", params=["bwrap", "none"])
def graded(request, tmp_path_factory):
    if request.param == "bwrap":
        _bwrap_or_skip()
    return _run_once(request, tmp_path_factory, request.param)


@pytest.fixture(scope="module")
def fallback(request, tmp_path_factory):
    """The fallback's run, which grades the in-kernel attacks (they need no sandbox)."""
    return _run_once(request, tmp_path_factory, "none")


def test_every_planted_submission_gets_its_exact_grade(graded):
    proc = graded["proc"]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    by_name = gp.report(graded["out"])
    column = 1 if graded["mode"] == "bwrap" else 2
    wrong = {}
    for who, plant in graded["plants"].items():
        got = gp.points(by_name[who])
        if got != plant[column]:
            wrong[who] = (got, plant[column], [e["message"][:200] for e in by_name[who]["exercises"]],
                          by_name[who]["error"])
    assert not wrong, json.dumps(wrong, ensure_ascii=False, indent=1)
    assert all(s["sandbox"] == graded["mode"] for s in by_name.values())
    assert gp.points(by_name["truncated"]) == {g: 0 for g in FULL}
    said(by_name["truncated"]["error"], "grade.unreadable")


def test_faults_cost_only_their_exercise_and_say_why(graded):
    by_name = gp.report(graded["out"])
    msg = {e["grade_id"]: e["message"] for e in by_name["loop"]["exercises"]}
    seconds = said(msg["ex_b"], "grade.timeout", grade_id="ex_b")["seconds"]  # kernel restarted
    assert 0 < float(seconds) <= CELL_TIMEOUT
    assert by_name["loop"]["restarts"] == 1
    said(by_name["loop"]["error"], "grade.faults", then=True, count=1, timeouts=1, deaths=0)
    msg = {e["grade_id"]: e["message"] for e in by_name["crash"]["exercises"]}
    assert msg["ex_b"] == text("grade.dead", grade_id="ex_b")
    for who, field in [("bad_course", "metadata.course"),
                       ("bad_nbgrader", "metadata.nbgrader"), ("bad_grade_id", "metadata.nbgrader")]:
        if who in by_name:
            assert field in said(by_name[who]["error"], "grade.malformed")["error"], who
    if "body_hang" in by_name:
        assert by_name["body_hang"]["error"] is None


def test_copying_is_flagged_not_penalised(graded):
    by_name = gp.report(graded["out"])
    flags = {who: {e["grade_id"]: e["flags"] for e in s["exercises"]} for who, s in by_name.items()}
    assert flags["honest"] == {"ex_a": [], "ex_b": [], "ex_c": []}
    assert flags["solution"]["ex_c"][0] == text("grade.flag_solution")
    assert "sum" in said(flags["calls_reference"]["ex_a"][0], "grade.flag_reference")["names"]
    table = graded["proc"].stdout.split("== quick.ipynb ==")[1].splitlines()
    (row,) = [line for line in table if line.startswith("solution" + os.sep)]
    assert "ex_c" in row.split()[-1]  # the review column


def test_in_kernel_attacks_are_flagged_for_review(fallback):
    by_name = gp.report(fallback["out"])
    for who in ATTACKS:
        (ex_a,) = [e for e in by_name[who]["exercises"] if e["grade_id"] == "ex_a"]
        assert ex_a["flags"], (who, ex_a)
        said(ex_a["flags"][0], "grade.flag_tampering")
    messages = {e["grade_id"]: e["message"] for e in by_name["patch_run_check"]["exercises"]}
    assert messages["ex_b"] == text("grade.no_record", exercise=label("ex_b"),
                                    points=2)  # the check never ran: no record
    (forged,) = [e for e in by_name["forge_record"]["exercises"] if e["grade_id"] == "ex_a"]
    # judged from its own record: a wrong answer (its list_sum returned 0)
    case = said(forged["message"], "checks.verdict_failed", exercise=label("ex_a"),
                points=1)["message"]
    said(said(case, "checks.case_failed", case="case 0")["message"], "checks.wrong_value",
         where="value", got=0)
    honest = {e["grade_id"]: e["flags"] for e in by_name["honest"]["exercises"]}
    assert honest == {"ex_a": [], "ex_b": [], "ex_c": []}


def test_nothing_outside_the_output_folder_changed(graded):
    (course, subs), (course_after, subs_after) = graded["before"], graded["after"]
    changed = sorted(p for p in {*course, *course_after, *subs, *subs_after}
                     if course.get(p, subs.get(p)) != course_after.get(p, subs_after.get(p)))
    assert not changed, f"files outside the output folder changed: {changed}"
    assert graded["target"].read_text() == "keep me\n"  # the planted symlink was replaced
    assert not (graded["out"] / "grades.csv").is_symlink()
    assert not graded["alive"], f"processes of a submission outlived the grader: {graded['alive']}"


def test_results_are_one_file_per_submission(graded):
    files = sorted((graded["out"] / "submissions").glob("*.json"))
    assert len(files) == len(graded["plants"]) + 1
    assert not [p for p in (graded["out"] / "submissions").iterdir() if p.suffix == ".tmp"]
    lines = [ln for ln in graded["proc"].stdout.splitlines() if ln.startswith("[")]
    assert len(lines) == len(files)
    said(lines[-1], "grade.progress", number=len(files), total=len(files))  # elapsed, ETA


def test_killed_grader_resumes(tmp_path):
    folder = tmp_path / "course"
    gp.write_course(folder)
    subs = folder / "submissions"
    for who in ("a", "b", "c"):
        (subs / who).mkdir(parents=True)
        nbformat.write(gp.honest(folder), str(subs / who / gp.NAME))
    out = folder / "grades"
    cmd = [sys.executable, "-m", "grader", str(subs), "--out", str(out), "--solutions",
           str(folder / "solutions"), "--cell-timeout", "60", "--jobs", "1", "--sandbox", "none",
           "--secret", "kept"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.monotonic() + 300
    while not list((out / "submissions").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # the next submission's worker and kernel are starting or running
    started = sandbox._descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the workers die with the grader (PR_SET_PDEATHSIG), their kernels with them; one that was
    # still starting (before its prctl) sees its parent gone and exits on its own: allow it the
    # time a loaded machine needs to get there
    deadline = time.monotonic() + 30
    while [p for p in started if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert started and not [p for p in started if _alive(p)], started
    kept = sorted((out / "submissions").glob("*.json"))
    assert kept
    first = {p.name: p.read_bytes() for p in kept}
    left = list(Path(tempfile.gettempdir()).glob(f"labs-grade-{proc.pid}-*"))
    assert left, "the killed grader's scratch folder (copies of submissions) should be there"
    again = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert again.returncode == 0, again.stderr
    assert not [p for p in left if p.exists()], "the next run removes a killed run's scratch"
    resumed = pattern("grade.resumed")
    assert sum(1 for ln in again.stdout.splitlines() if resumed.fullmatch(ln)) >= len(first)
    by_name = gp.report(out)
    assert sorted(by_name) == ["a", "b", "c"]
    assert all(gp.points(s) == FULL for s in by_name.values())
    for name, data in first.items():  # what was graded before the kill is kept as it was
        assert (out / "submissions" / name).read_bytes() == data
    # another secret means other hidden cases: nothing kept (issue 40: the cache ignored it)
    other = subprocess.run(cmd[:-1] + ["another"], capture_output=True, text=True, cwd=tmp_path,
                           timeout=600)
    assert other.returncode == 0, other.stderr
    assert not [ln for ln in other.stdout.splitlines() if resumed.fullmatch(ln)], other.stdout
    assert all(gp.points(s) == FULL for s in gp.report(out).values())


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_symlinked_output_folder_is_refused(tmp_path):
    folder = tmp_path / "course"
    src, student = gp.write_course(folder)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "out")
    proc = subprocess.run([sys.executable, "-m", "grader", str(student), "--out",
                           str(tmp_path / "out"), "--solutions", str(folder / "solutions")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_plan_runs_setup_and_exercise_sections_only(tmp_path):
    from grader.sources import plan, prepare

    gp.write_course(tmp_path)
    source = gp.solution_copy(tmp_path)
    nb = gp.add_cell_after(gp.honest(tmp_path), "def reverse", "HELPER = 1")
    nb, positions = prepare(nb, source)
    steps = plan(nb, positions, source)
    assert steps["setup"] == [1]
    runs = [i for e in steps["exercises"] for i in e["cells"]]
    assert 3 not in runs and len(nb.cells) - 1 not in runs  # the body, the end
    added = next(i for i, c in enumerate(nb.cells) if c.source == "HELPER = 1")
    assert added in steps["exercises"][1]["cells"]
    assert [e["check"] for e in steps["exercises"]] == sorted(positions.values())


def test_the_setup_cell_is_found_by_id_not_by_position(tmp_path):
    # issue 30, item 4: a cell inserted above the setup, or a Colab save (nbformat minor 0, ids in
    # metadata), plans the same cells as the untouched submission
    from nbformat.v4 import new_code_cell

    from grader.sources import plan, prepare

    gp.write_course(tmp_path)
    source = gp.solution_copy(tmp_path)
    nb, positions = prepare(gp.honest(tmp_path), source)
    plain = plan(nb, positions, source)
    setup_source = nb.cells[plain["setup"][0]].source

    inserted = gp.honest(tmp_path)
    inserted.cells.insert(0, new_code_cell("print('my notes')"))
    nb2, positions2 = prepare(inserted, source)
    steps = plan(nb2, positions2, source)
    assert nb2.cells[steps["setup"][0]].source == setup_source
    assert [e["grade_id"] for e in steps["exercises"]] == [e["grade_id"] for e in plain["exercises"]]

    colab = gp.honest(tmp_path)
    colab.cells.insert(0, new_code_cell("!pip list"))
    for cell in colab.cells:
        cell_id = cell.pop("id", None)
        if cell_id:
            cell.metadata["id"] = cell_id
    colab.nbformat_minor = 0
    nb3, positions3 = prepare(colab, source)
    assert nb3.cells[plan(nb3, positions3, source)["setup"][0]].source == setup_source
