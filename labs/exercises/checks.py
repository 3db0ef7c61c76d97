"""The framework every exercise check uses.

A check compares the student's function with the lab's reference on several cases, some of
them hidden (generated inside the check, never printed), and says in plain Chinese what is
wrong. It is wrapped by :func:`graded` (or called through :func:`run_check`), which prints the
verdict once and re-raises, so the notebook cell errors and the graders see the failure::

    @graded("ex2_0_ring", points=3)
    def check_ring_allreduce(student_fn):
        with case("用例 1：4 个 rank，长度 8"):
            compare_tensors(expected, student_fn(x), what="all-reduce 的结果", rank=1)
        for k, x in enumerate(hidden_inputs()):
            with case(f"隐藏用例 {k + 1}", hidden=True):
                ...

What the student sees. The verdict names the exercise as the notebook does (``练习 n``, from
:mod:`labs.exercises.catalog`; the id, the cell's ``grade_id``, stays what graders use) and is
printed once, on stdout: a first line ``❌ 练习 n 未通过（0/k 分）：…`` (the grader keeps it and
the indented lines after it), then what to do, pointing to a hint (``练习 n · 提示 k``). When
the student's code raised -- here or on a rank -- the verdict starts with the rank, the
student's own line (its cell, line number, function and source text) and the exception
(:mod:`labs.exercises.feedback`); the lab's own frames, torch's and gloo's are left out. The
exception then raised is shown by IPython as one short line that does not repeat the verdict
(``_render_traceback_``), so "Run All" goes on past the cell (tagged ``raises-exception``)
and the cell still counts as failed; ``str()`` of the exception is the message without the
verdict's first words, for tests and scripts.

The full traceback, on demand. A failure caused by an exception keeps everything -- every
frame of the checks, the launcher and torch, the rank's traceback, the torch/gloo log lines the
ranks printed while the check ran -- in the exception's ``full_traceback`` attribute, and
``labs.exercises.last_traceback()`` prints that of the last failed check (the verdict says so
in its last line). With the environment variable ``LABS_FULL_TRACEBACK=1`` the error output
of every failed check shows it as well.

torch is imported lazily, so plain-Python checks stay cheap.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import Any, Callable

from labs import numerics
from labs.exercises import catalog, feedback

__all__ = [
    "ExerciseIncomplete",
    "ExerciseFailed",
    "run_check",
    "graded",
    "case",
    "compare_tensors",
    "assert_close",
    "assert_equal",
    "last_traceback",
    "FULL_TRACEBACK_ENV",
]

#: Prefix of the message every generated stub raises (see labs.exercises.generate).
STUB_MARKER = "练习未完成"
#: Set to 1 to see the full traceback of a failed check in its error output.
FULL_TRACEBACK_ENV = "LABS_FULL_TRACEBACK"
#: The last line of a verdict whose failure has a full traceback to show.
TRACEBACK_NOTE = ("（只显示了你自己的代码；完整的报错，包括检查程序和 torch 内部的调用："
                  "运行 labs.exercises.last_traceback()）")

_last: dict = {"exercise": None, "text": None}


class _ShortTraceback:
    """How IPython shows a check's exception (``_render_traceback_``).

    Once :func:`run_check` has printed the verdict (``announced``), one short line that does
    not repeat it: the cell is marked failed and the verdict is read once. An exception raised
    outside a graded check shows its message. ``full_traceback`` (str or None) keeps
    everything about the exception that caused it; ``kind`` is "wrong" (a wrong answer),
    "error" (the student's code raised) or "timeout" (the ranks did not finish).
    ename/evalue, which graders read, are the class name and ``str()``.
    """

    kind = "wrong"
    full_traceback: str | None = None
    announced = False
    SHORT = "检查没有通过，原因见上方 ❌ 开头的说明"

    def _render_traceback_(self) -> list[str]:
        lines: list[str] = []
        if self.full_traceback and os.environ.get(FULL_TRACEBACK_ENV, "").strip() not in ("", "0"):
            lines = self.full_traceback.splitlines() + [""]
        text = self.SHORT if self.announced else str(self)
        return lines + [f"{type(self).__name__}: {text}"]


class ExerciseIncomplete(_ShortTraceback, Exception):
    """The student's code still raises NotImplementedError (the stub was not replaced)."""

    SHORT = "练习还没有完成，见上方 ❌ 开头的说明"


class ExerciseFailed(_ShortTraceback, AssertionError):
    """The student's code ran but gave a wrong answer; the message says what is wrong."""


def _failure(message: str, like: BaseException | None = None, **attrs) -> ExerciseFailed:
    """An ExerciseFailed with ``message``, keeping the kind and full traceback of ``like``."""
    failed = ExerciseFailed(message)
    for name in ("kind", "full_traceback"):
        if like is not None and name in vars(like):
            setattr(failed, name, vars(like)[name])
    for name, value in attrs.items():
        setattr(failed, name, value)
    return failed


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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _student_error(exc: BaseException, case_name: str | None = None) -> ExerciseFailed:
    """ExerciseFailed for an exception of the student's code (here or on a rank): the rank,
    the student's line and the exception first (labs.exercises.feedback)."""
    message, in_student_code = feedback.describe(exc, case_name)
    kind = "error"
    original = getattr(feedback.rank_error(exc), "original", None)
    if isinstance(original, ExerciseFailed) and not in_student_code:
        kind = vars(original).get("kind", "wrong")  # a check's own test on the rank
    return _failure(message, kind=kind, full_traceback=feedback.full_traceback(exc))


def _verdict_exception(exc: BaseException) -> ExerciseFailed | ExerciseIncomplete:
    """What a failed check raises: ``exc`` itself if it is one of ours, else one describing it."""
    if isinstance(exc, (ExerciseFailed, ExerciseIncomplete)):
        return exc
    remote = feedback.rank_error(exc)
    if remote is not None and isinstance(getattr(remote, "original", None), ExerciseFailed):
        return _student_error(exc)
    if _is_incomplete(exc):
        return ExerciseIncomplete(_incomplete_message(exc))
    return _student_error(exc)


def _what_to_do(exercise_id: str, exc: BaseException) -> str | None:
    """The verdict's advice line: what to do next, and which hint to open (never the last)."""
    if isinstance(exc, ExerciseIncomplete):
        return None  # the stub's own message already points to the hints
    kind = getattr(exc, "kind", "wrong")
    number = catalog.hint(exercise_id, kind)
    hint = f"需要思路时，点开上方的「{catalog.label(exercise_id)} · 提示 {number}」。" if number else ""
    if kind == "error":
        return "怎么办：按上面的报错改正你的代码，重新运行定义函数的单元格，再运行这个检查。" + hint
    return f"怎么办：{hint}" if hint else None


def run_check(exercise_id: str, points: int | float, fn: Callable[..., Any], *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` as the check of ``exercise_id``; print the verdict, once.

    Returns what ``fn`` returns. Re-raises on failure (as ExerciseIncomplete or ExerciseFailed,
    ``announced``: IPython then shows one short line instead of repeating the verdict) so the
    cell errors.
    """
    __tracebackhide__ = True  # noqa: F841  (IPython/pytest hide this frame)
    name = catalog.label(exercise_id)
    feedback.clear_hidden_logs()
    try:
        result = fn(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        final = _verdict_exception(exc)
        if isinstance(final, ExerciseIncomplete):
            lines = [f"❌ {name} 未完成（0 分）：{final}"]
        else:
            lines = [f"❌ {name} 未通过（0/{points:g} 分）：{final}"]
        advice = _what_to_do(exercise_id, final)
        if advice:
            lines.append(advice)
        if final.full_traceback:
            lines.append(TRACEBACK_NOTE)
        print("\n".join(lines), flush=True)
        final.announced = True
        _last.update(exercise=name, text=final.full_traceback)
        if final is exc:
            raise
        raise final from exc
    finally:
        feedback.clear_hidden_logs()
    print(f"✅ {name} 通过：{points:g}/{points:g} 分", flush=True)
    return result


def last_traceback(file=None) -> None:
    """Print the full traceback of the last failed check (every frame, the rank's traceback,
    the torch/gloo log lines hidden while it ran)."""
    out = sys.stdout if file is None else file
    if not _last["text"]:
        why = (f"上一次没有通过的检查（{_last['exercise']}）不是因为代码抛出异常，没有更多的报错信息。"
               if _last["exercise"] else "还没有运行过没有通过的检查。")
        print(why, file=out)
        return
    print(f"=== {_last['exercise']}：完整的报错 ===\n{_last['text']}", file=out)


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
    Errors raised by the student's code inside the case become ExerciseFailed naming the
    rank, the student's line and the case; NotImplementedError passes through (the exercise is
    unfinished, not wrong).
    """
    __tracebackhide__ = True  # noqa: F841
    name = f"{label}（隐藏用例）" if hidden and "隐藏" not in label else label
    try:
        yield
    except ExerciseFailed as exc:
        raise _failure(f"{name}：{exc}", like=exc) from None
    except (ExerciseIncomplete, KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        remote = feedback.rank_error(exc)
        if remote is not None and isinstance(getattr(remote, "original", None), ExerciseFailed):
            raise _student_error(exc, name) from exc
        if _is_incomplete(exc):
            raise
        raise _student_error(exc, name) from exc


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
