"""The web book's pages before Sphinx (tools/book/pages.py, sources.py; issue 41): the output rule
on made-up notebooks and on the course's own, the errata links, the landing page's course map.
No Sphinx needed; marker ``book`` (``make test-book``), ``slow`` keeps them out of ``make check``."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools.book import pages, sources
from tools.book.texts import EDITIONS, ERRATA, NOTEBOOKS, SOLUTIONS

pytestmark = [pytest.mark.book, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
PAIRS = [(edition, name) for edition in EDITIONS for name in sources.notebook_names(edition)]


def _md(cell_id, source):
    return nbformat.v4.new_markdown_cell(source, id=cell_id)


def _code(cell_id, source, *, text="printed\n", **metadata):
    cell = nbformat.v4.new_code_cell(source, id=cell_id, metadata=metadata)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    return cell


def _made_up():
    """A solution notebook with one cell of each kind the rule tells apart."""
    answer = ("def my_sum(xs):\n    ### BEGIN SOLUTION\n    return sum(xs)\n"
              "    ### END SOLUTION\n")
    cells = [
        _md("title", "# 2.9 Title\n\n## 1. Section"),
        _code("demo", "print(1)"),
        _code("attr", "print(memory.my_sum([1]))"),  # an attribute, not the answer
        _md("ex-head", "## Exercises\n\n### Exercise 1 (1 point): a sum"),
        _code("answer", answer, nbgrader={"solution": True, "grade": False, "grade_id": "a"}),
        _code("check", "check_sum(my_sum)", nbgrader={"grade": True, "grade_id": "b"}),
        _code("shown", "print(inspect.getsource(reference))"),
        _md("after", "## Self-check quiz"),
        _code("uses", "print(my_sum([1, 2]))"),
        _code("calls", "check_sum(lambda xs: 0)"),
        _code("imports", "from labs.exercises import summary_checks\nprint(1)"),
        _code("later", "print(2)"),
    ]
    solution = nbformat.v4.new_notebook(cells=cells)
    student = nbformat.from_dict(nbformat.v4.new_notebook(cells=[
        nbformat.from_dict({**c, "source": c.source.replace("    return sum(xs)\n", "")})
        for c in cells]))
    return solution, student


def test_the_rule_on_a_made_up_notebook():
    solution, student = _made_up()
    got = {v.cell_id: v.keep for v in pages.verdicts(solution, student)}
    assert got == {"demo": True, "attr": True, "answer": False, "check": False, "shown": False,
                   "uses": False, "calls": False, "imports": False, "later": True}


def test_a_student_cell_without_a_solution_twin_is_refused():
    solution, student = _made_up()
    student.cells.append(_code("new", "print(3)"))
    with pytest.raises(ValueError, match="'new'"):
        pages.verdicts(solution, student)


@pytest.mark.parametrize("edition,name", PAIRS, ids=[f"{e}/{n}" for e, n in PAIRS])
def test_the_rule_on_the_course(edition, name):
    solution = nbformat.read(str(ROOT / SOLUTIONS[edition] / name), as_version=4)
    student = nbformat.read(str(ROOT / NOTEBOOKS[edition] / name), as_version=4)
    verdicts = {v.cell_id: v for v in pages.verdicts(solution, student)}
    graded = [c.id for c in solution.cells if "nbgrader" in c.metadata]
    assert graded and all(not verdicts[cell_id].keep for cell_id in graded)
    assert sum(v.keep for v in verdicts.values()) >= 10, "hardly any output kept"
    page = pages.page_notebook(ROOT / SOLUTIONS[edition] / name, ROOT / NOTEBOOKS[edition] / name,
                               edition, box="BOX")
    assert page.cells[1].source == "BOX"
    for cell in page.cells:
        if cell.cell_type == "code" and cell.id in graded:
            assert cell.outputs == [], f"{cell.id}: a graded cell's output reached the page"
        for output in cell.get("outputs", []):
            assert pages.WIDGET not in output.get("data", {})
        if cell.cell_type == "markdown":
            assert "ERRATA" not in cell.source, "an errata link was not rewritten"
        if "hosted-setup" in cell.metadata.get("tags", []):
            assert "hide-input" in cell.metadata["tags"]


def test_the_errata_links_point_to_the_errata_page():
    markdown = "see [errata #14](../../ERRATA.en.md#14) and [errata #2](../ERRATA.md#2)."
    assert pages.rewrite_errata_links(markdown) == (
        'see <a class="errata-link" href="errata.html#14">errata #14</a> and '
        '<a class="errata-link" href="errata.html#2">errata #2</a>.')


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_landing_page_links_every_notebook(edition):
    names = sources.notebook_names(edition)
    page = sources.landing_page(edition, names, None)
    for name in names:
        assert f"[`{Path(name).stem}`]({name})" in page
        assert f"\n{Path(name).stem}\n" in page  # in the table of contents
    assert "errata" in page and "make lab" in page and "HANDOUT_URL" in page


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_errata_page_links_into_the_book(edition):
    page = sources.errata_page(edition)
    assert "](notebooks/" not in page and "(ERRATA" not in page
    rows = (ROOT / ERRATA[edition]).read_text(encoding="utf-8").count('<a id="')
    assert rows > 0 and page.count('<a id="') == rows
    if "(ERRATA.md)" in (ROOT / ERRATA[edition]).read_text(encoding="utf-8"):  # en names zh's
        assert 'href="../zh/errata.html"' in page


@pytest.mark.parametrize("path", sorted((ROOT / "tools" / "book").glob("*.py")),
                         ids=lambda p: p.name)
def test_the_book_code_keeps_the_project_budgets(path):
    """Modules of at most 400 lines, functions of at most 60, a docstring that says what the
    module must not do (as tests/course/ asks of labs/ and grader/)."""
    import ast
    import re

    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert source.count("\n") <= 400
    long = [node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > 60]
    assert long == []
    assert re.search(r"\bmust\s+not\b", ast.get_docstring(tree) or "", re.I)
