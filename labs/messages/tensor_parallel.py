"""Messages of labs.tensor_parallel (notebook 2.2): layout errors, the experiments' conclusions
(``interpret_*``) and the figures."""

MESSAGES = {
    # --- words and separators ------------------------------------------------------------------
    "list_sep": {
        "zh": "、",
        "en": ", ",
    },

    # --- layout errors (comm, layers, model, dtensor) ------------------------------------------
    "split_dim": {
        "zh": "无法把大小为 {size} 的第 {dim} 维平均切成 {n} 份：请让它是张量并行规模 {n} 的倍数",
        "en": "cannot split dimension {dim} of size {size} into {n} equal chunks: make it a "
              "multiple of the tensor-parallel size {n}",
    },
    "reduce_scatter_dim": {
        "zh": "无法在 {n} 个 rank 上对大小为 {size} 的第 {dim} 维做 reduce-scatter：请让它是 {n} 的倍数",
        "en": "cannot reduce-scatter dimension {dim} of size {size} over {n} ranks: make it a "
              "multiple of {n}",
    },
    "shard_dim": {
        "zh": "无法把大小为 {size} 的第 {dim} 维平均切成 {stride} × {world_size} 份"
              "（张量并行规模 {world_size}）：请让它是 {multiple} 的倍数",
        "en": "cannot split dimension {dim} of size {size} into {stride} x {world_size} equal "
              "parts (tensor-parallel size {world_size}): make it a multiple of {multiple}",
    },
    "column_out_features": {
        "zh": "ColumnParallelLinear：张量并行规模 {tp} 不能整除 out_features={out_features}；"
              "请用 {divides} 的约数作为规模",
        "en": "ColumnParallelLinear: tensor-parallel size {tp} does not divide "
              "out_features={out_features}; use a size among the divisors of {divides}",
    },
    "column_out_features_stride": {
        "zh": "ColumnParallelLinear：张量并行规模 {tp} 不能整除 out_features={out_features} / "
              "{stride}；请用 {divides} 的约数作为规模",
        "en": "ColumnParallelLinear: tensor-parallel size {tp} does not divide "
              "out_features={out_features} / {stride}; use a size among the divisors of {divides}",
    },
    "row_in_features": {
        "zh": "RowParallelLinear：张量并行规模 {tp} 不能整除 in_features={in_features}；"
              "请用 {in_features} 的约数作为规模",
        "en": "RowParallelLinear: tensor-parallel size {tp} does not divide "
              "in_features={in_features}; use a size among the divisors of {in_features}",
    },
    "heads_not_divisible": {
        "zh": "张量并行规模 {tp} 不能整除 n_head={n_head}：每个 rank 必须运行完整的头（n_head/TP 个）；"
              "请从 {divisors} 中选 TP 规模",
        "en": "tensor-parallel size {tp} does not divide n_head={n_head}: each rank must run "
              "whole heads (n_head/TP); use a TP size among {divisors}",
    },
    "mesh_heads": {
        "zh": "mesh 大小 {tp} 不能整除 n_head={n_head}",
        "en": "mesh size {tp} does not divide n_head={n_head}",
    },
    "tp_positive": {
        "zh": "张量并行规模必须是正整数，实际是 {tp!r}",
        "en": "tensor-parallel size must be a positive integer, got {tp!r}",
    },
    "why_heads": {
        "zh": "每个 rank 运行完整的头",
        "en": "each rank runs whole heads",
    },
    "why_channels": {
        "zh": "每个 rank 持有 n_embd/TP 个通道",
        "en": "each rank holds n_embd/TP channels",
    },
    "why_vocab": {
        "zh": "lm_head 按词表切分",
        "en": "lm_head is split over the vocabulary",
    },
    "layout_problem": {
        "zh": "{name}={value}（{why}；约数：{divisors}）",
        "en": "{name}={value} ({why}; divisors: {divisors})",
    },
    "layout_problem_sep": {
        "zh": "，也不能整除 ",
        "en": ", nor ",
    },
    "layout_not_divisible": {
        "zh": "张量并行规模 {tp} 不能整除 {problems}；请用能整除它们全部的 TP 规模",
        "en": "tensor-parallel size {tp} does not divide {problems}; use a TP size that divides "
              "all of them",
    },
    "sequence_not_divisible": {
        "zh": "序列并行要切分序列：TP 规模 {tp} 不能整除序列长度 {seq_len}",
        "en": "sequence parallelism splits the sequence: TP size {tp} does not divide the "
              "sequence length {seq_len}",
    },
    "world_not_divisible": {
        "zh": "world size {world_size} 无法分成每组 {tp} 个 rank 的张量并行组：请让 world size 是 "
              "{tp} 的倍数，或从 {divisors} 中选 TP 规模",
        "en": "world size {world_size} cannot be split into tensor-parallel groups of {tp} ranks: "
              "use a world size that is a multiple of {tp}, or a TP size among {divisors}",
    },
    "world_groups": {
        "zh": "world size {world} 无法分成每组 {tp} 个 rank 的张量并行组：请从 {divisors} 中选 TP 规模",
        "en": "world size {world} cannot be split into tensor-parallel groups of {tp} ranks: "
              "use a TP size among {divisors}",
    },
    "dropout": {
        "zh": "dropout={dropout}：并行模型要与参考模型比较，而 dropout 从全局随机数生成器取随机数；请用 0.0",
        "en": "dropout={dropout}: the parallel model is compared with the reference, and "
              "dropout draws from the global RNG; use 0.0",
    },

    # --- experiments: bad input ----------------------------------------------------------------
    "layers_not_divisible": {
        "zh": "{n_layer} 层无法平均分成 {world} 个 stage",
        "en": "{n_layer} layers cannot be split into {world} equal stages",
    },
    "unknown_pairing": {
        "zh": "pairing={pairing!r}：请用其中之一：{pairings}",
        "en": "pairing={pairing!r}: use one of {pairings}",
    },
    "check_gradient": {
        "zh": "{name} 的梯度",
        "en": "gradient of {name}",
    },
    "check_weight": {
        "zh": "更新后的权重 {name}",
        "en": "weight {name} after the step",
    },
    "check_hand_written": {
        "zh": "手写版 {name}",
        "en": "hand-written {name}",
    },
    "check_dtensor": {
        "zh": "DTensor 版 {name}",
        "en": "DTensor {name}",
    },

    # --- why a CPU run differs from GPUs -------------------------------------------------------
    "crowded": {
        "zh": "gloo 的集合通信由 CPU 线程执行、经本机的回环网络（loopback）传输，要占用与计算相同的核，"
              "而不是像 GPU 上那样走 NVLink、由专门的硬件搬运数据",
        "en": "gloo runs its collectives on CPU threads over the machine's loopback network, on "
              "the same cores as the compute, instead of going over NVLink with dedicated "
              "hardware moving the data as on GPUs",
    },
    "crowded_cores": {
        "zh": "{ranks} 个 rank 挤在 {cores} 个 CPU 核上，互相抢核；gloo 的集合通信由 CPU 线程执行、"
              "经本机的回环网络（loopback）传输，要占用与计算相同的核，而不是像 GPU 上那样走 NVLink、"
              "由专门的硬件搬运数据",
        "en": "{ranks} ranks are crammed onto {cores} CPU cores and compete for them; gloo runs "
              "its collectives on CPU threads over the machine's loopback network, on the same "
              "cores as the compute, instead of going over NVLink with dedicated hardware moving "
              "the data as on GPUs",
    },

    # --- interpret_layerwise -------------------------------------------------------------------
    "layerwise_head": {
        "zh": "{n} 个 rank 的忙碌占比 {shares}，合计 {total:.0%}；各 stage 计算量相同时，"
              "每个 rank 的理想值是 1/{n} = {ideal:.0%}。",
        "en": "Busy share of the {n} ranks: {shares}, {total:.0%} in total; with the same "
              "compute per stage, the ideal per rank is 1/{n} = {ideal:.0%}.",
    },
    "layerwise_overlapping": {
        "zh": "结论：合计超过 100%，说明有两个 rank 在同一时刻计算。层间并行的依赖链不允许这样，"
              "这是计时误差（例如某个 rank 的计时起点晚了），请重新运行这个单元格。",
        "en": "Conclusion: the total is above 100 %, so two ranks computed at the same moment. "
              "The dependency chain of layer-wise parallelism does not allow that: it is a "
              "timing error (e.g. one rank's clock started late); run this cell again.",
    },
    "layerwise_serial": {
        "zh": "结论：合计不超过 100%，任一时刻至多一个 rank 在计算，平均每个 rank 只忙 {mean:.0%}："
              "显存分开了，计算没有并行。",
        "en": "Conclusion: the total is at most 100 %: at most one rank computes at any moment, "
              "and each rank is busy only {mean:.0%} of the time on average. The memory is "
              "split, the compute is not parallel.",
    },
    "layerwise_idle": {
        "zh": "{conclusion}其余 {rest:.0%} 的时间没有任何 rank 在计算：send/recv、进程间的等待和 "
              "Python 的开销在这台机器上和这个小模型的计算一样长。",
        "en": "{conclusion} During the other {rest:.0%} of the time no rank computes: on this "
              "machine send/recv, the waiting between processes and Python's overhead take as "
              "long as this small model's compute.",
    },

    # --- interpret_overlap ---------------------------------------------------------------------
    "overlap_times": {
        "zh": "不重叠 {no_ms:.1f} ms，重叠 {yes_ms:.1f} ms，加速比 {speedup:.2f}×。",
        "en": "Without overlap {no_ms:.1f} ms, with overlap {yes_ms:.1f} ms, speedup "
              "{speedup:.2f}×.",
    },
    "overlap_times_bound": {
        "zh": "不重叠 {no_ms:.1f} ms，重叠 {yes_ms:.1f} ms，加速比 {speedup:.2f}×；"
              "重叠最多能藏起 all-reduce（{comm_ms:.1f} ms）与权重梯度（{wgrad_ms:.1f} ms）"
              "中较短的一个，即最多 {best:.2f}×。",
        "en": "Without overlap {no_ms:.1f} ms, with overlap {yes_ms:.1f} ms, speedup "
              "{speedup:.2f}×; overlap can hide at most the shorter of the all-reduce "
              "({comm_ms:.1f} ms) and the weight gradient ({wgrad_ms:.1f} ms), i.e. at most "
              "{best:.2f}×.",
    },
    "overlap_gain": {
        "zh": "结论：在这台机器上重叠有效，一步省下了 {saved:.0%}：all-reduce 在后台进行时，"
              "权重梯度的计算没有停下来等它。",
        "en": "Conclusion: on this machine the overlap works, a step saves {saved:.0%}: while "
              "the all-reduce runs in the background, the weight gradient's compute does not "
              "stop to wait for it.",
    },
    "overlap_gain_fewer_cores": {
        "zh": "{conclusion}（这里的核比 rank 少，收益仍可能随机器负载变化。）",
        "en": "{conclusion} (There are fewer cores than ranks here, so the gain may still vary "
              "with the machine's load.)",
    },
    "overlap_noise": {
        "zh": "结论：在这台机器上两种方式相差不到 5%，在计时噪声之内：重叠没有带来可见的收益。",
        "en": "Conclusion: on this machine the two differ by less than 5 %, within the timing "
              "noise: the overlap brings no visible gain.",
    },
    "overlap_slower": {
        "zh": "结论：在这台机器上重叠反而慢了 {slower:.0%}。",
        "en": "Conclusion: on this machine the overlap is even {slower:.0%} slower.",
    },
    "overlap_why": {
        "zh": "{conclusion}原因：{crowded}，所以\"同时\"通信和计算其实是在抢同一批核。"
              "在 GPU 上，NCCL 的通信在单独的 CUDA 流上进行，由 NVLink / 网卡的 DMA 和少量 SM 完成，"
              "能和计算真正并行，省下的时间接近上面的上限。",
        "en": "{conclusion} Why: {crowded}, so communicating and computing \"at the same time\" "
              "actually compete for the same cores. On GPUs, NCCL communicates on a separate "
              "CUDA stream, done by the DMA engines of NVLink / the network card and a few SMs, "
              "truly in parallel with the compute, and the time saved comes close to the bound "
              "above.",
    },

    # --- interpret_tp_scaling ------------------------------------------------------------------
    "tp_share_rising": {
        "zh": "通信占比随 TP 增大：{trend}，与预期一致（每层 4 次 all-reduce 的字节数不随 t 减少）。",
        "en": "The communication share grows with TP: {trend}, as expected (the bytes of the 4 "
              "all-reduces per layer do not shrink with t).",
    },
    "tp_share_not_rising": {
        "zh": "通信占比没有随 TP 单调上升（{trend}），与一般预期不同：这次的计时受机器负载影响较大，"
              "可以重新运行。",
        "en": "The communication share does not rise steadily with TP ({trend}), unlike the "
              "general expectation: this time the timing was strongly affected by the machine's "
              "load; you can run it again.",
    },
    "tp_compute_slower": {
        "zh": "TP={t} 的计算反而是 TP=1 的 {ratio:.0%}：{t} 个 rank 加上 gloo 的通信线程在这台机器上"
              "（{cores} 个核）分不到各自的核，计时受机器负载影响，可以重新运行。",
        "en": "The compute at TP={t} is even {ratio:.0%} of TP=1's: {t} ranks plus gloo's "
              "communication threads do not get a core each on this machine ({cores} cores), "
              "so the timing depends on the machine's load; you can run it again.",
    },
    "tp_compute_scaled": {
        "zh": "TP={t} 的计算是 TP=1 的 {ratio:.0%}（理想 1/{t} = {ideal:.0%}）：按 1/t 缩短了。",
        "en": "The compute at TP={t} is {ratio:.0%} of TP=1's (ideal 1/{t} = {ideal:.0%}): it "
              "shrank as 1/t.",
    },
    "tp_compute_few_cores": {
        "zh": "TP={t} 的计算是 TP=1 的 {ratio:.0%}，没有缩短到 1/{t} = {ideal:.0%}："
              "{t} 个 rank 只有 {cores} 个核，每个 rank 分不到一个完整的核。",
        "en": "The compute at TP={t} is {ratio:.0%} of TP=1's, not down to 1/{t} = {ideal:.0%}: "
              "{t} ranks have only {cores} cores, so no rank gets a whole core.",
    },
    "tp_compute_small_matrices": {
        "zh": "TP={t} 的计算是 TP=1 的 {ratio:.0%}，没有缩短到 1/{t} = {ideal:.0%}："
              "小矩阵的乘法效率更低，固定开销不随 t 缩短。",
        "en": "The compute at TP={t} is {ratio:.0%} of TP=1's, not down to 1/{t} = {ideal:.0%}: "
              "small matrix products are less efficient, and fixed overheads do not shrink "
              "with t.",
    },
    "tp_efficiency_falling": {
        "zh": "并行效率 T₁/(t·T_t)：{effs}，随 TP 下降。",
        "en": "Parallel efficiency T₁/(t·T_t): {effs}, falling with TP.",
    },
    "tp_efficiency_noisy": {
        "zh": "并行效率 T₁/(t·T_t)：{effs}，这次没有随 TP 单调下降（计时噪声）。",
        "en": "Parallel efficiency T₁/(t·T_t): {effs}, this time not falling steadily with TP "
              "(timing noise).",
    },
    "tp_slower_than_one": {
        "zh": "{efficiency}TP={degrees} 的一步甚至比单进程（TP=1）还慢：{crowded}。",
        "en": "{efficiency} A step at TP={degrees} is even slower than one process (TP=1): "
              "{crowded}.",
    },
    "tp_conclusion_expected": {
        "zh": "结论：TP 不能无限扩展，这台机器上测到的正是这个趋势。在 GPU + NVLink 上通信快得多，"
              "曲线更平缓，但字节数不减、占比上升的趋势相同，所以 Megatron 把 TP 限制在一个 NVLink 节点"
              "（≤ 8 卡）之内。",
        "en": "Conclusion: TP does not scale without limit, and this machine measured exactly "
              "that trend. On GPUs with NVLink the communication is much faster and the curve "
              "flatter, but the bytes do not shrink and the share rises all the same, which is "
              "why Megatron keeps TP within one NVLink node (≤ 8 GPUs).",
    },
    "tp_conclusion_unexpected": {
        "zh": "结论：这次的测量没有显示出预期的趋势（见上）；公式（第 3 节）给出的字节数不随 t 减少，"
              "在 GPU 上通信占比会随 t 上升。",
        "en": "Conclusion: this measurement does not show the expected trend (see above); the "
              "bytes the formula gives (section 3) do not shrink with t, and on GPUs the "
              "communication share rises with t.",
    },

    # --- interpret_activations -----------------------------------------------------------------
    "act_tp2": {
        "zh": "显存：TP=2 每个 rank 的激活值是 TP=1 的 {ratio:.0%}，不是 50%：复制的区域"
              "（LayerNorm 输入、残差、完整的 logits）没有切开。",
        "en": "Memory: at TP=2 each rank's activations are {ratio:.0%} of TP=1's, not 50 %: "
              "the replicated regions (LayerNorm inputs, residuals, the full logits) are not "
              "split.",
    },
    "act_tp2_sp": {
        "zh": "{memory}加上序列并行是 {ratio:.0%}。",
        "en": "{memory} With sequence parallelism they are {ratio:.0%}.",
    },
    "act_time_slower": {
        "zh": "时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，反而更慢：{crowded}，"
              "对这么小的层，all-reduce 比省下的计算还贵。在 GPU + NVLink 上，大模型的 TP=2 会更快。",
        "en": "Time: a step at TP=2 takes {ratio:.2f}× TP=1's, slower instead of faster: "
              "{crowded}; for layers this small the all-reduce costs more than the compute it "
              "saves. On GPUs with NVLink, TP=2 of a large model is faster.",
    },
    "act_time_faster": {
        "zh": "时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，比单进程快。",
        "en": "Time: a step at TP=2 takes {ratio:.2f}× TP=1's, faster than one process.",
    },
    "act_time_noise": {
        "zh": "时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，差别在计时噪声之内。",
        "en": "Time: a step at TP=2 takes {ratio:.2f}× TP=1's, a difference within the timing "
              "noise.",
    },
    "act_ckpt_head": {
        "zh": "检查点：激活值降到 TP=1 的 {bytes_ratio:.0%}，一步的时间是 {cost_ratio:.2f}×；"
              "预期约 1.33×（多一次前向，前向约占前向 + 反向的 1/3）",
        "en": "Checkpointing: the activations drop to {bytes_ratio:.0%} of TP=1's, a step takes "
              "{cost_ratio:.2f}×; expected about 1.33× (one more forward, and the forward is "
              "about 1/3 of forward + backward)",
    },
    "act_ckpt_expensive": {
        "zh": "{head}。这次比预期贵：重算的前向里还有 Python 与自动求导的固定开销，小模型上它们占比大；"
              "这台机器的计时也有噪声（可以重新运行）。",
        "en": "{head}. This time it costs more than expected: the recomputed forward also "
              "carries the fixed overheads of Python and autograd, a large share for a small "
              "model; and this machine's timing is noisy (you can run it again).",
    },
    "act_ckpt_cheap": {
        "zh": "{head}。这次比预期便宜：计时噪声比一次前向还大，可以重新运行。",
        "en": "{head}. This time it costs less than expected: the timing noise is larger than "
              "one forward; you can run it again.",
    },
    "act_ckpt_expected": {
        "zh": "{head}，与预期相符。",
        "en": "{head}, as expected.",
    },
    "act_conclusion": {
        "zh": "结论：激活值要靠序列并行和检查点来省，代价是通信次数不变、多一次前向，"
              "所以大模型训练几乎总是 TP + SP + 检查点一起用。",
        "en": "Conclusion: activations are saved by sequence parallelism and checkpointing, at "
              "the price of the same number of collectives and one more forward, which is why "
              "large models almost always train with TP + SP + checkpointing together.",
    },

    # --- figures (plots.plot_compute_vs_comm) --------------------------------------------------
    "fig_compute": {
        "zh": "计算",
        "en": "compute",
    },
    "fig_communication": {
        "zh": "通信（含等待）",
        "en": "communication (incl. waiting)",
    },
    "fig_step_time": {
        "zh": "每个 rank 每步的耗时（ms）",
        "en": "time per step per rank (ms)",
    },
    "fig_efficiency_legend": {
        "zh": "效率 T1/(t·Tt)",
        "en": "efficiency T1/(t*Tt)",
    },
    "fig_efficiency": {
        "zh": "并行效率",
        "en": "parallel efficiency",
    },
}
