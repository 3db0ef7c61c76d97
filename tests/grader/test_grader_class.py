"""A class of 30 graded end to end, as an instructor grades one (issue 40, "done when").

Two short notebooks go out as the student versions the handout ships (the real generator): the
grader tests' demo, its hidden cases drawn from the instructor's secret, to all 30 students, and
the quick three-exercise one (tests/support/grader_plants.py) to 12 of them. They come back in
the three layouts instructors download -- Canvas' flat file names, Moodle's per-student folders,
per-assignment folders of student folders, ten students each -- and are graded with the
instructor's secret, one grader run per layout. Every answer is honest, in its student's own
style; some students left an exercise undone. Each export is read back and must hold exactly the
expected grades: grades.json, gradebook.csv and lms.csv, canvas.csv (with Canvas' user ids),
Moodle's grading worksheets (with its participant ids), and one Gradescope results.json per
student in Gradescope's format. The secret is in none of them.
"""
from __future__ import annotations

import copy
import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from grader import gradebook
from grader.results import SubmissionResult
from labs.exercises import generate as gen
from tests.grader.test_gradebook import TEST_KEYS, TOP_KEYS, VISIBILITY
from tests.support import grader_plants as gp

pytestmark = pytest.mark.slow

SECRET = "the instructor's own secret words"
DEMO, QUICK = "9.1_demo.ipynb", "9.2_quick.ipynb"
MAXIMA = {DEMO: 5, QUICK: 6}

# Honest answers in several styles, per exercise ("undone": the student version's stub kept).
STYLES = {
    "ex_sum": ["def list_sum(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total",
               "import functools\n\n\ndef list_sum(xs):\n    return functools.reduce(lambda a, b: a + b, xs, 0)",
               "def list_sum(xs):\n    return list_sum(xs[1:]) + xs[0] if xs else 0"],
    "ex_reverse": ["def reverse(xs):\n    return xs[::-1]",
                   "def reverse(xs):\n    return list(reversed(xs))",
                   "def reverse(xs):\n    out = []\n    for x in xs:\n        out.insert(0, x)\n    return out"],
    "ex_a": ["def list_sum(xs):\n    t = 0\n    for v in xs:\n        t = t + v\n    return t"],
    "ex_b": ["def reverse(xs):\n    return [xs[i] for i in range(len(xs) - 1, -1, -1)]"],
    "ex_c": [gp.HONEST_C, "def running_max(xs):\n    out = []\n    for x in xs:\n"
                          "        out.append(x if not out else max(out[-1], x))\n    return out"],
}
POINTS = {"ex_sum": 2, "ex_reverse": 3, **gp.POINTS}
EXERCISES = {DEMO: ("ex_sum", "ex_reverse"), QUICK: ("ex_a", "ex_b", "ex_c")}


def _sources(folder: Path) -> dict:
    """The two source notebooks in ``folder/solutions``; the demo's hidden cases come from the
    secret (labs.exercises.secret.hidden_seed), as the course's do."""
    demo = nbformat.read(str(gp.DEMO), as_version=4)
    for cell in demo.cells:
        for seed in ("2024", "7"):
            old = f"rng = random.Random({seed})"
            if old in cell.source:
                gid = "ex_sum" if seed == "2024" else "ex_reverse"
                cell.source = cell.source.replace(
                    old, "from labs.exercises.secret import hidden_seed\n"
                    f"    rng = random.Random(hidden_seed({gid!r}, {seed}))")
    assert sum("hidden_seed" in c.source for c in demo.cells) == 2
    solutions = folder / "solutions"
    solutions.mkdir(parents=True)
    nbformat.write(demo, str(solutions / DEMO))
    nbformat.write(gp.source_notebook(), str(solutions / QUICK))
    # the student versions, as `make notebooks` (and so the handout) makes them
    return {name: nbformat.reads(gen.render(solutions / name).decode(), as_version=4)
            for name in (DEMO, QUICK)}


def _class() -> list[dict]:
    """30 students: their layout, names and ids, and per notebook their answers and points."""
    students = []
    for k in range(30):
        layout = ("canvas", "moodle", "folders")[k % 3]
        who = {"layout": layout, "login": f"student{k:02d}", "name": f"Student {k:02d}",
               "id": str(5000 + k), "notebooks": {}}
        for name, exercises in EXERCISES.items():
            if name == QUICK and (k // 3) % 3:  # 12 students, 4 per layout, hand in both
                continue
            answers, points = {}, 0
            for j, gid in enumerate(exercises):
                undone = (k + j) % 7 == 3
                answers[gid] = None if undone else STYLES[gid][(k + j) % len(STYLES[gid])]
                points += 0 if undone else POINTS[gid]
            who["notebooks"][name] = {"answers": answers, "points": points}
        students.append(who)
    return students


def _filled(student_nb, answers: dict):
    nb = copy.deepcopy(student_nb)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.endswith("_solution") and answers.get(gid.removesuffix("_solution")) is not None:
            cell.source = answers[gid.removesuffix("_solution")]
    return nb


def _path(who: dict, name: str) -> Path:
    """Where the LMS's download puts ``who``'s ``name``."""
    if who["layout"] == "canvas":  # lastfirst_<user id>_<submission id>_<file name>
        return Path(f"{who['login']}_{who['id']}_{int(who['id']) * 7}_{name}")
    if who["layout"] == "moodle":  # <Full name>_<participant id>_assignsubmission_file_/
        return Path(f"{who['name']}_{who['id']}_assignsubmission_file_") / name
    return Path(name.removesuffix(".ipynb")) / who["login"] / name


def _grade(folder: Path, solutions: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", str(folder / "class"), "--out", str(folder / "grades"),
         "--solutions", str(solutions), "--jobs", "2", "--sandbox", "none"],
        capture_output=True, text=True, cwd=folder, timeout=900,
        env={**os.environ, "LABS_GRADE_SECRET": SECRET, "LABS_LANG": "en"})


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    students = _class()
    handout = _sources(root)
    runs = {}
    for layout in ("canvas", "moodle", "folders"):
        folder = root / layout
        for who in (s for s in students if s["layout"] == layout):
            for name, mine in who["notebooks"].items():
                path = folder / "class" / _path(who, name)
                path.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(_filled(handout[name], mine["answers"]), str(path))
        runs[layout] = folder
    with ThreadPoolExecutor(1) as pool:  # one after the other: each run already uses --jobs 2
        procs = dict(zip(runs, pool.map(lambda f: _grade(f, root / "solutions"), runs.values())))
    return {"students": students, "runs": runs, "procs": procs}


