"""What a notebook's own code cells print and draw is in the notebook's language.

Every sentence a code cell prints, displays or puts on a figure is a message of labs.messages
(``text(...)``, ``label(...)``), so the Chinese notebooks show Chinese and the English edition
can share the same code cells. So: no Chinese string literal in any code cell, and no English
phrase (three or more words) either, except docstrings (code documentation, English as in
labs/) and the data keys and code listed below.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "solutions").glob("*.ipynb"))
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
WORDS = re.compile(r"\b[a-z]{3,}\b")

# English strings that are not sentences for the student: names of collectives and formulas
# used as titles (code), command-line flags, and dict keys that labs/ returns or reads.
NOT_PROSE = {
    "ring all-reduce = reduce-scatter + all-gather",  # a formula, as a figure title
    "ring all-reduce",  # a collective's name (labs.data_parallel.experiments' key)
    "--nproc-per-node=2",  # a torchrun flag
    "weights after the step", "parameters on this rank", "sequence-parallel grads",  # keys
    # of labs.tensor_parallel.verify's results
    "segment.all.current",  # a key of torch.cuda.memory_stats()
}


def _strings(cell):
    source = "\n".join(line for line in cell.source.splitlines()
                       if not line.lstrip().startswith(("%", "!")))
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):  # docstrings document code, in English like labs/
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.value


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_cells_say_everything_through_messages(path):
    nb = nbformat.read(str(path), as_version=4)
    chinese, english = [], []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for value in _strings(cell):
            if CJK.search(value):
                chinese.append(f"cell {index}: {value[:60]!r}")
            elif len(WORDS.findall(value)) >= 3 and value not in NOT_PROSE:
                english.append(f"cell {index}: {value[:60]!r}")
    assert not chinese, ("Chinese text in code cells (make it a message of "
                         f"labs/messages/notebook_*.py):\n" + "\n".join(chinese))
    assert not english, ("English sentences in code cells of a Chinese notebook (make them "
                         "messages):\n" + "\n".join(english))
