"""labs.numerics, the one tolerance policy, and the knobs CI turns to run the tests on other
kernels and thread counts (ATEN_CPU_CAPABILITY, LABS_THREADS_PER_RANK).

The bug behind it: on an AVX-512 machine the data-parallel losses (float32 results carried as
Python floats) differed from the reference by float32 rounding, and torch.testing.assert_close
judged them at float64 tolerances.
"""
from __future__ import annotations

import sys
from pathlib import Path

import cloudpickle
import pytest
import torch

import labs
from labs import numerics
from labs.runtime import rank as _rank
from labs.exercises import checks
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from labs.numerics import assert_close, is_close, tolerances
from tests.support.messages import said

pytestmark = pytest.mark.numerics

# The losses of tests/labs/data_parallel/test_data_parallel.py::test_uneven_last_batch_like_distributed_sampler
# on that machine: reference (single process) and data-parallel run.
REFERENCE_LOSS, PARALLEL_LOSS = 1.1475831270217896, 1.1475827991962433
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)

# Ship this module's rank bodies by value: the ranks need not import the test module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _two_float32_means():
    """One float32 mean computed in two orders (one pass vs chunk by chunk, as ranks would), as
    Python floats: the first seed where they differ by more than float64 tolerances allow."""
    for seed in range(50):
        # just above a power of two, one float32 ulp is more than float64's rtol of the value
        x = torch.rand(4099, generator=torch.Generator().manual_seed(seed)) + 1024
        whole = x.mean().item()
        chunked = (torch.stack([c.sum() for c in x.chunk(7)]).sum() / x.numel()).item()
        if not is_close(chunked, whole, dtype=torch.float64):
            return whole, chunked
    raise AssertionError("no seed gave float32 means that differ beyond float64 tolerances")


# --- the policy ------------------------------------------------------------------------------

def test_float32_loss_carried_as_python_float_passes_at_float32_tolerance():
    assert_close(PARALLEL_LOSS, REFERENCE_LOSS)
    assert_close([PARALLEL_LOSS] * 3, [REFERENCE_LOSS] * 3)
    assert is_close(PARALLEL_LOSS, REFERENCE_LOSS)
    with pytest.raises(AssertionError):  # the old comparison: float64 tolerances for floats
        torch.testing.assert_close(PARALLEL_LOSS, REFERENCE_LOSS)
    with pytest.raises(AssertionError, match="float64"):  # a float64 result: same gap is wrong
        assert_close(PARALLEL_LOSS, REFERENCE_LOSS, dtype=torch.float64)
    assert not is_close(PARALLEL_LOSS, REFERENCE_LOSS, dtype="float64")


def test_float32_means_in_another_order_are_close_as_floats_and_as_tensors():
    whole, chunked = _two_float32_means()
    assert_close(chunked, whole)
    assert_close(torch.tensor(chunked), torch.tensor(whole))
    with pytest.raises(AssertionError):
        torch.testing.assert_close(chunked, whole)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_tensors_are_compared_at_their_own_dtype(dtype):
    rtol, atol = tolerances(dtype)
    expected = torch.linspace(1, 2, 9, dtype=torch.float64)
    within = expected * (1 + rtol / 2)
    beyond = expected * (1 + 2 * rtol) + atol
    assert_close(within.to(dtype), expected.to(dtype))
    with pytest.raises(AssertionError):
        assert_close(beyond.to(dtype), expected.to(dtype))
    if dtype != torch.float64:  # the float64 policy rejects a difference of this dtype's size
        with pytest.raises(AssertionError):
            assert_close(within, expected)
        assert_close(within, expected, dtype=dtype)  # unless told the result is of this dtype


def test_float32_tensor_rounding_passes_float64_does_not():
    x = torch.randn(4099, generator=torch.Generator().manual_seed(0))
    for dtype, passes in ((torch.float32, True), (torch.float64, False)):
        four_float32_ulps = x.to(dtype) * (1 + 4 * torch.finfo(torch.float32).eps)
        assert is_close(four_float32_ulps, x.to(dtype)) is passes, dtype


