"""Old names keep working for one course run: a notebook handed out before the packages existed
still runs and grades, and every old name warns DeprecationWarning and leads to the new one.

``tests/support/fixtures/pre_layout/`` holds the solution notebooks of 2.1-2.3 as they were before the
move (outputs cleared): they import ``labs.tp_communications``, ``labs.pipeline_planning``,
``labs.plots_pp``, ``labs.bench.ddp``'s experiments, ``comm._CopyToRegion``, run
``-m labs.ddp_script`` under torchrun, and so on. In 2.1 only sizes were made smaller (training
steps, samples seen, benchmark rounds), so that it runs in less time (issue 27): every old name,
keyword and call is as it was handed out.

Only the old paths these notebooks use are kept (issue 38: an alias with no user in the course,
its tests or its docs goes); the test below holds ``labs._moved`` to that.
"""
from __future__ import annotations

import importlib
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pytest

import labs
from labs import _moved
from tests.support import early
from tests.support.notebook_runs import run_notebooks_apart
from tests.support.selection import selected_params

ROOT = Path(__file__).resolve().parents[2]
PRE_LAYOUT = sorted((ROOT / "tests" / "support" / "fixtures" / "pre_layout").glob("*.ipynb"))


def _fresh(name: str):
    sys.modules.pop(name, None)
    parent, _, leaf = name.rpartition(".")
    vars(sys.modules[parent]).pop(leaf, None)  # not hasattr: labs would import the old path
    return importlib.import_module(name)


