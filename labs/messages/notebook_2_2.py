"""Messages of notebook 2.2's own code cells (solutions/2.2_model_parallel.ipynb): printed results and figure titles."""

MESSAGES = {
    # --- 1. layer-wise parallelism -------------------------------------------------------------
    "layerwise_loss": {
        "zh": "loss：层间并行 {layerwise:.6f}，完整模型 {full:.6f}；每个 stage 的梯度都与完整模型一致",
        "en": "loss: layer-wise {layerwise:.6f}, full model {full:.6f}; every stage's gradients match",
    },
    "layerwise_timeline_title": {
        "zh": "层间模型并行：{ranks} 个 rank，每个 rank 一个 block",
        "en": "layer-wise model parallel, {ranks} ranks, one block each",
    },
    "rank_busy": {
        "zh": "rank {rank}：{span_ms:5.1f} ms 中忙碌 {busy_ms:5.1f} ms = {share:.0%}",
        "en": "rank {rank}: busy {busy_ms:5.1f} ms of {span_ms:5.1f} ms = {share:.0%}",
    },

    # --- 2. tensor parallelism: layers, the whole model, DTensor -------------------------------
    "column_demo": {
        "zh": "rank {rank}：权重分片 {weight_shape}，输出 {output_shape}；"
              "拼起来的输出和输入梯度都等于完整层的",
        "en": "rank {rank}: weight shard {weight_shape}, output {output_shape}; "
              "gathered output and input grad == full layer",
    },
    "row_demo": {
        "zh": "权重分片：{shapes} -> 输出和输入切片的梯度都等于完整层的",
        "en": "weight shards: {shapes} -> output and input-slice grads == full layer",
    },
    "layer_matches": {
        "zh": "TP={tp} {layer:<4} 与完整层一致；集合通信：{summary}",
        "en": "TP={tp} {layer:<4} == full layer; collectives: {summary}",
    },
    "layer_formula": {
        "zh": "公式：前向 1 次、反向 1 次 all-reduce，每次 b*s*h*4 = {message_bytes} 字节",
        "en": "formula: 1 all-reduce forward + 1 backward of b*s*h*4 = {message_bytes} bytes each",
    },
    "step_diffs": {
        "zh": "{setup}：最大误差 logits {logits:.1e}，loss {loss:.1e}，梯度 {gradients:.1e}，"
              "更新后的权重 {weights:.1e}；本 rank 上的参数 {params} 个",
        "en": "{setup}: logits {logits:.1e}, loss {loss:.1e}, gradients {gradients:.1e}, "
              "weights after the step {weights:.1e}, parameters on this rank {params}",
    },
    "full_params": {
        "zh": "完整模型的参数：{params} 个",
        "en": "full model parameters: {params}",
    },
    "dtensor_diffs": {
        "zh": "TP={tp}：手写 {hand_written:.1e}，DTensor {dtensor:.1e}",
        "en": "TP={tp}: hand-written {hand_written:.1e}, DTensor {dtensor:.1e}",
    },

    # --- 3. counting the communication ---------------------------------------------------------
    "comm_row": {
        "zh": "{layer:<8} {phase:<8} {kind:<10} x{count}  {nbytes:>9} 字节",
        "en": "{layer:<8} {phase:<8} {kind:<10} x{count}  {nbytes:>9} bytes",
    },
    "model_formula": {
        "zh": "公式：每个 block 前向 2 次、反向 2 次 all-reduce，每次 S = {message_bytes} 字节；"
              "logits 的 all-gather {logits_bytes} 字节",
        "en": "formula: each block 2+2 all-reduces of S = {message_bytes} bytes; "
              "logits all-gather {logits_bytes} bytes",
    },
    "layerwise_measured": {
        "zh": "层间并行，{stages} 个 stage，实测：每步 {sends} 次 send，每次 {nbytes} 字节",
        "en": "layer-wise, {stages} stages, measured: {sends} sends per step, each {nbytes} bytes",
    },
    "layerwise_formula": {
        "zh": "层间并行的公式：{messages} 条消息，每条 {message_bytes} 字节",
        "en": "layer-wise formula: {messages} messages of {message_bytes} bytes",
    },
    "tp_wire": {
        "zh": "TP={tp}：每步 {all_reduces} 次 all-reduce -> 每个 rank 发出 {wire_messages} 条 "
              "{wire_bytes:.0f} 字节的消息，共 {sent_mib:.2f} MiB",
        "en": "TP={tp}: {all_reduces} all-reduces per step -> {wire_messages} wire messages "
              "of {wire_bytes:.0f} bytes per rank, {sent_mib:.2f} MiB sent per rank",
    },
    "sp_comm_row": {
        "zh": "{layer:<24} {phase:<8} {kind:<14} x{count}  {nbytes:>9} 字节",
        "en": "{layer:<24} {phase:<8} {kind:<14} x{count}  {nbytes:>9} bytes",
    },

    # --- 4. when tensor parallelism is needed --------------------------------------------------
    "gpt2_xl_params": {
        "zh": "GPT-2 XL 的形状：输出层不共享（untied，TinyGPT 的结构）时 {untied:.3f}B 个参数，"
              "像 GPT-2 那样共享（tied）时 {tied:.3f}B",
        "en": "GPT-2 XL shape: {untied:.3f}B parameters counted with an untied output layer "
              "(TinyGPT), {tied:.3f}B with GPT-2's tied one",
    },
    "case_bert": {
        "zh": "BERT-Base，A100-40GB",
        "en": "BERT-Base on A100-40GB",
    },
    "case_gpt2_xl": {
        "zh": "1.5B（GPT-2 XL 的形状，输出层不共享），V100-32GB",
        "en": "1.5B (GPT-2 XL shape, untied output layer) on V100-32GB",
    },
    "case_175b": {
        "zh": "175B，V100-32GB",
        "en": "175B on V100-32GB",
    },
    "case_verdict": {
        "zh": "{case}：{params:.2f}B 个参数\n   {verdict}",
        "en": "{case}: {params:.2f}B params\n   {verdict}",
    },
    "node_not_enough": {
        "zh": "175B：即使用满一个节点的 TP=8，每个 GPU 上仍有 {per_gpu_gib:.0f} GiB 的模型状态；"
              "{shards} 路分片 = TP 8 × 另外 {more} 路（流水线级数或 ZeRO）",
        "en": "175B: even a whole node's TP=8 leaves {per_gpu_gib:.0f} GiB of model states per GPU; "
              "{shards} shards = TP 8 x {more} more ways (pipeline stages or ZeRO)",
    },

    # --- 5. the 1.5B case ----------------------------------------------------------------------
    "fp16_weights": {
        "zh": "fp16 权重：{gib:.2f} GiB = {gb:.1f} GB（fp32 则是 {fp32_gib:.2f} GiB = {fp32_gb:.1f} GB）",
        "en": "fp16 weights: {gib:.2f} GiB = {gb:.1f} GB (fp32 would be {fp32_gib:.2f} GiB = {fp32_gb:.1f} GB)",
    },
    "adam_states": {
        "zh": "混合精度 Adam 的模型状态：{gib:.1f} GiB = {gb:.1f} GB = {per_param:.0f} B/参数",
        "en": "mixed-precision Adam states: {gib:.1f} GiB = {gb:.1f} GB = {per_param:.0f} B/param",
    },
    "one_v100": {
        "zh": "一张 V100（32 GiB）：模型状态占 {share:.1%}（经验规则：<= {budget:.0%}，放得下：{fits}）；"
              "留给激活值 {left_gib:.1f} GiB",
        "en": "one V100 (32 GiB): model states take {share:.1%} of it (rule of thumb: "
              "<= {budget:.0%}, fits: {fits}); {left_gib:.1f} GiB left for activations",
    },
    "real_gpt2_xl": {
        "zh": "真实的 GPT-2 XL（{params:.3f}B）：{gib:.1f} GiB，占这张卡的 {share:.1%}",
        "en": "the real GPT-2 XL ({params:.3f}B): {gib:.1f} GiB = {share:.1%} of the card",
    },
    "utilisation": {
        "zh": "利用率：12 / 125 = {utilisation:.1%}；125 的 15% = {tflops:.2f} TFLOP/s",
        "en": "utilisation: 12 / 125 = {utilisation:.1%}; 15% of 125 = {tflops:.2f} TFLOP/s",
    },
    "states_per_gpu": {
        "zh": "TP={tp}：每个 GPU 上的模型状态 {gib:.1f} GiB（共 32 GiB）",
        "en": "TP={tp}: model states per GPU {gib:.1f} GiB of 32 GiB",
    },
    "gpt2_xl_tp8": {
        "zh": "GPT-2 XL 用 TP=8：{error}",
        "en": "GPT-2 XL at TP=8: {error}",
    },
    "overlap_title": {
        "zh": "rank 0 上列并行层的反向（mode 0：不重叠，mode 1：重叠）",
        "en": "column-parallel backward on rank 0 (mode 0: no overlap, mode 1: overlap)",
    },

    # --- 6.-8. the myths -----------------------------------------------------------------------
    "tp_scaling_title": {
        "zh": "一个 TP block 的前向 + 反向",
        "en": "one TP block, forward + backward",
    },
    "tp_scaling_row": {
        "zh": "TP={tp}：计算 {compute_ms:6.1f} ms，通信 {comm_ms:6.1f} ms（{comm_share:.0%}），"
              "并行效率 {efficiency:.0%}",
        "en": "TP={tp}: compute {compute_ms:6.1f} ms, communication {comm_ms:6.1f} ms "
              "({comm_share:.0%}), efficiency {efficiency:.0%}",
    },
    "activation_estimate": {
        "zh": "TP=1 的估算（Korthikanti 等人）：{mib:.2f} MiB",
        "en": "estimate for TP=1 (Korthikanti et al.): {mib:.2f} MiB",
    },
    "activation_row": {
        "zh": "{variant:<26} 激活值 {mib:6.2f} MiB（{share:4.0%}）   一步 {step_ms:6.1f} ms",
        "en": "{variant:<26} activations {mib:6.2f} MiB ({share:4.0%})   step {step_ms:6.1f} ms",
    },
    "pairing_row": {
        "zh": "{pairing:<15} 与完整 MLP 一致；{calls} 次集合通信，{nbytes:>6} 字节：{summary}",
        "en": "{pairing:<15} == full MLP; {calls} collectives, {nbytes:>6} bytes: {summary}",
    },

    # --- the last cell -------------------------------------------------------------------------
    "ran_in": {
        "zh": "本笔记本运行用时 {seconds:.0f} s",
        "en": "notebook ran in {seconds:.0f} s",
    },
}
