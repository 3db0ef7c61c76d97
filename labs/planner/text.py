"""Messages of labs.planner: its inputs and the hardware a run asks for (the precision's
arithmetic, FlashAttention on the GPU), layouts that cannot exist, the estimate's summary, why a
layout does not fit, the search and the five steps (the widget's: labs.planner.text_widgets).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- planner: inputs (planner_types) ---------------------------------------------------
    "mlp_unknown": {
        "zh": "mlp={mlp!r} 未知；请用 'gelu' 或 'swiglu'",
        "en": "mlp={mlp!r} is unknown; use 'gelu' or 'swiglu'",
    },
    "hidden_heads": {
        "zh": "hidden={hidden} 必须能被 n_heads={n_heads} 整除",
        "en": "hidden={hidden} must be divisible by n_heads={n_heads}",
    },
    "heads_kv": {
        "zh": "n_heads={n_heads} 必须是 n_kv_heads={n_kv_heads} 的倍数",
        "en": "n_heads={n_heads} must be a multiple of n_kv_heads={n_kv_heads}",
    },
    "n_params_positive": {
        "zh": "n_params={n_params} 必须 > 0（或设为 None，由模型结构推出）",
        "en": "n_params={n_params} must be > 0 (or None to derive it)",
    },
    "unknown_gpu": {
        "zh": "未知的 GPU {gpu!r}；请用其中之一：{choices}",
        "en": "unknown GPU {gpu!r}; use one of {choices}",
    },
    "precision_unknown": {
        "zh": "precision={precision!r} 未知；请用其中之一：{choices}",
        "en": "precision={precision!r} is unknown; use one of {choices}",
    },
    "zero_stage_unknown": {
        "zh": "zero_stage={zero_stage!r}：请用其中之一：{choices}",
        "en": "zero_stage={zero_stage!r}: use one of {choices}",
    },
    "config": {
        "zh": "TP {tp} x PP {pp} x DP {dp}，micro-batch {micro_batch}，v {v}，ZeRO-{zero_stage}",
        "en": "TP {tp} x PP {pp} x DP {dp}, micro-batch {micro_batch}, v {v}, ZeRO-{zero_stage}",
    },
    "config_recompute": {
        "zh": "{layout}，重计算 {recompute}",
        "en": "{layout}, recompute {recompute}",
    },
    # --- planner: a layout that cannot exist (check_layout) --------------------------------
    "layout_product": {
        "zh": "tp·pp·dp = {tp}·{pp}·{dp} = {product}，必须等于 n_gpus = {n_gpus}；"
              "把 dp 改成 {dp_needed:g}，或改集群的 GPU 数",
        "en": "tp·pp·dp = {tp}·{pp}·{dp} = {product} must equal n_gpus = {n_gpus}; "
              "change dp to {dp_needed:g} or the cluster",
    },
    "tp_heads": {
        "zh": "tp={tp} 必须整除 n_heads={n_heads} 和 n_kv_heads={n_kv_heads}；请选它们的公约数",
        "en": "tp={tp} must divide n_heads={n_heads} and n_kv_heads={n_kv_heads}; "
              "pick a common divisor",
    },
    "pp_layers": {
        "zh": "pp={pp} > n_layers={n_layers}：每个 stage 至少要有一层",
        "en": "pp={pp} > n_layers={n_layers}: a stage needs at least one layer",
    },
    "v_chunks": {
        "zh": "v={v} 个交错（interleaved）chunk 需要 pp > 1，且 n_layers={n_layers} 能被 "
              "pp·v = {ppv} 整除；请用 v=1 或换一个 pp",
        "en": "v={v} interleaved chunks need pp > 1 and n_layers={n_layers} divisible by "
              "pp·v = {ppv}; use v=1 or other pp",
    },
    "v_chunks_slots": {
        "zh": "v={v} 个交错 chunk 需要 pp > 1，且 n_layers + 2 = {n_layers} + 2 能被 pp·v = {ppv} "
              "整除（embedding_in_split：输入嵌入与输出层各占一层的位置）；请用 v=1 或换一个 pp",
        "en": "v={v} interleaved chunks need pp > 1 and n_layers + 2 = {n_layers} + 2 divisible "
              "by pp·v = {ppv} (embedding_in_split: the input embedding and the output layer "
              "each take a layer's place); use v=1 or other pp",
    },
    "shard_group_zero3": {
        "zh": "shard_group={shard_group} 是 ZeRO-3 的分片组（MiCS / HSDP），需要 zero_stage=3，"
              "现在是 zero_stage={zero_stage}；请设 zero_stage=3，或去掉 shard_group",
        "en": "shard_group={shard_group} is ZeRO-3's sharding group (MiCS / HSDP) and needs "
              "zero_stage=3, not zero_stage={zero_stage}; set zero_stage=3 or drop shard_group",
    },
    "shard_group_dp": {
        "zh": "shard_group={shard_group} 必须整除 dp={dp}（每个副本是 shard_group 个 rank，"
              "一共 dp / shard_group 个副本）；请换一个 shard_group 或 dp",
        "en": "shard_group={shard_group} must divide dp={dp} (each replica is shard_group ranks, "
              "dp / shard_group replicas in all); change shard_group or dp",
    },
    "batch_split": {
        "zh": "global_batch={global_batch} 必须能被 dp·micro_batch = {n} 整除；"
              "请改 batch、dp 或 micro_batch",
        "en": "global_batch={global_batch} must be divisible by dp·micro_batch = {n}; "
              "change the batch, dp or micro_batch",
    },
    "schedule_unknown": {
        "zh": "schedule={schedule!r} 未知；可选 {choices}",
        "en": "schedule={schedule!r} is unknown; choose one of {choices}",
    },
    "schedule_zb_v": {
        "zh": "ZB-H1（schedule='zb-h1'）每个 stage 只放一个 chunk：需要 v=1，而不是 v={v}；"
              "请用 v=1，或用 schedule='1f1b' 做交错",
        "en": "ZB-H1 (schedule='zb-h1') puts one chunk on each stage: it needs v=1, not v={v}; "
              "use v=1, or schedule='1f1b' to interleave",
    },
    "config_schedule": {
        "zh": "{layout}，调度 {schedule}",
        "en": "{layout}, schedule {schedule}",
    },
    "interleave_m": {
        "zh": "交错调度（interleaving）要求 micro-batch 数 {m} 是 pp={pp} 的倍数",
        "en": "interleaving needs the {m} micro-batches to be a multiple of pp={pp}",
    },
    # --- planner: the estimate's summary ---------------------------------------------------
    "fits": {"zh": "放得下", "en": "fits"},
    "does_not_fit": {"zh": "放不下", "en": "does NOT fit"},
    "summary_layout": {
        "zh": "{config}（{m} 个 micro-batch）",
        "en": "{config} ({m} micro-batches)",
    },
    "summary_memory": {
        "zh": "每卡显存（stage {stage}）：权重 {weights:.1f} + 梯度 {grads:.1f} + 优化器状态 "
              "{optimizer:.1f} + 激活 {activations:.1f} = {total:.1f} GiB，可用 {usable:.1f} GiB "
              "-> {verdict}",
        "en": "memory per GPU (stage {stage}): weights {weights:.1f} + grads {grads:.1f} + "
              "optimizer {optimizer:.1f} + activations {activations:.1f} = {total:.1f} GiB of "
              "{usable:.1f} usable -> {verdict}",
    },
    "summary_comm_dim": {
        "zh": "{dim} {gib:.1f} GiB（{seconds:.2f} s 中 {exposed:.2f} s 暴露在关键路径上）",
        "en": "{dim} {gib:.1f} GiB ({exposed:.2f} of {seconds:.2f} s exposed)",
    },
    "summary_comm": {
        "zh": "每卡每步通信：{comm}",
        "en": "communication per GPU per step: {comm}",
    },
    "summary_step": {
        "zh": "步时 {step:.2f} s = 计算 {compute:.2f} s，bubble 占步时 {bubble:.1%}，"
              "暴露的通信 {exposed:.2f} s",
        "en": "step {step:.2f} s = compute {compute:.2f} s, bubble {bubble:.1%} of the step, "
              "exposed communication {exposed:.2f} s",
    },
    "summary_throughput": {
        "zh": "{tokens:,.0f} tokens/s（每卡 {per_gpu:,.0f}），每卡实际执行 {tflops:.0f} TFLOP/s，"
              "MFU {mfu:.1%}（HFU {hfu:.1%}）",
        "en": "{tokens:,.0f} tokens/s ({per_gpu:,.0f} per GPU), {tflops:.0f} TFLOP/s per GPU "
              "executed, MFU {mfu:.1%} (HFU {hfu:.1%})",
    },
    # --- planner: why a layout does not fit (planner_model) --------------------------------
    "overflow": {
        "zh": "stage {stage} 每卡需要 {total:.1f} GiB，但只有 {usable:.1f} GiB 可用：模型状态 "
              "{states:.1f} GiB，激活 {activations:.1f} GiB",
        "en": "stage {stage} needs {total:.1f} GiB per GPU but only {usable:.1f} GiB are "
              "usable: model states {states:.1f} GiB, activations {activations:.1f} GiB",
    },
    "hint_split": {
        "zh": "把模型切得更细（现在 tp={tp}、pp={pp}：加大 pp 或 tp），或用更高的 ZeRO stage "
              "切分模型状态（现在是 {zero_stage}）",
        "en": "split the model further (tp={tp}, pp={pp}: raise pp or tp) or shard states with "
              "a higher ZeRO stage (now {zero_stage})",
    },
    "hint_recompute": {
        "zh": "重算激活（recompute='full'，现在是 {now!r}）",
        "en": "recompute activations (recompute='full', now {now!r})",
    },
    "hint_micro_batch": {
        "zh": "用更小的 micro-batch（现在是 {now}）",
        "en": "use a smaller micro-batch (now {now})",
    },
    "hint_tp": {
        "zh": "加大 tp（有序列并行时，激活按 TP 切分）",
        "en": "raise tp (with sequence parallelism, activations are split over TP)",
    },
    "to_fit": {"zh": "要放下：{hints}", "en": "to fit: {hints}"},
    # --- planner: the search and the five steps (planner_search) ---------------------------
    "rejected_tp_heads": {
        "zh": "{tp} 不整除 n_heads={n_heads} / n_kv_heads={n_kv_heads}",
        "en": "{tp} does not divide n_heads={n_heads} / n_kv_heads={n_kv_heads}",
    },
    "rejected_pp_layers": {
        "zh": "stage 数多于模型的 {n_layers} 层",
        "en": "more stages than the {n_layers} layers",
    },
    "rejected_batch": {
        "zh": "global_batch={global_batch} 不能切成 dp={dp} 个副本、每个整数个 micro-batch",
        "en": "global_batch={global_batch} cannot be cut into dp={dp} replicas of whole "
              "micro-batches",
    },
    "rejected_no_depth": {
        "zh": "tp={tp} 时任何流水线深度都放不下",
        "en": "no pipeline depth fits with tp={tp}",
    },
    "step1_question": {
        "zh": "参数 + 梯度 + 优化器状态 + 激活放得进一张卡吗？",
        "en": "Do params + grads + optimizer + activations fit one GPU?",
    },
    "step1_yes": {
        "zh": "放得下：{total:.1f} GiB，可用 {usable:.1f} GiB -> 在全部 {n_gpus} 张卡上用普通的"
              "数据并行（DDP）",
        "en": "yes: {total:.1f} GiB of {usable:.1f} GiB usable -> plain data parallelism (DDP) "
              "on all {n_gpus} GPUs",
    },
    "step1_no": {
        "zh": "放不下：模型状态 {states:.0f} GiB + 激活 {activations:.1f} GiB > 可用的 "
              "{usable:.0f} GiB -> 切分模型",
        "en": "no: {states:.0f} GiB of model states + {activations:.1f} GiB of activations > "
              "{usable:.0f} GiB usable -> split the model",
    },
    "step2_question": {
        "zh": "一层是否太大？-> 先用张量并行，在节点内",
        "en": "Is one layer too big? -> tensor parallelism first, within a node",
    },
    "step2_question_short": {
        "zh": "一层是否太大？-> 张量并行",
        "en": "Is one layer too big? -> tensor parallelism",
    },
    "step2_too_big": {
        "zh": "一层的模型状态是 {gib:.1f} GiB（一张卡放不下：tp >= {needed}）",
        "en": "one layer's states are {gib:.1f} GiB (too big for one GPU: tp >= {needed})",
    },
    "step2_fine": {
        "zh": "一层的模型状态是 {gib:.1f} GiB（一张卡放得下：tp >= {needed}）",
        "en": "one layer's states are {gib:.1f} GiB (fine for one GPU: tp >= {needed})",
    },
    "step2_alone": {
        "zh": "{why}；节点内 tp={tp} 就已经放得下整个模型",
        "en": "{why}; tp={tp} inside a node already fits the whole model",
    },
    "step2_fill_node": {
        "zh": "{why}；节点内的任何 TP 都放不下整个模型，所以占满一个节点：tp={tp}，走 NVLink"
              "（PTD-P：TP 最多用到一台服务器的全部 GPU）",
        "en": "{why}; no TP inside a node fits the whole model, so fill the node: tp={tp} on "
              "NVLink (PTD-P: TP up to the GPUs of a server)",
    },
    "step3_question": {
        "zh": "还是太大（太深）？-> 跨节点的流水线 stage",
        "en": "Still too big (deep)? -> pipeline stages across nodes",
    },
    "step3_question_short": {
        "zh": "还是太大？-> 流水线 stage",
        "en": "Still too big? -> pipeline stages",
    },
    "step3_none": {
        "zh": "tp={tp} 时任何流水线深度都放不下：提高 ZeRO stage / 开启重算",
        "en": "no pipeline depth fits with tp={tp}: raise ZeRO / recompute",
    },
    "step3_not_needed": {
        "zh": "不需要：只用 TP 就放得下",
        "en": "not needed: TP alone fits",
    },
    "step3_pp": {
        "zh": "pp={pp}：每个 stage {layers} 层，stage {stage} 每卡 {gib:.1f} GiB",
        "en": "pp={pp}: {layers} layers per stage, {gib:.1f} GiB per GPU on stage {stage}",
    },
    "step4_question": {
        "zh": "剩下的 GPU？-> 数据并行",
        "en": "Remaining GPUs? -> data parallelism",
    },
    "step4_answer": {
        "zh": "dp={dp} 个副本，每个 {m} 个 micro-batch，bubble {bubble:.1%}，步时 {step:.1f} s，"
              "MFU {mfu:.1%}",
        "en": "dp={dp} replicas, {m} micro-batches each, bubble {bubble:.1%}, step {step:.1f} s, "
              "MFU {mfu:.1%}",
    },
    "step5_question": {
        "zh": "微调：通信重叠、激活显存、负载均衡、micro-batch 与交错调度（interleaving）",
        "en": "Fine tuning: overlap, activation memory, load balance, micro-batches and "
              "interleaving",
    },
    "on": {"zh": "开", "en": "on"},
    "off": {"zh": "关", "en": "off"},
    "step5_answer": {
        "zh": "micro-batch {micro_batch}，v={v}，ZeRO-{zero_stage}：步时 {before:.2f} -> "
              "{after:.2f} s（bubble {bubble_before:.1%} -> {bubble_after:.1%}，暴露的通信 "
              "{exposed:.2f} s，DP 通信与反向重叠：{overlap}，recompute {recompute!r}）",
        "en": "micro-batch {micro_batch}, v={v}, ZeRO-{zero_stage}: step {before:.2f} -> "
              "{after:.2f} s (bubble {bubble_before:.1%} -> {bubble_after:.1%}, exposed "
              "communication {exposed:.2f} s, DP overlap with the backward: {overlap}, recompute "
              "{recompute!r})",
    },
    "step5_uneven": {
        "zh": "{answer}；{n_layers} 层分到 {pp} 个 stage 不均匀：请重新平衡",
        "en": "{answer}; {n_layers} layers over {pp} stages are uneven: rebalance",
    },
    "step_not_needed": {
        "zh": "不需要：整个模型放得进一张卡",
        "en": "not needed: the whole model fits one GPU",
    },
    # --- planner: the hardware a run asks for, and messages added with issue 29 -------------
    "precision_not_on_gpu": {
        "zh": "{gpu} 没有 {precision} 运算单元（它有：{choices}）；V100 上的混合精度请用 'fp16'",
        "en": "{gpu} has no {precision} arithmetic (it has: {choices}); mixed precision on V100 is 'fp16'",
    },
    "flash_not_on_gpu": {
        "zh": "{gpu} 上没有 FlashAttention（它需要 Turing/Ampere 及以后的 GPU）；"
              "请设 flash_attention=False 或 None（按 GPU 自动决定）",
        "en": "FlashAttention does not run on {gpu} (it needs Turing/Ampere or newer); "
              "set flash_attention=False, or None to follow the GPU",
    },
    "layout_product_no_dp": {
        "zh": "tp·pp·dp = {tp}·{pp}·{dp} = {product}，必须等于 n_gpus = {n_gpus}；"
              "tp·pp = {tp_pp} 不整除 {n_gpus}，没有哪个整数 dp 可用：改 tp 或 pp，"
              "使 tp·pp 整除 GPU 数",
        "en": "tp·pp·dp = {tp}·{pp}·{dp} = {product} must equal n_gpus = {n_gpus}; "
              "tp·pp = {tp_pp} does not divide {n_gpus}, so no whole dp works: change tp or pp "
              "so that tp·pp divides the GPU count",
    },
    "step2_no_tp": {
        "zh": "{why}；一个节点的 {per_node} 张卡里没有大于 1、又能整除 {n_heads} 个头"
              "（{n_kv_heads} 个 KV 头）的 TP，所以 tp=1：整个模型放不下时只能靠 PP（下一步）或 ZeRO 切分",
        "en": "{why}; no TP above 1 within a node's {per_node} GPUs divides the {n_heads} heads "
              "({n_kv_heads} KV heads), so tp=1: if the whole model does not fit, PP (next step) "
              "or ZeRO must split it",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the verdict after a memory sum ("-> fits"), in a widget's head, and a column header
    "fits", "does_not_fit",
    "to_fit",  # a label, its colon, then the hints, each a whole imperative clause
    "on", "off",  # a setting's value after its label ("DP overlap with the backward: on")
})