def _code(path: Path) -> str:
    nb = nbformat.read(str(path), as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("old, new", sorted(_moved.MOVED_MODULES.items()))
def test_old_module_path_warns_and_resolves_to_the_new_module(old, new, monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.warns(DeprecationWarning, match=rf"{old} moved to {new}"):
        module = _fresh(old)
    target = importlib.import_module(new)
    renamed = {n for (m, n) in _moved.RENAMED if m == old}
    for name in getattr(target, "__all__", []):
        if name not in renamed:
            assert getattr(module, name) is getattr(target, name), (old, name)
    for name in renamed:
        assert getattr(module, name) is not None


def test_every_old_path_kept_is_one_a_notebook_from_before_the_move_uses():
    code = "\n".join(_code(p) for p in PRE_LAYOUT)
    for old in _moved.MOVED_MODULES:
        parent, _, leaf = old.rpartition(".")
        used = re.search(rf"(?<![\w.]){re.escape(old)}\b", code) or re.search(
            rf"from {re.escape(parent)} import [^\n]*\b{leaf}\b", code)
        assert used, f"{old}: no notebook of tests/support/fixtures/pre_layout/ uses it"
    for (old, name) in _moved.RENAMED:
        assert old in _moved.MOVED_MODULES, (old, name)


def test_an_old_path_as_an_attribute_of_a_bare_import_labs(monkeypatch):
    """``import labs`` then ``labs.launcher.cpu_count()`` (2.2 before the move): the package's own
    names are imported explicitly (no module ``__getattr__`` in labs/__init__.py), the old paths
    are served by labs._moved."""
    monkeypatch.setenv("LABS_LANG", "en")
    assert "__getattr__" not in vars(labs)
    assert pickle.loads(pickle.dumps(labs)) is labs  # a cell's function using labs still travels
    sys.modules.pop("labs.launcher", None)
    vars(labs).pop("launcher", None)
    with pytest.warns(DeprecationWarning, match=r"^labs\.launcher moved to labs\.runtime\.launcher;"):
        assert labs.launcher.cpu_count() == labs.cpu_count()
    with pytest.raises(AttributeError):
        labs.no_such_name  # noqa: B018
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("labs.doctor")  # an old path no notebook uses any more


def test_the_warning_points_at_the_importing_line(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    sys.modules.pop("labs.plots_pp", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile("import labs.plots_pp", "old_notebook_cell", "exec"), {})
    (warning,) = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert warning.filename == "old_notebook_cell" and warning.lineno == 1
    assert _moved.REMOVED_IN in str(warning.message)


def test_the_warnings_speak_the_notebook_language(monkeypatch):
    from labs.bench import ddp as bench

    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.warns(DeprecationWarning, match=r"^labs\.plots_pp 已移到 labs\.pipeline\.plots；"
                                                r"请导入新的名字（旧名字将在 labs 0\.2（本期课程"
                                                r"结束之后）移除）。$"):
        _fresh("labs.plots_pp")
    with pytest.warns(DeprecationWarning, match="labs.bench.ddp.compute_vs_comm 已移到 "
                                                "labs.data_parallel.experiments.compute_vs_comm"):
        bench.compute_vs_comm  # noqa: B018


def test_old_attributes_of_modules_that_stay(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    from labs.bench import ddp as bench
    from labs.data_parallel import experiments

    with pytest.warns(DeprecationWarning, match="labs.bench.ddp.compute_vs_comm moved"):
        assert bench.compute_vs_comm is experiments.compute_vs_comm
    with pytest.raises(AttributeError):
        bench.no_such_name  # noqa: B018


def test_the_old_memory_module_keeps_the_fit_decision(monkeypatch):
    """2.1 and 2.2 before the move: ``from labs import memory`` then ``memory.fits_on_one_card``
    (the decision went to labs.formulas.fit, offered by labs.formulas.cost)."""
    monkeypatch.setenv("LABS_LANG", "en")
    from labs.formulas import cost, memory

    with pytest.warns(DeprecationWarning, match="labs.memory moved to labs.formulas.memory"):
        old = _fresh("labs.memory")
    assert old.fits_on_one_card is cost.fits_on_one_card and old.FitReport is cost.FitDecision
    assert old.model_state_bytes is memory.model_state_bytes
    with pytest.raises(AttributeError):
        memory.fits_on_one_card  # noqa: B018  (the new module has only its own names)


def test_old_signatures_give_the_old_results(monkeypatch):
    """The adapters of labs._compat: old keywords, old dict keys, old return shapes."""
    monkeypatch.setenv("LABS_LANG", "en")  # the verdict below in English
    with pytest.warns(DeprecationWarning):
        plan = _fresh("labs.tensor_parallel_planning")
        pplan = _fresh("labs.pipeline_planning")
    c = plan.tp_layer_comm(batch=8, seq=64, hidden=128, tp=4)
    assert c["sent_per_rank"] == 4 * 1.5 * 8 * 64 * 128 * 4
    assert plan.layerwise_comm(batch=8, seq=64, hidden=128, stages=4)["sent_by_a_middle_rank"] \
        == 2 * 8 * 64 * 128 * 4
    assert "smallest TP that fits: 2" in plan.tp_decision(1.5e9, 32e9, hidden=1600,
                                                          heads=16).verdict
    v = pplan.judge_pipeline(96, 12288, gpu_bytes=32 * 2**30, tp=8)
    assert v == dict(layer_state_bytes=12 * 12288**2 * 16, fits_one_card=False, tp_needed=2,
                     tp=8, layers_per_gpu=6, min_stages=16)
    assert pplan.model_state_bytes(175e9) == pytest.approx(2.8e12)
    assert pplan.states_per_gpu(175e9, 8, 8) == pytest.approx(43.75e9)
    assert pplan.transformer_layer_params(1024) == 12 * 1024**2


def test_python_m_old_script_runs_the_new_one():
    proc = subprocess.run([sys.executable, "-m", "labs.ddp_script", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--check" in proc.stdout


_RUN_TEST = "test_notebook_from_before_the_move_runs_and_passes_its_checks"


def _run_pre_layout(paths):
    """The pre-layout notebooks ``paths``, run at the same time (issue 27: their cells mostly
    wait on ranks, sleeps and kernels, so three kernels at once take about 40 s where one after
    the other took 64 s on 2 cores), from a process of their own (they run beside other tests)."""
    return run_notebooks_apart(paths, at_once=len(paths), cwd=ROOT)


_PRE_LAYOUT_RUNS = early.Selected(
    "pre-layout", _run_pre_layout, lambda s: selected_params(s, __name__, "path", test=_RUN_TEST))


def start_early(session):
    """tests/conftest.py: run the selected pre-layout notebooks as background work, behind the
    gate (tests/support/early.py)."""
    _PRE_LAYOUT_RUNS.start(session)


@pytest.fixture(scope="module")
def pre_layout_runs(request):
    """The selected pre-layout notebooks' runs (begun in the background when conftest could)."""
    return _PRE_LAYOUT_RUNS.result(request.session)


@pytest.mark.slow
@pytest.mark.parametrize("path", PRE_LAYOUT, ids=[p.name for p in PRE_LAYOUT])
def test_notebook_from_before_the_move_runs_and_passes_its_checks(path, pre_layout_runs):
    """Run All on the old solution notebook: no cell errors, every exercise check passes."""
    nb = pre_layout_runs[path]
    if isinstance(nb, BaseException):
        raise nb
    checks = [c for c in nb.cells if c.cell_type == "code"
              and c.metadata.get("nbgrader", {}).get("grade")]
    assert checks
    for cell in checks:
        text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert "✅" in text, (cell.source[:80], text)
    stderr = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs if o.output_type == "stream" and o.name == "stderr")
    assert "DeprecationWarning" in stderr  # the old names said they are old
