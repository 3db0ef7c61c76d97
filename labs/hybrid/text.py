"""Messages of labs.hybrid: the mesh, 3D training, context and expert parallelism, profiling
and their figures (the planner's are in labs.planner.text, its widget's in
labs.planner.text_widgets).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
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
    # --- the mesh, visible (plots_mesh; figure text except the reasons, also printed) ------
    "why_tp": {
        "zh": "每层前向、反向都有 all-reduce：次数最多，每层通信量最大",
        "en": "all-reduce in every layer, forward and backward: the most bytes per layer",
    },
    "why_none": {
        "zh": "这一维只有 1 路，没有通信",
        "en": "this dimension has degree 1: nothing to communicate",
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
    # PP whose groups cross nodes but some of whose stage boundaries stay inside one
    "mesh_legend_pp_mixed": {
        "zh": "{dim} x{degree}：跨节点 {link} {bandwidth:.0f} GB/s，节点内 NVLink - {why}",
        "en": "{dim} x{degree}: {link} {bandwidth:.0f} GB/s across nodes, NVLink inside - {why}",
    },
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
        "zh": "节点（node）：{gpus_per_node} x {gpu}，rank 连续编号；带宽为每卡每方向",
        "en": "node: {gpus_per_node} x {gpu}, consecutive ranks; bandwidth per GPU per "
              "direction",
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
    "category_all_reduce": {"zh": "all-reduce（及其他集合通信）", "en": "all-reduce"},
    "category_send_recv": {"zh": "send/recv", "en": "send-recv"},
    "breakdown_share": {"zh": "占这一步的比例", "en": "share of the step"},
    "breakdown_ms": {"zh": "这一步内的时间（ms）", "en": "time in the step (ms)"},
    "breakdown_title": {
        "zh": "每个 rank 一个 profile 过的 3D 步，下方为 (dp, pp, tp)",
        "en": "One profiled 3D step per rank, (dp, pp, tp) under each",
    },
    # --- 3D training by hand and with torch (three_d, torch_3d, torch_3d_compare) ----------
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

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the mesh figure: a node's, a replica's, a stage's label; a legend entry
    "mesh_node", "mesh_legend_unused", "mesh_replica", "mesh_one_replica", "stage_tick",
    "a2a_arrow", "a2a_arrow_bytes",  # an arrow's label in the all-to-all figure
    "category_all_reduce", "category_send_recv", "breakdown_share",  # the profile's legend, axis
    # numerics.assert_close's msg: the label in front of "{msg}: {why}"
    "rank_output", "router_grads",
})
