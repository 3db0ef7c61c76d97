"""Messages of notebook 2.3 (pipeline parallelism): what its own code cells print and draw."""

MESSAGES = {
    # --- 1. stages, micro-batches, send/recv ---------------------------------------------------
    "stage_params": {
        "zh": "stage {stage}：block [{start}, {stop})，{n_params:6d} 个参数，例如 {examples}",
        "en": "stage {stage}: blocks [{start}, {stop}), {n_params:6d} parameters, e.g. {examples}",
    },
    "pipeline_loss": {
        "zh": "loss：流水线 {pipeline:.6f}，单进程 {single:.6f}",
        "en": "loss: pipeline {pipeline:.6f}, single process {single:.6f}",
    },
    "grads_match": {
        "zh": "{n_tensors} 个梯度和权重都一致；梯度的最大差 {worst:.1e}",
        "en": "{n_tensors} gradients and weights match; largest gradient difference {worst:.1e}",
    },
    "three_agree": {
        "zh": "{schedule}：labs.pipeline == torch.distributed.pipelining == 单进程（loss {loss:.6f}）",
        "en": "{schedule}: labs.pipeline == torch.distributed.pipelining == single process "
              "(loss {loss:.6f})",
    },
    # --- 2. GPipe and 1F1B ---------------------------------------------------------------------
    "warmup_order": {
        "zh": "stage {stage}：预热 {warmup} 个  {order}",
        "en": "stage {stage}: warmup {warmup}   {order}",
    },
    "bubble_formula": {
        "zh": "公式 (p-1)/(m+p-1) = {bubble:.3f}",
        "en": "formula (p-1)/(m+p-1) = {bubble:.3f}",
    },
    "schedule_idle": {
        "zh": "{schedule}：空闲占比 模拟 {simulated:.3f}，每个 rank 实测 {measured}，"
              "一步 {step_ms:.0f} ms，超时动作 {overruns} 个",
        "en": "{schedule}: idle share simulated {simulated:.3f}, measured per rank {measured}, "
              "step {step_ms:.0f} ms, overruns {overruns}",
    },
    "peak_in_flight": {
        "zh": "在途 micro-batch 数的峰值：{peaks}（GPipe：m = {m}；1F1B：min(p - rank, m)）",
        "en": "peak in-flight micro-batches: {peaks} (GPipe: m = {m}; 1F1B: min(p - rank, m))",
    },
    "peak_saved_activations_kib": {
        "zh": "为反向保存的激活值峰值（KiB）",
        "en": "peak saved activations (KiB)",
    },
    "activation_memory_title": {
        "zh": "每个 rank 的激活值显存，p={p}，m={m}",
        "en": "activation memory per rank, p={p}, m={m}",
    },
    "measured": {
        "zh": "实测",
        "en": "measured",
    },
    "formula": {
        "zh": "公式",
        "en": "formula",
    },
    "idle_per_rank": {
        "zh": "每个 rank 的空闲占比：{idle}，公式 {formula:.3f}",
        "en": "idle share per rank: {idle} formula {formula:.3f}",
    },
    # --- 3. interleaved 1F1B -------------------------------------------------------------------
    "interleaved_v": {
        "zh": "交错式 v={v}",
        "en": "interleaved v={v}",
    },
    "interleaved_idle": {
        "zh": "{schedule}：实测空闲 {idle:.3f}，公式 {formula:.3f}，一步 {step_ms:.0f} ms，"
              "在途峰值（以模型块计）{peak}，超时动作 {overruns} 个",
        "en": "{schedule:>15}: measured idle {idle:.3f}, formula {formula:.3f}, "
              "step {step_ms:.0f} ms, peak in flight (chunk units) {peak}, overruns {overruns}",
    },
    "interleaved_title": {
        "zh": "交错式 1F1B，v={v}（浅色 = 第 2 个模型块）",
        "en": "interleaved 1F1B, v={v} (lighter = 2nd chunk)",
    },
    # --- 4. how to decide ----------------------------------------------------------------------
    "chapter_example": {
        "zh": "教材的例子：96 层切成 4 个 stage、每个 24 层，用 32 GiB 的卡",
        "en": "the chapter's example: 96 layers as 4 stages of 24 layers, on 32 GiB cards",
    },
    "stage_fits": {
        "zh": "放得下",
        "en": "fit",
    },
    "stage_does_not_fit": {
        "zh": "放不下",
        "en": "do not fit",
    },
    "layers_per_gpu_row": {
        "zh": "   h={hidden:>5}，TP={tp}：一层的模型状态 {layer_gib:5.2f} GiB，"
              "每张卡 {layers_per_gpu} 层 → PP 的 stage 数 ≥ {pp}；每个 stage 24 层{fit}",
        "en": "   h={hidden:>5}, TP={tp}: one layer's model states {layer_gib:5.2f} GiB, "
              "{layers_per_gpu} layers per GPU -> PP stages >= {pp}; 24 layers per stage {fit}",
    },
    "case_gpt3": {
        "zh": "96 层，h=12288（GPT-3）",
        "en": "96 layers, h=12288 (GPT-3)",
    },
    "case_gpt3_tp8": {
        "zh": "96 层，h=12288，TP=8",
        "en": "96 layers, h=12288, TP=8",
    },
    "case_bert_large": {
        "zh": "24 层，h=1024（类似 BERT-Large）",
        "en": "24 layers, h=1024 (BERT-Large-like)",
    },
    "tp_then_pp": {
        "zh": "{case}：一层的模型状态 {layer_gib:.1f} GiB，按 32 GiB 卡的 70% 算 → TP 至少 {tp_needed}；"
              "TP={tp} 时：每张卡 {layers_per_gpu} 层，PP 的 stage 数 ≥ {pp}",
        "en": "{case}: one layer's model states {layer_gib:.1f} GiB, 70% of a 32 GiB card -> "
              "TP at least {tp_needed}; with TP={tp}: {layers_per_gpu} layers per GPU, "
              "PP stages >= {pp}",
    },
    "activation_message": {
        "zh": "一条激活值消息 b*s*h*2 字节 = {mib:.0f} MiB",
        "en": "one activation message b*s*h*2 bytes = {mib:.0f} MiB",
    },
    "pp_vs_tp_bytes": {
        "zh": "每个 rank 每步：PP {pp_gib:.1f} GiB，TP {tp_gib:.1f} GiB → TP 的发送量是 PP 的 {ratio:.0f} 倍",
        "en": "per step and rank: PP {pp_gib:.1f} GiB, TP {tp_gib:.1f} GiB -> "
              "TP sends {ratio:.0f}x more",
    },
    "counted_from_schedule": {
        "zh": "从 rank 1 的 1F1B 调度里数出来：{counted_gib:.1f} GiB",
        "en": "counted from the 1F1B schedule of rank 1: {counted_gib:.1f} GiB",
    },
    # --- 5. the GPT-3 175B case ----------------------------------------------------------------
    "gpt3_states": {
        "zh": "fp16 权重：{weights_gb:.0f} GB = {weights_gib:.0f} GiB；"
              "权重 + 梯度 + Adam（每个参数 16 B）：{total_tb:.1f} TB = {total_gib:.0f} GiB",
        "en": "fp16 weights: {weights_gb:.0f} GB = {weights_gib:.0f} GiB; "
              "weights + grads + Adam (16 B/param): {total_tb:.1f} TB = {total_gib:.0f} GiB",
    },
    "eight_way_pp": {
        "zh": "8 路 PP：每个 stage 96 / 8 = {layers} 层；12 个 stage、每个 8 层是 12 路 PP",
        "en": "8-way PP: 96 / 8 = {layers} layers per stage; 12 stages of 8 layers would be "
              "12-way PP",
    },
    "states_per_gpu": {
        "zh": "TP=8 × PP={pp} × DP=64 = {gpus} 块 GPU；每块 GPU 的模型状态 {gb:.1f} GB = "
              "{gib:.1f} GiB，是 32 GiB 卡的 {share:.0%}",
        "en": "TP=8 x PP={pp} x DP=64 = {gpus} GPUs; states per GPU {gb:.1f} GB = "
              "{gib:.1f} GiB = {share:.0%} of a 32 GiB card",
    },
    "case_bubble": {
        "zh": "p={p}、m=32：气泡 {bubble:.1%}；气泡 ≤ 10% 需要 m ≥ {min_m}；交错式 v=2：{interleaved:.1%}",
        "en": "p={p}, m=32: bubble {bubble:.1%}; bubble <= 10% needs m >= {min_m}; "
              "interleaved v=2: {interleaved:.1%}",
    },
    "gpipe_4p": {
        "zh": "按公式，GPipe 的 m = 4p 时：{bubbles}（p 越大越接近 1/5 = 20%）",
        "en": "GPipe's m = 4p by the formula: {bubbles} (tends to 1/5 = 20%)",
    },
    "case_measured": {
        "zh": "p=8、m=32：实测空闲占比 {measured:.1%}（8 个 rank 的平均），公式 {formula:.1%}，"
              "超时动作 {overruns} 个",
        "en": "p=8, m=32: measured idle share {measured:.1%} (mean of 8 ranks), "
              "formula {formula:.1%}, overruns {overruns}",
    },
    # --- 6. myths ------------------------------------------------------------------------------
    "idle_by_p": {
        "zh": "p={p}：实测空闲 {measured:.3f}，公式 {formula:.3f}",
        "en": "p={p}: measured idle {measured:.3f}, formula {formula:.3f}",
    },
    "stages_p": {
        "zh": "stage 数 p",
        "en": "stages p",
    },
    "idle_share_of_step": {
        "zh": "空闲占一步的比例",
        "en": "idle share of the step",
    },
    "bubble_vs_stages": {
        "zh": "m=4 时气泡随 stage 数的变化",
        "en": "bubble vs stages at m=4",
    },
    "microbatch_row": {
        "zh": "m={m:2d}（micro-batch {micro_batch:2d}）：{throughput:8.0f} tokens/s，"
              "激活值峰值 {peak_kib:6.0f} KiB",
        "en": "m={m:2d} (micro-batch {micro_batch:2d}): {throughput:8.0f} tokens/s, "
              "peak activations {peak_kib:6.0f} KiB",
    },
    "microbatch_size": {
        "zh": "micro-batch 大小（序列数）",
        "en": "micro-batch size (sequences)",
    },
    "tokens_per_s": {
        "zh": "每秒 token 数",
        "en": "tokens / s",
    },
    "throughput": {
        "zh": "吞吐",
        "en": "throughput",
    },
    "peak_activations_kib": {
        "zh": "激活值峰值（KiB）",
        "en": "peak activations (KiB)",
    },
    "memory": {
        "zh": "显存",
        "en": "memory",
    },
    "relative_costs": {
        "zh": "每个 block 的相对成本（block 0 = 1）：{costs}",
        "en": "relative cost per block (block 0 = 1): {costs}",
    },
    "even_by_layers": {
        "zh": "按层数平均",
        "en": "even by layers",
    },
    "balanced_by_cost": {
        "zh": "按成本平衡",
        "en": "balanced by cost",
    },
    "split_row": {
        "zh": "{split}：切分 {bounds}，最慢的 stage 相当于 {slowest:.2f} 个 block，"
              "实测一步 {step_ms:.0f} ms",
        "en": "{split:>16}: stages {bounds}, slowest stage {slowest:.2f} blocks, "
              "measured step {step_ms:.0f} ms",
    },
    "step_time_ms": {
        "zh": "一步用时（ms）",
        "en": "step time (ms)",
    },
    "balance_title": {
        "zh": "类似 GPT-2 small 的成本，p=4，m=8，1F1B",
        "en": "GPT-2-small-like costs, p=4, m=8, 1F1B",
    },
    "balance_mode": {
        "zh": "固定时长模式，每个 stage 的 F/B 时长 = 估算成本",
        "en": "fixed-time mode, F/B time per stage = estimated cost",
    },
    # --- end -----------------------------------------------------------------------------------
    "notebook_ran": {
        "zh": "本笔记本运行用时 {seconds:.0f} s",
        "en": "notebook ran in {seconds:.0f} s",
    },
}
