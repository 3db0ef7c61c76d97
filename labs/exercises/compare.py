"""How a check compares what the student's code gave with the reference: tensors element by
element (the first element that differs, and where), numbers within the course's tolerances
(:mod:`labs.numerics`), anything else by equality; each failure an ExerciseFailed that says, in the
notebook's language, what was expected and what came back, on which rank. ``what`` names the
compared value (``text("checks.what_returned")``, a tensor's name): it is the label in front of
the message's colon (``the return value[2]: wrong value, expected 3, got 4``), never a word
inside its sentence.

Owns: :func:`compare_tensors`, :func:`assert_close`, :func:`assert_equal` (re-exported by
:mod:`labs.exercises.checks`, where the checks import them). Must not: import labs.exercises.checks,
the grader or the planner widget; print.
"""
from __future__ import annotations

import numbers
import sys
from typing import Any

from labs import numerics
from labs.exercises.errors import ExerciseFailed
from labs.messages import text

__all__ = ["compare_tensors", "assert_close", "assert_equal"]


def _where(what: str, rank: int | None) -> str:
    return text("checks.on_rank", what=what, rank=rank) if rank is not None else str(what)


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _factor(expected, got, factors, close) -> str | None:
    """When ``got`` is ``expected`` times (or divided by) one of ``factors`` everywhere (``close``
    decides with the comparison's tolerances), the sentence that says so; else None."""
    for name, f in {"2": 2, **(factors or {})}.items():
        if f in (0, 1, None):
            continue
        for ratio in (f, 1 / f):
            try:
                if close(expected * ratio, got):
                    key = ("checks.off_by_factor" if name == str(f)
                           else "checks.off_by_named_factor")
                    return text(key, ratio=_num(float(ratio)), name=name, factor=_num(f))
            except Exception:  # noqa: BLE001 - not comparable that way: no such sentence
                return None
    return None


