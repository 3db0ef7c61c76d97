"""``python -m labs check NOTEBOOK`` (the handout's ``make check``, labs.runtime.install_check):
the environment check, then the notebook end to end; each failure said, in both languages, with
what to do. (tests/grader/test_handout.py runs it for real in a handout.)"""

from __future__ import annotations

import io

import nbformat
import pytest

from labs.__main__ import main
from labs.messages import LANG_ENV, catalog
from labs.runtime import install_check

MESSAGES = catalog("doctor")


def _opening(key: str, lang: str) -> str:
    return MESSAGES[key][lang].split("{")[0]


def _notebook(path, *cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    for source, tags in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": tags}))
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_step_passes_or_says_which_failed(monkeypatch, tmp_path, lang):
    monkeypatch.setenv(LANG_ENV, lang)
    path = _notebook(tmp_path / "n.ipynb", ("1", []))
    ran = []

    def check(environment=lambda out: True, run=lambda p: ran.append(p) or (3, 1)):
        out = io.StringIO()
        return install_check.check(path, out, environment=environment, run=run), out.getvalue()

    ok, said = check()
    assert ok and ran == [path]
    assert _opening("check_running", lang) in said and _opening("check_passed", lang) in said
    ok, said = check(environment=lambda out: False)
    assert not ok and ran == [path] and _opening("check_doctor_failed", lang) in said

    def broken(p):
        raise RuntimeError("cell 4 raised ZeroDivisionError")
    ok, said = check(run=broken)
    assert not ok and _opening("check_notebook_failed", lang) in said
    assert "RuntimeError" in said and "ZeroDivisionError" in said
    assert not install_check.check(tmp_path / "absent.ipynb", io.StringIO())


def test_the_command_line_exits_1_on_a_missing_notebook(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(LANG_ENV, "en")
    assert main(["check", str(tmp_path / "absent.ipynb")]) == 1
    assert _opening("check_no_notebook", "en") in capsys.readouterr().out


@pytest.mark.slow
def test_a_real_kernel_lets_only_the_tagged_cells_raise(tmp_path):
    good = _notebook(tmp_path / "good.ipynb", ("x = 1", []),
                     ("raise NotImplementedError('not done yet')", ["raises-exception"]),
                     ("assert x == 1", []))
    assert install_check.run_notebook(good, timeout=120) == (3, 1)
    before = good.read_bytes()
    bad = _notebook(tmp_path / "bad.ipynb", ("1 / 0", []), ("print('after')", []))
    out = io.StringIO()
    assert not install_check.check(bad, out, environment=lambda out: True)
    assert "ZeroDivisionError" in out.getvalue() and "1 / 0" in out.getvalue()
    assert good.read_bytes() == before  # nothing written back
