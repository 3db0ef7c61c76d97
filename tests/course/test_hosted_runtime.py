"""A Colab-like runtime, as far as one can be made here (no hosted runtime is reachable): a fresh
virtual environment pre-filled as Colab's is (torch, the numpy the course works with, ipywidgets
7.7.1, ipykernel, nbconvert, matplotlib; no cloudpickle, no course), ``COLAB_RELEASE_TAG`` set,
and the English handout's zip built from this working tree (``python -m grader.handout --zip``,
what an instructor publishes at ``labs.notebook.hosted.HANDOUT_URL``) in place of that address. The English student notebook 2.0, with the
bootstrap cell written by ``labs.exercises.hosted_cell``, is run there by nbconvert from a folder
with nothing of the course in it. Then the planner widget is built there on ipywidgets 7.7.1.

What it cannot show: Colab's or Kaggle's own package versions, their front ends (the widget is
built and serialised, not drawn), a download from a real address.

ipywidgets 7.7.1 comes from the package index (the local wheels hold only 8.x): without it the
test is skipped, saying so."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader import handout
from labs.exercises.generate import make_student_notebook
from labs.exercises.hosted_cell import write_cell
from labs.notebook.hosted import CELL_ID, DISTRIBUTION, SOURCE_ENV
from labs.messages import catalog

ROOT = Path(__file__).resolve().parents[2]
PREFILLED_WIDGETS = "7.7.1"
CJK = re.compile(r"[\u4e00-\u9fff]")

pytestmark = [pytest.mark.slow, pytest.mark.hosted]


def _pin(name: str) -> str:
    text = (ROOT / "requirements.txt").read_text()
    return re.search(rf"^{name}==(\S+)$", text, flags=re.M).group(1)


def _versions(python: Path, names) -> dict:
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(n):\n"
            "    try:\n        return m.version(n)\n"
            "    except m.PackageNotFoundError:\n        return None\n"
            "print(json.dumps({n: v(n) for n in sys.argv[1:]}))")
    out = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True,
                         check=True, cwd=python.parent)  # not here: ROOT holds an egg-info
    return json.loads(out.stdout)


def _archive(dest: Path) -> Path:
    """The English handout's zip (one top folder, as ``grader.handout --zip`` writes it)."""
    out = handout.build(dest / "handout", "en")
    return Path(shutil.make_archive(str(out), "zip", root_dir=out.parent, base_dir=out.name))


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """(python of the Colab-like environment, the versions it was pre-filled with, archive)."""
    root = tmp_path_factory.mktemp("colab")
    wheels = root / "wheels"
    got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d",
                          str(wheels), f"ipywidgets=={PREFILLED_WIDGETS}"],
                         capture_output=True, text=True, timeout=300)
    if got.returncode:
        pytest.skip(f"ipywidgets=={PREFILLED_WIDGETS} cannot be had here (no package index?): "
                    f"{got.stderr.strip()[-300:]}")
    venv = root / "venv"
    subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    prefilled = [f"torch=={_pin('torch')}", f"numpy=={_pin('numpy')}",
                 f"ipywidgets=={PREFILLED_WIDGETS}", "ipykernel", "nbconvert", "matplotlib"]
    filled = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-compile",
                             "--find-links", str(wheels), *prefilled],
                            capture_output=True, text=True, timeout=900)
    assert filled.returncode == 0, filled.stderr[-3000:]
    before = _versions(python, ["torch", "numpy", "ipywidgets", "cloudpickle", DISTRIBUTION])
    assert before["cloudpickle"] is None and before[DISTRIBUTION] is None  # the runtime lacks them
    return python, before, _archive(root)


def _run_notebook(python: Path, folder: Path, name: str, archive: Path) -> nbformat.NotebookNode:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LABS_", "JPY_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(COLAB_RELEASE_TAG="test-colab-like", **{SOURCE_ENV: str(archive)})
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', '')}"
    ran = subprocess.run([str(python), "-m", "jupyter", "nbconvert", "--to", "notebook",
                          "--execute", "--inplace", "--ExecutePreprocessor.timeout=600", name],
                         cwd=folder, env=env, timeout=1200, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return nbformat.read(str(folder / name), as_version=4)


def _texts(cell) -> list[str]:
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("execute_result", "display_data"):
            out.append(str(o.data.get("text/plain", "")))
    return out


def test_the_english_2_0_runs_on_a_colab_like_runtime_in_english(colab, tmp_path):
    python, before, archive = colab
    solution = nbformat.read(str(ROOT / "solutions" / "en" / "2.0_collectives.ipynb"),
                             as_version=4)
    write_cell(solution, "en")
    student = make_student_notebook(solution, "2.0_collectives.ipynb", lang="en")
    student.metadata.setdefault("course", {})["language"] = "en"
    nbformat.write(student, str(tmp_path / "2.0_collectives.ipynb"))

    nb = _run_notebook(python, tmp_path, "2.0_collectives.ipynb", archive)

    first = next(c for c in nb.cells if c.cell_type == "code")
    assert first.id == CELL_ID
    said = "".join(_texts(first))
    assert catalog("hosted")["ready"]["en"].split("{")[0] in said, said
    after = _versions(python, ["torch", "numpy", "ipywidgets", "cloudpickle", DISTRIBUTION])
    for kept in ("torch", "numpy", "ipywidgets"):
        assert after[kept] == before[kept], (kept, before, after)   # never replaced
    assert after["cloudpickle"] and after[DISTRIBUTION]            # what it lacked, installed
    grader_there = subprocess.run([str(python), "-c", "import importlib.util as u; "
                                   "print(u.find_spec('grader') is not None)"],
                                  capture_output=True, text=True, check=True, cwd=python.parent)
    assert grader_there.stdout.strip() == "False"                  # the handout, not the repository

    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in ran)                     # Run All went to the end
    errors = [(i, o.get("ename")) for i, c in enumerate(ran) for o in c.get("outputs", [])
              if o.output_type == "error" and "raises-exception" not in c.metadata.get("tags", [])]
    assert not errors, errors
    printed = "".join(t for c in ran for t in _texts(c))
    assert printed and not CJK.findall(printed), CJK.findall(printed)[:20]  # English throughout


def test_the_planner_widget_builds_on_ipywidgets_7(colab):
    python, before, _ = colab
    assert _versions(python, [DISTRIBUTION])[DISTRIBUTION], "the notebook test above installs it"
    code = ("import json, warnings, ipywidgets\n"
            "from labs.planner.widgets import planner_widget\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    w = planner_widget()\n"
            "r, png = dict(w.results()), len(w.outputs['memory'].value)\n"
            "w.set(n_gpus=16)\n"
            "state = json.dumps(w.box.get_state(), default=str)\n"
            "print(json.dumps({'version': ipywidgets.__version__, 'updates': w.updates,\n"
            "                  'step': r['step_time_s'], 'state': len(state), 'png': png,\n"
            "                  'tooltip': w.outputs['plans'].description_tooltip,\n"
            "                  'unknown': [str(x.message)[:200] for x in caught\n"
            "                              if 'unrecognized arguments' in str(x.message)]}))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABS_", "PYTHON"))}
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                         cwd=python.parent, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["version"] == PREFILLED_WIDGETS
    assert got["updates"] == 2 and got["step"] > 0 and got["png"] > 0 and got["state"] > 0
    assert got["tooltip"] and not got["unknown"], got     # every control/output known to 7.7
