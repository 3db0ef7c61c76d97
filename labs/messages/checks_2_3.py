"""Messages of the checks of notebook 2.3's graded exercises (labs.exercises.pipeline_checks).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

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
    # --- exercises 1 and 2: the GPipe and 1F1B orders ---------------------------------------
    "order_not_a_list": {
        "zh": "返回值应该是 list（例如 ['F0', 'F1', 'B0', 'B1']），实际得到 {type}",
        "en": "the return value should be a list (e.g. ['F0', 'F1', 'B0', 'B1']), got {type}",
    },
    "order_actions_wrong": {
        "zh": "动作不全或有多余：缺少 {missing}，多出 {extra}（每个 micro-batch 恰好一个 F 和一个 B）",
        "en": "actions missing or extra: missing {missing}, extra {extra} (each micro-batch has "
              "exactly one F and one B)",
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
    # --- exercise 7: the ZB-H1 order from 1F1B's ---------------------------------------------
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
    "zb_actions_wrong": {
        "zh": "动作不全或有多余：缺少 {missing}，多出 {extra}（每个 micro-batch 恰好一个 F、一个 B、一个 W）",
        "en": "actions missing or extra: missing {missing}, extra {extra} (each micro-batch has "
              "exactly one F, one B and one W)",
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
    "partition_not_a_list": {
        "zh": "返回的切分应该是 [(start, stop), ...] 的 list，实际得到 {type}",
        "en": "the returned partition should be a list [(start, stop), ...], got {type}",
    },
    "partition_not_pairs": {
        "zh": "返回的切分的每一项都应是 (start, stop) 两个整数：{bounds!r}",
        "en": "each item of the returned partition should be two integers (start, stop): "
              "{bounds!r}",
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
    "no_ready_executor": {
        "zh": "本练习不能调用现成的 labs.pipeline.run_schedule：要自己写出 1F1B 的执行循环，"
              "用 send/recv 在相邻 stage 之间传激活和梯度（看提示 2）",
        "en": "this exercise may not call the ready-made labs.pipeline.run_schedule: write the "
              "1F1B loop yourself, with send/recv passing activations and gradients between "
              "neighbouring stages (see hint 2)",
    },
    # the stage a sentence is about ({who}), alone or in one of two pipelines
    "stage": {
        "zh": "stage {stage} ",
        "en": "stage {stage}",
    },
    "stage_in_group": {
        "zh": "stage {stage}（进程组 {members}）",
        "en": "stage {stage} (process group {members})",
    },
    "last_stage": {
        "zh": "最后一个 stage ",
        "en": "the last stage",
    },
    "last_stage_in_group": {
        "zh": "最后一个 stage（进程组 {members}）",
        "en": "the last stage (process group {members})",
    },
    "param_no_grad": {
        "zh": "{who}的参数 {name} 没有梯度：这个 stage 没有对自己的输出做反向（看提示 2）",
        "en": "parameter {name} of {who} has no gradient: this stage did not run the backward "
              "pass of its own output (see hint 2)",
    },
    "grad_times_microbatches": {
        "zh": "{who}参数 {name} 的梯度是单进程的 {n_micro} 倍：最后一个 "
              "stage 每个 micro-batch 的 loss 要除以 micro-batch 数再反向（看提示 1）",
        "en": "the gradient of parameter {name} of {who} is {n_micro} times the single-process "
              "one: on the last stage, divide each micro-batch's loss by the number of "
              "micro-batches before the backward pass (see hint 1)",
    },
    "what_param_grad": {
        "zh": "{who}参数 {name} 的梯度",
        "en": "the gradient of parameter {name} of {who}",
    },
    "loss_none": {
        "zh": "{who}返回了 None：它应返回整个 batch 的 loss"
              "（各 micro-batch 的 loss / micro-batch 数之和）",
        "en": "{who} returned None: it should return the loss of the whole batch "
              "(the sum over micro-batches of loss / number of micro-batches)",
    },
    "loss_not_a_number": {
        "zh": "{who}应返回一个数（整个 batch 的 loss），实际得到 {type}",
        "en": "{who} should return a number (the loss of the whole batch), got {type}",
    },
    "what_loss": {
        "zh": "{who}返回的 loss",
        "en": "the loss {who} returned",
    },
    "executor_stage_in_flight": {
        "zh": "{who}上同时在途（已前向、未反向）的 micro-batch 最多有 {peak} 个，1F1B 中 stage s "
              "最多 min(p - s, m) = min({p} - {s}, {m}) = {bound} 个：每个 stage 的预热前向数不同"
              "（stage s 先做 p - s - 1 个），不能都照搬 stage 0 的顺序（看提示 1）",
        "en": "{who} had up to {peak} micro-batches in flight at once (forwarded, not yet "
              "backwarded); in 1F1B stage s holds at most min(p - s, m) = min({p} - {s}, {m}) = "
              "{bound}: each stage has its own number of warmup forwards (stage s does "
              "p - s - 1 first), not stage 0's order on every stage (see hint 1)",
    },
    "case_hidden_executor": {
        "zh": "隐藏用例 {n}：{stages} 个 stage，{micro} 个 micro-batch",
        "en": "Hidden case {n}: {stages} stages, {micro} micro-batches",
    },
    "case_hidden_pipelines": {
        "zh": "隐藏用例 {n}：两条 {stages} 级流水线 {{0, 1}} 和 {{2, 3}}（4 个 rank）",
        "en": "Hidden case {n}: two {stages}-stage pipelines {{0, 1}} and {{2, 3}} (4 ranks)",
    },
    "group_missing_likely": {
        "zh": "{error}\n很可能的原因：有一处通信没有传 group=group，或把进程组里的 rank 当成了全局 "
              "rank（send/recv 的 src/dst 要用 dist.get_process_group_ranks(group) 换成全局 rank；"
              "看提示 2）",
        "en": "{error}\nThe likely cause: a communication call without group=group, or a rank "
              "within the group used as a global one (send/recv's src/dst: map it through "
              "dist.get_process_group_ranks(group); see hint 2)",
    },
}
