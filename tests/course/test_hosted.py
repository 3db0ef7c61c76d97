"""The hosted bootstrap (labs.notebook.hosted) and its cell (labs.exercises.hosted_cell), without a runtime:
what is detected, what would be installed and how, the cell's code in both editions, where the
tool puts it, and that the student notebooks, the edition check and the grader live with it.
(tests/course/test_hosted_runtime.py runs it in a Colab-like environment.)"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import nbformat
import pytest

from labs.notebook import hosted
from labs.exercises import edition, hosted_cell
from labs.exercises.generate import make_student_notebook
from labs.messages import LANG_ENV, catalog
from labs.torch_versions import torch_support

from grader.sources import plan, prepare, setup_source

ROOT = Path(__file__).resolve().parents[2]
PAIR = "2.0_collectives.ipynb"


def _read(*parts):
    return nbformat.read(str(ROOT.joinpath(*parts)), as_version=4)


def _without_cell(nb):
    nb.cells = [c for c in nb.cells if not hosted.is_hosted_cell(c)]
    return nb


# --- labs.notebook.hosted ----------------------------------------------------------------------------

def test_the_runtime_is_colab_or_kaggle_only_by_their_own_markers():
    assert hosted.runtime({}, {}) is None
    assert hosted.runtime({"COLAB_RELEASE_TAG": "release-x"}, {}) == "colab"
    assert hosted.runtime({}, {"google.colab": object()}) == "colab"
    assert hosted.runtime({"KAGGLE_KERNEL_RUN_TYPE": "Interactive"}, {}) == "kaggle"
    assert hosted.runtime({"JPY_SESSION_NAME": "x.ipynb", "HOME": "/content"}, {}) is None


def test_the_bootstrap_cell_is_known_by_tag_or_id_and_only_as_code():
    assert hosted.is_hosted_cell({"cell_type": "code", "metadata": {"tags": [hosted.CELL_TAG]}})
    assert hosted.is_hosted_cell({"cell_type": "code", "id": hosted.CELL_ID, "metadata": {}})
    assert hosted.is_hosted_cell({"cell_type": "code", "metadata": {"id": hosted.CELL_ID}})
    assert not hosted.is_hosted_cell({"cell_type": "markdown", "id": hosted.CELL_ID,
                                      "metadata": {}})
    assert not hosted.is_hosted_cell({"cell_type": "code", "id": "e877dc17", "metadata": {}})


COLAB = {"torch": "2.8.0+cu126", "numpy": "2.0.2", "ipywidgets": "7.7.1", "matplotlib": "3.10.0",
         "nbformat": "5.10.4", "ipykernel": "6.17.1", hosted.DISTRIBUTION: "0.1.0"}


def test_only_the_absent_requirements_are_installed_and_the_kept_ones_are_pinned():
    required = ["torch>=2.4", "cloudpickle>=2.2", "numpy", "matplotlib", "ipywidgets",
                "nbformat", "nbclient", "ipykernel", 'pytest; extra == "test"']
    assert hosted.missing(required[:-1], COLAB.get) == ["cloudpickle>=2.2", "nbclient"]
    assert hosted.constraints(COLAB.get) == ["torch==2.8.0+cu126", "numpy==2.0.2",
                                             "ipywidgets==7.7.1"]
    assert hosted.missing(["torch>=2.4", "numpy"], {}.get) == ["torch>=2.4", "numpy"]
    assert hosted.constraints({}.get) == []


def test_the_declared_requirements_leave_out_the_extras():
    declared = hosted.requirements()
    assert declared and not any("extra" in r for r in declared)
    assert {re.match(r"[\w.-]+", r).group(0) for r in declared} >= {"torch", "numpy",
                                                                     "ipywidgets", "cloudpickle"}


def test_the_font_package_is_the_pinned_one():
    assert re.search(rf"^{re.escape(hosted.FONT_PACKAGE)}$",
                     (ROOT / "requirements.txt").read_text(), flags=re.M)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bootstrap_installs_under_constraints_and_says_so(monkeypatch, capsys, lang):
    monkeypatch.setenv(LANG_ENV, lang)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-x")
    monkeypatch.setattr(hosted, "requirements", lambda: ["torch>=2.4", "cloudpickle>=2.2",
                                                         "numpy", "ipywidgets"])
    calls = []

    def run(command, check):
        constraints = command[command.index("-c") + 1]
        calls.append((command, Path(constraints).read_text().split()))
        return types.SimpleNamespace(returncode=0)

    result = hosted.bootstrap(run=run, installed=COLAB.get, missing_apis=list)
    (command, pins), = calls
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    wanted = ["cloudpickle>=2.2"] + ([hosted.FONT_PACKAGE] if lang == "zh" else [])
    assert command[command.index("-c") + 2:] == wanted == result["installed"]
    assert pins == ["torch==2.8.0+cu126", "numpy==2.0.2", "ipywidgets==7.7.1"]
    assert not Path(command[command.index("-c") + 1]).exists()   # the constraints file is gone
    said = capsys.readouterr().out
    assert catalog("hosted")["ready"][lang].split("{")[0] in said
    assert catalog("hosted")["torch_untested"][lang].split("{")[0] in said  # 2.8: in range
    assert result["runtime"] == "colab" and result["returncode"] == 0


def test_bootstrap_with_nothing_missing_runs_no_pip_and_a_failed_pip_is_said(monkeypatch, capsys):
    monkeypatch.setenv(LANG_ENV, "en")
    monkeypatch.setattr(hosted, "requirements", lambda: ["torch", "numpy"])
    installed = dict(COLAB, torch="2.13.0")
    result = hosted.bootstrap(run=lambda *a, **k: pytest.fail("pip ran"), installed=installed.get)
    said = capsys.readouterr().out
    assert result["installed"] == [] and "torch" not in said.split(";")[-1]
    assert catalog("hosted")["ready_nothing_installed"]["en"] in said
    assert catalog("hosted")["torch_untested"]["en"].split("{")[0] not in said  # the tested one
    monkeypatch.setattr(hosted, "requirements", lambda: ["cloudpickle"])
    failed = hosted.bootstrap(run=lambda *a, **k: types.SimpleNamespace(returncode=1),
                              installed=dict(COLAB, torch="2.1.0").get,
                              missing_apis=lambda: [("torch.distributed.fsdp.fully_shard", "2.4")])
    said = capsys.readouterr().out
    assert failed["returncode"] == 1
    assert catalog("hosted")["install_failed"]["en"].split("{")[0] in said
    assert catalog("hosted")["ready"]["en"].split("{")[0] not in said  # not "installed"
    assert catalog("hosted")["torch_outside"]["en"].split("{")[0] in said
    assert "torch.distributed.fsdp.fully_shard" in said and "2.4" in said  # what breaks, where


def test_labs_hosted_imports_neither_torch_nor_numpy_nor_ipywidgets():
    code = ("import sys, labs.notebook.hosted\n"
            "print(sorted({'torch', 'numpy', 'ipywidgets', 'grader'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_labs_hosted_imports_with_none_of_the_courses_requirements_installed():
    """The first cell imports ``labs.notebook.hosted`` (so ``labs``) *before* the bootstrap installs
    the requirements: none of them (cloudpickle included) may be needed to import it."""
    blocked = sorted({re.match(r"[A-Za-z0-9_.-]+", r).group(0).replace("-", "_").lower()
                      for r in tomllib.loads((ROOT / "pyproject.toml").read_text())
                      ["project"]["dependencies"]})
    assert "cloudpickle" in blocked and "torch" in blocked
    code = ("import sys\n"
            f"BLOCKED = {blocked!r}\n"
            "class Absent:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in BLOCKED:\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, Absent())\n"
            "import labs, labs.notebook.hosted\n"
            "print('imported')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "imported", out.stderr[-1500:]


# --- the cell --------------------------------------------------------------------------------

def test_the_cell_is_the_same_code_in_both_editions_with_the_constants_of_labs_hosted():
    zh, en = hosted_cell.cell_source("zh"), hosted_cell.cell_source("en")
    assert zh != en and edition.code_shape(zh) == edition.code_shape(en)
    for source, lang in ((zh, "zh"), (en, "en")):
        strings = {n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)}
        assert {hosted.HANDOUT_URL, hosted.SOURCE_ENV, LANG_ENV, lang, "COLAB_RELEASE_TAG",
                "KAGGLE_KERNEL_RUN_TYPE", "google.colab", "--no-deps"} <= strings


def test_the_cell_installs_the_handout_not_the_repository():
    """Issue 40, item 6: the cell installed GitHub's archive of the whole repository (solutions/
    included) from a placeholder address. It installs the handout's zip (grader.handout --zip:
    labs/ and the student notebooks), whose address is one instructor's setting, unset until
    then in a domain that never resolves."""
    url = hosted.HANDOUT_URL
    assert url.endswith(".zip") and "/archive/" not in url and "github.com" not in url
    assert re.match(r"^https://[^/]+\.invalid/", url)  # the placeholder (RFC 2606): fails at once
    notebooks = [p for folder in ("solutions", "notebooks")
                 for p in sorted(ROOT.glob(f"{folder}/**/*.ipynb"))]
    assert len(notebooks) == 24
    for path in notebooks:
        cell = next(c for c in _read(path).cells if hosted.is_hosted_cell(c))
        assert url in cell.source and "archive/refs" not in cell.source, path


def _run_cell(lang, monkeypatch, **environ):
    for name in (LANG_ENV, "COLAB_RELEASE_TAG", "KAGGLE_KERNEL_RUN_TYPE"):
        # setenv first, so that monkeypatch records the old state and restores it after
        # the cell's os.environ.setdefault (a delenv of an absent name records nothing)
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    calls = []
    monkeypatch.setattr(hosted, "bootstrap", lambda: calls.append(os.environ.get(LANG_ENV)))
    exec(compile(hosted_cell.cell_source(lang), "<cell>", "exec"), {})
    return calls


def test_the_cell_sets_the_language_elsewhere_and_calls_the_bootstrap_only_when_hosted(
        monkeypatch, capsys):
    assert _run_cell("en", monkeypatch) == [] and os.environ[LANG_ENV] == "en"
    assert capsys.readouterr().out == ""                                # nothing visible
    assert _run_cell("en", monkeypatch, LABS_LANG="zh") == [] and os.environ[LANG_ENV] == "zh"
    assert _run_cell("zh", monkeypatch, COLAB_RELEASE_TAG="x") == ["zh"]
    assert _run_cell("en", monkeypatch, KAGGLE_KERNEL_RUN_TYPE="Batch") == ["en"]


def test_the_tool_puts_one_cell_after_the_title_and_a_second_run_changes_nothing(tmp_path):
    for folder in ("", "en"):
        (tmp_path / folder).mkdir(exist_ok=True)
        nb = _without_cell(_read("solutions", folder, PAIR))
        nbformat.write(nb, str(tmp_path / folder / PAIR))
    paths = [str(tmp_path / PAIR), str(tmp_path / "en" / PAIR)]
    assert hosted_cell.main(paths + ["--check"]) == 1
    assert hosted_cell.main(paths) == 0
    assert hosted_cell.main(paths + ["--check"]) == 0
    before = [Path(p).read_bytes() for p in paths]
    assert hosted_cell.main(paths) == 0 and before == [Path(p).read_bytes() for p in paths]
    zh, en = (nbformat.read(p, as_version=4) for p in paths)
    for nb, lang in ((zh, "zh"), (en, "en")):
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# 2.")
        assert hosted.is_hosted_cell(nb.cells[1]) and nb.cells[1].id == hosted.CELL_ID
        assert nb.cells[1].source == hosted_cell.cell_source(lang)
        assert sum(hosted.is_hosted_cell(c) for c in nb.cells) == 1
    assert edition.differences(zh, en, PAIR) == []
    stale = nbformat.read(paths[1], as_version=4)                      # an old copy, moved
    old = stale.cells.pop(1)
    old.source = old.source.replace("--no-deps", "--upgrade")
    stale.cells.append(old)
    assert hosted_cell.write_cell(stale, "en") is True
    assert stale.cells[1].source == hosted_cell.cell_source("en") and len(stale.cells) == len(en.cells)


def test_the_student_notebook_keeps_the_cell_and_the_grader_skips_it():
    source = _read("solutions", "en", PAIR)
    setup = setup_source(_without_cell(_read("solutions", "en", PAIR)))
    hosted_cell.write_cell(source, "en")
    student = make_student_notebook(source, PAIR, lang="en")
    assert hosted.is_hosted_cell(student.cells[1])
    assert student.cells[1].source == hosted_cell.cell_source("en")
    assert setup_source(source) == setup                               # not the bootstrap
    nb, positions = prepare(student, source)
    steps = plan(nb, positions, source)
    assert nb.cells[steps["setup"][0]].source == setup
    assert all(1 not in e["cells"] for e in steps["exercises"])
    assert steps["judge_setup"] == setup


@pytest.mark.parametrize("readme", ["README.md", "README.en.md"])
def test_both_readmes_say_where_the_address_is_set_and_what_was_tested(readme):
    text = (ROOT / readme).read_text(encoding="utf-8")
    for needed in ("`HANDOUT_URL`", "`labs/notebook/hosted.py`", "labs.exercises.hosted_cell",
                   "handout.zip", hosted.SOURCE_ENV, "tests/course/test_hosted_runtime.py",
                   "ipywidgets 7.7.1"):
        assert needed in text, (readme, needed)


def test_labs_doctor_calls_a_hosted_runtimes_torch_a_note_not_a_problem():
    for version in ("2.8.0+cu126", "2.6.0+cu124", "2.10.0"):   # Colab's and Kaggle's kind
        assert torch_support(version) == "in_range", version
    assert torch_support("2.13.0+cpu") == "tested"
