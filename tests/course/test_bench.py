"""Every ``python -m labs.bench NAME`` runs (tiny sizes: a broken benchmark fails `make test`),
and the benchmarks compare like with like.

The smoke runs check that a benchmark finishes and prints its verdict line; speed targets are
printed by the benchmarks, never asserted here (labs/bench/__init__.py).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from labs.bench import BENCHMARKS
from labs.bench import ddp as bench_ddp
from labs.bench import launch as bench_launch
from tests.support import early
from tests.support.selection import selected_params

ROOT = Path(__file__).resolve().parents[2]
# Run, with their output checked, by tests/labs/runtime/test_launcher.py (not twice).
ELSEWHERE = {"launch": "test_launch_benchmark_prints_all_methods",
             "gpu": "test_gpu_benchmark_reports_when_there_is_no_gpu"}
# name -> (tiny arguments, a line the output must contain)
SMOKE = {
    "collectives": (["--ranks", "2", "--sizes-mb", "1", "--repeats", "1", "--backend", "gloo"],
                    " gloo "),
    "ddp": (["--steps", "1", "--rounds", "1", "--quick"], "target: speedup"),
    "pp": (["--microbatches", "2", "--steps", "1", "--rounds", "1", "--quick"], "target"),
    "tp": (["--width", "64", "--seq", "8", "--batch", "2", "--steps", "1", "--rounds", "1"],
           "target"),
    "hybrid": (["--quick"], "target"),
    "planner": (["--quick"], "target"),
    "grade": (["--notebook", "2.5_summary.ipynb", "--students", "1", "--mix", "even"],
              "notebook 2.5_summary.ipynb, 1 submissions"),
}


def test_every_benchmark_has_a_smoke_run():
    assert set(SMOKE) | set(ELSEWHERE) == set(BENCHMARKS) and not set(SMOKE) & set(ELSEWHERE)
    launcher_tests = (ROOT / "tests" / "labs" / "runtime" / "test_launcher.py").read_text()
    for name, test in ELSEWHERE.items():
        assert f"def {test}(" in launcher_tests and f'"labs.bench", "{name}"' in launcher_tests


# The longest smoke runs first, so that the short ones fill in beside them.
LONGEST_FIRST = ("hybrid", "pp", "ddp", "grade", "tp", "collectives", "planner")
AT_ONCE = 3  # smoke runs at the same time: they wait on ranks, sleeps and start-up a good part


def _smoke(name: str):
    args, _ = SMOKE[name]
    try:
        return subprocess.run(early.command([sys.executable, "-m", "labs.bench", name, *args]),
                              capture_output=True, text=True, timeout=280, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        return exc


_TEST = "test_benchmark_runs_at_tiny_sizes"


def _run_smokes(names: set) -> dict:
    """The smoke runs ``names``, AT_ONCE at a time (issue 27: 50 s one after the other, 29 s
    three at once on 2 cores): ``{name: its finished process, or its TimeoutExpired}``."""
    order = [n for n in LONGEST_FIRST if n in names] + sorted(names - set(LONGEST_FIRST))
    with early.pool(AT_ONCE) as pool:
        return dict(zip(order, pool.map(_smoke, order)))


_SMOKES = early.Selected("bench", _run_smokes,
                         lambda s: set(selected_params(s, __name__, "name", test=_TEST)))


def start_early(session):
    """tests/conftest.py: the selected smoke runs as background work (tests/support/early.py),
    behind the gate: they print speeds, and no test asserts one."""
    _SMOKES.start(session)


@pytest.fixture(scope="module")
def smoke_runs(request):
    """The selected smoke runs (begun in the background when conftest could)."""
    return _SMOKES.result(request.session)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMOKE))
def test_benchmark_runs_at_tiny_sizes(name, smoke_runs):
    _, expected = SMOKE[name]
    proc = smoke_runs[name]
    if isinstance(proc, subprocess.TimeoutExpired):
        raise proc
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert expected in proc.stdout, proc.stdout[-2000:]


def test_launch_compares_cold_with_cold_and_warm_with_warm():
    results = {"labs.launch": (2.0, 0.1), "mp.spawn": (3.0, 0.5), "torchrun": (4.0, None)}
    assert bench_launch.comparisons(results) == {"cold": ("torchrun", 2.0),
                                                 "warm": ("mp.spawn", 5.0)}


def test_ddp_refuses_a_scaling_verdict_on_a_loaded_machine():
    assert bench_ddp.scaling_verdict_allowed(load=0.2, cores=2, ranks=2)
    assert not bench_ddp.scaling_verdict_allowed(load=1.0, cores=2, ranks=2)
    assert not bench_ddp.scaling_verdict_allowed(load=6.0, cores=4, ranks=2)
    assert bench_ddp.scaling_verdict_allowed(load=1.0, cores=4, ranks=2)
