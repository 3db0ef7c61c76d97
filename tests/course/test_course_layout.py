"""The course package: layout, pins, generated student notebooks, the notebook template."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ["2.0_collectives.ipynb", "2.1_data_parallel.ipynb", "2.2_model_parallel.ipynb",
             "2.3_pipeline_parallel.ipynb", "2.4_hybrid_parallel.ipynb", "2.5_summary.ipynb"]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
BOTH_EDITIONS = SOLUTIONS + sorted((ROOT / "solutions" / "en").glob("*.ipynb"))
# Headings every section notebook has (README, "Writing a notebook").
TEMPLATE_HEADINGS = ["学习目标", "预计用时", "前置知识", "练习", "自测题", "小结", "GPU"]


def test_top_level_layout():
    for name in ["README.md", "environment.yml", "pyproject.toml", "Makefile", "labs",
                 "notebooks", "solutions", "tests", ".ci/run", "requirements.txt"]:
        assert (ROOT / name).exists(), name


def test_solution_notebooks_have_the_design_names():
    assert SOLUTIONS, "solutions/ has no notebook"
    for path in SOLUTIONS:
        assert path.name in NOTEBOOKS, f"{path.name} is not one of {NOTEBOOKS}"


def _pins(text: str) -> dict:
    return dict(re.findall(r"^\s*-?\s*([A-Za-z0-9_.-]+)==([^\s#]+)", text, flags=re.M))


def test_torch_pinned_and_conda_matches_requirements():
    req = _pins((ROOT / "requirements.txt").read_text())
    conda = _pins((ROOT / "environment.yml").read_text())
    assert req["torch"] == "2.13.0"
    assert conda == req


def test_student_notebooks_are_what_the_generator_makes():
    proc = subprocess.run([sys.executable, "-m", "labs.exercises.generate", "--src",
                           "solutions", "--dst", "notebooks", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, ("notebooks/ is out of date: run `make notebooks`\n"
                                  + proc.stdout + proc.stderr)


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.name for p in SOLUTIONS])
def test_notebook_follows_the_template(path):
    nb = nbformat.read(path, as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# 2.")
    for heading in TEMPLATE_HEADINGS:
        assert re.search(rf"^#+ .*{heading}", markdown, flags=re.M), f"no heading {heading}"
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert any("labs.environment(" in src for src in code), "no environment cell"
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(graded) >= 3, "fewer than 3 graded exercises"


@pytest.mark.parametrize("path", BOTH_EDITIONS, ids=[str(p.relative_to(ROOT)) for p in BOTH_EDITIONS])
def test_solution_notebook_is_executed_without_errors(path):
    """solutions/ (both editions) is committed executed, so the course reads well without running
    it; make test runs the English student notebooks in the browser (and make test-editions the
    Chinese solutions, tests/notebooks/test_solutions_run.py), so this is where an English
    solution's own run is held to "no error"."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count for c in code), "re-execute it: make execute"
    for c in code:
        assert not any(o.output_type == "error" for o in c.outputs), c.source[:80]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme
    assert "make test" in (ROOT / ".ci/run").read_text()
