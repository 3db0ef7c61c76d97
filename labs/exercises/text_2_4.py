"""Messages of the checks of notebook 2.4's graded exercises (labs.exercises.hybrid_checks).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- what a case is about (the labels are checks.case_*) -------------------------------
    "layout_case": {
        "zh": "N={n:.3g}, {layers} 层, {heads} 头, {gpus} 卡（每节点 {per_node}）, "
              "预算 {budget_gb:g} GB",
        "en": "N={n:.3g}, {layers} layers, {heads} heads, {gpus} GPUs ({per_node} per node), "
              "budget {budget_gb:g} GB",
    },
    "step_case": {
        "zh": "dp={dp}, tp={tp}，MLP {d_in} → {hidden} → {d_out}，batch {batch}",
        "en": "dp={dp}, tp={tp}, MLP {d_in} → {hidden} → {d_out}, batch {batch}",
    },
    # --- what is compared (the subject of a sentence) ---------------------------------------
    "what_coords": {
        "zh": "rank {rank} 的坐标",
        "en": "the coordinates of rank {rank}",
    },
    "what_groups": {
        "zh": "{dim} 组",
        "en": "the {dim} groups",
    },
    "what_state_bytes": {
        "zh": "每张卡的模型状态字节数",
        "en": "the model-state size per GPU in bytes",
    },
    "what_layout": {
        "zh": "返回的 (dp, pp, tp)",
        "en": "the returned (dp, pp, tp)",
    },
    "what_shard": {
        "zh": "{weight} 的梯度分片",
        "en": "the gradient shard of {weight}",
    },
    # --- exercises 1 and 2: coordinates and groups ------------------------------------------
    "not_a_tuple": {
        "zh": "{what}：应该是 {n} 个整数的 tuple，实际得到 {got!r}",
        "en": "{what}: expected a tuple of {n} integers, got {got!r}",
    },
    "coords_wrong": {
        "zh": "rank {rank} 的坐标 (dp, pp, tp) 应为 {expected}，实际 {got}"
              "（TP 在最内层：rank = (dp·{pp} + pp)·{tp} + tp）",
        "en": "the coordinates (dp, pp, tp) of rank {rank} should be {expected}, got {got} "
              "(TP is innermost: rank = (dp·{pp} + pp)·{tp} + tp)",
    },
    "groups_not_lists": {
        "zh": "{what}：应该是整数 rank 列表的列表，例如 [[0, 1], [2, 3]]，实际 {groups!r}",
        "en": "{what}: expected a list of lists of integer ranks, e.g. [[0, 1], [2, 3]], got "
              "{groups!r}",
    },
    "groups_wrong": {
        "zh": "{dim} 组不对：应有 {count} 组、每组 {size} 个 rank，"
              "例如 rank 0 所在的组是 {example}；实际得到 {got}",
        "en": "wrong {dim} groups: there should be {count} groups of {size} ranks each, e.g. "
              "rank 0's group is {example}; got {got}",
    },
    # --- exercise 3: model states per GPU ---------------------------------------------------
    "states_wrong": {
        "zh": "每张卡的模型状态应为 {want_gib:.2f} GiB（权重 {weights_gib:.2f} + 梯度 {grads_gib:.2f} + "
              "优化器状态 {optimizer_gib:.2f} GiB），你的结果是 {got_gib:.2f} GiB。{which}",
        "en": "the model states per GPU should be {want_gib:.2f} GiB (weights {weights_gib:.2f} + "
              "gradients {grads_gib:.2f} + optimizer states {optimizer_gib:.2f} GiB), yours are "
              "{got_gib:.2f} GiB. {which}",
    },
    "states_part_off": {
        "zh": "差别正好出在{part}上：按你的结果它是 {got_gib:.2f} GiB，应为 {want_gib:.2f} GiB"
              "（先看它该不该除以 tp·pp，再看这一级 ZeRO 是否把它按 dp 切开）。",
        "en": "The whole difference is in the {part}: by your result they are {got_gib:.2f} GiB, "
              "they should be {want_gib:.2f} GiB (check whether they are divided by tp·pp, then "
              "whether this ZeRO stage shards them over dp).",
    },
    "part_weights": {
        "zh": "权重（fp16，2 B/参数）",
        "en": "weights (fp16, 2 B/parameter)",
    },
    "part_grads": {
        "zh": "梯度（fp16，2 B/参数）",
        "en": "gradients (fp16, 2 B/parameter)",
    },
    "part_all": {
        "zh": "全部三部分",
        "en": "all three parts together",
    },
    "part_optimizer": {
        "zh": "优化器状态（fp32 主权重和 Adam 的两个矩，12 B/参数）",
        "en": "optimizer states (fp32 master weights and Adam's two moments, 12 B/parameter)",
    },
    # --- exercise 4: choose a layout --------------------------------------------------------
    "layout_reversed": {
        "zh": "{why}；而且 {got} 正是期望的 {expected} 倒过来的 (tp, pp, dp)：如果你是按这个顺序"
              "返回的，请按 (dp, pp, tp) 的顺序返回",
        "en": "{why}; and {got} is exactly the expected {expected} reversed, (tp, pp, dp): if "
              "that is the order you returned, return them in the order (dp, pp, tp)",
    },
    "layout_none_but_fits": {
        "zh": "期望 (dp, pp, tp) = {expected}，实际 None：有满足全部约束的布局，只有一个都放不下时"
              "才返回 None",
        "en": "expected (dp, pp, tp) = {expected}, got None: a layout meets every constraint; "
              "return None only when none does",
    },
    "layout_none_expected": {
        "zh": "期望 None（没有满足全部约束的布局），实际 {got}：{why}",
        "en": "expected None (no layout meets every constraint), got {got}: {why}",
    },
    "layout_gpu_count": {
        "zh": "dp·pp·tp = {product}，不等于 {gpus} 张卡",
        "en": "dp·pp·tp = {product}, not the {gpus} GPUs",
    },
    "layout_tp": {
        "zh": "tp={tp} 必须整除 {heads} 个头并且不超过每节点的 {per_node} 张卡",
        "en": "tp={tp} must divide the {heads} heads and be at most the {per_node} GPUs of a node",
    },
    "layout_pp": {
        "zh": "pp={pp} 必须整除 {layers} 层（每个 stage 的层数相同）",
        "en": "pp={pp} must divide the {layers} layers (every stage has as many layers)",
    },
    "layout_memory": {
        "zh": "这个配置每张卡要 {need_gb:.1f} GB，超过预算 {budget_gb:g} GB",
        "en": "this layout needs {need_gb:.1f} GB per GPU, over the budget of {budget_gb:g} GB",
    },
    "layout_not_best": {
        "zh": "能放下，但不是 tp·pp 最小（其次 tp 最大）的那一个",
        "en": "it fits, but it is not the one with the smallest tp·pp (then the largest tp)",
    },
    "layout_wrong": {
        "zh": "期望 (dp, pp, tp) = {expected}，实际 {got}：{why}",
        "en": "expected (dp, pp, tp) = {expected}, got {got}: {why}",
    },
    # --- exercise 5: one DP × TP step on real ranks ------------------------------------------
    "after_backward": {
        "zh": "（反向传播之后）",
        "en": " after the backward pass",
    },
    "group_of_pass": {
        "zh": "rank {rank} 的 {what}{phase}不在它的 {role} 组 {want} 里{note}："
              "f/g（前向的 g、反向的 f）在 TP 组里 all-reduce，反向传播之后的梯度平均在 DP 组里"
              "（看提示 1）",
        "en": "on rank {rank}, {what}{phase}: there only its {role} group {want} will "
              "do{note}: f/g (g in the forward pass, f in the backward pass) all-reduce in "
              "the TP group, the gradient average after the backward pass in the DP group "
              "(see hint 1)",
    },
    "groups_swapped": {
        "zh": "（它前向的 all-reduce 都在自己的 DP 组里，反向之后的梯度平均都在自己的 TP 组里："
              "TP 组和 DP 组用反了）",
        "en": " (its forward all-reduces all ran over its DP group and its gradient average "
              "over its TP group: the TP and DP groups are swapped)",
    },
    "tp_bytes": {
        "zh": "rank {rank} 在前向传播里于 TP 组 {group} 中 all-reduce 了 {got} 字节，而行并行层的输出是 "
              "{want} 字节：g 要把它恰好 all-reduce 一次（看提示 1）；每个 rank 只算自己的分片，"
              "不能算完整的 MLP 再切",
        "en": "rank {rank} all-reduced {got} B in its TP group {group} in the forward pass; the "
              "row-parallel layer's output is {want} B, which g all-reduces exactly once (see "
              "hint 1): each rank computes its own shard, never the whole MLP sliced afterwards",
    },
    "dp_bytes": {
        "zh": "rank {rank} 在 DP 组 {group} 中 all-reduce 了 {got} 字节，而它的两个梯度分片共 {want} "
              "字节：反向传播之后在 DP 组里把它们（分别或拼成一个）各 all-reduce 一次，再除以 dp"
              "（看提示 1）",
        "en": "rank {rank} all-reduced {got} B in its DP group {group}; its two gradient shards are "
              "{want} B: after the backward pass, all-reduce them once in the DP group (each, or "
              "both flattened into one), then divide by dp (see hint 1)",
    },
    "new_group_differs": {
        "zh": "第 {call} 次调用 dist.new_group 时各 rank 给的组不同（rank {other}："
              "{theirs}，另一个 rank：{first}）：每个 rank 都要按相同的"
              "顺序为每一个组调用 dist.new_group，包括自己不在其中的组（看提示 1）",
        "en": "call {call} of dist.new_group was given different groups on different ranks "
              "(rank {other}: {theirs}, another rank: {first}): every rank must call "
              "dist.new_group for every group, in the same order, including the groups it is not "
              "in (see hint 1)",
    },
    "new_group_missing": {
        "zh": "rank {rank} 没有为组 {group} 调用 dist.new_group：每个 rank 都要为每一个"
              " TP 组和每一个 DP 组调用 dist.new_group，包括自己不在其中的组（看提示 1）",
        "en": "rank {rank} did not call dist.new_group for the group {group}: every rank must "
              "call dist.new_group for every TP group and every DP group, including the groups "
              "it is not in (see hint 1)",
    },
    "new_group_order": {
        "zh": "rank {rank} 调用 dist.new_group 的组或顺序与 rank 0 不同（rank 0：{first}；"
              "rank {rank}：{calls}）：每个 rank 都要按相同的顺序创建所有的组（看提示 1）",
        "en": "rank {rank} called dist.new_group with other groups or in another order than "
              "rank 0 (rank 0: {first}; rank {rank}: {calls}): every rank must create all the "
              "groups in the same order (see hint 1)",
    },
    "not_two_tensors": {
        "zh": "rank {rank} 应该返回两个张量 (w1 的梯度分片, w2 的梯度分片)，实际得到 {got!r}（看提示 2）",
        "en": "rank {rank} should return two tensors (gradient shard of w1, gradient shard of "
              "w2), got {got!r} (see hint 2)",
    },
    "shard_shape": {
        "zh": "rank {rank} 的 {what}形状应为 {expected}，实际 {got}："
              "列并行的第一层按输出切 w1 的行（dim 0），行并行的第二层按输入切 w2 的列"
              "（dim 1），每个 rank 返回自己那一片的梯度（看提示 2）",
        "en": "on rank {rank}, {what} should have shape {expected}, got {got}: the "
              "column-parallel first layer splits the rows of w1 (dim 0) by output, the "
              "row-parallel second layer splits the columns of w2 (dim 1) by input, and each "
              "rank returns the gradient of its own slice (see hint 2)",
    },
    "shard_other_rank": {
        "zh": "rank {rank} 返回的是 TP 坐标 {other} 的 {what}，它的 TP 坐标是 {t}："
              "TP 在最内层，rank = dp_index·{tp} + tp_index（看提示 1）",
        "en": "rank {rank} returned {what} of TP coordinate {other}, but its TP coordinate "
              "is {t}: TP is innermost, rank = dp_index·{tp} + tp_index (see hint 1)",
    },
    # --- exercise 6: one DP × PP × TP step (labs.exercises.three_d_checks) ----------------------
    "step3d_case": {
        "zh": "dp={dp}, pp={pp}, tp={tp}，每个 stage 一个 MLP {d} → {hidden} → {d}，batch {batch}",
        "en": "dp={dp}, pp={pp}, tp={tp}, each stage an MLP {d} → {hidden} → {d}, batch {batch}",
    },
    "p2p_bytes": {
        "zh": "rank {rank}（stage {s}）的 {op} 共 {got} 字节，stage 之间每个方向应恰好传 {want} 字节："
              "前向是本副本的激活值，反向是它的梯度（看提示 2）",
        "en": "rank {rank} (stage {s}) moved {got} B by {op}; the stage boundary carries exactly "
              "{want} B each way: the replica's activations forward, their gradient back (see "
              "hint 2)",
    },
    "step3d_what_loss": {
        "zh": "DP 副本 {d} 的 loss（最后一个 stage）",
        "en": "the loss of DP replica {d} (last stage)",
    },
    "step3d_what_weight": {
        "zh": "一步 SGD 之后的 {weight} 分片",
        "en": "the shard of {weight} after one SGD step",
    },
    "step3d_not_three": {
        "zh": "rank {rank} 应该返回 (loss 或 None, [w1 分片的梯度, w2 分片的梯度], "
              "[更新后的 w1 分片, w2 分片])，实际得到 {got!r}（看提示 3）",
        "en": "rank {rank} should return (loss or None, [grad of its w1 shard, grad of its w2 "
              "shard], [its w1 shard, w2 shard after the step]), got {got!r} (see hint 3)",
    },
    "step3d_loss_missing": {
        "zh": "rank {rank} 在最后一个 stage 上，应该返回它这个 DP 副本的 loss（一个数），"
              "实际得到 {got!r}",
        "en": "rank {rank} is on the last stage and should return its DP replica's loss (a "
              "number), got {got!r}",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "what_groups",  # the name of a compared value: the label in front of a comparison's colon
})
