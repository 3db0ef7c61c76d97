"""Messages of labs.hybrid: the planner, the mesh, 3D training, context and expert parallelism,
profiling and their figures (the planner widget's are in labs.messages.widgets).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

MESSAGES = {
    # --- planner: inputs (planner_types) ---------------------------------------------------
    "positive_int": {
        "zh": "{name}={value!r} 必须是正整数",
        "en": "{name}={value!r} must be a positive integer",
    },
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
    "recompute_unknown": {
        "zh": "recompute={recompute!r} 未知；请用其中之一：{choices}",
        "en": "recompute={recompute!r} is unknown; use one of {choices}",
    },
    "config": {
        "zh": "TP {tp} x PP {pp} x DP {dp}，micro-batch {micro_batch}，v {v}，ZeRO-{zero_stage}",
        "en": "TP {tp} x PP {pp} x DP {dp}, micro-batch {micro_batch}, v {v}, ZeRO-{zero_stage}",
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
    "batch_split": {
        "zh": "global_batch={global_batch} 必须能被 dp·micro_batch = {n} 整除；"
              "请改 batch、dp 或 micro_batch",
        "en": "global_batch={global_batch} must be divisible by dp·micro_batch = {n}; "
              "change the batch, dp or micro_batch",
    },
    "interleave_m": {
        "zh": "交错调度（interleaving）要求 micro-batch 数 {m} 是 pp={pp} 的倍数",
        "en": "interleaving needs the {m} micro-batches to be a multiple of pp={pp}",
    },
    # --- planner: the estimate's summary ---------------------------------------------------
    "list_sep": {"zh": "，", "en": ", "},
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
        "zh": "或加大 tp（有序列并行时，激活按 TP 切分）",
        "en": "or a larger tp (activations split over TP with sequence parallelism)",
    },
    "hint_sep": {"zh": "；", "en": "; "},
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
              "communication {exposed:.2f} s, DP overlapped {overlap}, recompute {recompute!r})",
    },
    "step5_uneven": {
        "zh": "{answer}；{n_layers} 层分到 {pp} 个 stage 不均匀：请重新平衡",
        "en": "{answer}; {n_layers} layers over {pp} stages are uneven: rebalance",
    },
    "step_not_needed": {
        "zh": "不需要：整个模型放得进一张卡",
        "en": "not needed: the whole model fits one GPU",
    },
    # --- the mesh (mesh) -------------------------------------------------------------------
    "mesh_degree": {
        "zh": "{dim}={value!r}：每个并行度都是 >= 1 的整数（1 表示不用这一维）。",
        "en": "{dim}={value!r}: each parallel degree is a whole number >= 1 (1 means that "
              "dimension is not used).",
    },
    "mesh_rank_outside": {
        "zh": "rank {rank} 不在这个 {world_size} 个 rank 的 mesh 里（dp={dp} × pp={pp} × tp={tp}）。",
        "en": "rank {rank} is outside this mesh of {world_size} ranks (dp={dp} × pp={pp} × "
              "tp={tp}).",
    },
    "mesh_index_outside": {
        "zh": "{dim} 下标 {index} 不在 0..{last} 之内。",
        "en": "{dim} index {index} is outside 0..{last}.",
    },
    "mesh_unknown_dim": {
        "zh": "未知的维度 {dim!r}：请用其中之一：{choices}。",
        "en": "unknown dimension {dim!r}: use one of {choices}.",
    },
    "mesh_world_size": {
        "zh": "dp × pp × tp = {dp} × {pp} × {tp} = {ranks} 个 rank，但这次运行的 "
              "world_size={world_size}：请选乘积为 {world_size} 的并行度，例如 {example}。",
        "en": "dp × pp × tp = {dp} × {pp} × {tp} = {ranks} ranks, but the run has "
              "world_size={world_size}: choose degrees whose product is {world_size}, "
              "e.g. {example}.",
    },
    "mesh_tp_heads": {
        "zh": "tp={tp} 不整除 {n_heads} 个注意力头：每个张量并行 rank 必须持有整数个头；"
              "tp 请从 {ok} 中选。",
        "en": "tp={tp} does not divide the {n_heads} attention heads: each tensor-parallel "
              "rank must hold whole heads; use tp in {ok}.",
    },
    "mesh_pp_layers": {
        "zh": "pp={pp} 个流水线 stage，但模型只有 {n_layers} 层：每个 stage 至少要有一层；"
              "请用 pp <= {n_layers}。",
        "en": "pp={pp} pipeline stages but the model has only {n_layers} layers: every stage "
              "needs at least one layer; use pp <= {n_layers}.",
    },
    "mesh_probe_sum": {
        "zh": "rank {rank}：{dim} 组的求和是 {got}，但它的组员 {peers} 之和是 {want}",
        "en": "rank {rank}: the {dim} group summed to {got}, but its peers {peers} sum to "
              "{want}",
    },
    # --- the mesh, visible (plots_mesh; figure text except the reasons, also printed) ------
    "why_tp": {
        "zh": "每层都有 all-reduce，前向和反向都有：最大、最频繁的消息",
        "en": "all-reduce in every layer, forward and backward: the largest, most frequent "
              "messages",
    },
    "why_pp": {
        "zh": "每个 stage 边界、每个 micro-batch 一个激活（及其梯度），点对点",
        "en": "one activation (and its gradient) per micro-batch per stage boundary, "
              "point-to-point",
    },
    "why_dp": {
        "zh": "每步一次梯度 all-reduce，与反向传播重叠",
        "en": "one gradient all-reduce per step, overlapped with the backward pass",
    },
    "gpus_per_node": {
        "zh": "gpus_per_node={value!r} 必须是 >= 1 的整数",
        "en": "gpus_per_node={value!r} must be a whole number >= 1",
    },
    "mesh_node": {"zh": "节点 {n}", "en": "node {n}"},
    "mesh_legend_unused": {"zh": "{dim} x1：不使用", "en": "{dim} x1: not used"},
    "mesh_legend_inside": {
        "zh": "{dim} x{degree}：{link} {bandwidth:.0f} GB/s（节点内）- {why}",
        "en": "{dim} x{degree}: {link} {bandwidth:.0f} GB/s (inside a node) - {why}",
    },
    "mesh_legend_across": {
        "zh": "{dim} x{degree}：{link} {bandwidth:.0f} GB/s（跨节点）- {why}",
        "en": "{dim} x{degree}: {link} {bandwidth:.0f} GB/s (across nodes) - {why}",
    },
    "mesh_legend_dp_group": {"zh": "{entry}；同一颜色 = 一个 DP 组",
                             "en": "{entry}; same colour = one DP group"},
    "mesh_legend_node": {
        "zh": "节点（node）：{gpus_per_node} x {gpu}，rank 连续编号；带宽为每卡每方向"
              "（hardware.links）",
        "en": "node: {gpus_per_node} x {gpu}, consecutive ranks; bandwidth per GPU per "
              "direction (hardware.links)",
    },
    "mesh_replica": {"zh": "DP 副本 {d}", "en": "DP replica {d}"},
    "mesh_one_replica": {"zh": "一个副本", "en": "one replica"},
    "stage_tick": {"zh": "stage {stage}", "en": "stage {stage}"},
    "mesh_title": {
        "zh": "{ranks} 个 rank，dp={dp} x pp={pp} x tp={tp}：rank (dp,pp,tp)",
        "en": "{ranks} ranks, dp={dp} x pp={pp} x tp={tp}: rank (dp,pp,tp)",
    },
    # --- context and expert parallelism, visible (plots_cp_ep; figure text) ----------------
    "cp_size": {"zh": "cp_size={cp_size} 至少要是 1", "en": "cp_size={cp_size} must be at least 1"},
    "ring_node_one": {"zh": "rank {rank}\n{blocks} 个块", "en": "rank {rank}\n{blocks} block"},
    "ring_node_many": {"zh": "rank {rank}\n{blocks} 个块", "en": "rank {rank}\n{blocks} blocks"},
    "ring_arrow": {"zh": "前向 {forward}\n反向 {backward}", "en": "fwd {forward}\nbwd {backward}"},
    "ring_note_alone": {"zh": "只有一个 rank：没有通信", "en": "one rank: no communication"},
    "ring_note": {
        "zh": "前向中 K、V 传 {moves} 次；反向再加上 dK、dV（{cp_size} 次）。一个 K 块：{block}",
        "en": "K,V move {moves}x forward; backward adds dK,dV ({cp_size}x). One K block: {block}",
    },
    "ring_title": {"zh": "Ring attention，上下文并行（CP）大小 {cp_size}",
                   "en": "Ring attention, context-parallel size {cp_size}"},
    "a2a_node": {"zh": "rank {rank}\n留下 {keeps}", "en": "rank {rank}\nkeeps {keeps}"},
    "a2a_arrow": {"zh": "{rows} 个 token", "en": "{rows} tok"},
    "a2a_arrow_bytes": {"zh": "{rows} 个 token\n{size}", "en": "{rows} tok\n{size}"},
    "a2a_note": {"zh": "combine 沿反向的箭头把同样的行发回去",
                 "en": "combine sends the same rows back along reversed arrows"},
    "a2a_note_bytes": {"zh": "{note}\n每个 rank 前向发送的字节：{sent}",
                       "en": "{note}\nforward bytes sent per rank: {sent}"},
    "a2a_title": {"zh": "专家并行（EP）all-to-all，EP 大小 {ep_size}",
                  "en": "Expert parallel all-to-all, EP size {ep_size}"},
    # --- profiling (profiling; figure text except the error) -------------------------------
    "no_step_span": {
        "zh": "这个 trace 里没有 {annotation!r} 段：请在 "
              "torch.profiler.record_function({annotation!r}) 里 profile 这一步",
        "en": "no {annotation!r} span in this trace: profile the step inside "
              "torch.profiler.record_function({annotation!r})",
    },
    "category_compute": {"zh": "计算", "en": "compute"},
    "category_all_reduce": {"zh": "all-reduce（及其他集合通信）", "en": "all-reduce"},
    "category_send_recv": {"zh": "send/recv", "en": "send-recv"},
    "category_idle": {"zh": "空闲", "en": "idle"},
    "breakdown_share": {"zh": "占这一步的比例", "en": "share of the step"},
    "breakdown_ms": {"zh": "这一步内的时间（ms）", "en": "time in the step (ms)"},
    "breakdown_title": {
        "zh": "每个 rank 一个 profile 过的 3D 步，下方为 (dp, pp, tp)",
        "en": "One profiled 3D step per rank, (dp, pp, tp) under each",
    },
    # --- 3D training by hand and with torch (three_d, torch_3d, torch_3d_compare) ----------
    "holds_nothing": {"zh": "rank {rank} 没有持有任何 {what}", "en": "rank {rank} holds no {what}"},
    "torch3d_schedule": {
        "zh": "torch 的 3D 步只支持 schedule 'gpipe' 或 '1f1b'，每个 rank 一个 chunk，"
              "不支持 {schedule!r} 配 n_chunks={n_chunks}",
        "en": "torch's 3D step covers schedule 'gpipe' or '1f1b' with one chunk per rank, "
              "not {schedule!r} with n_chunks={n_chunks}",
    },
    "torch3d_microbatches": {
        "zh": "torch 的 Schedule1F1B 要求 micro-batch 数不少于 stage 数：n_microbatches={m} < "
              "pp={pp}；请用 n_microbatches >= {pp}（且 batch_size 是 dp × n_microbatches 的"
              "倍数），或用 schedule='gpipe'",
        "en": "torch's Schedule1F1B needs at least as many micro-batches as stages: "
              "n_microbatches={m} < pp={pp}; use n_microbatches >= {pp} (and batch_size a "
              "multiple of dp × n_microbatches), or schedule='gpipe'",
    },
    "torch3d_batch": {
        "zh": "batch_size={batch_size} 不能切成 {dp} 个数据并行分片、每片 {m} 个 micro-batch："
              "请把它设成 {multiple} 的倍数",
        "en": "batch_size={batch_size} cannot be split into {dp} data-parallel slices of {m} "
              "micro-batches: make it a multiple of {multiple}",
    },
    "dp_mode": {"zh": "dp_mode={dp_mode!r}：请用其中之一：{choices}",
                "en": "dp_mode={dp_mode!r}: use one of {choices}"},
    "torch3d_loss_vs_one": {"zh": "torch 3D 的 loss 与单进程对比",
                            "en": "torch 3D loss vs one process"},
    "torch3d_vs_one": {"zh": "torch 3D 的 {what} {name}（与单进程对比）",
                       "en": "torch 3D {what} {name}"},
    "hand_vs_torch_loss": {"zh": "手写 3D 与 torch 3D 的 loss 对比",
                           "en": "hand-written vs torch 3D loss"},
    "different_parameters": {"zh": "{what}：每个 stage 上的参数不同",
                             "en": "{what}: different parameters per stage"},
    "hand_vs_torch": {"zh": "手写与 torch 对比：{what} {name}", "en": "hand vs torch {what} {name}"},
    "steps_warm_up": {"zh": "steps={steps}：至少要 2 步（第一步是预热）",
                      "en": "steps={steps}: use at least 2 (the first is a warm-up)"},
    "memory_table_header": {
        "zh": "rank (dp,pp,tp)  模式 TP/PP 元素数       预测 B      实测 B   余量 B     均分 B",
        "en": "rank (dp,pp,tp)  mode TP/PP elems  predicted B  measured B  slack B  uniform B",
    },
    # --- context and expert parallelism (context_parallel, expert_parallel) ----------------
    "cp_split": {
        "zh": "无法把长度为 {length} 的序列切成 {size} 个相等的块做上下文并行：请把长度设成 CP 大小 "
              "{size} 的倍数（例如 {example}），或改用长度的某个约数作为 CP 大小",
        "en": "cannot split a sequence of length {length} into {size} equal chunks for context "
              "parallelism: make the length a multiple of the CP size {size} (e.g. {example}), "
              "or use another CP size among its divisors",
    },
    "cp_shapes": {
        "zh": "ring_attention 要求 q、k、v 形状相同 (B, n_head, T_local, head_dim)；"
              "实际是 {q}、{k}、{v}",
        "en": "ring_attention needs q, k, v of one shape (B, n_head, T_local, head_dim); "
              "got {q}, {k}, {v}",
    },
    "ep_spread": {
        "zh": "无法把 {n_experts} 个专家分到 {ep_size} 个 rank 的专家并行组上：专家数必须是 EP "
              "大小的倍数（用 {example} 个专家，或用能整除 {n_experts} 的 EP 大小）",
        "en": "cannot spread {n_experts} experts over an expert-parallel group of {ep_size} "
              "ranks: the number of experts must be a multiple of the EP size (use {example} "
              "experts, or an EP size that divides {n_experts})",
    },
    "top_k": {"zh": "top_k={top_k} 必须在 1 到 n_experts={n_experts} 之间",
              "en": "top_k={top_k} must be between 1 and n_experts={n_experts}"},
    "ep_experts_per_rank": {
        "zh": "rank {rank} 拿到 {got} 个专家，应为 {n_experts}/{size} = {want}",
        "en": "rank {rank} got {got} experts, expected {n_experts}/{size} = {want}",
    },
    # --- fragmentation ---------------------------------------------------------------------
    "cuda_pattern_failed": {"zh": "CUDA 分配模式运行失败：\n{stderr}",
                            "en": "the CUDA allocation pattern failed:\n{stderr}"},
    # --- checks against one process (verify_cp_ep) -----------------------------------------
    "rank_output": {"zh": "rank {rank} 的输出", "en": "rank {rank} output"},
    "token_grads": {"zh": "rank {rank} 的 token 梯度", "en": "rank {rank} token grads"},
    "router_grads": {"zh": "router 的梯度", "en": "router grads"},
    "expert_grad": {"zh": "专家 {expert} 的 {name}", "en": "expert {expert} {name}"},
    # --- end
}
