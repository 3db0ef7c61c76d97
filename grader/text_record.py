"""Messages of the grader's records (grader.record, grader.judge): why a record is refused.
They end up in the instructor's report, after "the check's record does not match the check".

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
    "attribute": {"zh": "回放时检查读取了学生对象的属性 {name!r}（检查只能调用学生对象，或把它交给各 rank）",
                  "en": "the check read attribute {name!r} of a student object while replaying (checks may only call them or pass them to ranks)"},
    "version": {"zh": "不是这个课程版本写的记录", "en": "not a record of this course version"},
    "other_exercise": {"zh": "这是 {got!r} 的记录，不是 {wanted!r} 的", "en": "a record of {got!r}, not {wanted!r}"},
    "arguments": {"zh": "记录与检查的参数个数不符", "en": "the record does not match the check's arguments"},
    "ends_early": {"zh": "记录在检查的第 {n} 个事件之前就结束了", "en": "the record ends before event {n} of the check"},
    "wrong_event": {"zh": "记录的第 {n} 个事件不是检查要的（{expected}）", "en": "event {n} of the record is not the check's ({expected})"},
    "no_outcome": {"zh": "记录的第 {n} 个事件没有结果", "en": "event {n} of the record has no outcome"},
    "per_rank": {"zh": "记录的第 {n} 个事件不是每个 rank 一个结果", "en": "event {n} of the record is not one result per rank"},
    "extra_events": {"zh": "记录比检查要的多了 {n} 个事件", "en": "the record has {n} event(s) more than the check asked for"},
    "too_deep": {"zh": "嵌套太深的值", "en": "a value nested too deep"},
    "codec": {"zh": "不是编码器写出的值", "en": "a value the codec did not write"},
    "dict_entry": {"zh": "不是编码器写出的字典项", "en": "a dict entry the codec did not write"},
    "unhashable": {"zh": "无法作为字典键的值", "en": "a dict key that cannot be hashed"},
    "bad_shape": {"zh": "形状不对的张量", "en": "a tensor with a bad shape"},
    "bad_dtype": {"zh": "未知 dtype 的张量或数组", "en": "a tensor or array of an unknown dtype"},
    "bad_bytes": {"zh": "字节数与形状不符的张量或数组", "en": "a tensor or array whose bytes do not fit its shape"},
    "bad_exception": {"zh": "不是编码器写出的异常", "en": "an exception the codec did not write"},
    "too_large": {"zh": "记录超过 {mib} MiB", "en": "the record is larger than {mib} MiB"},
    "cell_failed": {"zh": "检查单元格在评分器里运行出错：{error}", "en": "the check cell failed in the grader: {error}"},
    "not_called": {"zh": "检查单元格没有调用这道练习的检查", "en": "the check cell did not call the check"},
    "judge_failed": {"zh": "评判出错：{error}", "en": "the judge failed: {error}"},
    "not_json": {"zh": "记录不是 JSON（{error}）", "en": "the record is not JSON ({error})"},
}
