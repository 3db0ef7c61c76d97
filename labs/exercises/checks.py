"""The framework every exercise check uses.

A check compares the student's function with the lab's reference on several cases, some of
them hidden (generated inside the check, never printed), and says in plain Chinese what is
wrong. It is wrapped by :func:`graded` (or called through :func:`run_check`), which prints a
one-line verdict and re-raises, so the notebook cell errors and the graders see the failure::

    @graded("ex2_0_ring", points=3)
    def check_ring_allreduce(student_fn):
        with case("用例 1：4 个 rank，长度 8"):
            compare_tensors(expected, student_fn(x), what="all-reduce 的结果", rank=1)
        for k, x in enumerate(hidden_inputs()):
            with case(f"隐藏用例 {k + 1}", hidden=True):
                ...

torch is imported lazily, so plain-Python checks stay cheap.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import traceback
from typing import Any, Callable

from labs import numerics

__all__ = [
    "ExerciseIncomplete",
    "ExerciseFailed",
    "run_check",
    "graded",
    "case",
    "compare_tensors",
    "assert_close",
    "assert_equal",
]

#: Prefix of the message every generated stub raises (see labs.exercises.generate).
STUB_MARKER = "练习未完成"


class _ShortTraceback:
    """IPython shows ``_render_traceback_()`` instead of the full traceback: the message alone
    (it already says what is wrong), preceded by the traceback of the student's own error, if
    one caused this. ename/evalue, which graders read, are unchanged."""

    def _render_traceback_(self) -> list[str]:
        lines: list[str] = []
        cause = self.__cause__
        if cause is not None and not isinstance(self, ExerciseIncomplete):
            try:  # IPython's formatting ("Cell In[3], line 2"), as the notebook shows errors
                from IPython import get_ipython

                lines += get_ipython().InteractiveTB.structured_traceback(
                    type(cause), cause, cause.__traceback__)
            except Exception:  # noqa: BLE001 - not in IPython: plain Python formatting
                for chunk in traceback.format_exception(type(cause), cause, cause.__traceback__):
                    lines += chunk.rstrip("\n").split("\n")
            lines.append("")
        return lines + [f"{type(self).__name__}: {self}"]


class ExerciseIncomplete(_ShortTraceback, Exception):
    """The student's code still raises NotImplementedError (the stub was not replaced)."""


class ExerciseFailed(_ShortTraceback, AssertionError):
    """The student's code ran but gave a wrong answer; the message says what is wrong."""


def _chain(exc: BaseException | None):
    """``exc``, its cause/context chain, and what a launcher error wraps (``.original``)."""
    seen = set()
    todo = [exc]
    while todo:
        exc = todo.pop(0)
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        original = getattr(exc, "original", None)
        todo += [original if isinstance(original, BaseException) else None,
                 exc.__cause__, exc.__context__]


def _is_incomplete(exc: BaseException) -> bool:
    """True if ``exc`` comes from an unfinished stub.

    Errors coming back from other processes (``labs.launch``) may carry the remote traceback
    only as text, so the messages are searched as well.
    """
    return any(isinstance(e, (NotImplementedError, ExerciseIncomplete))
               or STUB_MARKER in str(e) or "NotImplementedError" in str(e) for e in _chain(exc))


def _incomplete_message(exc: BaseException) -> str:
    if isinstance(exc, ExerciseIncomplete):
        return str(exc)
    for e in _chain(exc):
        text = str(e)
        at = text.find(STUB_MARKER + "：")
        if at >= 0:
            rest = text[at + len(STUB_MARKER) + 1:].splitlines()[0].strip()
            if rest.endswith(('")', "')")):  # found in the stub's source line, not its message
                rest = rest[:-2]
            return f"练习代码还没有写（仍是抛出 NotImplementedError 的占位代码）：{rest}"
    return f"练习代码还没有写完（抛出了 NotImplementedError：{_first_line(exc)}）"


