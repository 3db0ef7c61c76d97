"""``python -m labs check NOTEBOOK``: the student's install check (``make check`` in the handout).

Two steps, each of which must pass: the environment check (:func:`labs.runtime.doctor.doctor`:
versions, backends, real 2-, 4- and 8-rank all-reduces), then one short notebook run end to end in a
Jupyter kernel, as "Run All" runs it: the kernel JupyterLab would start (the notebook's
kernelspec), in the notebook's own folder (so it speaks its edition's language). Only the cells
tagged ``raises-exception`` (the exercise checks, which fail until the exercise is done) may raise;
any other error, a dead kernel or a cell past its time limit fails the check and is named with its
cell. The notebook is run in memory and never written: the student's file does not change.

Owns: the two steps, their order and the one-line verdicts. Must not: write or change any file,
import the grader or the course's modules (models, parallelism packages, checks), or grade.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from labs.messages import text
from labs.runtime.doctor import doctor

__all__ = ["CELL_TIMEOUT", "check", "run_notebook"]

#: Seconds one cell may take (generous: a slow laptop still passes, a hang still ends).
CELL_TIMEOUT = 600
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours of IPython's tracebacks


def run_notebook(path: Path, timeout: int = CELL_TIMEOUT) -> tuple[int, int]:
    """Run the notebook at ``path`` in a kernel, in its folder, without saving it. Returns
    ``(code cells run, cells tagged raises-exception that raised)``; raises nbclient's
    ``CellExecutionError``, ``CellTimeoutError`` or ``DeadKernelError`` on a failure."""
    import nbformat
    # why here: nbclient and jupyter_client take about a second to import; `doctor` needs neither
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    kernel = (nb.metadata.get("kernelspec") or {}).get("name") or "python3"
    NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=False,
                   resources={"metadata": {"path": str(path.resolve().parent)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    raised = sum(1 for c in code if any(o.get("output_type") == "error" for o in c.outputs))
    return len(code), raised


def _detail(exc: Exception) -> str:
    """What failed, in a few plain lines: the cell's first lines and its error for nbclient's
    ``CellExecutionError``; the last lines of the message for anything else."""
    said = _ANSI.sub("", str(exc))
    parts = said.split("-" * 18 + "\n")  # nbclient: header, ---, the cell's source, ---, traceback
    ename = getattr(exc, "ename", None)
    if ename and len(parts) >= 3:
        source = parts[1].strip().splitlines()
        shown = source[:8] + (["..."] if len(source) > 8 else [])
        return "\n".join([*shown, f"{ename}: {getattr(exc, 'evalue', '')}"])
    return "\n".join([ln for ln in said.splitlines() if ln.strip()][-12:])


def check(notebook: Path, out=None, *, environment=doctor, run=run_notebook) -> bool:
    """The environment check, then ``notebook`` end to end. True when both pass; says which
    step failed and what to do otherwise."""
    out = out or sys.stdout

    def say(line: str = "") -> None:
        print(line, file=out, flush=True)

    notebook = Path(notebook)
    if not notebook.is_file():
        say(text("doctor.check_no_notebook", notebook=notebook))
        return False
    if not environment(out=out):
        say(text("doctor.check_doctor_failed"))
        return False
    say()
    say(text("doctor.check_running", notebook=notebook))
    start = time.perf_counter()
    try:
        cells, raised = run(notebook)
    except Exception as exc:  # noqa: BLE001  (any failure of the run is the check's verdict)
        say(text("doctor.check_notebook_failed", notebook=notebook, exc_type=type(exc).__name__,
                 detail=_detail(exc)))
        return False
    say(text("doctor.check_passed", notebook=notebook, cells=cells,
             seconds=time.perf_counter() - start, raised=raised))
    return True
