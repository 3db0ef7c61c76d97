"""What the grader (``python -m grader``, the package beside ``labs``) writes for instructors:
report messages, progress, the summary table's headings.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    "deleted": {"zh": "检查单元格被删除", "en": "the check cell was deleted"},
    "no_record": {"zh": "❌ {exercise} 未通过（0/{points:g} 分）：检查没有运行完（评分器没有收到它的记录：检查单元格被跳过、被改写，或内核在它之前出了错）",
                  "en": "❌ {exercise} failed (0/{points:g} points): the check did not run to the end (the grader got no record of it: the check cell was skipped or rewritten, or the kernel failed before it)"},
    "record_refused": {"zh": "❌ {exercise} 未通过（0/{points:g} 分）：检查的记录与检查本身对不上（{why}）；交回的数据不是这个检查按原样运行得到的",
                       "en": "❌ {exercise} failed (0/{points:g} points): the check's record does not match the check ({why}); the data handed back is not what the check, run as written, produces"},
    "not_run": {"zh": "练习 {grade_id} 没有运行：得 0 分", "en": "exercise {grade_id} did not run: it scores 0"},
    "unreadable": {"zh": "无法读取笔记本：{error}", "en": "cannot read the notebook: {error}"},
    "malformed": {"zh": "笔记本格式不对，按 0 分处理：{error}",
                  "en": "malformed notebook, scored 0: {error}"},
    "no_source": {"zh": "找不到对应的原始笔记本（文件名或 metadata.course.notebook 不匹配）",
                  "en": "no matching source notebook (neither the file name nor "
                        "metadata.course.notebook matches)"},
    "timeout": {"zh": "练习 {grade_id} 运行超过 {seconds} 秒（超时）：只有这道练习得 0 分，"
                      "内核已重启，评分继续",
                "en": "exercise {grade_id} ran over {seconds} s (timeout): only this exercise "
                      "scores 0; the kernel was restarted and grading went on"},
    "dead": {"zh": "内核在练习 {grade_id} 中崩溃：只有这道练习得 0 分，内核已重启，评分继续",
             "en": "the kernel died in exercise {grade_id}: only this exercise scores 0; the "
                   "kernel was restarted and grading went on"},
    "overall": {"zh": "超过总时间限制 {seconds} 秒，练习 {grade_id} 没有运行完",
                "en": "over the total time limit of {seconds} s; exercise {grade_id} did not "
                      "finish"},
    "setup_failed": {"zh": "环境单元格没有运行成功（{why}），练习 {grade_id} "
                           "无法评分",
                     "en": "the setup cell did not run ({why}); "
                           "exercise {grade_id} cannot be graded"},
    "limit_memory": {"zh": "练习 {grade_id} 超出内存限制 {limit}：只有这道练习得 0 分，内核已重启，评分继续",
                     "en": "memory limit {limit} exceeded in exercise {grade_id}: only this exercise scores 0; the kernel was restarted and grading went on"},
    "limit_tmp": {"zh": "练习 {grade_id} 超出 /tmp 或 /dev/shm 的大小限制 {limit}：只有这道练习得 0 分，内核已重启，评分继续",
                  "en": "/tmp or /dev/shm size limit {limit} exceeded in exercise {grade_id}: only this exercise scores 0; the kernel was restarted and grading went on"},
    "limit_processes": {"zh": "练习 {grade_id} 超出进程数限制 {limit}（进程与线程）：只有这道练习得 0 分，内核已重启，评分继续",
                        "en": "process limit {limit} (processes and threads) exceeded in exercise {grade_id}: only this exercise scores 0; the kernel was restarted and grading went on"},
    "limit_cpu": {"zh": "练习 {grade_id} 超出 CPU 时间限制 {limit}（内核及其启动的所有进程合计）：只有这道练习得 0 分，内核已重启，评分继续",
                  "en": "CPU time limit {limit} exceeded in exercise {grade_id} (the kernel and everything it started): only this exercise scores 0; the kernel was restarted and grading went on"},
    "limit_output": {"zh": "练习 {grade_id} 超出输出大小限制 {limit}（保留的输出已截断）：只有这道练习得 0 分，内核已重启，评分继续",
                     "en": "output limit {limit} exceeded in exercise {grade_id} (the outputs kept were truncated): only this exercise scores 0; the kernel was restarted and grading went on"},
    "output_truncated": {"zh": "[评分器：输出超过 {limit}，其余部分未保留]",
                         "en": "[grader: output over {limit}; the rest was not kept]"},
    "limits": {"zh": "每份提交的资源限制：内存 {memory}，/tmp 与 /dev/shm 各 {tmp}，进程与线程 {processes} 个，每道练习 CPU 时间 {cpu}、输出 {output}",
               "en": "limits per submission: memory {memory}, /tmp and /dev/shm {tmp} each, {processes} processes and threads, per exercise {cpu} of CPU time and {output} of output"},
    "limits_weak": {"zh": "在这台机器上没有完全生效的限制：{which}",
                    "en": "limits that do not fully hold on this machine: {which}"},
    "weak_memory": {"zh": "内存（无法创建内存 cgroup：只按每 0.25 秒的测量和每个进程的 RLIMIT_DATA 限制，突发分配可能短暂超出）",
                    "en": "memory (no memory cgroup: measured every 0.25 s, plus RLIMIT_DATA per process; a sudden burst may overshoot briefly)"},
    "weak_tmp": {"zh": "/tmp 与 /dev/shm（没有沙箱：只限制单个文件的大小，RLIMIT_FSIZE）",
                 "en": "/tmp and /dev/shm (no sandbox: only one file's size is bounded, RLIMIT_FSIZE)"},
    "weak_processes": {"zh": "进程数（无法创建 pids cgroup：只按每 0.25 秒的计数限制，快速的 fork 循环可能在被结束前超出）",
                       "en": "processes (no pids cgroup: counted every 0.25 s; a fast fork loop may overshoot before it is stopped)"},
    "handout_written": {"zh": "学生材料：{folder}（{files} 个文件；不含 solutions/ 和 grader/）",
                        "en": "handout: {folder} ({files} files; no solutions/, no grader/)"},
    "handout_archive": {"zh": "压缩包：{archive}", "en": "archive: {archive}"},
    "gradebook_twice": {"zh": "{notebook} 交了两份，按分数高的一份计", "en": "{notebook} handed in twice; the better score counts"},
    "gradebook_written": {"zh": "成绩册：{gradebook}（每个学生一行）；LMS 导入：{lms}",
                          "en": "gradebook: {gradebook} (one row per student); LMS import: {lms}"},
    "worker_failed": {"zh": "评分进程出错：{error}", "en": "the grading process failed: {error}"},
    "failed_runs": {
        "zh": "有 {count} 份作业评分失败（原因不在学生的代码）：{names}。它们在所有导出文件里标为错误、"
              "没有分数；修好原因后再运行一次，会重新评这些作业（退出码 3）。",
        "en": "Grading failed for {count} submission(s), for a reason outside the student's code: "
              "{names}. Every export marks them as errors, with no score; fix the cause and run "
              "again, which grades them again (exit code 3).",
    },
    "gradebook_error": {"zh": "错误", "en": "ERROR"},
    "gradescope_built": {
        "zh": "{path}：在 Gradescope 里上传它（Configure Autograder → Zip file upload）；它含有你的密钥"
              "（secret.txt），不要给学生。",
        "en": "{path}: upload it in Gradescope (Configure Autograder, Zip file upload); it holds "
              "your secret (secret.txt): keep it from the students.",
    },
    "gradescope_built_no_secret": {
        "zh": "{path}：在 Gradescope 里上传它（Configure Autograder → Zip file upload）；没有给密钥"
              "（SECRET=…），每次评分都会随机生成隐藏用例，同一个学生重交时用例会变。",
        "en": "{path}: upload it in Gradescope (Configure Autograder, Zip file upload); no secret "
              "given (SECRET=...): every grading draws its own hidden cases, so a student's "
              "resubmission meets other ones.",
    },
    "list_student": {"zh": "{student}：{count} 个笔记本", "en": "{student}: {count} notebook(s)"},
    "list_unknown": {"zh": "{file}：不是课程的笔记本（不会评分）",
                     "en": "{file}: not one of the course's notebooks (not graded)"},
    "list_total": {"zh": "共 {students} 个学生、{files} 个文件；什么都没有评（去掉 --list 才评分）。",
                   "en": "{students} student(s), {files} file(s); nothing graded (drop --list "
                         "to grade)."},
    "lms_written": {"zh": "LMS 导入文件：{paths}", "en": "LMS import files: {paths}"},
    "review_test": {"zh": "复核（仅讲师可见）", "en": "review (instructor only)"},
    "faults": {"zh": "{count} 道练习因超时或崩溃得 0 分（超时 {timeouts}，崩溃 {deaths}）",
               "en": "{count} exercise(s) scored 0 for a timeout or a crash (timeouts "
                     "{timeouts}, crashes {deaths})"},
    "flag_reference": {"zh": "请复核：调用了课程/torch 的现成实现 {names}",
                       "en": "review: calls the course's/torch's ready-made {names}"},
    "flag_tampering": {"zh": "请复核：练习代码碰了评分机制 {names}（分数不受影响：结论由评分器根据记录得出）",
                       "en": "review: the exercise code touches the grading machinery {names} (the score is not affected: the grader decides from the record)"},
    "flag_solution": {"zh": "请复核：代码与答案单元格相同（不计命名、注释和文档字符串）",
                      "en": "review: the code is the solution cell's (up to names, comments "
                            "and docstrings)"},
    "sandbox_bwrap": {"zh": "沙箱：bwrap（只读的系统与课程代码、私有 /tmp、无外网、独立的进程"
                            "命名空间；答案、其他提交和输出文件夹不可见）",
                      "en": "sandbox: bwrap (read-only system and course code, private /tmp, "
                            "no network, own PID namespace; solutions, other submissions and "
                            "the output folder not visible)"},
    "sandbox_none": {"zh": "没有沙箱（{why}）：每个内核在自己的进程组里运行，使用课程代码的私有"
                           "副本，结束后它启动的进程都会被结束；但学生代码能读写本机上当前用户"
                           "能读写的文件（包括 solutions/）",
                     "en": "no sandbox ({why}): each kernel runs in its own process group with a "
                           "private copy of the course code, and every process it started is "
                           "ended; but student code can read and write whatever this user can "
                           "(solutions/ included)"},
    "start": {"zh": "评分 {total} 份提交，并行 {jobs} 份；{sandbox}",
              "en": "grading {total} submission(s), {jobs} at a time; {sandbox}"},
    "progress": {"zh": "[{number}/{total}] {name}  {score} 分  {seconds} 秒  已用 {elapsed}  "
                       "预计还需 {eta}",
                 "en": "[{number}/{total}] {name}  {score} points  {seconds} s  elapsed "
                       "{elapsed}  ETA {eta}"},
    "resumed": {"zh": "[{number}/{total}] {name}  {score} 分  （已有结果，未重新评分）",
                "en": "[{number}/{total}] {name}  {score} points  (result kept from an "
                      "earlier run)"},
    "written": {"zh": "结果已写入 {csv} 和 {json}（每份提交一个文件：{folder}）",
                "en": "results written to {csv} and {json} (one file per submission: "
                      "{folder})"},
    "interrupted": {"zh": "评分被中断：已评好的结果保存在 {folder}，再运行一次会从中断处继续",
                    "en": "grading interrupted: the results so far are in {folder}; run again "
                          "to go on from there"},
    "col_submission": {"zh": "提交", "en": "submission"},
    "col_total": {"zh": "总分", "en": "total"},
    "col_note": {"zh": "备注", "en": "note"},
    "col_flags": {"zh": "复核", "en": "review"},
    "unknown_notebook": {"zh": "（未知笔记本）", "en": "(unknown notebook)"},
    "seconds": {"zh": "{value} 秒", "en": "{value} s"},
    "minutes": {"zh": "{value} 分钟", "en": "{value} min"},
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the summary table's column headers and heading, the gradebook's error cell
    "col_submission", "col_total", "col_note", "col_flags", "unknown_notebook",
    "gradebook_error",
    "handout_archive",  # a label and its path
    "seconds", "minutes",  # a duration with its unit
})
