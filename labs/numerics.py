"""The course's one tolerance policy: when two computed results count as the same.

A result passes when ``|actual - expected| <= atol + rtol * |expected|``, elementwise, with
``(rtol, atol)`` chosen by dtype (torch.testing's defaults: a few units in the last place)::

    float16  (1e-3, 1e-5)     bfloat16 (1.6e-2, 1e-5)
    float32  (1.3e-6, 1e-5)   float64  (1e-7, 1e-7)
    complex32/64/128 as float16/32/64; integers and bool: exact

Why by dtype, wherever the number travels: the course computes in float32, and a parallel run
adds the same numbers in another order than the single-process reference (all-reduce, shards,
micro-batches). How the last bits round also depends on the CPU kernels
(``ATEN_CPU_CAPABILITY`` default/avx2/avx512) and the thread count, so it changes from machine to
machine. A float32 result must therefore be compared at float32 tolerances whether it is a
tensor, a Python float (``loss.item()``) or an element of a list. Python floats carry no dtype:
they are compared as float32 unless ``dtype=`` says otherwise (``dtype="float64"`` for numbers a
formula computes in plain Python).

Bit-exactness is not a tolerance: where results must be identical (replicas across ranks), assert
``torch.equal``. Looser tolerances are passed explicitly (``rtol=``, ``atol=``) with a comment
saying why, e.g. many optimizer steps that amplify the rounding.

torch is imported only when a tensor or a torch dtype is involved.

Owns: the tolerances and assert_close / is_close. Must not: import torch at import time, print, or
import any labs module but labs.messages.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

from labs.messages import text

__all__ = ["TOLERANCES", "PYTHON_FLOAT_DTYPE", "tolerances", "assert_close", "is_close"]

#: (rtol, atol) by dtype name; integer and bool dtypes are compared exactly.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_EXACT = ("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64")

#: The dtype a Python float is taken to carry: the course computes in float32.
PYTHON_FLOAT_DTYPE = "float32"


def _dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def tolerances(dtype) -> tuple[float, float]:
    """``(rtol, atol)`` of ``dtype`` (a torch dtype or its name, e.g. ``"float32"``)."""
    name = _dtype_name(dtype)
    if name in TOLERANCES:
        return TOLERANCES[name]
    if name in _EXACT:
        return 0.0, 0.0
    raise ValueError(text("models.no_tolerance", dtype=dtype,
                          choices=", ".join([*TOLERANCES, *_EXACT])))


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _mismatch(actual, expected, path: str, dtype, rtol, atol, equal_nan: bool) -> str | None:
    """Why ``actual`` differs from ``expected`` (prefixed by ``path``), or None if close."""
    where = text("models.at_path", path=path) if path else ""
    policy = (dtype, rtol, atol, equal_nan)
    if _is_tensor(actual) or _is_tensor(expected):
        return _tensor_mismatch(actual, expected, where, *policy)
    if isinstance(expected, Mapping):
        return _mapping_mismatch(actual, expected, path, where, *policy)
    if isinstance(expected, (list, tuple)):
        return _sequence_mismatch(actual, expected, path, where, *policy)
    if _is_number(actual) and _is_number(expected) and (
            isinstance(actual, float) or isinstance(expected, float)):
        return _float_mismatch(actual, expected, where, *policy)
    if type(actual) is not type(expected) and not (_is_number(actual) and _is_number(expected)):
        return text("models.typed_value_differs", where=where,
                    expected_type=type(expected).__name__, expected=expected,
                    actual_type=type(actual).__name__, actual=actual)
    if actual != expected:
        return text("models.value_differs", where=where, expected=expected, actual=actual)
    return None


def _tensor_mismatch(actual, expected, where: str, dtype, rtol, atol,
                     equal_nan: bool) -> str | None:
    """Two tensors, by ``torch.testing.assert_close`` at the policy's tolerances (shape, dtype
    and device must match too); a tensor against anything else differs."""
    if not (_is_tensor(actual) and _is_tensor(expected)):
        return text("models.expected_type", where=where, expected=type(expected).__name__,
                    actual=type(actual).__name__)
    import torch

    default_rtol, default_atol = tolerances(expected.dtype if dtype is None else dtype)
    try:
        torch.testing.assert_close(
            actual, expected, equal_nan=equal_nan,
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol)
    except AssertionError as exc:
        return f"{where}{exc}"
    return None


def _mapping_mismatch(actual, expected: Mapping, path: str, where: str, dtype, rtol, atol,
                      equal_nan: bool) -> str | None:
    """A mapping: the same keys, then the first value that differs (in ``expected``'s order)."""
    if not isinstance(actual, Mapping):
        return text("models.expected_mapping", where=where, actual=type(actual).__name__)
    if set(actual) != set(expected):
        return text("models.keys_differ", where=where,
                    missing=sorted(map(repr, set(expected) - set(actual))),
                    extra=sorted(map(repr, set(actual) - set(expected))))
    for key in expected:
        why = _mismatch(actual[key], expected[key], f"{path}[{key!r}]", dtype, rtol, atol,
                        equal_nan)
        if why:
            return why
    return None


def _sequence_mismatch(actual, expected, path: str, where: str, dtype, rtol, atol,
                       equal_nan: bool) -> str | None:
    """A list or tuple (either stands for the other): the same length, then the first element
    that differs."""
    if not isinstance(actual, (list, tuple)):
        return text("models.expected_sequence", where=where,
                    expected=type(expected).__name__, actual=type(actual).__name__)
    if len(actual) != len(expected):
        return text("models.length_differs", where=where, actual=len(actual),
                    expected=len(expected))
    for i, (a, e) in enumerate(zip(actual, expected)):
        why = _mismatch(a, e, f"{path}[{i}]", dtype, rtol, atol, equal_nan)
        if why:
            return why
    return None


def _float_mismatch(actual, expected, where: str, dtype, rtol, atol,
                    equal_nan: bool) -> str | None:
    """Two Python numbers, one of them a float: close within the tolerances of ``dtype``
    (float32 when None); NaN equals NaN only with ``equal_nan``, infinities only themselves."""
    default_rtol, default_atol = tolerances(PYTHON_FLOAT_DTYPE if dtype is None else dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    actual, expected = float(actual), float(expected)
    if math.isnan(actual) or math.isnan(expected):
        if equal_nan and math.isnan(actual) and math.isnan(expected):
            return None
        return text("models.value_differs", where=where, expected=expected, actual=actual)
    if actual == expected or (math.isfinite(actual) and math.isfinite(expected)
                              and abs(actual - expected) <= atol + rtol * abs(expected)):
        return None
    name = _dtype_name(PYTHON_FLOAT_DTYPE if dtype is None else dtype)
    return text("models.float_differs", where=where, expected=expected, actual=actual,
                difference=abs(actual - expected), allowed=atol + rtol * abs(expected),
                dtype=name, rtol=rtol, atol=atol)


def assert_close(actual, expected, *, dtype=None, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, msg: str | None = None) -> None:
    """Raise AssertionError unless ``actual`` is close to ``expected`` under the policy.

    Handles tensors (via ``torch.testing.assert_close``: shape, dtype and device must match),
    Python numbers, and (nested) lists, tuples and dicts of them; other values must be equal.
    Tolerances (defaults: the policy of the module docstring):

    - ``dtype=None``: each tensor's own dtype; Python floats as float32. A dtype (torch dtype or
      name) sets the tolerance for every element, e.g. ``dtype="float64"`` for a formula.
    - ``rtol=`` / ``atol=``: override the policy (say why in a comment).
    - ``equal_nan=False``: NaN equals NaN only if True. Python ints compared to ints are exact.
    - ``msg``: put in front of the message, which names the element (``[2]['w']``) that differs.
    """
    __tracebackhide__ = True  # noqa: F841
    why = _mismatch(actual, expected, "", dtype, rtol, atol, equal_nan)
    if why:
        raise AssertionError(text("models.with_context", msg=msg, why=why) if msg else why)


def is_close(actual, expected, *, dtype=None, rtol: float | None = None,
             atol: float | None = None, equal_nan: bool = False) -> bool:
    """True where :func:`assert_close` with the same arguments would pass."""
    return _mismatch(actual, expected, "", dtype, rtol, atol, equal_nan) is None