def _failed_on_rank(exc: BaseException) -> ExerciseFailed | None:
    """An ExerciseFailed raised inside a rank and wrapped by the launcher, named by rank."""
    for e in _chain(exc):
        original = getattr(e, "original", None)
        if isinstance(original, ExerciseFailed):
            rank = getattr(e, "rank", None)
            return ExerciseFailed(f"rank {rank} 上：{original}" if rank is not None else str(original))
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run_check(exercise_id: str, points: int | float, fn: Callable[..., Any], *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` as the check of ``exercise_id``; print a verdict line.

    Returns what ``fn`` returns. Re-raises on failure (as ExerciseIncomplete or ExerciseFailed)
    so the cell errors.
    """
    __tracebackhide__ = True  # noqa: F841  (IPython/pytest hide this frame)
    try:
        result = fn(*args, **kwargs)
    except ExerciseFailed as exc:
        print(f"❌ 练习 {exercise_id} 未通过（0/{points:g} 分）：{exc}", flush=True)
        raise
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        failed = _failed_on_rank(exc)
        if failed is not None:
            print(f"❌ 练习 {exercise_id} 未通过（0/{points:g} 分）：{failed}", flush=True)
            raise failed from exc
        if _is_incomplete(exc):
            message = _incomplete_message(exc)
            print(f"❌ 练习 {exercise_id} 未完成（0 分）：{message}", flush=True)
            if isinstance(exc, ExerciseIncomplete):
                raise
            raise ExerciseIncomplete(message) from exc
        message = f"你的代码出错了：{type(exc).__name__}: {_first_line(exc)}"
        print(f"❌ 练习 {exercise_id} 未通过（0/{points:g} 分）：{message}", flush=True)
        raise ExerciseFailed(message) from exc
    print(f"✅ 练习 {exercise_id} 通过：{points:g}/{points:g} 分", flush=True)
    return result


def graded(exercise_id: str, points: int | float = 1):
    """Decorator form of :func:`run_check`: calling the decorated check runs it graded."""

    def decorate(check: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(check)
        def wrapper(*args, **kwargs):
            __tracebackhide__ = True  # noqa: F841
            return run_check(exercise_id, points, check, *args, **kwargs)

        wrapper.exercise_id = exercise_id
        wrapper.points = points
        return wrapper

    return decorate


@contextlib.contextmanager
def case(label: str, *, hidden: bool = False):
    """Name the case being checked, so a failure says which one.

    ``hidden=True`` marks a case whose inputs are not shown; the label should not reveal them.
    Errors raised by the student's code inside the case become ExerciseFailed naming the case;
    NotImplementedError passes through (the exercise is unfinished, not wrong).
    """
    __tracebackhide__ = True  # noqa: F841
    name = f"{label}（隐藏用例）" if hidden and "隐藏" not in label else label
    try:
        yield
    except ExerciseFailed as exc:
        raise ExerciseFailed(f"{name}：{exc}") from None
    except (ExerciseIncomplete, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        failed = _failed_on_rank(exc)
        if failed is not None:
            raise ExerciseFailed(f"{name}：{failed}") from exc
        if _is_incomplete(exc):
            raise
        raise ExerciseFailed(
            f"{name}：你的代码出错了：{type(exc).__name__}: {_first_line(exc)}"
        ) from exc


def _where(what: str, rank: int | None) -> str:
    return f"rank {rank} 上的{what}" if rank is not None else what


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def compare_tensors(expected, got, *, what: str, rank: int | None = None,
                    atol: float | None = None, rtol: float | None = None,
                    dtype=None, check_dtype: bool = True) -> None:
    """Raise ExerciseFailed unless ``got`` is a tensor close to ``expected``.

    The message names the rank, the first mismatching index, the expected and the actual
    value, and how many elements differ. Tolerances default to the course's policy
    (:mod:`labs.numerics`) for ``dtype``, by default the expected tensor's dtype (exact for
    integers and bool); tensors are compared on the CPU.
    """
    __tracebackhide__ = True  # noqa: F841
    import torch

    where = _where(what, rank)
    expected = torch.as_tensor(expected)
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(f"{where}应该是 torch.Tensor，实际得到 {type(got).__name__}：{_fmt(got)}")
    if tuple(got.shape) != tuple(expected.shape):
        raise ExerciseFailed(
            f"{where}形状不对：期望 {tuple(expected.shape)}，实际 {tuple(got.shape)}")
    if check_dtype and got.dtype != expected.dtype:
        raise ExerciseFailed(f"{where}数据类型不对：期望 {expected.dtype}，实际 {got.dtype}")
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
    at = f"下标 {index}" if index else "（标量）"
    raise ExerciseFailed(
        f"{where}不对：第一个不一致的元素在{at}，期望 {_num(exp_value)}，实际 {_num(got_value)}"
        f"（共 {len(bad)}/{close.numel()} 个元素不一致，atol={atol:g}，rtol={rtol:g}）")


def _num(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def assert_close(expected, got, *, what: str, rank: int | None = None,
                 atol: float | None = None, rtol: float | None = None, dtype=None) -> None:
    """Compare numbers, tensors, and (nested) lists/tuples/dicts of them.

    Tolerances follow the course's policy (:mod:`labs.numerics`): tensors by their dtype,
    floats as float32 (what the course computes in) unless ``dtype`` says otherwise, e.g.
    ``dtype="float64"`` for a formula computed in plain Python; ``atol``/``rtol`` override.
    Everything else is compared exactly. Raises ExerciseFailed naming the element
    (``what[2]['w']``) that differs.
    """
    __tracebackhide__ = True  # noqa: F841
    where = _where(what, rank)
    if _is_tensor(expected) or _is_tensor(got):
        compare_tensors(expected, got, what=what, rank=rank, atol=atol, rtol=rtol, dtype=dtype)
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            raise ExerciseFailed(f"{where}应该是 dict，实际得到 {type(got).__name__}：{_fmt(got)}")
        if set(expected) != set(got):
            missing, extra = set(expected) - set(got), set(got) - set(expected)
            raise ExerciseFailed(
                f"{where}的键不对：缺少 {sorted(map(repr, missing))}，多出 {sorted(map(repr, extra))}")
        for key in expected:
            assert_close(expected[key], got[key], what=f"{what}[{key!r}]", rank=rank,
                         atol=atol, rtol=rtol, dtype=dtype)
    elif isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            raise ExerciseFailed(
                f"{where}应该是 {type(expected).__name__}，实际得到 {type(got).__name__}：{_fmt(got)}")
        if len(got) != len(expected):
            raise ExerciseFailed(f"{where}长度不对：期望 {len(expected)}，实际 {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_close(e, g, what=f"{what}[{i}]", rank=rank, atol=atol, rtol=rtol, dtype=dtype)
    elif isinstance(expected, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if not numerics.is_close(got, expected, dtype=dtype, rtol=rtol, atol=atol, equal_nan=True):
            raise ExerciseFailed(f"{where}不对：期望 {expected!r}，实际 {got!r}")
    elif type(got) is not type(expected) and not (
            isinstance(expected, int) and isinstance(got, int) and not isinstance(got, bool)):
        raise ExerciseFailed(
            f"{where}类型不对：期望 {type(expected).__name__}（{_fmt(expected)}），"
            f"实际 {type(got).__name__}（{_fmt(got)}）")
    elif got != expected:
        raise ExerciseFailed(f"{where}不对：期望 {_fmt(expected)}，实际 {_fmt(got)}")


def assert_equal(expected, got, *, what: str, rank: int | None = None) -> None:
    """Exact comparison (tolerances zero) with the same messages as :func:`assert_close`."""
    __tracebackhide__ = True  # noqa: F841
    assert_close(expected, got, what=what, rank=rank, atol=0.0, rtol=0.0)
