"""Messages of the exercise checks' framework: verdicts, cases, comparisons, the student's own
line, launches on ranks, stubs (labs.exercises.checks, feedback, ranks, generate).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- the verdict (labs.exercises.checks.run_check) ---
    "verdict_passed": {
        "zh": "✅ {exercise} 通过：{points:g}/{points:g} 分",
        "en": "✅ {exercise} passed: {points:g}/{points:g} points",
    },
    "verdict_failed": {
        "zh": "❌ {exercise} 未通过（0/{points:g} 分）：{message}",
        "en": "❌ {exercise} failed (0/{points:g} points): {message}",
    },
    "verdict_incomplete": {
        "zh": "❌ {exercise} 未完成（0 分）：{message}",
        "en": "❌ {exercise} not done yet (0 points): {message}",
    },
    "todo_fix_error": {
        "zh": "怎么办：按上面的报错改正你的代码，重新运行定义函数的单元格，再运行这个检查。{hint}",
        "en": "What to do: fix your code as the error above says, rerun the cell that defines "
              "the function, then run this check again. {hint}",
    },
    "todo_hint": {
        "zh": "怎么办：{hint}",
        "en": "What to do: {hint}",
    },
    "hint_pointer": {
        "zh": "需要思路时，点开上方的「{exercise} · 提示 {number}」。",
        "en": "For a way in, open \u201c{exercise} \u00b7 Hint {number}\u201d above.",
    },
    "traceback_note": {
        "zh": "（只显示了你自己的代码；完整的报错，包括检查程序和 torch 内部的调用："
              "运行 labs.exercises.last_traceback()）",
        "en": "(Only your own code is shown; for the full error, including the calls inside "
              "the checks and torch, run labs.exercises.last_traceback())",
    },
    "short_failed": {
        "zh": "检查没有通过，原因见上方 ❌ 开头的说明",
        "en": "The check did not pass; see why in the message above that starts with ❌",
    },
    "short_incomplete": {
        "zh": "练习还没有完成，见上方 ❌ 开头的说明",
        "en": "The exercise is not done yet; see the message above that starts with ❌",
    },
    "stub_not_written": {
        "zh": "练习代码还没有写（仍是抛出 NotImplementedError 的占位代码）：{rest}",
        "en": "The exercise code is not written yet (it is still the placeholder that raises "
              "NotImplementedError): {rest}",
    },
    "stub_not_finished": {
        "zh": "练习代码还没有写完（抛出了 NotImplementedError：{first_line}）",
        "en": "The exercise code is not finished (it raised NotImplementedError: {first_line})",
    },
    "last_not_an_exception": {
        "zh": "上一次没有通过的检查（{exercise}）不是因为代码抛出异常，没有更多的报错信息。",
        "en": "The last check that failed ({exercise}) did not fail because code raised an "
              "exception: there is no more error output.",
    },
    "last_none": {
        "zh": "还没有运行过没有通过的检查。",
        "en": "No check has failed yet.",
    },
    "last_header": {
        "zh": "=== {exercise}：完整的报错 ===",
        "en": "=== {exercise}: the full error ===",
    },
    # --- cases (labs.exercises.checks.case) and what they compare ---
    "what_returned": {
        "zh": "返回值",
        "en": "the return value",
    },
    "case_failed": {
        "zh": "{case}：{message}",
        "en": "{case}: {message}",
    },
    "case_hidden_suffix": {  # a hidden case whose label does not start as case_hidden does
        "zh": "{label}（隐藏用例）",
        "en": "{label} (hidden case)",
    },
    "case_hidden": {
        "zh": "隐藏用例 {n}",
        "en": "Hidden case {n}",
    },
    "case_numbered": {
        "zh": "用例 {n}：{what}",
        "en": "Case {n}: {what}",
    },
    "case_call": {  # 用例 make_buckets([3, 5], 8)
        "zh": "用例 {call}",
        "en": "Case {call}",
    },
    "case_about": {
        "zh": "用例：{what}",
        "en": "Case: {what}",
    },
    # --- comparisons (compare_tensors, assert_close): the compared value's name (``what``,
    # here ``where``) is the label before the colon, never a piece of the sentence ---
    "on_rank": {
        "zh": "rank {rank} 上的{what}",
        "en": "{what} on rank {rank}",
    },
    "wrong_kind": {
        "zh": "{where}：应该是 {wanted}，实际得到 {got_type}：{got}",
        "en": "{where}: expected a {wanted}, got {got_type}: {got}",
    },
    "wrong_shape": {
        "zh": "{where}：形状不对，期望 {expected}，实际 {got}",
        "en": "{where}: wrong shape, expected {expected}, got {got}",
    },
    "wrong_dtype": {
        "zh": "{where}：数据类型不对，期望 {expected}，实际 {got}",
        "en": "{where}: wrong dtype, expected {expected}, got {got}",
    },
    "wrong_elements": {
        "zh": "{where}：数值不对，第一个不一致的元素在下标 {index}，期望 {expected}，实际 {got}"
              "（共 {bad}/{total} 个元素不一致，atol={atol:g}，rtol={rtol:g}）",
        "en": "{where}: wrong values, the first element that differs is at index {index}, "
              "expected {expected}, got {got} ({bad}/{total} elements differ, atol={atol:g}, "
              "rtol={rtol:g})",
    },
    "wrong_scalar": {
        "zh": "{where}：数值不对，期望 {expected}，实际 {got}（atol={atol:g}，rtol={rtol:g}）",
        "en": "{where}: wrong value, expected {expected}, got {got} (atol={atol:g}, "
              "rtol={rtol:g})",
    },
    "wrong_keys": {
        "zh": "{where}：键不对，缺少 {missing}，多出 {extra}",
        "en": "{where}: wrong keys, missing {missing}, extra {extra}",
    },
    "wrong_length": {
        "zh": "{where}：长度不对，期望 {expected}，实际 {got}",
        "en": "{where}: wrong length, expected {expected}, got {got}",
    },
    "wrong_value": {
        "zh": "{where}：不对，期望 {expected}，实际 {got}",
        "en": "{where}: wrong value, expected {expected}, got {got}",
    },
    "off_by_factor": {
        "zh": "（恰好是应有值的 {ratio} 倍：是不是多乘或少乘了 {factor}？）",
        "en": "(Exactly {ratio}x the expected value: a factor of {factor} applied once too "
              "often, or not at all?)",
    },
    "off_by_named_factor": {
        "zh": "（恰好是应有值的 {ratio} 倍，而 {name} = {factor}：是不是该求平均却求了和（或反过来），"
              "或者用错了组的大小？）",
        "en": "(Exactly {ratio}x the expected value, and {name} = {factor}: a sum where an "
              "average is asked (or the other way round), or the wrong group's size?)",
    },
    "wrong_type": {
        "zh": "{where}：类型不对，期望 {expected_type}（{expected}），实际 {got_type}（{got}）",
        "en": "{where}: wrong type, expected {expected_type} ({expected}), "
              "got {got_type} ({got})",
    },
    # --- the student's own line (labs.exercises.feedback) ---
    "frame": {
        "zh": "{place}，第 {line} 行，函数 {func}",
        "en": "{place}, line {line}, in {func}",
    },
    "frame_with_source": {
        "zh": "{place}，第 {line} 行，函数 {func}：",
        "en": "{place}, line {line}, in {func}:",
    },
    "rank_check_failed": {
        "zh": "rank {rank} 上：{message}",
        "en": "On rank {rank}: {message}",
    },
    "rank_check_failed_in_case": {
        "zh": "rank {rank} 上（{case}）：{message}",
        "en": "On rank {rank} ({case}): {message}",
    },
    "your_code_raised": {
        "zh": "你的代码出错了",
        "en": "Your code raised an error",
    },
    "your_code_raised_in_case": {
        "zh": "你的代码出错了（{case}）",
        "en": "Your code raised an error ({case})",
    },
    "your_code_raised_on_rank": {
        "zh": "rank {rank} 上你的代码出错了",
        "en": "Your code raised an error on rank {rank}",
    },
    "your_code_raised_on_rank_in_case": {
        "zh": "rank {rank} 上你的代码出错了（{case}）",
        "en": "Your code raised an error on rank {rank} ({case})",
    },
    "error": {
        "zh": "出错了",
        "en": "An error occurred",
    },
    "error_in_case": {
        "zh": "出错了（{case}）",
        "en": "An error occurred ({case})",
    },
    "error_on_rank": {
        "zh": "rank {rank} 上出错了",
        "en": "An error occurred on rank {rank}",
    },
    "error_on_rank_in_case": {
        "zh": "rank {rank} 上出错了（{case}）",
        "en": "An error occurred on rank {rank} ({case})",
    },
    "hidden_logs": {
        "zh": "--- ranks 输出的 torch/gloo 日志（检查时没有显示）---",
        "en": "--- torch/gloo log lines the ranks printed (not shown during the check) ---",
    },
    # --- launches on ranks (labs.exercises.ranks) ---
    "stuck_line": {
        "zh": "{func} 第 {line} 行",
        "en": "line {line} of {func}",
    },
    "ranks_stuck_at": {
        "zh": "rank {ranks} 停在 {where}",
        "en": "rank {ranks} stuck at {where}",
    },
    "still_running": {
        "zh": "在 {world_size} 个 rank 上运行了 {timeout:g} 秒还没有结束，仍在运行的 rank：{waiting}。{why}",
        "en": "Still not finished after {timeout:g} s on {world_size} ranks; the ranks still "
              "running: {waiting}. {why}",
    },
    "still_running_at": {
        "zh": "在 {world_size} 个 rank 上运行了 {timeout:g} 秒还没有结束，"
              "仍在运行的 rank：{waiting}（{where}）。{why}",
        "en": "Still not finished after {timeout:g} s on {world_size} ranks; the ranks still "
              "running: {waiting} ({where}). {why}",
    },
    "timeout_not_deadlock": {
        "zh": "这是超时，不是死锁：至少有一个 rank 还在执行自己的代码（没有在等通信），"
              "多半是一个停不下来的循环，或者计算量比预期大得多。请检查循环的结束条件。",
        "en": "This is a timeout, not a deadlock: at least one rank is still running its own "
              "code (not waiting on communication), most likely a loop that never ends, or far "
              "more computation than expected. Check your loops' exit conditions.",
    },
    "deadlock": {
        "zh": "这通常是死锁：各 rank 都在等通信——调用集合通信的顺序不一致，某个 recv 没有"
              "配对的 send，或者相邻的 rank 都先做阻塞的 send（或 recv）而互相等待。点对点通信时，"
              "每一步请用 dist.isend / dist.irecv 同时发出发送和接收，再对两者调用 wait()。",
        "en": "This is usually a deadlock: every rank is waiting on communication -- the ranks "
              "call collectives in different orders, a recv has no matching send, or neighbouring "
              "ranks both start with a blocking send (or recv) and wait for each other. For "
              "point-to-point communication, post the send and the receive together at every "
              "step with dist.isend / dist.irecv, then call wait() on both.",
    },
    "warned_once": {
        "zh": "（检查运行时 torch 给出的警告，所有 rank 和用例合并后各显示一次）：\n    {warnings}",
        "en": "(What torch warned while the check ran, each shown once for all ranks and "
              "cases):\n    {warnings}",
    },
    "deadlock_pending": {
        "zh": "死锁：在 {world_size} 个 rank 上 {timeout:g} 秒还没有结束，各 rank 都在等一个不会完成的通信——"
              "{pending}。每个 recv 要有配对的 send（同样的对端、同样的字节数），"
              "每个 isend / irecv 返回的 Work 都要 wait()，各 rank 调用集合通信的顺序要一致。",
        "en": "Deadlock: still not finished after {timeout:g} s on {world_size} ranks, each "
              "waiting on communication that never completes -- {pending}. Every recv needs a "
              "matching send (same peer, same bytes), every Work that isend / irecv returns "
              "needs wait(), and the ranks must call collectives in the same order.",
    },
    "rank_waits_for": {
        "zh": "rank {rank} 在等 {what}",
        "en": "rank {rank} waits for {what}",
    },
    "off_limits": {
        "zh": "{exercise} 要你自己写出这一步，但你的代码用到了现成的实现 {shown}（课程或 torch 自带的）；"
              "请只用练习说明里给出的工具自己实现它。",
        "en": "{exercise} asks you to write this yourself, but your code reached a ready-made "
              "implementation, {shown} (the course's or torch's); build it with the tools the "
              "exercise names.",
    },
    "library_answer": {
        "zh": "{exercise} 检查的是你自己写的函数（或类），但交给检查的是现成的 {shown}（库自带的，"
              "不是你写的）；请在练习单元格里写出自己的实现，再把它交给检查。",
        "en": "{exercise} checks a function (or class) you write, but it was handed {shown}, "
              "a library's own, not yours; write your own in the exercise cell and pass that "
              "to the check.",
    },
    "rank_crashed": {
        "zh": "rank {rank} 没有抛出 Python 异常就退出了（exit code {exitcode}），"
              "可能是内存不够或底层库崩溃；请检查张量大小和 send/recv 的形状。",
        "en": "rank {rank} exited without raising a Python exception (exit code {exitcode}), "
              "maybe out of memory or a crash in a native library; check the tensor sizes and "
              "the shapes of your send/recv.",
    },
    "not_a_number": {
        "zh": "{what}：应该是一个数（字节数），实际得到 {got_type}：{got}",
        "en": "{what}: expected a number (of bytes), got {got_type}: {got}",
    },
    # --- the stubs of the student notebooks (labs.exercises.generate) ---
    "stub_marker": {  # every stub's message starts with it and a colon; keep it stable (it is
        # detected)
        "zh": "练习未完成",
        "en": "Exercise not done yet",
    },
    "stub": {
        "zh": "{marker}：练习 {number}。写好这里的代码再运行检查；卡住了就点开上方的「练习 {number} · 提示」。",
        "en": "{marker}: Exercise {number}. Write the code here, then run the check; if you "
              "get stuck, open \u201cExercise {number} \u00b7 Hint\u201d above.",
    },
    "stub_default": {
        "zh": "{marker}：请在这里写下你的代码（替换这一行）",
        "en": "{marker}: write your code here (replace this line)",
    },
    "stub_default_hint": {
        "zh": "请在这里写下你的代码（替换这一行）",
        "en": "write your code here (replace this line)",
    },
    "stub_markdown": {
        "zh": "_（在这里写下你的回答）_",
        "en": "_(write your answer here)_",
    },
    "hint_summary_example": {  # the hints' <summary>, in the generator's (English) error
        "zh": "练习 n · 提示 k",
        "en": "Exercise n \u00b7 Hint k",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the name of a compared value: the label in front of a comparison's colon
    "what_returned",
    # a case's name, and a case's name in front of its message or what it is about
    "case_hidden", "case_call", "case_numbered", "case_about", "case_failed",
    "todo_hint",  # "What to do:" in front of the hint's whole sentence
    "hint_summary_example",  # a hint's heading, as an example
})
