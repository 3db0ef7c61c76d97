"""What the code cells of notebook 2.1 (data parallel) print and draw themselves."""

MESSAGES = {
    # --- 1. DDP = one process on the global batch --------------------------------------------
    "setup": {
        "zh": "TinyGPT：{params:,} 个参数，{steps} 步，全局 batch {batch} = {world_size} 个 rank × "
              "{per_rank}",
        "en": "TinyGPT {params:,} parameters, {steps} steps, global batch {batch} = {world_size} "
              "ranks x {per_rank}",
    },
    "replicas_identical": {
        "zh": "训练之后，所有 rank 上的副本逐位相同：{identical}",
        "en": "replicas bit-identical on all ranks after training: {identical}",
    },
    "largest_gap": {
        "zh": "所有权重中最大的 |w_DDP - w_single|：{gap:.1e}",
        "en": "largest |w_DDP - w_single| over all weights: {gap:.1e}",
    },
    "last_loss": {
        "zh": "最后一步的 loss：单进程 {single:.5f}，DDP {ddp:.5f}",
        "en": "loss at the last step: single {single:.5f}, DDP {ddp:.5f}",
    },
    "curve_single": {
        "zh": "单进程，batch {batch}",
        "en": "single process, batch {batch}",
    },
    "curve_ddp": {
        "zh": "DDP，{world_size} 个 rank × {per_rank} 个样本",
        "en": "DDP, {world_size} ranks x {per_rank} samples",
    },
    "step": {
        "zh": "步",
        "en": "step",
    },
    "loss_cross_entropy": {
        "zh": "训练 loss（交叉熵）",
        "en": "training loss (cross-entropy)",
    },
    "ddp_reproduces_title": {
        "zh": "DDP 重现了单进程在全局 batch 上的训练",
        "en": "DDP reproduces single-process training on the global batch",
    },
    # --- 2. hand-written DDP -----------------------------------------------------------------
    "bucket_line": {
        "zh": "桶 {bucket}：{kib:6.1f} KiB，{tensors:2d} 个张量，{first} ... {last}",
        "en": "bucket {bucket}: {kib:6.1f} KiB, {tensors:2d} tensors, {first} ... {last}",
    },
    "variant_gap": {
        "zh": "{n} 个 rank  {variant:<17} 最大 |w - w_ref| = {gap:.1e}",
        "en": "{n} ranks  {variant:<17} max |w - w_ref| = {gap:.1e}",
    },
    # --- 3. DP vs DDP: bytes through the busiest rank ----------------------------------------
    "gather_to_rank_0": {
        "zh": "汇总到 rank 0",
        "en": "gather to rank 0",
    },
    # zh pads to 12 characters: its 3 CJK ones are twice as wide, so both names take 15 columns
    "busiest_rank_bytes": {
        "zh": "{name:<12}  实测 {measured}  公式 {formula}",
        "en": "{name:<17} {measured} formula: {formula}",
    },
    "busiest_rank_title": {
        "zh": "最忙的 rank 收发的字节数，S = {size:.2f} MiB",
        "en": "bytes through the busiest rank, S = {size:.2f} MiB",
    },
    # --- 4. DistributedSampler, gradient accumulation ----------------------------------------
    "sampler_epoch": {
        "zh": "epoch {epoch}：{per_rank}  覆盖全部 {samples} 个样本：{covers}，为补齐重复了 {repeated} 个",
        "en": "epoch {epoch}: {per_rank}  covers all {samples}: {covers}, {repeated} repeated for "
              "padding",
    },
    "no_sync_calls": {
        "zh": "no_sync={no_sync!s:<5}：{micro} 个 micro-batch 共 {calls} 次 all-reduce，"
              "梯度等于单进程在全局 batch 上的梯度",
        "en": "no_sync={no_sync!s:<5}: {calls} all-reduce(s) for {micro} micro-batches, gradients "
              "equal the single-process gradients of the global batch",
    },
    # --- 5. does the model fit on one card? --------------------------------------------------
    "bytes_per_param": {
        "zh": "每个参数的字节数",
        "en": "bytes per parameter",
    },
    "states_per_param_title": {
        "zh": "每个参数的模型状态（mixed = fp16/bf16 + fp32 主权重）",
        "en": "model states per parameter (mixed = fp16/bf16 + fp32 master)",
    },
    "measured_states": {
        "zh": "实测：{states}",
        "en": "measured : {states}",
    },
    "estimated_states": {
        "zh": "估算：{states}",
        "en": "estimated: {states}",
    },
    "states_equal": {
        "zh": "相等：{equal}",
        "en": "equal: {equal}",
    },
    "activations_per_layer": {
        "zh": "每层：估算 {estimate:,.0f} B，实测 {measured:,} B，差 {difference:,.0f} B = "
              "LayerNorm 的统计量 + 因果掩码 {small:,} B",
        "en": "per layer: estimate {estimate:,.0f} B, measured {measured:,} B, difference "
              "{difference:,.0f} B = LayerNorm statistics + causal mask {small:,} B",
    },
    "activations_total": {
        "zh": "整个模型：估算 {estimate:,.0f} B，实测 {measured:,} B（{excess:+.1%}）",
        "en": "whole model: estimate {estimate:,.0f} B, measured {measured:,} B ({excess:+.1%})",
    },
    "case_bert": {
        "zh": "A100 40GB 上的 BERT-Base（教材 2.1）",
        "en": "BERT-Base on A100 40GB (chapter 2.1)",
    },
    "case_1_5b": {
        "zh": "V100 32GB 上的 1.5B 模型（教材 2.2）",
        "en": "1.5B on V100 32GB (chapter 2.2)",
    },
    "case_175b": {
        "zh": "V100 32GB 上的 175B 模型（教材 2.3）",
        "en": "175B on V100 32GB (chapter 2.3)",
    },
    "case_yours": {
        "zh": "你的模型",
        "en": "your model",
    },
    "fits": {
        "zh": "在 {budget:.0%} 的预算之内：用普通 DDP 即可，只要激活值放得进剩下的 {left:,.1f} GiB",
        "en": "within the {budget:.0%} budget: plain DDP, if the activations fit in the other "
              "{left:,.1f} GiB",
    },
    "does_not_fit": {
        "zh": "放不下：把模型状态分片（ZeRO/FSDP），或者切分模型（TP/PP）",
        "en": "does not fit: shard the states (ZeRO/FSDP) or split the model (TP/PP)",
    },
    "fits_on_one_card": {
        "zh": "{name}：模型状态 {states:,.2f} GiB，占 {card:.0f} GiB 显存的 {share:,.1%} -> {verdict}",
        "en": "{name}: model states {states:,.2f} GiB = {share:,.1%} of the {card:.0f} GiB card "
              "-> {verdict}",
    },
    # --- 6. the BERT-Base case ---------------------------------------------------------------
    # zh puts the number first: the labels' CJK characters are twice as wide, the numbers align
    "case_row": {
        "zh": "{value:>12,.2f}  {name}",
        "en": "{name:<42} {value:>12,.2f}",
    },
    "case_weights_gib": {
        "zh": "权重（GiB）",
        "en": "weights (GiB)",
    },
    "case_states_gib": {
        "zh": "权重 + 梯度 + Adam 状态（GiB）",
        "en": "weights + grads + Adam (GiB)",
    },
    "case_bytes_per_param": {
        "zh": "每个参数的字节数",
        "en": "bytes per parameter",
    },
    "case_iterations_per_epoch": {
        "zh": "每个 epoch 的迭代次数",
        "en": "iterations per epoch",
    },
    "case_hours_per_epoch": {
        "zh": "每个 epoch 的小时数，1 块 GPU",
        "en": "hours per epoch, 1 GPU",
    },
    "case_hours_10_epochs": {
        "zh": "10 个 epoch 的小时数，1 块 GPU",
        "en": "hours for 10 epochs, 1 GPU",
    },
    "case_hours_10_epochs_4_gpus": {
        "zh": "10 个 epoch 的小时数，4 块 GPU、加速 3.6 倍",
        "en": "hours for 10 epochs, 4 GPUs at 3.6x",
    },
    "case_scaling_efficiency": {
        "zh": "加速 3.6 倍时的扩展效率",
        "en": "scaling efficiency at 3.6x",
    },
    "case_implied_tflops": {
        "zh": "推算出的 A100 算力（TFLOP/s，序列长 {seq_len}）",
        "en": "implied TFLOP/s on the A100 (seq {seq_len})",
    },
    "implied_rate_head": {
        "zh": "\n按每次迭代 {seconds} s、batch {batch}、每个 token 6·N FLOP 推算的算力：",
        "en": "\nimplied rate at {seconds} s/iteration, batch {batch}, 6·N FLOP per token:",
    },
    "implied_rate": {
        "zh": "  序列长度 {seq:>3}：{tflops:5.2f} TFLOP/s = fp32 峰值（不用张量核心，{fp32_peak:g} TFLOP/s）"
              "的 {fp32_share:.1%}，bf16 峰值（张量核心，{bf16_peak:g} TFLOP/s）的 {bf16_share:.1%}",
        "en": "  sequence length {seq:>3}: {tflops:5.2f} TFLOP/s = {fp32_share:.1%} of the fp32 (no "
              "tensor cores) peak ({fp32_peak:g} TFLOP/s), {bf16_share:.1%} of the bf16 (tensor "
              "cores) peak ({bf16_peak:g} TFLOP/s)",
    },
    "speedup_conditions": {
        "zh": "测量条件：MLP {sizes}（{params:.1f} M 参数），SGD，每个 rank {batch} 个样本、{threads} 个线程，"
              "{cores} 个 CPU 核，gloo，load average {load}",
        "en": "conditions: MLP {sizes} ({params:.1f} M params), SGD, {batch} samples per rank, "
              "{threads} thread per rank, {cores} CPU cores, gloo, load average {load}",
    },
    "step_times": {
        "zh": "1 个 rank：{t1:.0f} ms/步；{n} 个 rank：{tn:.0f} ms/步",
        "en": "1 rank: {t1:.0f} ms/step;  {n} ranks: {tn:.0f} ms/step",
    },
    # --- 7. large batches --------------------------------------------------------------------
    "run_base": {
        "zh": "batch {batch}，lr {lr}",
        "en": "batch {batch}, lr {lr}",
    },
    "run_not_scaled": {
        "zh": "batch {batch}，lr {lr}（不缩放）",
        "en": "batch {batch}, lr {lr} (not scaled)",
    },
    "run_no_warmup": {
        "zh": "batch {batch}，lr {lr:g}，不预热",
        "en": "batch {batch}, lr {lr:g}, no warmup",
    },
    "run_warmup": {
        "zh": "batch {batch}，lr {lr:g}，预热 {warmup} 步",
        "en": "batch {batch}, lr {lr:g}, {warmup}-step warmup",
    },
    "final_loss": {
        "zh": "{run}：最终 loss {loss:.4g}",
        "en": "{run:<36} final loss {loss:.4g}",
    },
    "samples_seen": {
        "zh": "见过的样本数",
        "en": "samples seen",
    },
    "loss_mse": {
        "zh": "训练 loss（MSE）",
        "en": "training loss (MSE)",
    },
    "large_batch_title": {
        "zh": "大 batch：线性缩放需要预热（x = 发散）",
        "en": "large batch: linear scaling needs warmup (x = diverged)",
    },
    # --- 8. communication overhead -----------------------------------------------------------
    "small_model": {
        "zh": "小模型",
        "en": "small model",
    },
    "compute_heavy_model": {
        "zh": "计算量大的模型",
        "en": "compute-heavy model",
    },
    "model_bar": {
        "zh": "{model}\n{params:.2g} M 参数，batch {batch}",
        "en": "{model}\n{params:.2g} M params, batch {batch}",
    },
    "compute_fwd_bwd": {
        "zh": "计算（前向+反向）",
        "en": "compute (fwd+bwd)",
    },
    "gradient_all_reduce": {
        "zh": "梯度的 all-reduce",
        "en": "all-reduce of the gradients",
    },
    "time_per_step_ms": {
        "zh": "每步用时（ms）",
        "en": "time per step (ms)",
    },
    "compute_vs_comm_title": {
        "zh": "2 个 rank，gloo，每个 rank 1 个线程",
        "en": "2 ranks, gloo, 1 thread per rank",
    },
    # --- 9. mixed precision ------------------------------------------------------------------
    "autocast_logits": {
        "zh": "autocast 下 logits 的 dtype：{dtype}",
        "en": "logits dtype under autocast: {dtype}",
    },
    "parameter_dtypes": {
        "zh": "参数的 dtype：{dtypes}",
        "en": "parameter dtypes: {dtypes}",
    },
    "gradient_dtypes": {
        "zh": "梯度的 dtype：{dtypes}",
        "en": "gradient dtypes:  {dtypes}",
    },
    "hook_bytes": {
        "zh": "{hook:<19} all-reduce 了 {sent:>7,} 字节，dtype 为 {dtypes}；这一步之后的梯度：{grad_dtypes}",
        "en": "{hook:<19} all-reduced {sent:>7,} bytes as {dtypes}, gradients after the step: "
              "{grad_dtypes}",
    },
    "fp32_gradient_bytes": {
        "zh": "这个 MLP 的 fp32 梯度：{size:,} 字节",
        "en": "fp32 gradients of this MLP: {size:,} bytes",
    },
    "underflow": {
        "zh": "缩放因子 {scale:>8g}：{lost:6.2%} 的梯度下溢为 0，{overflow} 个上溢为 inf",
        "en": "scale {scale:>8g}: {lost:6.2%} of the gradients underflow to 0, {overflow} overflow "
              "to inf",
    },
    "grad_scaler": {
        "zh": "缩放因子 {before:g} -> {after:g}；跳过了这一步：{skipped}",
        "en": "scale {before:g} -> {after:g}; step skipped: {skipped}",
    },
    # --- 10. ZeRO and FSDP -------------------------------------------------------------------
    "zero_bytes_per_rank": {
        "zh": "{name:<20} 每个 rank {mib:6.2f} MiB = 每个参数 {per_param:5.2f} 字节（公式 {formula:5.2f}）",
        "en": "{name:<20} {mib:6.2f} MiB per rank = {per_param:5.2f} bytes/param (formula "
              "{formula:5.2f})",
    },
    "states_per_rank_mib": {
        "zh": "每个 rank 的模型状态（MiB）",
        "en": "model states per rank (MiB)",
    },
    "zero_title": {
        "zh": "fp32 Adam，{params:.2f} M 参数的 MLP",
        "en": "fp32 Adam, MLP with {params:.2f} M params",
    },
    "fsdp_layout": {
        "zh": "rank {rank}：layers[0].weight 是 {kind}，placements 为 {placements}，设备网格的形状 "
              "{mesh}：完整形状 {full}，这个 rank 持有 {local}",
        "en": "rank {rank}: layers[0].weight is a {kind} with placements {placements} on a mesh of "
              "shape {mesh}: full shape {full}, this rank holds {local}",
    },
    "zero_weights": {
        "zh": "{name:<22} 权重 = 单进程（{ranks} 个 rank 之间也逐位相同）",
        "en": "{name:<22} weights = one process (and identical on the {ranks} ranks)",
    },
    "zero_held": {
        "zh": "；每个 rank 的字节数 {held}，labs.memory 预测 {predicted:,.0f}，多出 {excess}",
        "en": "; bytes per rank {held}, labs.memory predicts {predicted:,.0f}, excess {excess}",
    },
    "zero1_vs_torch_identical": {
        "zh": "手写的 ZeRO-1 与 ZeroRedundancyOptimizer：逐位相同",
        "en": "hand-written ZeRO-1 vs ZeroRedundancyOptimizer: bit-identical",
    },
    "zero1_vs_torch_close": {
        "zh": "手写的 ZeRO-1 与 ZeroRedundancyOptimizer：相等，只差 float32 舍入",
        "en": "hand-written ZeRO-1 vs ZeroRedundancyOptimizer: equal to float32 rounding",
    },
    # --- 11. torchrun, the end ---------------------------------------------------------------
    "torchrun_exit": {
        "zh": "{command} -> 退出码 {code}",
        "en": "{command} -> exit code {code}",
    },
    "ran_in": {
        "zh": "本笔记本运行了 {seconds:.0f} s",
        "en": "notebook ran in {seconds:.0f} s",
    },
    # the 勘误 box of the case study, filled with the numbers the cell computes (a Markdown text)
    "errata_box": {
        "zh": '\n> **勘误 / fact-check（教材 2.1 案例拆解）**\n>\n> - 参数 440 MB（[勘误表 #1](../ERRATA.md#1)）：**正确**（1.1 亿 × 4 B = {params:,.0f} 字节，即 {weights_gib:.2f} GiB；教材的 MB 是十进制）。\n> - "参数 + 梯度 + Adam 状态（fp32）约 3.5 GB"（[勘误表 #2](../ERRATA.md#2)）：**高了一倍**。fp32 Adam 每个参数 4 + 4 + 8 = {bytes_per_param:.0f} 字节，共 **{total:,.0f} 字节**（按教材的十进制是 {total_gb:.2f} GB，即 {states_gib:.2f} GiB）；3.5 GB 相当于每个参数 32 字节。结论"远低于 40 GB"不变，激活值另算。\n> - "10 个 epoch 约 70 小时"（[勘误表 #3](../ERRATA.md#3)）：**低了 10 倍**。每个 epoch {iterations:,.0f} 次迭代 × 0.8 s = **{hours_per_epoch:.1f} 小时/epoch**；10 个 epoch 是 {hours_10:.0f} 小时（约 {days_10:.0f} 天），按 3.6 倍加速是 {hours_10_4:.0f} 小时（约 {days_10_4:.0f} 天），不是 20 小时。\n> - 4 卡加速 3.6 倍 = **{efficiency:.0%} 的扩展效率（scaling efficiency）**，说法成立。\n> - 0.8 s/迭代（[勘误表 #4](../ERRATA.md#4)）：教材没有说精度和序列长度。按每条 {seq_len} 个 token（BERT 的最大长度）计，6·N·tokens ≈ {tflop_per_iter:.1f} TFLOP/迭代，相当于 {implied_tflops:.1f} TFLOP/s。按 fp32 算（A100 不用张量核心的 fp32 峰值 19.5 TFLOP/s），这是峰值的 **{fp32_share:.0%}**，说得通；教材团队多半就是这样跑的：PyTorch 默认按 fp32 训练，矩阵乘法默认也不用 TF32（`torch.backends.cuda.matmul.allow_tf32` 默认为 False，见 PyTorch 文档 *CUDA semantics*）。若用 bf16 混合精度（张量核心峰值 312 TFLOP/s），只有 **{bf16_share:.1%}**，慢得不合理。序列若是微调常用的 128，fp32 下也只有 {fp32_share_128:.0%}。另外 BERT 微调通常只需 2–4 个 epoch（BERT 论文附录 A.3），不是 10 个。\n> - 全局 batch 从 16 增大到 64，学习率却没有调整（[勘误表 #7](../ERRATA.md#7)）：见下面的误区一。\n',
        "en": '\n> **Errata / fact-check (the chapter\'s 2.1 case study)**\n>\n> - Parameters 440 MB ([errata #1](../../ERRATA.en.md#1)): **correct** (110 M × 4 B = {params:,.0f} bytes, i.e. {weights_gib:.2f} GiB; the chapter\'s MB are decimal).\n> - "Parameters + gradients + Adam states (fp32) about 3.5 GB" ([errata #2](../../ERRATA.en.md#2)): **twice too high**. fp32 Adam takes 4 + 4 + 8 = {bytes_per_param:.0f} bytes per parameter, **{total:,.0f} bytes** in all ({total_gb:.2f} GB in the chapter\'s decimal units, i.e. {states_gib:.2f} GiB); 3.5 GB would be 32 bytes per parameter. The conclusion "far below 40 GB" stands; activations come on top.\n> - "10 epochs take about 70 hours" ([errata #3](../../ERRATA.en.md#3)): **10 times too low**. One epoch is {iterations:,.0f} iterations × 0.8 s = **{hours_per_epoch:.1f} hours/epoch**; 10 epochs are {hours_10:.0f} hours (about {days_10:.0f} days), and with the 3.6× speedup {hours_10_4:.0f} hours (about {days_10_4:.0f} days), not 20 hours.\n> - A 3.6× speedup on 4 GPUs = **{efficiency:.0%} scaling efficiency**: the claim holds.\n> - 0.8 s/iteration ([errata #4](../../ERRATA.en.md#4)): the chapter gives neither the precision nor the sequence length. At {seq_len} tokens per sequence (BERT\'s maximum), 6·N·tokens ≈ {tflop_per_iter:.1f} TFLOP per iteration, i.e. {implied_tflops:.1f} TFLOP/s. In fp32 (the A100\'s fp32 peak without tensor cores is 19.5 TFLOP/s) that is **{fp32_share:.0%}** of the peak, plausible; the chapter\'s team most likely ran it that way: PyTorch trains in fp32 by default, and matrix multiplications do not use TF32 by default either (`torch.backends.cuda.matmul.allow_tf32` defaults to False, see the PyTorch docs, *CUDA semantics*). With bf16 mixed precision (tensor-core peak 312 TFLOP/s) it would be only **{bf16_share:.1%}**, unreasonably slow. With sequences of 128, common in fine-tuning, fp32 would also be only {fp32_share_128:.0%}. Besides, BERT fine-tuning usually needs 2–4 epochs (BERT paper, appendix A.3), not 10.\n> - The global batch grows from 16 to 64 but the learning rate is not adjusted ([errata #7](../../ERRATA.en.md#7)): see myth 1 below.\n',
    },
}
