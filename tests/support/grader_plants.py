"""A tiny course for the grader's attack and fault tests: a source notebook with three quick
exercises (1 + 2 + 3 points), and planted submissions, each with the exact points it must get.

The source is built here (not a fixture file) so that every test gets a fresh copy in its own
folder; its student version comes from the real generator.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from labs.exercises import generate as gen

ROOT = Path(__file__).resolve().parents[2]
#: The grader tests' two-exercise notebook (ex_sum, ex_reverse), as a source in solutions/.
DEMO = ROOT / "tests" / "support" / "fixtures" / "solutions" / "demo.ipynb"
NAME = "quick.ipynb"
POINTS = {"ex_a": 1, "ex_b": 2, "ex_c": 3}

SETUP = "import random\n\nfrom labs.exercises.checks import assert_equal, case, graded"
SOL_A = '''def list_sum(xs):
    """Return the sum of xs."""
    ### EXERCISE: 1
    ### BEGIN SOLUTION
    total = 0
    for x in xs:
        total += x
    return total
    ### END SOLUTION'''
SOL_B = '''def reverse(xs):
    """Return xs reversed, as a new list."""
    ### EXERCISE: 2
    ### BEGIN SOLUTION
    return xs[::-1]
    ### END SOLUTION'''
SOL_C = '''def running_max(xs):
    """The running maximum of xs: out[i] = max(xs[:i + 1])."""
    ### EXERCISE: 3
    ### BEGIN SOLUTION
    out = []
    best = None
    for index, x in enumerate(xs):
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            raise TypeError(f"element {index} is a {type(x).__name__}, not a number")
        if best is None or x > best:
            best = x
        out.append(best)
    assert len(out) == len(xs), (len(out), len(xs), xs)
    assert all(a <= b for a, b in zip(out, out[1:])), "a running maximum never decreases"
    return out
    ### END SOLUTION'''
HONEST_C = '''def running_max(xs):
    import itertools
    return list(itertools.accumulate(xs, max))'''


def _check(grade_id, fn, expect):
    return (f'@graded("{grade_id}", points={POINTS[grade_id]})\n'
            f"def check(fn):\n"
            f"    rng = random.Random(3)\n"
            f"    for k in range(4):\n"
            f"        xs = [rng.randint(-9, 9) for _ in range(rng.randint(1, 8))]\n"
            f"        with case(f\"case {{k}}\"):\n"
            f"            assert_equal({expect}, fn(list(xs)), what=\"value\")\n\n\n"
            f"check({fn})")


def _graded(cell, grade_id, *, solution):
    meta = {"grade": not solution, "grade_id": grade_id + ("_solution" if solution else ""),
            "locked": not solution, "schema_version": 3, "solution": solution}
    if not solution:
        meta["points"] = POINTS[grade_id]
    cell.metadata["nbgrader"] = meta
    return cell


def source_notebook():
    cells = [new_markdown_cell("# Quick"), new_code_cell(SETUP),
             new_markdown_cell("## Body"), new_code_cell("BODY_RAN = True\nprint('body')")]
    for n, (gid, sol, fn, expect) in enumerate([
            ("ex_a", SOL_A, "list_sum", "sum(xs)"),
            ("ex_b", SOL_B, "reverse", "list(reversed(xs))"),
            ("ex_c", SOL_C, "running_max",
             "[max(xs[:i + 1]) for i in range(len(xs))]")], 1):
        cells.append(new_markdown_cell(f"### Exercise {n}"))
        cells.append(_graded(new_code_cell(sol), gid, solution=True))
        cells.append(_graded(new_code_cell(_check(gid, fn, expect)), gid, solution=False))
    cells.append(new_code_cell("print('the end')"))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "course": {"references": {"ex_a": ["sum", "math.fsum"]}}})
    for k, cell in enumerate(nb.cells):
        cell.id = f"q-{k:02d}"
    return nb


def write_course(folder: Path) -> tuple[Path, Path]:
    """``folder/solutions/quick.ipynb`` and its student version ``folder/student.ipynb``."""
    (folder / "solutions").mkdir(parents=True, exist_ok=True)
    src = folder / "solutions" / NAME
    nbformat.write(source_notebook(), str(src))
    student = folder / "student.ipynb"
    student.write_bytes(gen.render(src))
    return src, student


def solution_copy(folder: Path):
    return nbformat.read(str(folder / "solutions" / NAME), as_version=4)


def cell(nb, text: str):
    (found,) = [c for c in nb.cells if c.cell_type == "code" and text in c.source
                and not c.metadata.get("nbgrader", {}).get("grade")]
    return found


def honest(folder: Path):
    nb = solution_copy(folder)
    cell(nb, "def running_max").source = HONEST_C
    cell(nb, "def list_sum").source = "def list_sum(xs):\n    t = 0\n    for v in xs:\n        t = t + v\n    return t"
    return nb


def edit(folder: Path, grade_id_cell: str, code: str, *, prepend=True, base=None):
    """The honest submission with ``code`` put before (or after) the exercise cell's code."""
    nb = base or honest(folder)
    c = cell(nb, grade_id_cell)
    c.source = (code + "\n" + c.source) if prepend else (c.source + "\n" + code)
    return nb


