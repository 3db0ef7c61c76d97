"""Messages of labs.tensor_parallel (notebook 2.2): layout errors, the experiments' bad
input and the figures. The readings (``interpret_*``) are in :mod:`labs.tensor_parallel.text_readings`.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- words and separators ------------------------------------------------------------------

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
    # one sentence per number the TP size does not divide, then layout_divide_each
    "layout_problem": {
        "zh": "张量并行规模 {tp} 不能整除 {name}={value}（{why}；约数：{divisors}）。",
        "en": "Tensor-parallel size {tp} does not divide {name}={value} ({why}; divisors: "
              "{divisors}).",
    },
    "layout_divide_each": {
        "zh": "请用能整除上面每个数的 TP 规模。",
        "en": "Use a TP size that divides each number above.",
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

    # --- figures (plots.plot_compute_vs_comm) --------------------------------------------------
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

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # numerics.assert_close's msg: the label in front of "{msg}: {why}"
    "check_hand_written", "check_dtensor",
    "fig_efficiency",  # an axis label
})