def test_integers_and_bools_are_exact():
    assert tolerances(torch.int64) == tolerances("bool") == (0.0, 0.0)
    assert_close(torch.arange(5), torch.arange(5))
    with pytest.raises(AssertionError):
        assert_close(torch.arange(5) + torch.tensor([0, 0, 0, 0, 1]), torch.arange(5))
    assert_close(10**12, 10**12)
    with pytest.raises(AssertionError):
        assert_close(10**12 + 1, 10**12)  # ints are not floats: no tolerance
    with pytest.raises(AssertionError):
        assert_close(True, 1)
    assert_close(3.0 * (1 + 1e-7), 3)  # an int against a float: the float's tolerance


def test_nested_structures_name_the_element_that_differs(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    expected = {"loss": [1.0, 2.0], "w": (torch.ones(2), torch.zeros(3)), "steps": 3}
    got = {"loss": [1.0 + 1e-7, 2.0], "w": (torch.ones(2), torch.zeros(3)), "steps": 3}
    assert_close(got, expected)
    got["w"] = (torch.ones(2), torch.tensor([0.0, 0.5, 0.0]))
    with pytest.raises(AssertionError, match=r"^run 1: \['w'\]\[1\]: Tensor-likes are not close"):
        assert_close(got, expected, msg="run 1")
    with pytest.raises(AssertionError) as info:
        assert_close({**expected, "loss": [1.0]}, expected)
    assert str(info.value) == text("models.length_differs", actual=1, expected=2,
                                   where=text("models.at_path", path="['loss']"))
    with pytest.raises(AssertionError) as info:
        assert_close({"loss": [1.0, 2.0]}, expected)
    said(info.value, "models.keys_differ", where="")
    with pytest.raises(AssertionError) as info:
        assert_close([1.0], [torch.tensor(1.0)])
    assert str(info.value) == text("models.expected_type", expected="Tensor", actual="float",
                                   where=text("models.at_path", path="[0]"))
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(torch.ones(2), torch.ones(2, dtype=torch.float64))


def test_nan_inf_and_explicit_tolerances(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    nan, inf = float("nan"), float("inf")
    with pytest.raises(AssertionError):
        assert_close(nan, nan)
    assert_close([nan, inf], [nan, inf], equal_nan=True)
    assert not is_close(-inf, inf)
    assert_close(1.5, 1.0, rtol=0.0, atol=0.5)
    with pytest.raises(AssertionError) as info:
        assert_close(1.5, 1.0, rtol=0.0, atol=0.4)
    said(info.value, "models.float_differs", rtol=0, atol=0.4)
    with pytest.raises(ValueError) as info:
        tolerances("float8")
    said(info.value, "models.no_tolerance", dtype="float8")


def test_mismatches_are_told_in_the_notebook_language(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.raises(AssertionError) as info:
        assert_close({"loss": [1.0]}, {"loss": [1.0, 2.0]}, msg="run 2")
    assert str(info.value) == text("models.with_context", lang="zh", msg="run 2", why=text(
        "models.length_differs", lang="zh", where=text("models.at_path", lang="zh", path="['loss']"),
        actual=1, expected=2))
    with pytest.raises(AssertionError) as info:
        assert_close(1.5, 1.0, rtol=0.0, atol=0.4)
    assert str(info.value) == text("models.float_differs", lang="zh", where="", expected=1.0,
                                   actual=1.5, difference=0.5, allowed=0.4, dtype="float32",
                                   rtol=0, atol=0.4)
    with pytest.raises(ValueError) as info:
        tolerances("float8")
    said(info.value, "models.no_tolerance", lang="zh", dtype="float8")


# --- the exercise checks take their defaults from the policy --------------------------------------

def test_checks_compare_python_floats_as_float32_unless_told_otherwise():
    checks.assert_close(REFERENCE_LOSS, PARALLEL_LOSS, what="loss")
    checks.assert_close(0.0, 3e-6, what="gradient")  # float32: absolute tolerance near zero
    with pytest.raises(ExerciseFailed) as info:
        checks.assert_close(0.0, 3e-6, what="bubble share", dtype="float64")
    assert str(info.value) == text("checks.wrong_value", where="bubble share", expected="0.0",
                                   got="3e-06")
    with pytest.raises(ExerciseFailed):
        checks.assert_close([REFERENCE_LOSS], [PARALLEL_LOSS], what="loss", dtype=torch.float64)


def test_checks_take_their_tolerances_from_labs_numerics(monkeypatch):
    x = torch.linspace(1, 2, 5)
    one_ulp = torch.nextafter(x, torch.full_like(x, 3.0))
    checks.compare_tensors(x, one_ulp, what="result")
    checks.assert_close(1.0, 1.0 + 1e-7, what="result")
    monkeypatch.setitem(numerics.TOLERANCES, "float32", (0.0, 0.0))
    with pytest.raises(ExerciseFailed) as info:
        checks.compare_tensors(x, one_ulp, what="result")
    said(info.value, "checks.wrong_elements", where="result", atol=0, rtol=0)
    with pytest.raises(ExerciseFailed):
        checks.assert_close(1.0, 1.0 + 1e-7, what="result")


# --- threads per rank -----------------------------------------------------------------------------

def test_threads_per_rank_override(monkeypatch):
    monkeypatch.delenv("LABS_THREADS_PER_RANK", raising=False)
    assert _rank.threads_per_rank(2) == max(1, _rank.cpu_count() // 2)
    for value, threads in (("1", 1), ("3", 3), (" 2 ", 2)):
        monkeypatch.setenv("LABS_THREADS_PER_RANK", value)
        assert _rank.threads_per_rank(64) == threads
    monkeypatch.setenv("LABS_LANG", "en")
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv("LABS_THREADS_PER_RANK", bad)
        with pytest.raises(ValueError) as info:
            _rank.threads_per_rank(2)
        assert str(info.value) == text("runtime.threads_per_rank_invalid", lang="en", value=bad)
    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.raises(ValueError) as info:
        _rank.threads_per_rank(2)
    assert str(info.value) == text("runtime.threads_per_rank_invalid", lang="zh", value="1.5")


def _threads_of_rank():
    return torch.get_num_threads()


@pytest.mark.parametrize("threads", [1, 2])
def test_ranks_use_the_threads_the_variable_sets(monkeypatch, threads):
    monkeypatch.setenv("LABS_THREADS_PER_RANK", str(threads))
    assert labs.launch(_threads_of_rank, 2, timeout=60) == [threads, threads]


def test_a_bad_thread_count_fails_the_launch_naming_the_variable(monkeypatch):
    monkeypatch.setenv("LABS_THREADS_PER_RANK", "0")
    with pytest.raises(labs.RankError, match="LABS_THREADS_PER_RANK"):
        labs.launch(_threads_of_rank, 2, timeout=60)


def test_ci_reruns_the_unit_tests_under_other_kernels_and_thread_counts():
    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text()
    (line,) = [line for line in makefile.splitlines() if line.startswith("PORTABILITY ?=")]
    variants = set(line.split("=", 1)[1].split())
    assert {"default:1", "avx2:2"} <= variants
    recipe = makefile.split("test-portability: $(DEV_READY)")[1].split("\n\n")[0]
    # tests/course/test_markers.py; the secrets test has its own target
    assert '$(BIN)/python -m pytest tests -m "numerics and not secrets" ' in recipe
    ci = (root / ".ci" / "run").read_text()
    commands = [line.split()[:2] for line in ci.splitlines() if line.startswith("make ")]
    assert commands == [["make", "test"], ["make", "test-portability"], ["make", "test-secrets"],
                        ["make", "test-editions"], ["make", "test-hosted"]]
