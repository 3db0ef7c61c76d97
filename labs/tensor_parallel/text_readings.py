"""Messages of labs.tensor_parallel.readings (notebook 2.2): what the measurements say
(``interpret_*``), in both languages, including the impossible measurements they refuse
(noise, clock skew) and what to rerun. Only text: no logic.

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
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

    "layerwise_out_of_order_forward": {
        "zh": "结论：这次的计时不能下结论。rank {later} 的前向在 rank {earlier} 的前向结束前 "
              "{ms:.1f} ms 就开始了，而它要等 recv 收到数据才能开始：这不可能发生，说明各进程的"
              "计时没有对齐或被噪声打乱（机器上还有别的程序在抢 CPU）。请在机器空闲时重新运行"
              "上面的 labs.launch 单元格和这个单元格。",
        "en": "Conclusion: this timing supports no conclusion. Rank {later}'s forward pass starts "
              "{ms:.1f} ms before rank {earlier}'s forward pass ends, yet it has to wait for its "
              "recv: that cannot happen, so the processes' clocks disagree or noise scrambled the "
              "timing (other programs compete for the CPU). Rerun the labs.launch cell above "
              "and this cell when the machine is idle.",
    },
    "layerwise_out_of_order_backward": {
        "zh": "结论：这次的计时不能下结论。rank {later} 的反向在 rank {earlier} 的反向结束前 "
              "{ms:.1f} ms 就开始了，而它要等 recv 收到梯度才能开始：这不可能发生，说明各进程的"
              "计时没有对齐或被噪声打乱（机器上还有别的程序在抢 CPU）。请在机器空闲时重新运行"
              "上面的 labs.launch 单元格和这个单元格。",
        "en": "Conclusion: this timing supports no conclusion. Rank {later}'s backward pass "
              "starts {ms:.1f} ms before rank {earlier}'s backward pass ends, yet it has to wait "
              "for its recv: that cannot happen, so the processes' clocks disagree or noise "
              "scrambled the timing (other programs compete for the CPU). Rerun the labs.launch "
              "cell above and this cell when the machine is idle.",
    },
    "layerwise_uneven": {
        "zh": "各 rank 的占比并不相等（{low:.0%}～{high:.0%}）：rank 0 还要做嵌入，最后一个 rank "
              "还要算 lm_head 和 loss，而且这只是一步、没有预热，哪个 rank 碰上第一次分配内存或"
              "被别的进程抢走 CPU，它的条就长。层间并行的结论看合计，而不是每个 rank 是否正好 1/n。",
        "en": " The shares are not equal ({low:.0%} to {high:.0%}): rank 0 also embeds, the last "
              "rank also computes the lm_head and the loss, and this is a single step without "
              "warm-up, so a rank that meets its first memory allocation or loses the CPU to "
              "another process gets a longer bar. Layer-wise parallelism is judged by the total, "
              "not by each rank being exactly 1/n.",
    },

    # --- interpret_overlap ---------------------------------------------------------------------
    "overlap_impossible_time": {
        "zh": "不重叠 {no_ms:.1f} ms，重叠 {yes_ms:.1f} ms：时间不可能小于等于 0，这是计时错误，"
              "请重新运行上面的单元格。",
        "en": "Without overlap {no_ms:.1f} ms, with overlap {yes_ms:.1f} ms: a time cannot be "
              "zero or negative, this is a timing error; rerun the cell above.",
    },
    "overlap_above_bound": {
        "zh": "结论：这次的测量是噪声，不能下结论。加速比 {speedup:.2f}× 超过了上限 {best:.2f}×："
              "一步省下了 {saved_ms:.1f} ms，而重叠最多只能藏起 {hidden_ms:.1f} ms。两次运行之间"
              "机器的负载变了（别的程序在抢 CPU），差别来自负载而不是重叠。请在机器空闲时重新运行"
              "上面的单元格和这个单元格。",
        "en": "Conclusion: this measurement is noise and supports no conclusion. The speedup "
              "{speedup:.2f}× exceeds the bound {best:.2f}×: a step saved {saved_ms:.1f} ms while "
              "overlap can hide at most {hidden_ms:.1f} ms. The machine's load changed between "
              "the two runs (other programs compete for the CPU), so the difference comes from "
              "the load, not from the overlap. Rerun the cell above and this cell when the "
              "machine is idle.",
    },
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
    "crowded_some": {
        "zh": "{crowded}；TP={degrees} 时还有 {ranks} 个 rank 挤在 {cores} 个 CPU 核上，互相抢核",
        "en": "{crowded}; at TP={degrees}, moreover, {ranks} ranks are crammed onto {cores} CPU "
              "cores and compete for them",
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
}