def compare_tensors(expected, got, *, what: str, rank: int | None = None,
                    atol: float | None = None, rtol: float | None = None,
                    dtype=None, check_dtype: bool = True, factors: dict | None = None) -> None:
    """Raise ExerciseFailed unless ``got`` is a tensor close to ``expected``.

    The message names the rank, the first mismatching index, the expected and the actual
    value, and how many elements differ; when ``got`` is off by exactly one of ``factors``
    (``{"N": 4}``: the world size, say; 2 always) everywhere, it says so. Tolerances default to the course's policy
    (:mod:`labs.numerics`) for ``dtype``, by default the expected tensor's dtype (exact for
    integers and bool); tensors are compared on the CPU.
    """
    __tracebackhide__ = True  # noqa: F841
    import torch

    where = _where(what, rank)
    expected = torch.as_tensor(expected)
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(text("checks.wrong_kind", where=where, wanted="torch.Tensor",
                                  got_type=type(got).__name__, got=_fmt(got)))
    if tuple(got.shape) != tuple(expected.shape):
        raise ExerciseFailed(text("checks.wrong_shape", where=where,
                                  expected=tuple(expected.shape), got=tuple(got.shape)))
    if check_dtype and got.dtype != expected.dtype:
        raise ExerciseFailed(text("checks.wrong_dtype", where=where, expected=expected.dtype,
                                  got=got.dtype))
    expected_cpu = expected.detach().cpu()
    got_cpu = got.detach().cpu().to(expected_cpu.dtype)
    default_rtol, default_atol = numerics.tolerances(expected_cpu.dtype if dtype is None else dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if expected_cpu.is_floating_point() or expected_cpu.is_complex():
        close = torch.isclose(got_cpu, expected_cpu, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = got_cpu == expected_cpu
    if bool(close.all()):
        return
    bad = (~close).nonzero()
    index = tuple(int(i) for i in bad[0])
    exp_value, got_value = expected_cpu[index].item(), got_cpu[index].item()
    values = dict(where=where, expected=_num(exp_value), got=_num(got_value), atol=atol,
                  rtol=rtol)
    message = (text("checks.wrong_elements", index=index, bad=len(bad), total=close.numel(),
                    **values) if index else text("checks.wrong_scalar", **values))
    if bool(expected_cpu.ne(0).any()):
        factor = _factor(expected_cpu.double(), got_cpu.double(), factors, lambda e, g: bool(
            torch.isclose(g, e, rtol=max(rtol, 1e-6), atol=atol).all()))
        message = f"{message} {factor}" if factor else message
    raise ExerciseFailed(message)


def _num(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def assert_close(expected, got, *, what: str, rank: int | None = None,
                 atol: float | None = None, rtol: float | None = None, dtype=None,
                 factors: dict | None = None) -> None:
    """Compare numbers, tensors, and (nested) lists/tuples/dicts of them.

    Tolerances follow the course's policy (:mod:`labs.numerics`): tensors by their dtype,
    floats as float32 (what the course computes in) unless ``dtype`` says otherwise, e.g.
    ``dtype="float64"`` for a formula computed in plain Python; ``atol``/``rtol`` override.
    Everything else is compared exactly; a number of any ``numbers.Real`` type (a Fraction, a
    numpy scalar) counts as a number. Raises ExerciseFailed naming the element (``what[2]['w']``)
    that differs, and, for a number off by exactly one of ``factors`` (or 2), by which.
    """
    __tracebackhide__ = True  # noqa: F841
    where = _where(what, rank)
    if _is_tensor(expected) or _is_tensor(got):
        compare_tensors(expected, got, what=what, rank=rank, atol=atol, rtol=rtol, dtype=dtype,
                        factors=factors)
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            raise ExerciseFailed(text("checks.wrong_kind", where=where, wanted="dict",
                                      got_type=type(got).__name__, got=_fmt(got)))
        if set(expected) != set(got):
            missing, extra = set(expected) - set(got), set(got) - set(expected)
            raise ExerciseFailed(text("checks.wrong_keys", where=where,
                                      missing=sorted(map(repr, missing)),
                                      extra=sorted(map(repr, extra))))
        for key in expected:
            assert_close(expected[key], got[key], what=f"{what}[{key!r}]", rank=rank,
                         atol=atol, rtol=rtol, dtype=dtype, factors=factors)
    elif isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            raise ExerciseFailed(text("checks.wrong_kind", where=where,
                                      wanted=type(expected).__name__,
                                      got_type=type(got).__name__, got=_fmt(got)))
        if len(got) != len(expected):
            raise ExerciseFailed(text("checks.wrong_length", where=where, expected=len(expected),
                                      got=len(got)))
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_close(e, g, what=f"{what}[{i}]", rank=rank, atol=atol, rtol=rtol, dtype=dtype,
                         factors=factors)
    elif isinstance(expected, float) and _real(got):
        value = float(got)
        if not numerics.is_close(value, expected, dtype=dtype, rtol=rtol, atol=atol,
                                 equal_nan=True):
            message = text("checks.wrong_value", where=where, expected=repr(expected),
                           got=repr(got))
            factor = expected and _factor(expected, value, factors, lambda e, g: numerics.is_close(
                g, e, dtype=dtype, rtol=rtol, atol=atol))
            raise ExerciseFailed(f"{message} {factor}" if factor else message)
    elif isinstance(expected, int) and not isinstance(expected, bool) and _real(got) and \
            float(got) == int(got) == expected:
        return  # an exact whole number of any Real type (3.0, Fraction(3), numpy.int64(3))
    elif type(got) is not type(expected) and not (
            isinstance(expected, int) and isinstance(got, int) and not isinstance(got, bool)):
        raise ExerciseFailed(text("checks.wrong_type", where=where,
                                  expected_type=type(expected).__name__, expected=_fmt(expected),
                                  got_type=type(got).__name__, got=_fmt(got)))
    elif got != expected:
        raise ExerciseFailed(text("checks.wrong_value", where=where, expected=_fmt(expected),
                                  got=_fmt(got)))


def assert_equal(expected, got, *, what: str, rank: int | None = None) -> None:
    """Exact comparison (tolerances zero) with the same messages as :func:`assert_close`."""
    __tracebackhide__ = True  # noqa: F841
    assert_close(expected, got, what=what, rank=rank, atol=0.0, rtol=0.0)
