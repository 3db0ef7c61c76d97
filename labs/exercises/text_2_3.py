"""Messages of the checks of notebook 2.3's graded exercises (labs.exercises.pipeline_checks,
labs.exercises.executor_checks).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- what a case is about (the labels are checks.case_*) -------------------------------
    "simulated_schedule": {
        "zh": "{stages} 个 stage、{micro} 个 micro-batch 的完整调度在模拟器里运行",
        "en": "the full schedule of {stages} stages and {micro} micro-batches, run in the "
              "simulator",
    },
    "executor_case": {
        "zh": "{stages} 个 stage，{micro} 个 micro-batch",
        "en": "{stages} stages, {micro} micro-batches",
    },
    "case_hidden_executor": {
        "zh": "隐藏用例 {n}：{stages} 个 stage，{micro} 个 micro-batch",
        "en": "Hidden case {n}: {stages} stages, {micro} micro-batches",
    },
    "case_hidden_pipelines": {
        "zh": "隐藏用例 {n}：两条 {stages} 级流水线 {{0, 1}} 和 {{2, 3}}（4 个 rank；group 要传给每次通信，"
              "send/recv 的 src/dst 是全局 rank，看提示 2）",
        "en": "Hidden case {n}: two {stages}-stage pipelines {{0, 1}} and {{2, 3}} (4 ranks; pass "
              "group to every communication, and send/recv's src/dst are global ranks: see hint 2)",
    },
    # --- exercises 1, 2 and 7: compute orders ------------------------------------------------
    "order_not_a_list": {
        "zh": "返回值应该是动作的 list（例如 ['F0', 'F1', 'B0', 'B1']），实际得到 {type}",
        "en": "the return value should be a list of actions (e.g. ['F0', 'F1', 'B0', 'B1']), "
              "got {type}",
    },
    "action_unreadable": {
        "zh": "第 {index} 个动作 {action} 读不出来：每个动作写成 'F0' 这样的字符串，或 (种类, micro-batch) "
              "对，种类是 {kinds} 之一",
        "en": "action {index}, {action}, cannot be read: write each action as a string like 'F0' "
              "or a (kind, micro-batch) pair, the kind one of {kinds}",
    },
    "order_actions_wrong": {
        "zh": "动作不全或有多余：缺少 {missing}，多出 {extra}（每个 micro-batch 的 {kinds} 各恰好一个）",
        "en": "actions missing or extra: missing {missing}, extra {extra} (each micro-batch has "
              "exactly one each of {kinds})",
    },
    "order_wrong": {
        "zh": "顺序不对：第 {index} 个动作期望 {expected}，实际 {got}（期望的开头：{head}）",
        "en": "wrong order: action {index} should be {expected}, got {got} (the expected order "
              "starts {head})",
    },
    "too_many_in_flight": {
        "zh": "同时在途的 micro-batch 最多应为 p={p}，实际 {peaks}",
        "en": "at most p={p} micro-batches should be in flight at once, got {peaks}",
    },
    "zb_no_w": {
        "zh": "顺序里没有 W：这还是 1F1B 的顺序。把每个 B 拆成 B（输入的梯度）和 W（权重的梯度），"
              "每个 micro-batch 恰好一个 F、一个 B、一个 W",
        "en": "the order has no W: it is still 1F1B's. Split every B into B (the input's "
              "gradient) and W (the weights' gradient): each micro-batch has exactly one F, one B "
              "and one W",
    },
    "zb_w_before_b": {
        "zh": "{w}（第 {index} 个动作）排在它自己的 B 之前：权重的梯度要用 B 算出的输出梯度，W 只能推迟，不能提前",
        "en": "{w} (action {index}) comes before its own B: the weights' gradient needs the "
              "output gradient B computed, so a W can be delayed, never brought forward",
    },
    "zb_bubble": {
        "zh": "t_F = t_B = t_W 时模拟出的空闲占比是 {idle:.4f}，公式 (p-1)(t_F+t_B-t_W) 给出 {formula:.4f}",
        "en": "with t_F = t_B = t_W the simulated idle share is {idle:.4f}, the formula "
              "(p-1)(t_F+t_B-t_W) gives {formula:.4f}",
    },
    # --- exercises 3 and 4: bubble and micro-batches ----------------------------------------
    "what_bubble": {
        "zh": "气泡占比",
        "en": "the bubble fraction",
    },
    "what_min_microbatches": {
        "zh": "最少的 micro-batch 数",
        "en": "the minimum number of micro-batches",
    },
    # --- exercise 5: balanced partition -----------------------------------------------------
    "partition_not_pairs": {
        "zh": "返回的切分应该是 [(start, stop), ...]：每个 stage 一对整数，实际得到 {got}",
        "en": "the returned partition should be [(start, stop), ...], a pair of integers per "
              "stage, got {got}",
    },
    "partition_stage_count": {
        "zh": "返回的切分应有 {n_stages} 个 stage，实际 {got} 个",
        "en": "the returned partition should have {n_stages} stages, got {got}",
    },
    "partition_invalid": {
        "zh": "返回的切分不合法：stage {stage} 是 ({a}, {b})，应从第 {edge} 层开始、"
              "至少含一层（stage 必须是连续、不重叠、非空的层段）",
        "en": "the returned partition is invalid: stage {stage} is ({a}, {b}); it should start "
              "at layer {edge} and hold at least one layer (stages must be consecutive, "
              "non-overlapping, non-empty runs of layers)",
    },
    "partition_short": {
        "zh": "返回的切分只覆盖了前 {edge} 层，共有 {layers} 层",
        "en": "the returned partition covers only the first {edge} layers, of {layers}",
    },
    "partition_not_optimal": {
        "zh": "最慢的 stage 耗费 {got:g}，但最优切分可以做到 {best:g}（你的切分 {bounds}）",
        "en": "the slowest stage costs {got:g}, but the best partition gets down to {best:g} "
              "(your partition: {bounds})",
    },
    # --- exercise 6: the 1F1B executor on real ranks ----------------------------------------
    "no_grad_input": {
        "zh": "stage {stage} 收到的激活不需要梯度（requires_grad=False）：反向之后拿不到"
              "它的 .grad，就没有梯度可以发回上一个 stage。收到之后先调用 requires_grad_()（看提示 2）",
        "en": "the activation stage {stage} received does not require a gradient "
              "(requires_grad=False): after the backward pass it has no .grad, so there is no "
              "gradient to send back to the previous stage. Call requires_grad_() on it right "
              "after receiving it (see hint 2)",
    },
    "what_param_grad": {
        "zh": "stage {stage} 参数 {name} 的梯度",
        "en": "the gradient of parameter {name} of stage {stage}",
    },
    "what_loss": {
        "zh": "最后一个 stage 返回的 loss（各 micro-batch 的 loss / micro-batch 数之和）",
        "en": "the loss the last stage returned (the sum over micro-batches of loss / number of "
              "micro-batches)",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "what_bubble",  # the name of a compared value: the label in front of a comparison's colon
})
