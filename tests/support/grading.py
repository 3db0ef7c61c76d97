"""Grading course notebooks from the tests, as an instructor would from the command line.

Each notebook test module declares its variants (the solution, the untouched student version, a
planted wrong answer) with :func:`declare`; the first :func:`graded` of a session grades those of
every selected notebook test module in ONE run of ``python -m grader`` over a folder, one
sub-folder each (issue 27: one grader start and one pool of ``--jobs`` for all of them, instead
of a run per notebook whose last submission runs alone).
"""

from __future__ import annotations

import json
import string
import subprocess
import sys
import threading
from pathlib import Path

import nbformat

from labs.exercises import catalog
from tests.support import early
from labs.notebook.hosted import is_hosted_cell
from labs.messages import text

ROOT = Path(__file__).resolve().parents[2]
# The hidden cases of every grading test come from this secret (deterministic runs); the checks
# under other secrets are tested in tests/grader/test_record_judge.py and by the exercise tests.
SECRET = "course-tests-2026"


def read(path: Path):
    return nbformat.read(str(path), as_version=4)


def exercise_cells(nb):
    """The setup cell (imports, environment) plus the exercise and check cells only: graded
    cells do not depend on the sections before them, and nbval runs the whole notebooks."""
    keep = [next(c for c in nb.cells if c.cell_type == "code" and not is_hosted_cell(c))]
    keep += [c for c in nb.cells[1:] if c.cell_type == "code" and "nbgrader" in c.metadata]
    nb.cells = keep
    return nb


