"""Messages of the checks of notebook 2.5's capstone exercises (labs.exercises.summary_checks).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- scenarios and case labels ----------------------------------------------------------
    "scenario": {
        "zh": "{model}，{gpus} 张 {gpu}（每节点 {per_node} 张）",
        "en": "{model}, {gpus} × {gpu} ({per_node} per node)",
    },
    # what a case is about (the labels are checks.case_*)
    "scenario_config": {
        "zh": "{name}，{config}",
        "en": "{name}, {config}",
    },
    "days_case": {
        "zh": "N={n:.3g}, D={tokens:.3g}, {gpus} 卡, MFU {mfu:.1%}",
        "en": "N={n:.3g}, D={tokens:.3g}, {gpus} GPUs, MFU {mfu:.1%}",
    },
    # --- the reasons a layout fails (summary_checks.REASONS) --------------------------------
    "reason_ok": {
        "zh": "布局合法，显存也放得下",
        "en": "the layout is valid and fits in GPU memory",
    },
    "reason_gpu_count": {
        "zh": "tp·pp·dp 不等于卡数",
        "en": "tp·pp·dp is not the number of GPUs",
    },
    "reason_tp_node": {
        "zh": "tp 超过每节点的卡数（TP 必须在 NVLink 内）",
        "en": "tp exceeds the GPUs per node (TP must stay within NVLink)",
    },
    "reason_tp_heads": {
        "zh": "tp 不整除注意力头数（或 KV 头数）",
        "en": "tp does not divide the number of attention heads (or KV heads)",
    },
    "reason_batch": {
        "zh": "global_batch 不能被 dp·micro_batch 整除",
        "en": "global_batch is not divisible by dp·micro_batch",
    },
    "reason_pipeline": {
        "zh": "流水线切不开：pp 超过层数；或交错（v > 1）的条件不满足：v > 1 需要 pp > 1，"
              "层数能被 pp·v 整除，每个副本的 micro-batch 个数是 pp 的倍数",
        "en": "the pipeline cannot be split: pp exceeds the layers; or interleaving (v > 1) "
              "breaks its rules: v > 1 needs pp > 1, the layers divisible by pp·v, and the "
              "micro-batches per replica a multiple of pp",
    },
    "reason_memory": {
        "zh": "布局合法，但显存放不下",
        "en": "the layout is valid, but it does not fit in GPU memory",
    },
    # --- exercise 1: choose a layout and justify it ------------------------------------------
    "not_a_positive_int": {
        "zh": "{key} 应该是正整数，实际得到 {value!r}",
        "en": "{key} should be a positive integer, got {value!r}",
    },
    "not_a_positive_number": {
        "zh": "{key} 应该是正数，实际得到 {value!r}",
        "en": "{key} should be a positive number, got {value!r}",
    },
    "not_a_dict": {
        "zh": "{what}：应该是 dict（键 {keys}），实际得到 {type}",
        "en": "{what}: expected a dict (keys {keys}), got {type}",
    },
    "missing_keys": {
        "zh": "{what}：缺少键 {missing}（需要 {keys}）",
        "en": "{what}: the keys {missing} are missing (it needs {keys})",
    },
    "tp_node": {
        "zh": "tp={tp} 超过每节点的 {per_node} 张卡：TP 每层都要 all-reduce，"
              "必须留在节点内的 NVLink 上",
        "en": "tp={tp} exceeds the {per_node} GPUs per node: TP all-reduces in every layer, "
              "so it must stay on the NVLink inside a node",
    },
    "invalid_layout": {
        "zh": "这个布局不成立：{error}",
        "en": "this layout is not possible: {error}",
    },
    "does_not_fit": {
        "zh": "{config} 放不下：每张卡要 {need:.1f} GiB，可用 {usable:.1f} GiB（{reason}）",
        "en": "{config} does not fit: it needs {need:.1f} GiB per GPU, {usable:.1f} GiB are "
              "usable ({reason})",
    },
    "too_slow": {
        "zh": "{config} 能放下，但估计步时 {step:.2f} s，比规划器的最优 "
              "{best:.2f} s 慢 {slower:.0%}（最多允许 {tolerance:.0%}）；"
              "看看 bubble（{bubble:.1%}）和暴露的通信（{exposed:.2f} s）",
        "en": "{config} fits, but its estimated step time of {step:.2f} s is {slower:.0%} slower "
              "than the planner's best, {best:.2f} s (at most {tolerance:.0%} allowed); look at "
              "the bubble ({bubble:.1%}) and the exposed communication ({exposed:.2f} s)",
    },
    "number_off": {
        "zh": "布局正确，但 {key} = {got:.4g} {unit} 与规划器对这个布局的估计 "
              "{expected:.4g} {unit} 相差超过 {tolerance:.0%}（用 pl.estimate 算你选的"
              "这个布局，而不是别的布局）",
        "en": "the layout is right, but {key} = {got:.4g} {unit} differs from the planner's "
              "estimate for this layout, {expected:.4g} {unit}, by more than {tolerance:.0%} "
              "(run pl.estimate on the layout you chose, not on another one)",
    },
    # a unit slip in a justifying number (capstone_rules.unit_mistake)
    "unit_gb": {
        "zh": "{key} = {got:.4g} 是用 GB（10^9 字节）算的；要的是 GiB（2^30 字节）：{expected:.4g} GiB",
        "en": "{key} = {got:.4g} is in GB (10^9 bytes); GiB (2^30 bytes) are wanted: "
              "{expected:.4g} GiB",
    },
    "unit_bytes": {
        "zh": "{key} = {got:.4g} 是字节数；要的是 GiB（除以 2^30）：{expected:.4g} GiB",
        "en": "{key} = {got:.4g} is in bytes; GiB are wanted (divide by 2^30): "
              "{expected:.4g} GiB",
    },
    "unit_ms": {
        "zh": "{key} = {got:.4g} 是毫秒；要的是秒：{expected:.4g} s",
        "en": "{key} = {got:.4g} is in milliseconds; seconds are wanted: {expected:.4g} s",
    },
    # the runner-up and the deciding part (capstone_rules)
    "case_hidden_scenario": {
        "zh": "隐藏用例 {n}（{name}）",
        "en": "Hidden case {n} ({name})",
    },
    "runner_up_missing": {
        "zh": "runner_up 是 None，但有别的 (tp, pp) 组合也放得下：给出其中最快的那个布局"
              "（键同上面的七个），说明 {config} 赢在哪里",
        "en": "runner_up is None, but layouts of another (tp, pp) fit: give the fastest of them "
              "(a dict of the seven layout keys) and show where {config} beats it",
    },
    "runner_up_none": {
        "zh": "除了 {config} 的 (tp, pp) 之外没有别的组合放得下：runner_up 应为 None，"
              "deciding 应为 \"memory\"",
        "en": "no layout of another (tp, pp) than {config}'s fits: runner_up should be None and "
              "deciding \"memory\"",
    },
    "runner_up_same_family": {
        "zh": "runner_up {rival} 与你的布局 {config} 的 tp、pp 相同：亚军要换一种切法"
              "（另一组 tp、pp），而不只是换 micro-batch、v 或 ZeRO",
        "en": "runner_up {rival} has the same tp and pp as your layout {config}: the runner-up "
              "must split the model another way (another tp, pp), not only change the "
              "micro-batch, v or ZeRO",
    },
    "runner_up_faster": {
        "zh": "你的 runner_up {rival} 估计步时 {rival_step:.2f} s，比你选的 {config}（"
              "{step:.2f} s）还快：那就应该选它",
        "en": "your runner_up {rival} takes an estimated {rival_step:.2f} s, faster than the "
              "{config} you chose ({step:.2f} s): then choose it",
    },
    "runner_up_not_fastest": {
        "zh": "runner_up {rival} 估计步时 {rival_step:.2f} s，但另一种 (tp, pp) 的最快布局只要 "
              "{fastest:.2f} s（最多允许慢 {tolerance:.0%}）：亚军是别的切法里最快的那个",
        "en": "runner_up {rival} takes an estimated {rival_step:.2f} s, but the fastest layout of "
              "another (tp, pp) takes {fastest:.2f} s (at most {tolerance:.0%} slower allowed): "
              "the runner-up is the fastest of the other splits",
    },
    "not_a_deciding": {
        "zh": "deciding 应该是 {choices} 之一，实际得到 {got!r}",
        "en": "deciding should be one of {choices}, got {got!r}",
    },
    "deciding_memory_expected": {
        "zh": "没有亚军（别的切法都放不下），决定因素是显存：deciding 应为 \"memory\"，"
              "实际得到 {got!r}",
        "en": "there is no runner-up (no other split fits), so memory decides: deciding should "
              "be \"memory\", got {got!r}",
    },
    "deciding_part": {
        "zh": "{part} {ours:.2f} s 对 {theirs:.2f} s",
        "en": "{part} {ours:.2f} s vs {theirs:.2f} s",
    },
    "wrong_deciding": {
        "zh": "deciding = {got!r}，但亚军 {rival} 输得最多的是 {expected!r}（{meaning}）；"
              "你的布局对亚军的关键路径：{parts}",
        "en": "deciding = {got!r}, but the runner-up {rival} loses most in {expected!r} "
              "({meaning}); your layout's critical path against the runner-up's: {parts}",
    },
    "deciding_compute": {
        "zh": "计算：所有 micro-batch 的核函数时间",
        "en": "compute: every micro-batch's kernels",
    },
    "deciding_bubble": {
        "zh": "流水线的 bubble（空闲）",
        "en": "the pipeline bubble (idle time)",
    },
    "deciding_tp": {
        "zh": "TP 的 all-reduce（在关键路径上）",
        "en": "TP's all-reduces (on the critical path)",
    },
    "deciding_pp": {
        "zh": "PP 在 stage 之间传的激活与梯度",
        "en": "PP's activations and gradients between stages",
    },
    "deciding_dp": {
        "zh": "暴露在外的 DP 通信（梯度同步、ZeRO 的参数 all-gather）",
        "en": "exposed DP communication (gradient sync, ZeRO's parameter all-gathers)",
    },
    "deciding_memory": {
        "zh": "显存：别的切法都放不下",
        "en": "memory: no other split fits",
    },
    # --- exercise 2: why does a layout fail? -------------------------------------------------
    "not_a_reason": {
        "zh": "应该返回 {reasons} 之一，实际得到 {got!r}",
        "en": "should return one of {reasons}, got {got!r}",
    },
    "wrong_reason": {
        "zh": "这个配置应判为 {expected!r}（{expected_meaning}），"
              "实际返回 {got!r}（{got_meaning}）",
        "en": "this layout should be judged {expected!r} ({expected_meaning}), "
              "got {got!r} ({got_meaning})",
    },
    # --- exercise 3: how long does a run take? -----------------------------------------------
    "days_not_a_number": {
        "zh": "应该返回天数（一个数），实际得到 {got!r}",
        "en": "should return the number of days (a number), got {got!r}",
    },
    "days_off_by": {
        "zh": "（恰好是应有值的 {ratio:.4g} 倍：{why}）",
        "en": " (exactly {ratio:.4g} times the expected days: {why})",
    },
    "days_why_forward_only": {
        "zh": "训练每 token 是前向 2N + 反向 4N = 6N 次浮点运算，不只是前向的 2N",
        "en": "training is forward 2N + backward 4N = 6N floating-point operations per token, "
              "not the forward's 2N",
    },
    "days_why_recompute": {
        "zh": "8·N·D 把全重计算再跑的一遍前向也算进去了，那是 HFU 的口径；MFU 只数模型本身的 6·N·D",
        "en": "8·N·D counts the forward that full recomputation runs again, HFU's accounting; "
              "MFU counts only the model's 6·N·D",
    },
    "days_why_seconds": {
        "zh": "要的是天：秒数除以 86400（1 天 = 86400 秒），只除一次",
        "en": "days are wanted: seconds divided by 86400 (a day's seconds), once",
    },
    "days_why_hours": {
        "zh": "这是小时数：1 天 = 24 小时",
        "en": "these are hours: a day has 24",
    },
    "days_why_six": {
        "zh": "每个参数每个 token 是 6 次浮点运算（6·N·D），这个 6 只乘一次",
        "en": "each parameter costs 6 floating-point operations per token (6·N·D): the 6, once",
    },
    "days_why_percent": {
        "zh": "mfu 已经是分数（如 0.476），不是百分数：不要再除以或乘以 100",
        "en": "mfu is already a fraction (0.476, say), not a percentage: no 100 to divide or "
              "multiply by",
    },
    "days_why_gpus": {
        "zh": "{n_gpus} 张卡一起算：每秒的浮点运算是 n_gpus × peak_flops × mfu，n_gpus 只乘一次",
        "en": "{n_gpus} GPUs work together: n_gpus × peak_flops × mfu floating-point operations "
              "per second, n_gpus once",
    },
    "days_wrong": {
        "zh": "期望 {expected:.4g} 天，实际 {got:.4g}{hint}",
        "en": "expected {expected:.4g} days, got {got:.4g}{hint}",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "scenario_config",  # what a case is about, in its label: the scenario, the layout
})
