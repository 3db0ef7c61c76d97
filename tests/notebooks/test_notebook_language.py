"""A notebook's code cells print in the notebook's own language, with plain strings.

A code cell reads like code a practitioner writes: what it prints is an f-string (or a table or
plot call) in its edition's language, never a message key the reader has to look up. So:
- no code cell of either edition looks up a message of labs.messages (no import of it, no call
  of ``text``/``label``/``msg``, no string that is a catalog key);
- the Chinese edition's strings are Chinese: no English phrase (three or more words) except
  docstrings (code documentation, English as in labs/) and the data keys and code listed below;
- the English edition's code cells have no CJK character (tests/notebooks/test_edition.py) and are the
  Chinese cells' code with English strings (same syntax tree up to strings and comments).
labs' own messages (errors, verdicts, hints, figure labels) speak both languages through
labs.messages; that is tested in tests/labs/messages/test_messages.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from labs import messages
from labs.notebook.hosted import HANDOUT_URL

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "solutions").glob("*.ipynb"))
EDITIONS = NOTEBOOKS + sorted((ROOT / "solutions" / "en").glob("*.ipynb")) \
    + sorted((ROOT / "notebooks").rglob("*.ipynb"))
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
WORDS = re.compile(r"\b[a-z]{3,}\b")
LOOKUPS = {"text", "label", "msg"}

# English strings that are not sentences for the student: names of collectives and formulas
# used as titles (code), command-line flags, and dict keys that labs/ returns or reads.
NOT_PROSE = {
    "ring all-reduce = reduce-scatter + all-gather",  # a formula, as a figure title
    "ring all-reduce",  # a collective's name (labs.data_parallel.experiments' key)
    "--nproc-per-node=2",  # a torchrun flag
    "weights after the step", "parameters on this rank", "sequence-parallel grads",  # keys
    # of labs.tensor_parallel.verify's results
    "segment.all.current",  # a key of torch.cuda.memory_stats()
    HANDOUT_URL,  # the handout's address, in the hosted bootstrap cell (labs.notebook.hosted)
}


def _tree(cell) -> ast.AST:
    source = "\n".join(line for line in cell.source.splitlines()
                       if not line.lstrip().startswith(("%", "!")))
    return ast.parse(source)


def _strings(tree):
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):  # docstrings document code, in English like labs/
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.value


def _keys() -> set[str]:
    return {f"{area}.{name}" for area in messages.areas() for name in messages.catalog(area)}


def _lookups(tree, keys) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module.startswith("labs.messages")
                or (node.module == "labs.notebook.plots" and any(a.name == "label" for a in node.names))):
            found.append(f"from {node.module} import …")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else None
            if name in LOOKUPS:
                found.append(f"{name}(…) on line {node.lineno}")
        elif isinstance(node, ast.Attribute) and node.attr == "messages" \
                and isinstance(node.value, ast.Name) and node.value.id == "labs":
            found.append("labs.messages")
        elif isinstance(node, ast.Constant) and node.value in keys:
            found.append(f"the key {node.value!r}")
    return found


@pytest.mark.parametrize("path", EDITIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_cell_looks_up_a_message(path):
    keys = _keys()
    nb = nbformat.read(str(path), as_version=4)
    found = [f"cell {index}: {what}" for index, cell in enumerate(nb.cells)
             if cell.cell_type == "code" for what in _lookups(_tree(cell), keys)]
    assert not found, ("message lookups in code cells (print an f-string in the notebook's "
                       "language instead):\n" + "\n".join(found))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_chinese_edition_prints_chinese(path):
    nb = nbformat.read(str(path), as_version=4)
    english = [f"cell {index}: {value[:60]!r}" for index, cell in enumerate(nb.cells)
               if cell.cell_type == "code" for value in _strings(_tree(cell))
               if not CJK.search(value) and len(WORDS.findall(value)) >= 3
               and value not in NOT_PROSE]
    assert not english, "English sentences in code cells of a Chinese notebook:\n" + \
        "\n".join(english)


def test_the_lookup_finder_finds_lookups():
    keys = {"notebook_2_1.setup"}
    cells = ['print(text("notebook_2_1.setup", n=1))', 'from labs.messages import text',
             'x = label("a.b")', 'k = "notebook_2_1.setup"', 'print(labs.messages.text("a"))']
    for source in cells:
        assert _lookups(ast.parse(source), keys), source
    assert not _lookups(ast.parse('print(f"第 {n} 步")'), keys)
