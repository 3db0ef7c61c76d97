"""Messages of labs.data_parallel: the readings of notebook 2.1's measurements, its figures,
the torchrun script and bad input.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- interpret_speedup -------------------------------------------------------------------
    "speedup_head": {
        "zh": "{n} 个 rank 比 1 个 rank 加速 {speedup:.2f} 倍（上限 {n} 倍），扩展效率 {efficiency:.0%}",
        "en": "{n} ranks are {speedup:.2f}x as fast as 1 rank (at most {n}x), scaling efficiency "
              "{efficiency:.0%}",
    },
    "speedup_near_linear": {
        "zh": "{head}：接近线性。这个模型一步的计算（1 个 rank {t1}）比梯度的 all-reduce 长得多，"
              "数据并行划算。",
        "en": "{head}: close to linear. One step's computation of this model ({t1} on 1 rank) is "
              "much longer than the all-reduce of its gradients, so data parallelism pays off.",
    },
    "speedup_some_gain": {
        "zh": "{head}：有加速，但离线性还有距离。",
        "en": "{head}: a speedup, but still some way from linear.",
    },
    "speedup_few_cores": {
        "zh": "本机只有 {cores} 个 CPU 核：{n} 个 rank 各占一个，笔记本内核和别的程序只能挤进同样的核，"
              "rank 之间还共用内存带宽和缓存。",
        "en": "This machine has only {cores} CPU cores: the {n} ranks take one each, the notebook's "
              "kernel and other programs have to squeeze onto the same cores, and the ranks share "
              "memory bandwidth and caches as well.",
    },
    "speedup_slower": {
        "zh": "{head}：比 1 个 rank 还慢。",
        "en": "{head}: slower than 1 rank.",
    },
    "speedup_none": {
        "zh": "{head}：几乎不加速。",
        "en": "{head}: hardly any speedup.",
    },
    "speedup_eaten": {
        "zh": "每一步的通信和等待抵消了多出来的算力。",
        "en": "Each step's communication and waiting cancel out the extra compute.",
    },
    "busy": {
        "zh": "测量时 load average {load} 高于核数 {cores}：有别的程序在抢核，加速比会偏低，"
              "请在空闲时重跑（`python -m labs.bench ddp`）。",
        "en": "While measuring, the load average {load} was above the {cores} cores: other "
              "programs were taking the cores and the speedup comes out low; run it again when "
              "the machine is idle (`python -m labs.bench ddp`).",
    },
    # --- interpret_compute_vs_comm -----------------------------------------------------------
    "compute_vs_comm_line": {
        "zh": "{name}：一次梯度 all-reduce（{size}）{comm}，前向+反向 {compute}，通信/计算 = {ratio:.2f}。",
        "en": "{name}: one all-reduce of the gradients ({size}) {comm}, forward+backward "
              "{compute}, communication/compute = {ratio:.2f}.",
    },
    "compute_vs_comm_rule": {
        "zh": "符合规律：通信量只随参数量增长，计算量随参数量 × batch 增长，所以计算少的{light}通信占比高"
              "（{light_ratio:.2f}），计算多的{heavy}占比低（{heavy_ratio:.2f}）。",
        "en": "As the rule says: the traffic grows with the parameters only, the computation with "
              "parameters × batch, so the {light}, which computes less, has the higher share of "
              "communication ({light_ratio:.2f}) and the {heavy}, which computes more, the lower "
              "({heavy_ratio:.2f}).",
    },
    "compute_vs_comm_against_rule": {
        "zh": "与规律不符：计算少的{light}通信占比（{light_ratio:.2f}）反而不高于{heavy}"
              "（{heavy_ratio:.2f}）。多半是测量受到了干扰（别的程序在抢核），请在空闲时重跑。",
        "en": "Against the rule: the {light}, which computes less, has a share of communication "
              "({light_ratio:.2f}) no higher than the {heavy} ({heavy_ratio:.2f}). Most likely "
              "the measurement was disturbed (other programs taking the cores); run it again when "
              "the machine is idle.",
    },
    # --- interpret_model_size ----------------------------------------------------------------
    "model_size_small_line": {
        "zh": "{small}：1 个 rank 一步 {t1}（其中前向+反向 {compute}），一次梯度 all-reduce {comm}；"
              "按不重叠估算加速比约 {predicted:.2f} 倍，实测 {measured:.2f} 倍。",
        "en": "{small}: one step on 1 rank {t1} (of which forward+backward {compute}), one "
              "all-reduce of the gradients {comm}; without overlap the speedup should be about "
              "{predicted:.2f}x, measured {measured:.2f}x.",
    },
    "model_size_heavy_line": {
        "zh": "{heavy}：1 个 rank 一步 {t1}，一次梯度 all-reduce {comm}；按不重叠估算约 "
              "{predicted:.2f} 倍，实测 {measured:.2f} 倍。",
        "en": "{heavy}: one step on 1 rank {t1}, one all-reduce of the gradients {comm}; without "
              "overlap about {predicted:.2f}x, measured {measured:.2f}x.",
    },
    "why_small": {
        "zh": "{small}一步 {t1}，一次 all-reduce {comm}，t_comm/t₁ = {share:.2f}，按不重叠估算加速比约 "
              "{predicted:.2f} 倍。",
        "en": "the {small} takes {t1} per step and {comm} per all-reduce, t_comm/t₁ = {share:.2f}, "
              "so without overlap the speedup should be about {predicted:.2f}x.",
    },
    "why_small_fixed": {
        "zh": "{small}一步 {t1}，一次 all-reduce {comm}，t_comm/t₁ = {share:.2f}，按不重叠估算加速比约 "
              "{predicted:.2f} 倍；这一步里有 {fixed} 不是前向和反向，而是与通信无关、每个 rank 各自付"
              "的固定开销（Python 调用、DDP 的簿记、优化器更新）：它在 rank 之间并行，不拖慢加速比，"
              "反而让通信在一步里显得不那么长。",
        "en": "the {small} takes {t1} per step and {comm} per all-reduce, t_comm/t₁ = {share:.2f}, "
              "so without overlap the speedup should be about {predicted:.2f}x; {fixed} of the "
              "step is not forward and backward but a fixed cost each rank pays on its own, "
              "unrelated to communication (Python calls, DDP's bookkeeping, the optimizer "
              "update): it runs in parallel on the ranks, does not hold the speedup back, and "
              "makes the communication look shorter within the step.",
    },
    "heavy_crowded": {
        "zh": "{n} 个 rank 共用 {cores} 个 CPU 核和同一条内存总线，大矩阵乘法一起跑时每个 rank 都变慢，"
              "这与通信无关。",
        "en": "{n} ranks share {cores} CPU cores and one memory bus; large matrix multiplications "
              "running together slow every rank down, which has nothing to do with communication.",
    },
    "why_heavy": {
        "zh": "{heavy}按通信估算应有 {predicted:.2f} 倍，实测只有 {measured:.2f} 倍：{crowded}",
        "en": "By its communication the {heavy} should reach {predicted:.2f}x, but measures only "
              "{measured:.2f}x: {crowded}",
    },
    "heavy_near_limit": {
        "zh": "{heavy}接近 {n} 倍的上限（{measured:.2f} 倍）。",
        "en": "the {heavy} comes close to the limit of {n}x ({measured:.2f}x).",
    },
    "heavy_far": {
        "zh": "{heavy}也只有 {measured:.2f} 倍（按通信估算应有 {predicted:.2f} 倍），离 {n} 倍的上限还远。",
        "en": "the {heavy} too reaches only {measured:.2f}x (its communication allows "
              "{predicted:.2f}x), far from the limit of {n}x.",
    },
    "heavy_far_crowded": {
        "zh": "{heavy}也只有 {measured:.2f} 倍（按通信估算应有 {predicted:.2f} 倍），离 {n} 倍的上限还远"
              "：{crowded}",
        "en": "the {heavy} too reaches only {measured:.2f}x (its communication allows "
              "{predicted:.2f}x), far from the limit of {n}x: {crowded}",
    },
    "conclusion_expected_slower": {
        "zh": "结论：符合预期。{small}在 {n} 个 rank 上反而比 1 个 rank 慢（{small_speedup:.2f} 倍），"
              "加速比低于{heavy}；{heavy_says}计算/通信比决定数据并行是否划算。",
        "en": "Conclusion: as expected. The {small} is even slower on {n} ranks than on 1 rank "
              "({small_speedup:.2f}x), a lower speedup than the {heavy}; {heavy_says} The "
              "compute/communication ratio decides whether data parallelism pays off.",
    },
    "conclusion_expected_flat": {
        "zh": "结论：符合预期。{small}几乎不加速（{small_speedup:.2f} 倍），加速比低于{heavy}；"
              "{heavy_says}计算/通信比决定数据并行是否划算。",
        "en": "Conclusion: as expected. The {small} hardly speeds up ({small_speedup:.2f}x), a "
              "lower speedup than the {heavy}; {heavy_says} The compute/communication ratio "
              "decides whether data parallelism pays off.",
    },
    "conclusion_direction_only": {
        "zh": "结论：方向符合预期（{small} {small_speedup:.2f} 倍 < {heavy} {heavy_speedup:.2f} 倍），"
              "但{small}并非几乎不加速。在本机上，{why_small}只有当一次 all-reduce 和一步的用时相当或"
              "更长（链路的延迟更大，或每一步本身更短）时，加速比才会跌向 1 倍。",
        "en": "Conclusion: the direction is as expected ({small} {small_speedup:.2f}x < {heavy} "
              "{heavy_speedup:.2f}x), but the {small} does speed up noticeably. On this machine "
              "{why_small} Only when one all-reduce takes as long as a step or longer (a link "
              "with more latency, or shorter steps) does the speedup fall towards 1x.",
    },
    "models_tie": {
        "zh": "两者相差不到 {tie} 倍，在本机的测量误差之内，看不出模型大小的差别",
        "en": "the two differ by less than {tie}x, within this machine's measurement error: no "
              "difference between the model sizes shows",
    },
    "small_gains_more": {
        "zh": "{small}反而加速得更多",
        "en": "the {small} even speeds up more",
    },
    "conclusion_bound_broken": {
        "zh": "结论：这组数字自相矛盾，不能读。{name}在 {n} 个 rank 上一步只用了 {tn}，比这一步里包含的"
              "那一次梯度 all-reduce（单独测得 {comm}）还短，这不可能。这么短的用时由机器当时的负载"
              "（测量时 load average {load}，{cores} 个核）决定，而不是由通信决定：这是噪声，它的加速比"
              "（这次 {speedup:.2f} 倍）换一次运行就会变。请在机器空闲时重跑本单元格和上面两个测量单元格。",
        "en": "Conclusion: these numbers contradict each other and cannot be read. A step of the "
              "{name} on {n} ranks took only {tn}, less than the one gradient all-reduce the step "
              "contains (measured alone: {comm}), which is impossible. Times this short are decided "
              "by the machine's load at the time (load average {load} on {cores} cores while "
              "measuring), not by communication: this is noise, and its speedup ({speedup:.2f}x "
              "this time) changes from run to run. Rerun this cell and the two measuring cells "
              "above when the machine is idle.",
    },
    "conclusion_disagrees": {
        "zh": "结论：这台机器不符合通常的图景（{small} {small_speedup:.2f} 倍，{heavy} "
              "{heavy_speedup:.2f} 倍，{verdict}）。原因在这台机器：{reasons}规律本身不变："
              "计算/通信比越小，数据并行越不划算；在空闲的机器上重跑再比较。",
        "en": "Conclusion: this machine disagrees with the usual picture ({small} "
              "{small_speedup:.2f}x, {heavy} {heavy_speedup:.2f}x, {verdict}). The reason is this "
              "machine: {reasons} The rule itself holds: the smaller the compute/communication "
              "ratio, the less data parallelism pays off; run it again on an idle machine and "
              "compare.",
    },
    # --- interpret_gpu_gap -------------------------------------------------------------------
    "gpu_gap_here": {
        "zh": "本机（gloo，回环网络）：梯度 all-reduce 的总线带宽 {busbw_gbps:.2f} GB/s；"
              "一个 rank（1 个 CPU 核）前向+反向 {gflops:.0f} GFLOP/s。",
        "en": "This machine (gloo, loopback network): bus bandwidth of the gradient all-reduce "
              "{busbw_gbps:.2f} GB/s; one rank (1 CPU core) computes forward+backward at "
              "{gflops:.0f} GFLOP/s.",
    },
    "gpu_gap_gpu": {
        "zh": "{gpu}：{link_gap}；bf16 峰值 {peak_tflops:.0f} TFLOP/s，是本机一个 rank 的约 "
              "{ratio:,.0f} 倍（{orders}）。两边都快得多，快的倍数却不同，所以计算/通信比要在 GPU "
              "上重新测：规律相同，数字不同。",
        "en": "{gpu}: {link_gap}; bf16 peak {peak_tflops:.0f} TFLOP/s, about {ratio:,.0f} times "
              "one rank here ({orders}). Both are much faster, but by different factors, so the "
              "compute/communication ratio has to be measured again on the GPU: the same rule, "
              "other numbers.",
    },
    # --- figures -----------------------------------------------------------------------------
    "fig_measured": {
        "zh": "{name}（实测）",
        "en": "{name} (measured)",
    },
    "fig_formula": {
        "zh": "{name}（公式）",
        "en": "{name} (formula)",
    },
    "fig_number_of_ranks": {
        "zh": "rank 数 N",
        "en": "number of ranks N",
    },
    "fig_bytes_sent_received": {
        "zh": "发送 + 接收的字节数（MiB）",
        "en": "bytes sent + received (MiB)",
    },
    # --- the torchrun script -----------------------------------------------------------------
    "script_result": {
        "zh": "{variant}，{world_size} 个 rank（{backend}），全局 batch {batch_size}："
              "loss {first:.4f} -> {last:.4f}",
        "en": "{variant} on {world_size} ranks ({backend}), global batch {batch_size}: "
              "loss {first:.4f} -> {last:.4f}",
    },
    "script_check_passed": {
        "zh": "检查通过：loss 和权重与单进程在全局 batch 上训练的结果一致",
        "en": "check: same losses and weights as one process on the global batch",
    },
    "script_help_batch_size": {
        "zh": "全局 batch",
        "en": "global batch",
    },
    "script_help_lr": {
        "zh": "AdamW 的学习率",
        "en": "AdamW learning rate",
    },
    "script_help_check": {
        "zh": "与单进程训练比较",
        "en": "compare with one process",
    },
    "script_description": {
        "zh": "notebook 2.1 的数据并行训练，作为 torchrun 脚本：通往集群的路。",
        "en": "The data-parallel training of notebook 2.1 as a script for torchrun: the path to a "
              "cluster.",
    },
    # --- bad input and failures --------------------------------------------------------------
    "replicas_differ": {
        "zh": "各 rank 的副本（replica）不一致：rank {rank} 上有 {count} 个参数与 rank {src} 的不同"
              "（{names}）。数据并行要求开始时各副本完全相同：在每个 rank 上用同一个随机种子构建模型，"
              "或者先广播 rank 0 的参数（DDP 就是这样做的）。",
        "en": "the replicas differ: on rank {rank}, {count} parameter(s) differ from rank {src}'s "
              "({names}). Data parallelism needs identical replicas at the start: build the model "
              "from the same seed on every rank, or broadcast rank 0's parameters first (as DDP "
              "does).",
    },
    "replicas_differ_elsewhere": {
        "zh": "这里没有，是别的 rank 不同",
        "en": "none here; another rank differs",
    },
    "buckets_never_completed": {
        "zh": "桶（bucket）{buckets} 一直没有凑齐：有的参数在这次反向中没有得到梯度（前向没有用到它），"
              "或者在 backward() 之前就调用了 wait()。对这样的模型，torch DDP 需要 "
              "find_unused_parameters=True。",
        "en": "buckets {buckets} never completed: some parameters got no gradient in this backward "
              "(unused in forward), or wait() was called before backward(). torch DDP needs "
              "find_unused_parameters=True for such models.",
    },
    "unknown_variant": {
        "zh": "variant={variant!r} 未知；请用其中之一：{variants}",
        "en": "variant={variant!r} is unknown; use one of {variants}",
    },
    "bucket_bytes_not_positive": {
        "zh": "bucket_bytes={bucket_bytes} 必须 > 0（DDP 的默认值是 25 MB，即 {default} 字节）",
        "en": "bucket_bytes={bucket_bytes} must be > 0 (DDP's default is 25 MB, {default} bytes)",
    },
    "optimizer_instance": {
        "zh": "optimizer_class 是 {name} 的一个实例；请传入类本身，选项用关键字参数给出，例如 "
              "ShardedOptimizer(params, torch.optim.{name}, lr=1e-3)：每个 rank 在自己的分片上"
              "各自构建优化器",
        "en": "optimizer_class is an instance of {name}; pass the class and its options as "
              "keywords, e.g. ShardedOptimizer(params, torch.optim.{name}, lr=1e-3): each rank "
              "builds its own over its shard",
    },
    "optimizer_not_a_class": {
        "zh": "optimizer_class={value!r} 不是 torch.optim.Optimizer 的子类；请传入 "
              "torch.optim.AdamW 或 torch.optim.SGD 这样的类",
        "en": "optimizer_class={value!r} is not a torch.optim.Optimizer subclass; pass a class "
              "such as torch.optim.AdamW or torch.optim.SGD",
    },
    "no_process_group": {
        "zh": "没有进程组（process group）：请在 labs.launch(fn, world_size) 里的每个 rank 上调用，"
              "或者在 torch.distributed.init_process_group() 之后调用",
        "en": "no process group: call this on every rank inside labs.launch(fn, world_size) or "
              "after torch.distributed.init_process_group()",
    },
    "not_in_group": {
        "zh": "这个进程（全局 rank {rank}）不是所传进程组的成员：请传入这个 rank 所属的进程组"
              "（dist.new_group 在其他 rank 上返回的是非成员句柄），或者只在该组的 rank 上构建优化器",
        "en": "this process (global rank {rank}) is not a member of the group passed; pass the "
              "group this rank belongs to (dist.new_group returns a non-member handle on the "
              "others) or build the optimizer only on the group's ranks",
    },
    "params_empty": {
        "zh": "params 是空的：请传入要优化的参数，例如 ShardedOptimizer(model.parameters(), "
              "torch.optim.AdamW, lr=1e-3)（已经遍历过的生成器也是空的）",
        "en": "params is empty: pass the parameters to optimize, e.g. "
              "ShardedOptimizer(model.parameters(), torch.optim.AdamW, lr=1e-3) (a generator "
              "that was already consumed is empty too)",
    },
    "not_a_parameter": {
        "zh": "这个张量不是该优化器的参数",
        "en": "this tensor is not one of the optimizer's parameters",
    },
    "flat_shard_mixed": {
        "zh": "扁平分片（flat shard）要求参数的 dtype 相同、位于同一设备上；实际是 {found}",
        "en": "a flat shard needs parameters of one dtype on one device; got {found}",
    },
    "model_has_no_parameters": {
        "zh": "{model} 没有参数：没有可以分片的东西",
        "en": "{model} has no parameters: there is nothing to shard",
    },
    "tied_weights": {
        "zh": "有一个参数属于两个模块（共享权重，tied weights）：按模块分片的 ZeRO-3 无法对它分片；"
              "请解除共享，或者改用 Zero2Optimizer",
        "en": "a parameter belongs to two modules (tied weights): ZeRO-3 by module cannot shard "
              "it; untie it or use Zero2Optimizer",
    },
    "part_params": {"zh": "参数", "en": "params"},
    "part_grads": {"zh": "梯度", "en": "grads"},
    "part_master_params": {"zh": "fp32 主参数", "en": "master params"},
    "part_optimizer_states": {"zh": "优化器状态", "en": "optimizer states"},
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # legend entries and an axis of 2.1's figures; the memory parts' labels
    "fig_measured", "fig_formula", "fig_number_of_ranks", "part_params", "part_grads",
    "part_master_params", "part_optimizer_states",
    "script_help_batch_size", "script_help_lr",  # the torchrun script's --help of an option
})
