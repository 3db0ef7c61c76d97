"""grader.imports: the grader's processes read and validate notebooks without building the Lark
parsers of ``rfc3987_syntax`` (1.3 s of CPU per process, one process per submission), and
validation still refuses a broken notebook."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from grader.imports import leave_out_unused_format_checkers
leave_out_unused_format_checkers()
import nbclient, nbformat
nb = nbformat.read("solutions/2.0_collectives.ipynb", as_version=4)
nbformat.validate(nb)
nb.cells[0]["cell_type"] = "no such type"
try:
    nbformat.validate(nb)
except nbformat.ValidationError:
    print("refused")
print("rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is not None)
"""


def test_notebooks_validate_as_before_without_the_unused_iri_checker():
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["refused", "False"]


def test_every_grader_process_leaves_it_out_before_reading_a_notebook():
    main = (ROOT / "grader" / "__main__.py").read_text(encoding="utf-8")
    assert main.index("leave_out_unused_format_checkers()") < main.index("from grader.cli")
    runner = (ROOT / "grader" / "runner.py").read_text(encoding="utf-8")
    body = runner[runner.index("def main("):]
    assert "leave_out_unused_format_checkers()" in body.split("\n    ", 2)[1]
