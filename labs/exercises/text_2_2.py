"""Messages of the checks of notebook 2.2, tensor and sequence parallelism
(labs.exercises.tensor_parallel_checks).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    "case_ranks": {
        "zh": "用例 {n}：{world_size} 个 rank",
        "en": "Case {n}: {world_size} ranks",
    },
    "case_hidden_two_groups": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank 分成两个 TP 组 {{0,1}} {{2,3}}",
        "en": "Hidden case {n}: {world_size} ranks in two TP groups {{0,1}} {{2,3}}",
    },
    "case_hidden_odd_positions": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，每个 rank 分到奇数个序列位置",
        "en": "Hidden case {n}: {world_size} ranks, an odd number of sequence positions each",
    },
    "what_copy_forward": {
        "zh": "CopyToRegion 的前向输出（f 的前向应是恒等）",
        "en": "the forward output of CopyToRegion (f's forward should be the identity)",
    },
    "what_copy_backward": {
        "zh": "CopyToRegion 反向传回的梯度（f 的反向应是组内 all-reduce）",
        "en": "the gradient CopyToRegion passes back (f's backward should be an all-reduce "
              "within the group)",
    },
    "what_reduce_forward": {
        "zh": "ReduceFromRegion 的前向输出（g 的前向应是组内 all-reduce）",
        "en": "the forward output of ReduceFromRegion (g's forward should be an all-reduce "
              "within the group)",
    },
    "what_reduce_backward": {
        "zh": "ReduceFromRegion 反向传回的梯度（g 的反向应是恒等）",
        "en": "the gradient ReduceFromRegion passes back (g's backward should be the identity)",
    },
    "what_input_after": {
        "zh": "调用 ReduceFromRegion 之后它的输入（g 不能改动输入：对一份拷贝做 all-reduce）",
        "en": "the input of ReduceFromRegion after the call (g must not change its input: "
              "all-reduce a copy)",
    },
    "what_column_output": {
        "zh": "输出（应是完整输出的第 r 块列）",
        "en": "the output (it should be block r of the full output's columns)",
    },
    "what_row_output": {
        "zh": "输出（应等于完整线性层的输出 x Wᵀ + b，每个 rank 上都一样）",
        "en": "the output (it should equal the full linear layer's output x Wᵀ + b, the same on "
              "every rank)",
    },
    "name_input_x": {
        "zh": "输入 x",
        "en": "the input x",
    },
    "what_mlp_output": {
        "zh": "MLP 的输出",
        "en": "the MLP's output",
    },
    "advice_f_g": {
        "zh": "检查 f（进入并行区域：前向恒等、反向 all-reduce）和 g"
              "（离开并行区域：前向 all-reduce、反向恒等）是否放对了位置",
        "en": "Check that f (entering the parallel region: identity forward, all-reduce "
              "backward) and g (leaving it: all-reduce forward, identity backward) are in the "
              "right places",
    },
    "no_grad": {
        "zh": "{name}：没有梯度（None）",
        "en": "{name}: no gradient (it is None)",
    },
    "what_named_grad": {
        "zh": "{name} 的梯度",
        "en": "the gradient of {name}",
    },
    "wrong_gradients": {
        "zh": "rank {rank}：前向输出正确，但这些梯度不对：{wrong}。正确的梯度：{right}。{advice}",
        "en": "rank {rank}: the forward output is right, but these gradients are wrong: {wrong}. "
              "The right gradients: {right}. {advice}",
    },
    "all_gradients_wrong": {
        "zh": "rank {rank}：前向输出正确，但所有梯度都不对：{wrong}。{advice}",
        "en": "rank {rank}: the forward output is right, but every gradient is wrong: {wrong}. "
              "{advice}",
    },
    "case_qkv": {
        "zh": "用例 3C={rows}, rank={rank}, TP={tp}",
        "en": "Case 3C={rows}, rank={rank}, TP={tp}",
    },
    "contiguous_block": {
        "zh": "rank {rank} 拿到的是融合权重中连续的一块（第 {first} 到 {last} 行）："
              "这样有的 rank 只有 q，有的只有 v。每个 rank 要从 q、k、v 三段中各取自己的那几个头",
        "en": "rank {rank} got one contiguous block of the fused weight (rows {first} to "
              "{last}): then some ranks hold only q and others only v. Each rank must take its "
              "own heads from each of the three parts q, k and v",
    },
    "return_two_tensors": {
        "zh": "应该返回 (weight 分片, bias 分片) 两个张量",
        "en": "should return two tensors, (weight shard, bias shard)",
    },
    "what_shards": {
        "zh": "返回的 (weight 分片, bias 分片)",
        "en": "the (weight shard, bias shard) returned",
    },
    "case_tp_bytes": {
        "zh": "用例 b={b}, s={s}, h={h}, TP={t}, {e} 字节/元素",
        "en": "Case b={b}, s={s}, h={h}, TP={t}, {e} bytes/element",
    },
    "case_sp": {
        "zh": "用例 {n}：{world_size} 个 rank，序列长 {seq}",
        "en": "Case {n}: {world_size} ranks, sequence length {seq}",
    },
    "what_gather_forward": {
        "zh": "SeqAllGather 的前向输出（组内各 rank 的序列分片沿第 1 维按 rank 顺序拼成完整序列，看提示 1）",
        "en": "the forward output of SeqAllGather (the sequence shards of the group's ranks "
              "concatenated along dim 1 in rank order into the full sequence; see hint 1)",
    },
    "what_gather_backward": {
        "zh": "SeqAllGather 反向传回的梯度（应是 reduce-scatter：组内各 rank 的梯度求和后"
              "本 rank 那一段序列；只切出自己那段而不求和就不对，看提示 1）",
        "en": "the gradient SeqAllGather passes back (it should be a reduce-scatter: this rank's "
              "part of the sequence of the sum of the group's gradients; cutting out your own "
              "part without summing is wrong; see hint 1)",
    },
    "what_scatter_forward": {
        "zh": "SeqReduceScatter 的前向输出（应是组内求和后本 rank 那一段序列，看提示 1）",
        "en": "the forward output of SeqReduceScatter (it should be this rank's part of the "
              "sequence of the group's sum; see hint 1)",
    },
    "what_scatter_backward": {
        "zh": "SeqReduceScatter 反向传回的梯度（应是 all-gather：组内各 rank 的梯度分片沿序列拼起来，看提示 1）",
        "en": "the gradient SeqReduceScatter passes back (it should be an all-gather: the "
              "gradient shards of the group's ranks concatenated along the sequence; see hint 1)",
    },
    "what_sp_output": {
        "zh": "sp_mlp_forward 的输出（完整 MLP 输出中本 rank 的那段序列；proj_b 只能在 "
              "reduce-scatter 之后加一次，看提示 1）",
        "en": "the output of sp_mlp_forward (this rank's part of the sequence of the full MLP's "
              "output; add proj_b only once, after the reduce-scatter; see hint 1)",
    },
    "name_x_shard": {
        "zh": "输入分片 x_shard",
        "en": "the input shard x_shard",
    },
    "name_proj_bias": {
        "zh": "c_proj.bias（只含本 rank 那段序列的贡献）",
        "en": "c_proj.bias (only the contribution of this rank's part of the sequence)",
    },
    "advice_sp_grads": {
        "zh": "检查 sp_mlp_forward 是否让梯度经过你的两个 Function"
              "（不要 detach，也不要绕过它们直接通信，看提示 2）",
        "en": "Check that sp_mlp_forward sends the gradients through your two Functions (do not "
              "detach, and do not communicate directly around them; see hint 2)",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the name of a compared value or a gradient: a label in front of a comparison's colon
    "name_input_x", "what_mlp_output",
})