def add_cell_after(nb, text: str, code: str):
    at = nb.cells.index(cell(nb, text))
    nb.cells.insert(at + 1, new_code_cell(code))
    return nb


def tree_hash(*paths: Path) -> dict:
    """``{path: sha256}`` of every file (and symlink) under ``paths``, __pycache__ skipped:
    two equal dicts mean nothing changed, and a difference names the files."""
    found = {}
    for base in paths:
        for p in sorted(Path(base).rglob("*")):
            if "__pycache__" in p.parts or ".pytest_cache" in p.parts:
                continue
            if p.is_symlink():
                found[str(p)] = f"link {os.readlink(p)}"
            elif p.is_file():
                found[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


def course_hash() -> dict:
    return tree_hash(ROOT / "labs", ROOT / "solutions", ROOT / "tests" / "support" / "fixtures")


def points(submission) -> dict:
    return {e["grade_id"]: e["points"] for e in submission["exercises"]}


def report(out: Path) -> dict:
    data = json.loads((out / "grades.json").read_text(encoding="utf-8"))
    return {Path(s["submission"]).parts[0]: s for s in data["submissions"]}


def alive_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


# --- the same honest answers, moved around (cells are found by ids and metadata) -------------

def above_setup(folder: Path):
    """A cell inserted above the setup cell (it may even fail)."""
    nb = honest(folder)
    nb.cells.insert(1, new_code_cell("print('my notes')\nraise ValueError('not part of it')"))
    return nb


def reordered(folder: Path):
    """Exercise ex_c split in two cells whose order is swapped: the helper it calls comes after
    the function, and an extra cell sits between them."""
    nb = honest(folder)
    c = cell(nb, "def running_max")
    c.source = "def running_max(xs):\n    return _helper(xs)"
    at = nb.cells.index(c)
    nb.cells.insert(at + 1, new_code_cell("NOTE = 'scratch'"))
    nb.cells.insert(at + 2, new_code_cell(
        "import itertools\n\ndef _helper(xs):\n    return list(itertools.accumulate(xs, max))"))
    return nb


def colab(folder: Path):
    """As Colab saves it: nbformat 4.0, each cell's id in ``metadata.id``, and (harder) the
    checks' nbgrader metadata gone: only the ids say which cell is which."""
    nb = honest(folder)
    nb.nbformat_minor = 0
    for c in nb.cells:
        cid = c.pop("id", None)
        if cid:
            c.metadata["id"] = cid
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade"):
            del c.metadata["nbgrader"]
    nb.metadata["colab"] = {"provenance": []}
    return nb


def write_raw(nb, path: Path) -> None:
    """Write ``nb`` as it is (nbformat.write would validate and add ids back)."""
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")


MOVED = {"above_setup": above_setup, "reordered": reordered, "colab": colab}


def demo_with(nb, code: str, *, prepend: bool = False):
    """A copy of the demo notebook ``nb`` whose ex_sum answer cell is ``code`` (``prepend``:
    ``code`` put before the answer it had)."""
    nb = copy.deepcopy(nb)
    answer = next(c for c in nb.cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "ex_sum_solution")
    answer.source = code + answer.source if prepend else code
    return nb
