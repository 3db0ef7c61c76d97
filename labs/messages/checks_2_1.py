"""Messages of the checks of notebook 2.1, data parallelism (labs.exercises.data_parallel_checks).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

MESSAGES = {
    "case_grads": {
        "zh": "用例 {n}：{world_size} 个 rank，MLP {sizes}，全局 batch {batch}",
        "en": "Case {n}: {world_size} ranks, MLP {sizes}, global batch {batch}",
    },
    "grad_is_none": {
        "zh": "rank {rank} 上有参数的 .grad 变成了 None",
        "en": "on rank {rank}, a parameter's .grad became None",
    },
    "what_grad": {
        "zh": "参数 {name} 的梯度",
        "en": "the gradient of parameter {name}",
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
    "ready_made_optimizer": {
        "zh": "本练习不能使用现成的 {shown}：要自己写出参数的划分、本地优化器和 broadcast（看提示 2）",
        "en": "This exercise may not use the ready-made {shown}: write the partition of the "
              "parameters, the local optimizer and the broadcast yourself (see hint 2)",
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
    "no_local_optimizer": {
        "zh": "rank {rank} 上找不到本地优化器：请把它存在 self.optim 中（看提示 2）",
        "en": "no local optimizer found on rank {rank}: keep it in self.optim (see hint 2)",
    },
    "foreign_tensor": {
        "zh": "rank {rank} 的本地优化器里有不属于模型的张量：它应该直接更新模型自己的参数（看提示 2）",
        "en": "the local optimizer of rank {rank} holds tensors that are not the model's: it "
              "should update the model's own parameters (see hint 2)",
    },
    "full_state": {
        "zh": "rank {rank} 的优化器状态有 {held} 个元素，覆盖了全部 {total} 个参数："
              "ZeRO-1 中每个 rank 只为自己那一片参数保存优化器状态（看提示 1）",
        "en": "the optimizer state of rank {rank} has {held} elements, covering all {total} "
              "parameters: in ZeRO-1 each rank keeps optimizer state only for its own shard of "
              "the parameters (see hint 1)",
    },
    "shared_owner": {
        "zh": "第 {index} 个参数张量在 rank {ranks} 上都有优化器状态：每个参数只能由一个 rank 持有和更新（看提示 1）",
        "en": "parameter tensor {index} has optimizer state on ranks {ranks}: each parameter "
              "must be held and updated by one rank only (see hint 1)",
    },
    "no_owner": {
        "zh": "第 {index} 个参数张量在哪个 rank 上都没有优化器状态：每个参数都要分给一个 rank（看提示 1）",
        "en": "parameter tensor {index} has optimizer state on no rank: every parameter must be "
              "given to one rank (see hint 1)",
    },
    "unbalanced": {
        "zh": "各 rank 持有的参数元素数是 {loads}，不够均衡：请按大小划分，从大到小把每个张量"
              "分给目前元素最少的 rank（看提示 1）",
        "en": "the ranks hold {loads} parameter elements, not balanced enough: partition by "
              "size, giving each tensor, largest first, to the rank with the fewest elements so "
              "far (see hint 1)",
    },
    "case_zero1": {
        "zh": "用例 {n}：{world_size} 个 rank，{optimizer}，MLP {sizes}",
        "en": "Case {n}: {world_size} ranks, {optimizer}, MLP {sizes}",
    },
    "sgd_momentum": {
        "zh": "带动量的 SGD",
        "en": "SGD with momentum",
    },
    "step_without_communication": {
        "zh": "rank {rank} 的 step() 没有任何通信：ZeRO-1 中每个 rank 只更新自己那一片参数，"
              "再把更新后的参数 broadcast 给其他 rank（看提示 2）；在每个 rank 上更新全部参数"
              "等于没有分片。",
        "en": "step() on rank {rank} communicated nothing: in ZeRO-1 each rank updates only its "
              "own shard, then broadcasts the updated parameters to the others (see hint 2); "
              "updating every parameter on every rank is no sharding at all.",
    },
    "case_hidden_groups": {
        "zh": "隐藏用例 {n}：4 个 rank 分成两个进程组 {{0, 1}} 和 {{2, 3}}，各自求平均",
        "en": "Hidden case {n}: 4 ranks in two process groups {{0, 1}} and {{2, 3}}, each "
              "averaging on its own",
    },
    "group_ignored": {
        "zh": "rank {rank} 的梯度是全部 4 个 rank 的平均，而不是它所在进程组的平均："
              "all_reduce 和 get_world_size 都要传 group=group（看提示 1）",
        "en": "rank {rank}'s gradients are the average over all 4 ranks, not over its own "
              "process group: pass group=group to both all_reduce and get_world_size (see hint 1)",
    },
    "grad_not_in_place": {
        "zh": "rank {rank} 上 {name} 的 .grad 换成了一个新张量：题目要求原地（in place）修改 p.grad"
              "（例如 dist.all_reduce(p.grad) 再 p.grad.div_(...)）",
        "en": "on rank {rank}, the .grad of {name} was replaced by a new tensor: the statement "
              "asks to change p.grad in place (e.g. dist.all_reduce(p.grad), then "
              "p.grad.div_(...))",
    },
    "average_refused": {
        "zh": "本练习不能调用 {shown}：要用 dist.all_reduce 自己对梯度求平均",
        "en": "This exercise may not call {shown}: average the gradients yourself with "
              "dist.all_reduce",
    },
    "memory_refused": {
        "zh": "本练习不能调用 {shown}（题目说“不要调用 labs.memory”）：要自己按每个参数的字节数算出总和",
        "en": "This exercise may not call {shown} (the statement says \"do not call labs.memory\"): "
              "add up the bytes per parameter yourself",
    },
    "deadlock_broadcast": {
        "zh": "这通常是死锁：各 rank 都在等通信。broadcast 是集合通信：组里每个 rank 都要对每个"
              "参数调用它，顺序相同、src 相同（持有者的全局 rank）、group 相同——包括不归自己"
              "持有的参数（看提示 2）。",
        "en": "This is usually a deadlock: every rank is waiting on communication. broadcast is a "
              "collective: every rank of the group calls it for every parameter, in the same "
              "order, with the same src (the owner's global rank) and the same group, including "
              "the parameters it does not own (see hint 2).",
    },
    "not_updated_here": {
        "zh": "rank {rank} 上参数 {name} 在 {steps} 步之后还是初始值：它不归这个 rank 持有，"
              "更新后要由持有者 broadcast 过来（看提示 2）",
        "en": "on rank {rank}, parameter {name} still has its initial value after {steps} steps: "
              "this rank does not own it, so its owner must broadcast it after the update "
              "(see hint 2)",
    },
    "grad_times_world_size": {
        "zh": "rank {rank} 上 {name} 的梯度正好是正确值的 {n} 倍：all_reduce 求的是和，"
              "还要除以进程组的大小 {n}（dist.get_world_size(group)）",
        "en": "on rank {rank}, the gradient of {name} is exactly {n} times the right one: "
              "all_reduce sums, so divide by the size of the group, {n} "
              "(dist.get_world_size(group))",
    },
}
