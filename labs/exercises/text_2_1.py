"""Messages of the checks of notebook 2.1, data parallelism (labs.exercises.data_parallel_checks,
labs.exercises.zero1_checks).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    "case_grads": {
        "zh": "用例 {n}：{world_size} 个 rank，MLP {sizes}，全局 batch {batch}",
        "en": "Case {n}: {world_size} ranks, MLP {sizes}, global batch {batch}",
    },
    "case_hidden_groups": {
        "zh": "隐藏用例 {n}：4 个 rank 分成两个进程组 {{0, 1}} 和 {{2, 3}}，各自求平均",
        "en": "Hidden case {n}: 4 ranks in two process groups {{0, 1}} and {{2, 3}}, each "
              "averaging on its own",
    },
    "what_grad": {
        "zh": "参数 {name} 的梯度",
        "en": "the gradient of parameter {name}",
    },
    "grad_not_in_place": {
        "zh": "rank {rank} 上 {name} 的 .grad 换成了一个新张量：题目要求原地（in place）修改 p.grad"
              "（例如 dist.all_reduce(p.grad) 再 p.grad.div_(...)）",
        "en": "on rank {rank}, the .grad of {name} was replaced by a new tensor: the statement "
              "asks to change p.grad in place (e.g. dist.all_reduce(p.grad), then "
              "p.grad.div_(...))",
    },
    "deadlock_collective": {
        "zh": "这通常是死锁：各 rank 都在等通信。集合通信要由组里每个 rank 以相同的顺序、"
              "相同的 src（全局 rank）和相同的 group 调用——包括 rank 自己不持有的参数。",
        "en": "This is usually a deadlock: every rank is waiting on communication. Every rank "
              "of the group must call each collective, in the same order, with the same src "
              "(a global rank) and the same group -- for the parameters it does not own too.",
    },
    "what_buckets": {
        "zh": "分桶结果",
        "en": "the buckets",
    },
    "case_zero_cap": {
        "zh": "用例：make_buckets([4], 0) 应抛出 ValueError",
        "en": "Case: make_buckets([4], 0) should raise ValueError",
    },
    "zero_cap_accepted": {
        "zh": "bucket_bytes <= 0 时应该抛出 ValueError（桶的大小必须为正）",
        "en": "bucket_bytes <= 0 should raise ValueError (a bucket's size must be positive)",
    },
    "what_total_bytes": {
        "zh": "总字节数",
        "en": "the total bytes",
    },
    "what_lr": {
        "zh": "学习率",
        "en": "the learning rate",
    },
    "case_case_study": {
        "zh": "用例 {call}（本章的案例）",
        "en": "Case {call} (this chapter's case study)",
    },
    "ten_epochs": {
        "zh": "得到 {got:.3g} 小时：这是 10 个 epoch 的时间除以 10 吗？"
              "请算一个 epoch 的迭代次数 × 每次迭代的秒数",
        "en": "got {got:.3g} hours: is that the time of 10 epochs divided by 10? Compute the "
              "iterations of one epoch × the seconds per iteration",
    },
    "what_hours": {
        "zh": "每个 epoch 的小时数",
        "en": "the hours per epoch",
    },
    "case_zero1": {
        "zh": "用例 {n}：{world_size} 个 rank，{optimizer}，MLP {sizes}",
        "en": "Case {n}: {world_size} ranks, {optimizer}, MLP {sizes}",
    },
    "sgd_momentum": {
        "zh": "带动量的 SGD",
        "en": "SGD with momentum",
    },
    "what_weight_after": {
        "zh": "训练 {steps} 步之后参数 {name} 的值",
        "en": "the value of parameter {name} after {steps} steps",
    },
    "not_bitwise_equal": {
        "zh": "rank {rank} 与 rank {first} 的参数 {name} 不是逐位相同：每个参数"
              "更新后要由它的持有者（owner）broadcast 给组里的所有 rank（看提示 2）",
        "en": "parameter {name} is not bitwise equal on rank {rank} and rank {first}: after its "
              "update, each parameter must be broadcast by its owner to every rank of the group "
              "(see hint 2)",
    },
    "params_sent": {
        "zh": "rank {rank} 在 {steps} 步里的通信共 {sent} 字节，应在 {least} 到 {most} 之间："
              "ZeRO-1 每一步由持有者把更新后的每个参数发给组里的其他 rank（例如 broadcast），"
              "每个参数一次（看提示 2）",
        "en": "rank {rank} communicated {sent} bytes in {steps} steps, expected {least} to "
              "{most}: in ZeRO-1, after each step every parameter is sent once, by its owner, to "
              "the other ranks of the group (a broadcast, say; see hint 2)",
    },
    "state_not_sharded": {
        "zh": "rank {rank} 上的优化器状态有 {held} 个元素（全部状态共 {full} 个），"
              "最多只能有 {most} 个（{g} 个 rank 按大小均衡划分时最满的那个）："
              "ZeRO-1 中每个 rank 只为自己那一片参数保存优化器状态（看提示 1）",
        "en": "the optimizer state on rank {rank} has {held} elements (the whole state has "
              "{full}), at most {most} expected (the fullest of {g} ranks in a partition "
              "balanced by size): in ZeRO-1 each rank keeps the state of its own shard of the "
              "parameters only (see hint 1)",
    },
    "state_total": {
        "zh": "组里各 rank 的优化器状态分别有 {held} 个元素，合起来应该正好是全部状态的 {full} 个："
              "每个参数都要分给一个 rank，且只分给一个（看提示 1）",
        "en": "the ranks of the group hold {held} optimizer-state elements, which should add up "
              "to the whole state, {full}: every parameter goes to exactly one rank (see hint 1)",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the name of a compared value: the label in front of a comparison's colon
    "what_buckets", "what_total_bytes", "what_lr", "what_hours",
    "sgd_momentum",  # an optimizer's name in a case's label
})