def _csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.reader(f))


def _student(who: dict) -> str:
    """The student the gradebook names: Canvas' login, Moodle's full name, the folder."""
    return who["name"] if who["layout"] == "moodle" else who["login"]


def test_every_run_grades_its_whole_layout(graded):
    for layout, proc in graded["procs"].items():
        assert proc.returncode == 0, (layout, proc.stdout[-2000:], proc.stderr[-2000:])
    for layout, folder in graded["runs"].items():
        data = json.loads((folder / "grades" / "grades.json").read_text(encoding="utf-8"))
        expected = {str(_path(who, name)): mine["points"] for who in graded["students"]
                    if who["layout"] == layout for name, mine in who["notebooks"].items()}
        got = {s["submission"]: s["total"] for s in data["submissions"]}
        assert got == expected, layout
        assert not any(s.get("failed") for s in data["submissions"])


def test_the_gradebook_and_lms_files_hold_every_students_grades(graded):
    for layout, folder in graded["runs"].items():
        mine = [w for w in graded["students"] if w["layout"] == layout]
        rows = _csv(folder / "grades" / "gradebook.csv")
        header, by = rows[0], {r[0]: r for r in rows[1:]}
        assert header == ["student", f"{DEMO} (/{MAXIMA[DEMO]})", f"{QUICK} (/{MAXIMA[QUICK]})",
                          "total", "max_total", "flags", "notes"]
        assert set(by) == {_student(w) for w in mine}  # 10 students, none merged
        lms = {r[0]: r[1:] for r in _csv(folder / "grades" / "lms.csv")[1:]}
        for who in mine:
            total = sum(n["points"] for n in who["notebooks"].values())
            row = by[_student(who)]
            assert row[1] == str(who["notebooks"][DEMO]["points"])
            assert row[2] == (str(who["notebooks"][QUICK]["points"])
                              if QUICK in who["notebooks"] else "")
            assert row[3] == str(total) and row[4] == str(sum(MAXIMA.values()))
            assert lms[_student(who)] == [str(total), str(sum(MAXIMA.values())), ""]


def test_canvas_and_moodle_imports_hold_the_ids_and_grades(graded):
    canvas = _csv(graded["runs"]["canvas"] / "grades" / "canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         DEMO.removesuffix(".ipynb"), QUICK.removesuffix(".ipynb")]
    expected = [[w["login"], w["id"], "", "", "", str(w["notebooks"][DEMO]["points"]),
                 str(w["notebooks"][QUICK]["points"]) if QUICK in w["notebooks"] else ""]
                for w in graded["students"] if w["layout"] == "canvas"]
    assert sorted(canvas[1:]) == sorted(expected)
    moodle = graded["runs"]["moodle"] / "grades" / "moodle"
    for name in (DEMO, QUICK):
        sheet = _csv(moodle / f"{name.removesuffix('.ipynb')}.csv")
        assert sheet[0] == ["Identifier", "Full name", "Grade", "Maximum Grade",
                            "Feedback comments"]
        expected = {(f"Participant {w['id']}", w["name"], str(w["notebooks"][name]["points"]),
                     str(MAXIMA[name])) for w in graded["students"]
                    if w["layout"] == "moodle" and name in w["notebooks"]}
        assert {tuple(r[:4]) for r in sheet[1:]} == expected
        assert all(r[4] for r in sheet[1:])  # the verdicts as feedback


def test_each_student_gets_a_gradescope_results_json_with_their_grade(graded):
    folder = graded["runs"]["folders"] / "grades"
    data = json.loads((folder / "grades.json").read_text(encoding="utf-8"))
    results = [SubmissionResult.from_dict(s) for s in data["submissions"]]
    for who in (w for w in graded["students"] if w["layout"] == "folders"):
        out = gradebook.gradescope(results, who["login"])
        assert set(out) <= TOP_KEYS and all(set(t) <= TEST_KEYS for t in out["tests"])
        assert {t["visibility"] for t in out["tests"]} <= VISIBILITY
        assert out["score"] == sum(n["points"] for n in who["notebooks"].values())
        assert sum(t["max_score"] for t in out["tests"]) == sum(
            MAXIMA[n] for n in who["notebooks"])


def test_the_secret_is_in_no_export(graded):
    for folder in graded["runs"].values():
        for path in (folder / "grades").rglob("*"):
            if path.is_file():
                assert SECRET.encode() not in path.read_bytes(), path
    for proc in graded["procs"].values():
        assert SECRET not in proc.stdout + proc.stderr
