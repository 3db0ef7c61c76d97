"""Running a student's code on real ranks for a check, and reading what comes back.

A check must never hang a notebook: every launch has a short timeout, and a hang or a crash
becomes an ExerciseFailed that says in Chinese which ranks were stuck and on which line of the
student's code (a loop still running is a timeout, ranks waiting on each other a deadlock). An
exception on a rank comes back as ``labs.RankError``, which :func:`labs.exercises.checks.case`
and :func:`~labs.exercises.checks.run_check` turn into the student's line first. torch's own
log lines printed by the ranks are kept out of the notebook while a check runs
(:func:`labs.exercises.feedback.quiet_rank_logs`); each failure keeps the launcher's full report
(``full_traceback``, ``labs.exercises.last_traceback()``).
"""

from __future__ import annotations

from labs.exercises import feedback as _feedback
from labs.exercises.checks import ExerciseFailed
from labs.runtime import stacks as _stacks

__all__ = ["CHECK_TIMEOUT", "run_on_ranks", "as_number"]

CHECK_TIMEOUT = 20.0  # seconds per launch; a correct solution needs well under one


def _where_stuck(stacks: dict) -> str:
    """'rank 0、1 停在 my_ring_all_reduce 第 12 行；…' from a LaunchTimeoutError's frames."""
    places: dict = {}
    for rank, frames in sorted(stacks.items()):
        frame = _stacks.first_user_frame(frames)
        if frame is not None:
            places.setdefault(f"{frame.func} 第 {frame.line} 行", []).append(str(rank))
    return "；".join(f"rank {'、'.join(ranks)} 停在 {where}" for where, ranks in places.items())


def run_on_ranks(fn, world_size, args=(), *, timeout=None):
    """``labs.launch`` with the check's timeout (default CHECK_TIMEOUT); hangs and crashes
    become ExerciseFailed."""
    import labs

    timeout = CHECK_TIMEOUT if timeout is None else timeout

    try:
        with _feedback.quiet_rank_logs():
            return labs.launch(fn, world_size, args=args, backend="gloo", timeout=timeout)
    except labs.LaunchTimeoutError as exc:
        where = _where_stuck(exc.stacks)
        head = (f"在 {world_size} 个 rank 上运行了 {timeout:g} 秒还没有结束，"
                f"仍在运行的 rank：{list(exc.waiting)}" + (f"（{where}）" if where else "") + "。")
        if exc.in_communication is False:
            raise _failed(
                head + "这是超时，不是死锁：至少有一个 rank 还在执行自己的代码（没有在等通信），"
                "多半是一个停不下来的循环，或者计算量比预期大得多。请检查循环的结束条件。",
                exc, "timeout") from None
        raise _failed(
            head + "这通常是死锁：各 rank 都在等通信——调用集合通信的顺序不一致，某个 recv 没有"
            "配对的 send，或者相邻的 rank 都先做阻塞的 send（或 recv）而互相等待。点对点通信时，"
            "每一步请用 dist.isend / dist.irecv 同时发出发送和接收，再对两者调用 wait()。",
            exc, "timeout") from None
    except labs.RankCrashedError as exc:
        raise _failed(
            f"rank {exc.rank} 没有抛出 Python 异常就退出了（exit code {exc.exitcode}），"
            "可能是内存不够或底层库崩溃；请检查张量大小和 send/recv 的形状。", exc, "error") from None


def _failed(message, launch_error, kind):
    """ExerciseFailed of ``kind`` keeping the launcher's full report for last_traceback()."""
    failed = ExerciseFailed(message)
    failed.kind = kind
    failed.full_traceback = _feedback.full_traceback(launch_error)
    return failed


def as_number(value, what):
    """Accept ints, floats and 0-d tensors/arrays; anything else is a wrong type."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ExerciseFailed(f"{what}应该是一个数（字节数），实际得到 {type(value).__name__}：{value!r}")
    return value