def solution_cell(nb, grade_id: str):
    """The code cell carrying nbgrader ``grade_id``."""
    (cell,) = [c for c in nb.cells if c.cell_type == "code"
               and c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


def grade(root: Path, name: str, variants: dict, *, timeout: float = 300) -> dict:
    """Write each variant as ``submissions/<variant>/<name>``, grade them all in one run and
    return ``{variant: that submission's record in grades.json}``."""
    return _grade_folders(root, {who: (name, nb) for who, nb in variants.items()}, timeout)


def _grade_folders(root: Path, folders: dict, timeout: float) -> dict:
    """Write ``{folder: (notebook name, notebook)}`` as ``submissions/<folder>/<name>``, grade
    them all in one run and return ``{folder: that submission's record in grades.json}``."""
    subs = root / "submissions"
    for who, (name, nb) in folders.items():
        (subs / who).mkdir(parents=True)
        nbformat.write(nb, str(subs / who / name))
    out = root / "grades"
    proc = subprocess.run(early.command(
        [sys.executable, "-m", "grader", str(subs), "--out", str(out), "--solutions",
         str(ROOT / "solutions"), "--timeout", str(timeout), "--cell-timeout", "120",
         "--secret", SECRET]),
        capture_output=True, text=True, cwd=root, timeout=4 * timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    return {Path(s["submission"]).parts[0]: s for s in data["submissions"]}


# --- one grader run for all the notebook tests of a session (issue 27) ----------------------------

class Runs:
    """What the notebook test modules declared and what their one grader run gave back. The
    session's state is :data:`RUNS`; a test of this machinery makes a ``Runs`` of its own (with
    ``grade_folders`` replaced), so it can never touch, or wait for, the session's early run."""

    def __init__(self, grade_folders=None, gate=None):
        self.grade_folders = grade_folders or _grade_folders
        self.gate = gate or early.GATE
        self.declared: dict[str, tuple] = {}  # test module -> (notebook name, variants(), timeout)
        self.records: dict[str, dict] = {}  # test module -> {variant: record}
        self.failed: dict[str, BaseException] = {}  # test module -> why it has no records
        # The test modules of the session's selected tests (tests/conftest.py sets it after
        # collection): a module whose tests were all deselected is not graded. None: grade all.
        self.selected: set[str] | None = None
        self.early: list = []  # the background run start_early began, if any
        self.lock = threading.Lock()

    def declare(self, module: str, name: str, variants, *, timeout: float = 300) -> None:
        """Test module ``module`` grades ``variants()`` (``{variant: notebook}`` of ``name``),
        its submissions' time limit ``timeout``."""
        self.declared[module] = (name, variants, timeout)

    def graded(self, module: str, tmp_path_factory) -> dict:
        """``{variant: record}`` of ``module``'s declared variants. The first call grades every
        declared and selected module not graded yet, in one grader run (the largest time
        limit); a module whose variants cannot be built fails alone, a failed run fails every
        module in it. When :meth:`start_early` began that run, this waits for it."""
        if self.early:
            self.gate.result(self.early[0])
        with self.lock:
            if module not in self.records and module not in self.failed:
                self._grade_all(module, tmp_path_factory)
        if module in self.failed:
            raise self.failed[module]
        return self.records[module]

    def start_early(self, tmp_path_factory) -> None:
        """Begin the one grader run as the session starts (tests/conftest.py calls it after
        collection), beside the unit tests (tests/support/early.py)."""
        first = next((m for m in self.declared
                      if self.selected is None or m in self.selected), None)
        if first is None or self.early:
            return

        def run():
            with self.lock:
                if first not in self.records and first not in self.failed:
                    try:
                        self._grade_all(first, tmp_path_factory)
                    except BaseException:  # noqa: BLE001 - kept in failed for each module's test
                        pass

        self.early.append(self.gate.start("grading", run))

    def _grade_all(self, module: str, tmp_path_factory) -> None:
        """Grade ``module`` and every other declared, selected module not graded yet (one run)."""
        folders, owner, limit = {}, {}, 0.0
        for m, (name, build, timeout) in self.declared.items():
            if m in self.records or m in self.failed or (
                    m != module and self.selected is not None and m not in self.selected):
                continue
            try:
                built = build()
            except Exception as exc:  # a plant that no longer applies: that module's error
                self.failed[m] = exc
                continue
            for who, nb in built.items():
                folder = f"{m.rpartition('.')[2]}--{who}"
                folders[folder], owner[folder] = (name, nb), (m, who)
            limit = max(limit, timeout)
        if folders:
            try:
                records = self.grade_folders(tmp_path_factory.mktemp("grading"), folders, limit)
            except BaseException as exc:
                for m, _ in owner.values():
                    self.failed.setdefault(m, exc)
                raise
            for folder, record in records.items():
                m, who = owner[folder]
                self.records.setdefault(m, {})[who] = record


RUNS = Runs()  # the session's: every notebook test module declares into it
declare, graded, start_early = RUNS.declare, RUNS.graded, RUNS.start_early


def declare_three(module: str, name: str, plant, *, timeout: float = 240) -> None:
    """:func:`declare` the solution, the untouched student notebook and the solution with
    ``plant`` applied (a function that edits the notebook), keeping only the exercise cells."""
    declare(module, name, lambda: {
        "solution": exercise_cells(read(ROOT / "solutions" / name)),
        "untouched": exercise_cells(read(ROOT / "notebooks" / name)),
        "wrong": plant(exercise_cells(read(ROOT / "solutions" / name)))}, timeout=timeout)


def by_id(submission) -> dict:
    return {e["grade_id"]: e for e in submission["exercises"]}


# --- what every notebook's grading test asserts --------------------------------------------------

def points(submission) -> dict:
    """``{grade_id: points}`` of one graded submission."""
    return {e["grade_id"]: e["points"] for e in submission["exercises"]}


def assert_student_version(name: str, exercises: dict) -> None:
    """notebooks/``name`` is what the generator makes from solutions/``name``: answers
    replaced by stubs, the graded cells those of ``exercises``."""
    from labs.exercises import generate as gen

    student = ROOT / "notebooks" / name
    assert student.read_bytes() == gen.render(ROOT / "solutions" / name), \
        "run: python -m labs.exercises.generate"
    nb = read(student)
    text = "\n".join(c.source for c in nb.cells)
    assert "BEGIN SOLUTION" not in text and "练习未完成" in text
    assert set(gen.graded_cells(nb)) == set(exercises)


def assert_full_marks(submission, exercises: dict, total: int, lang: str = "zh") -> None:
    """Every exercise passed with its declared points, each verdict the passing message."""
    assert submission["error"] is None
    assert points(submission) == exercises
    assert submission["total"] == submission["max_total"] == total
    for e in submission["exercises"]:
        gid = e["grade_id"]
        assert e["message"] == text("checks.verdict_passed", lang=lang, points=exercises[gid],
                                    exercise=catalog.label(gid, lang)), e


def _before_fields(key: str, lang: str) -> str:
    """The literal text a message starts with, up to its first field."""
    from labs.messages import catalog as messages_of

    area, name = key.split(".")
    return next(string.Formatter().parse(messages_of(area)[name][lang]))[0]


def assert_zero_for_untouched(submission, total: int, lang: str = "zh") -> None:
    """Run All reached the end; every exercise 0 points as not done yet, its code a stub."""
    assert submission["error"] is None
    assert submission["total"] == 0 and submission["max_total"] == total
    stubs = tuple(_before_fields(key, lang) for key in
                  ("checks.stub_not_written", "checks.stub_not_finished"))
    for e in submission["exercises"]:
        verdict = text("checks.verdict_incomplete", lang=lang,
                       exercise=catalog.label(e["grade_id"], lang), message="")
        assert e["message"].startswith(verdict), e
        assert e["message"][len(verdict):].startswith(stubs), e


def only_lost(submission, exercises: dict, grade_id: str) -> str:
    """Assert ``submission`` lost ``grade_id`` and nothing else; return that exercise's message."""
    assert points(submission) == {**exercises, grade_id: 0}
    (message,) = [e["message"] for e in submission["exercises"] if e["grade_id"] == grade_id]
    return message
