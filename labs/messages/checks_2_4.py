"""Messages of the checks of notebook 2.4's graded exercises (labs.exercises.hybrid_checks).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

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
    "what_layout_none": {
        "zh": "返回值（没有能放下的配置时返回 None）",
        "en": "the return value (None when no layout fits)",
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
        "zh": "{what}应该是 {n} 个整数的 tuple，实际得到 {got!r}",
        "en": "{what} should be a tuple of {n} integers, got {got!r}",
    },
    "not_integers": {
        "zh": "{what}应该是整数，实际得到 {got!r}",
        "en": "{what} should be integers, got {got!r}",
    },
    "coords_wrong": {
        "zh": "rank {rank} 的坐标 (dp, pp, tp) 应为 {expected}，实际 {got}"
              "（TP 在最内层：rank = (dp·{pp} + pp)·{tp} + tp）",
        "en": "the coordinates (dp, pp, tp) of rank {rank} should be {expected}, got {got} "
              "(TP is innermost: rank = (dp·{pp} + pp)·{tp} + tp)",
    },
    "groups_not_lists": {
        "zh": "{what}应该是 rank 列表的列表，例如 [[0, 1], [2, 3]]，实际 {groups!r}",
        "en": "{what} should be a list of lists of ranks, e.g. [[0, 1], [2, 3]], got {groups!r}",
    },
    "groups_not_integers": {
        "zh": "{what}里应该都是整数 rank：{groups!r}",
        "en": "{what} should hold integer ranks only: {groups!r}",
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
    "part_optimizer": {
        "zh": "优化器状态（fp32 主权重和 Adam 的两个矩，12 B/参数）",
        "en": "optimizer states (fp32 master weights and Adam's two moments, 12 B/parameter)",
    },
    # --- exercise 4: choose a layout --------------------------------------------------------
    "layout_reversed": {
        "zh": "返回值的顺序反了：期望 (dp, pp, tp) = {expected}，你返回的 {got} 正是它倒过来的 "
              "(tp, pp, dp)。按 (dp, pp, tp) 的顺序返回",
        "en": "the order is reversed: expected (dp, pp, tp) = {expected}; your {got} is exactly "
              "that reversed, (tp, pp, dp). Return them in the order (dp, pp, tp)",
    },
    "layout_gpu_count": {
        "zh": "dp·pp·tp = {product}，不等于 {gpus} 张卡",
        "en": "dp·pp·tp = {product}, not the {gpus} GPUs",
    },
    "layout_tp": {
        "zh": "tp={tp} 必须整除 {heads} 个头并且不超过每节点的 {per_node} 张卡",
        "en": "tp={tp} must divide the {heads} heads and be at most the {per_node} GPUs of a node",
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
    "no_ready_made": {
        "zh": "本练习不能使用现成的 {shown}：进程组要自己用 dist.new_group "
              "创建，两层的切分和通信要自己写（可以用 f/g 算子，看提示 2）",
        "en": "this exercise may not use the ready-made {shown}: create the process groups "
              "yourself with dist.new_group, and write the split of both layers and their "
              "communication yourself (the f/g operators may help, see hint 2)",
    },
    "new_group_differs": {
        "zh": "第 {call} 次调用 dist.new_group 时各 rank 给的组不同（rank 0："
              "{first}，rank {other}：{theirs}）：每个 rank 都要按相同的"
              "顺序为每一个组调用 dist.new_group，包括自己不在其中的组（看提示 1）",
        "en": "call {call} of dist.new_group was given different groups on different ranks "
              "(rank 0: {first}, rank {other}: {theirs}): every rank must call dist.new_group "
              "for every group, in the same order, including the groups it is not in (see hint 1)",
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
    "groups_swapped": {
        "zh": "rank {rank} 在 {role} 组里的 all-reduce 用的是 {got}，那是它的另一个组；{role} 组应是 {want}："
              "TP 组和 DP 组用反了。TP 组是连续的 tp 个 rank，DP 组里的 rank 相隔 tp={tp}（看提示 1）",
        "en": "on rank {rank}, the all-reduce of the {role} group ran over {got}, which is the "
              "rank's other group; the {role} group is {want}: the TP and DP groups are swapped. "
              "A TP group is tp consecutive ranks, a DP group's ranks are tp={tp} apart "
              "(see hint 1)",
    },
    "group_membership_wrong": {
        "zh": "rank {rank} 在 {role} 组里的 all-reduce 用的是 {got}，应是 {want}：TP 组是连续的 tp 个 "
              "rank，DP 组里的 rank 相隔 tp={tp}（看提示 1）",
        "en": "on rank {rank}, the all-reduce of the {role} group ran over {got}; it should be "
              "{want}: a TP group is tp consecutive ranks, a DP group's ranks are tp={tp} apart "
              "(see hint 1)",
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
    "shard_times_dp": {
        "zh": "rank {rank} 的 {what}是正确值的 {dp} 倍：在 DP 组里 all_reduce 求和之后，"
              "还要除以 DP 组的大小 {dp}（看提示 1）",
        "en": "on rank {rank}, {what} is {dp} times the right value: after the all_reduce "
              "sum in the DP group, divide by the DP group's size {dp} (see hint 1)",
    },
    "shard_local_batch": {
        "zh": "rank {rank} 的 {what}只用了它自己那 1/{dp} 批数据：要在它的 DP 组里"
              "对梯度 all_reduce 求和再除以 dp（看提示 1）",
        "en": "on rank {rank}, {what} uses only the rank's own 1/{dp} of the batch: all_reduce the "
              "gradients (sum) in its DP group, then divide by dp (see hint 1)",
    },
    "shard_partial_sum": {
        "zh": "rank {rank} 的 {what}是按第二层输出的部分和算出来的：行并行的输出要在 TP 组里"
              " all-reduce（g 算子 reduce_from_tensor_parallel_region）之后再算 loss（看提示 1）",
        "en": "on rank {rank}, {what} was computed from the partial sums of the second "
              "layer's output: all-reduce the row-parallel output in the TP group (the g "
              "operator, reduce_from_tensor_parallel_region) before computing the loss "
              "(see hint 1)",
    },
    "rows_of_other_replicas": {
        "zh": "rank {rank}（DP 副本 {d}，共 {dp} 个）把第 {row} 行等 {count} 行不属于它的数据送进了"
              "矩阵乘法：每个 DP 副本只处理自己那 1/{dp} 批数据（第 {first}–{last} 行），"
              "题目要求先按 DP 切分 x 和 y（看提示 1）",
        "en": "rank {rank} (DP replica {d} of {dp}) fed {count} rows that are not its own, row "
              "{row} among them, into a matrix product: each DP replica processes only its 1/{dp} "
              "of the batch (rows {first}–{last}); the statement asks to split x and y over DP "
              "first (see hint 1)",
    },
    # --- 练习 6: one DP × PP × TP step (labs.exercises.three_d_checks) ----------------------
    "step3d_case": {
        "zh": "dp={dp}, pp={pp}, tp={tp}，每个 stage 一个 MLP {d} → {hidden} → {d}，batch {batch}",
        "en": "dp={dp}, pp={pp}, tp={tp}, each stage an MLP {d} → {hidden} → {d}, batch {batch}",
    },
    "step3d_case_hidden": {
        "zh": "隐藏用例 {n}：{what}",
        "en": "Hidden case {n}: {what}",
    },
    "step3d_what_loss": {
        "zh": "DP 副本 {d} 的 loss（最后一个 stage）",
        "en": "the loss of DP replica {d} (last stage)",
    },
    "step3d_what_weight": {
        "zh": "一步 SGD 之后的 {weight} 分片",
        "en": "the shard of {weight} after one SGD step",
    },
    "step3d_collective": {
        "zh": "本练习里只能用 all_reduce（TP 的 f/g 和 DP 的梯度平均）和 send/recv（stage 之间），"
              "不能用 {shown}（看提示 1）",
        "en": "this exercise allows only all_reduce (TP's f/g, the DP gradient average) and "
              "send/recv (between stages), not {shown} (see hint 1)",
    },
    "step3d_stage_computes_x": {
        "zh": "rank {rank}（stage {s}）把 x 的行送进了矩阵乘法：它在替 stage 0 计算。stage {s} "
              "只算自己的层，输入要用 dist.recv 从 stage 0 收（看提示 2）",
        "en": "rank {rank} (stage {s}) put rows of x into a matrix product: it computes stage 0's "
              "layers. Stage {s} computes only its own layers, on the activations it receives "
              "from stage 0 with dist.recv (see hint 2)",
    },
    "step3d_sent_wrong_peer": {
        "zh": "rank {rank}（stage {s}）向 rank {peer} 发送了数据：stage 之间只在同一 DP 副本、"
              "同一 TP 坐标的一对 rank 之间传，它的伙伴是 rank {partner}（rank ± tp，看提示 2）",
        "en": "rank {rank} (stage {s}) sent to rank {peer}: stages exchange data only between the "
              "pair of ranks with the same DP replica and TP index; its partner is rank {partner} "
              "(rank ± tp, see hint 2)",
    },
    "step3d_received_wrong_peer": {
        "zh": "rank {rank}（stage {s}）从 rank {peer} 接收了数据：stage 之间只在同一 DP 副本、"
              "同一 TP 坐标的一对 rank 之间传，它的伙伴是 rank {partner}（rank ± tp，看提示 2）",
        "en": "rank {rank} (stage {s}) received from rank {peer}: stages exchange data only "
              "between the pair of ranks with the same DP replica and TP index; its partner is "
              "rank {partner} (rank ± tp, see hint 2)",
    },
    "step3d_no_sent": {
        "zh": "rank {rank}（stage {s}）没有向 rank {partner} 发送任何东西：stage 0 发激活值，"
              "stage 1 发回激活值的梯度（看提示 2）",
        "en": "rank {rank} (stage {s}) sent nothing to rank {partner}: stage 0 sends its "
              "activations, stage 1 sends back their gradient (see hint 2)",
    },
    "step3d_no_received": {
        "zh": "rank {rank}（stage {s}）没有从 rank {partner} 接收任何东西：stage 1 收激活值，"
              "stage 0 收回激活值的梯度（看提示 2）",
        "en": "rank {rank} (stage {s}) received nothing from rank {partner}: stage 1 receives "
              "the activations, stage 0 receives their gradient back (see hint 2)",
    },
    "step3d_group_missing": {
        "zh": "rank {rank} 的一次 {role} all-reduce 用的是所有 rank {got}，应该只在 {role} 组 {want} 里："
              "很可能是漏了 group={group}（看提示 1）",
        "en": "on rank {rank}, an all-reduce of the {role} group ran over every rank {got}; it "
              "should run in the {role} group {want} only: most likely group={group} is missing "
              "(see hint 1)",
    },
    "step3d_deadlock": {
        "zh": "这通常是死锁：各 rank 都在等通信。stage 0 先 send 激活值、再 recv 梯度，stage 1 先 recv、"
              "再 send（看提示 2）；f/g 或 DP 平均里的 all_reduce 漏了 group= 时，它会去等另一个 "
              "stage 的 rank，而它们正在等 recv（看提示 1）。",
        "en": "This is usually a deadlock: every rank is waiting on communication. Stage 0 sends "
              "its activations, then receives the gradient; stage 1 receives, then sends (see "
              "hint 2). An all_reduce in f/g or in the DP average without group= waits for the "
              "ranks of the other stage, which are waiting in a recv (see hint 1).",
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
