"""Old names keep working for one course run: a notebook handed out before the packages existed
still runs and grades, and every old name warns DeprecationWarning and leads to the new one.

``tests/support/fixtures/pre_layout/`` holds the solution notebooks of 2.1-2.3 as they were before the
move (outputs cleared): they import ``labs.tp_communications``, ``labs.pipeline_planning``,
``labs.plots_pp``, ``labs.bench.ddp``'s experiments, ``comm._CopyToRegion``, run
``-m labs.ddp_script`` under torchrun, and so on. In 2.1 only sizes were made smaller (training
steps, samples seen, benchmark rounds), so that it runs in less time (issue 27): every old name,
keyword and call is as it was handed out.
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import labs
from labs import _moved
from tests.support import early
from tests.support.notebook_runs import run_notebooks
from tests.support.selection import selected_params

ROOT = Path(__file__).resolve().parents[2]
PRE_LAYOUT = sorted((ROOT / "tests" / "support" / "fixtures" / "pre_layout").glob("*.ipynb"))


def _fresh(name: str):
    sys.modules.pop(name, None)
    if hasattr(labs, name.rpartition(".")[2]) and name.count(".") == 1:
        delattr(labs, name.rpartition(".")[2])
    return importlib.import_module(name)


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


#: Every module path of labs/ at 698b942 (the layout issue 25 measured) that is no longer a file
#: today (``git ls-tree -r --name-only 698b942 labs/`` less today's files), and its new home. Not
#: here: the six notebook catalogs ``labs.messages.notebook_2_0`` ... ``_2_5``, deleted by issue 25
#: item 1 with no successor (data read through ``labs.messages.text``, never imported by a cell).
GONE_SINCE_698B942 = {
    "labs.bench.grade": "grader.bench",
    **{f"labs.exercises.{name}": f"grader.{name}"
       for name in ("copying", "grade", "judge", "limits", "record", "runner", "sandbox")},
    "labs.hybrid.hardware": "labs.hardware",
    "labs.hybrid.planner": "labs.planner",
    "labs.hybrid.planner_model": "labs.planner.model",
    "labs.hybrid.planner_search": "labs.planner.search",
    "labs.hybrid.planner_types": "labs.planner.types",
    "labs.hybrid.widgets": "labs.planner.widgets",
    "labs.hybrid.widgets_view": "labs.planner.view",
}


@pytest.mark.parametrize("old, new", sorted(GONE_SINCE_698B942.items()))
def test_a_gone_module_path_of_the_698b942_layout_imports_and_names_its_new_home(old, new,
                                                                                monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    assert _moved.MOVED_MODULES.get(old) == new
    with pytest.warns(DeprecationWarning, match=rf"^{re.escape(old)} moved to {re.escape(new)};"):
        module = _fresh(old)
    assert module.__spec__.origin == f"moved to {new}"  # the import hook's, not a file left behind
    target = importlib.import_module(new)
    public = [n for n in getattr(target, "__all__", []) if (old, n) not in _moved.RENAMED]
    assert public and all(getattr(module, n) is getattr(target, n) for n in public)


def test_the_names_of_the_split_record_module_lead_to_their_new_homes(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    from grader import judge, recorder

    with pytest.warns(DeprecationWarning):
        record = _fresh("labs.exercises.record")
    assert record.Recorder is recorder.Recorder and record.StudentArg is recorder.StudentArg
    assert record.Replayer is judge.Replayer and record.Placeholder is judge.Placeholder


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
    from labs import memory

    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.warns(DeprecationWarning, match=r"^labs\.plots_pp 已移到 labs\.pipeline\.plots；"
                                                r"请导入新的名字（旧名字将在 labs 0\.2（本期课程"
                                                r"结束之后）移除）。$"):
        _fresh("labs.plots_pp")
    with pytest.warns(DeprecationWarning, match="labs.memory.fits_on_one_card 已移到 labs.cost"):
        memory.fits_on_one_card  # noqa: B018


def test_old_attributes_of_modules_that_stay(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    from labs import cost, memory
    from labs.bench import ddp as bench
    from labs.data_parallel import experiments

    with pytest.warns(DeprecationWarning, match="labs.memory.fits_on_one_card moved to labs.cost"):
        assert memory.fits_on_one_card is cost.fits_on_one_card
    with pytest.warns(DeprecationWarning, match="labs.bench.ddp.compute_vs_comm moved"):
        assert bench.compute_vs_comm is experiments.compute_vs_comm
    with pytest.raises(AttributeError):
        memory.no_such_name  # noqa: B018


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
_EARLY: list = []


def _run_pre_layout(paths):
    """The pre-layout notebooks ``paths``, run at the same time (issue 27: their cells mostly
    wait on ranks, sleeps and kernels, so three kernels at once take about 40 s where one after
    the other took 64 s on 2 cores)."""
    return run_notebooks(paths, at_once=len(paths), cwd=lambda p: ROOT)


def start_early(session):
    """tests/conftest.py: run the selected pre-layout notebooks from the session's start, beside
    the unit tests (tests/support/early.py)."""
    paths = selected_params(session, __name__, "path", test=_RUN_TEST)
    if paths and not _EARLY:
        _EARLY.append(early.start("pre-layout", _run_pre_layout, paths))


@pytest.fixture(scope="module")
def pre_layout_runs(request):
    """The selected pre-layout notebooks' runs (begun early when conftest could)."""
    if _EARLY:
        return _EARLY[0].result()
    return _run_pre_layout(selected_params(request.session, __name__, "path", test=_RUN_TEST))


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
