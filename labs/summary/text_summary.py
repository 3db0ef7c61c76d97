"""Messages of labs.summary (notebook 2.5): the paradigm table and the one-node / two-node runs.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- the rows of the paradigm table ----------------------------------------------------
    "dp_name": {"zh": "DP（数据并行）", "en": "DP (data parallelism)"},
    "dp_split": {"zh": "数据（batch）；每张卡一份完整模型",
                 "en": "the data (batch); every GPU holds the whole model"},
    "dp_communicates": {
        "zh": "梯度 all-reduce（ZeRO：reduce-scatter + all-gather），每步一次，和反向重叠",
        "en": "gradient all-reduce (ZeRO: reduce-scatter + all-gather), once per step, "
              "overlapped with the backward pass",
    },
    "dp_typical": {"zh": "其余所有卡：n/(tp·pp)，这里 {degree}",
                   "en": "all remaining GPUs: n/(tp·pp), here {degree}"},
    "dp_hardware": {"zh": "跨节点（InfiniBand），最外层",
                    "en": "across nodes (InfiniBand), outermost"},
    "tp_name": {"zh": "TP（张量并行）", "en": "TP (tensor parallelism)"},
    "tp_split": {"zh": "每层的权重矩阵（注意力头、MLP 列/行）",
                 "en": "each layer's weight matrices (attention heads, MLP columns/rows)"},
    "tp_communicates": {
        "zh": "激活 all-reduce，每层前向 2 次、反向 2 次（全重计算再跑一遍前向：共 6 次），"
              "每个 micro-batch，在关键路径上",
        "en": "activation all-reduce, 2 per layer forward and 2 backward (6 in all when full "
              "recomputation runs the forward again), every micro-batch, on the critical path",
    },
    "tp_typical": {"zh": "≤ 每节点 {per_node} 卡，且整除 {heads} 个头",
                   "en": "≤ {per_node} GPUs per node, and dividing the {heads} heads"},
    "tp_hardware": {"zh": "节点内（NVLink），最内层", "en": "inside a node (NVLink), innermost"},
    "pp_name": {"zh": "PP（流水线并行）", "en": "PP (pipeline parallelism)"},
    "pp_split": {"zh": "层：每个 stage 连续若干层",
                 "en": "the layers: each stage a run of consecutive layers"},
    "pp_communicates": {
        "zh": "stage 之间点对点 send/recv：每个 micro-batch 一个激活、一个梯度；有 bubble",
        "en": "point-to-point send/recv between stages: one activation and one gradient per "
              "micro-batch; has a bubble",
    },
    "pp_typical": {"zh": "≤ {layers} 层；常取 4-16", "en": "≤ {layers} layers; often 4-16"},
    "pp_hardware": {"zh": "跨节点（InfiniBand），中间层",
                    "en": "across nodes (InfiniBand), in the middle"},
    "hybrid_name": {"zh": "3D 混合", "en": "3D hybrid"},
    "hybrid_split": {"zh": "TP {tp} 切层内 × PP {pp} 切层 × DP {dp} 切数据",
                     "en": "TP {tp} within layers × PP {pp} over layers × DP {dp} over the data"},
    "hybrid_communicates": {"zh": "三者之和：TP 在节点内、PP 与 DP 跨节点",
                            "en": "all three: TP inside a node, PP and DP across nodes"},
    "hybrid_typical": {"zh": "TP {tp} × PP {pp} × DP {dp} = {total}",
                       "en": "TP {tp} × PP {pp} × DP {dp} = {total}"},
    "hybrid_hardware": {"zh": "TP 在节点内，PP/DP 跨节点",
                        "en": "TP inside a node, PP/DP across nodes"},
    # --- the columns and cells -------------------------------------------------------------
    "column_paradigm": {"zh": "范式", "en": "paradigm"},
    "column_split": {"zh": "切分什么", "en": "what it splits"},
    "column_communicates": {"zh": "通信什么、何时", "en": "what it communicates, when"},
    "column_degree": {"zh": "并行度", "en": "degree"},
    "column_comm": {"zh": "每卡每步通信", "en": "communication per GPU per step"},
    "column_memory": {"zh": "每卡显存", "en": "memory per GPU"},
    "column_step": {"zh": "步时", "en": "step time"},
    "no_step": {"zh": "—（放不下）", "en": "— (does not fit)"},
    "column_typical": {"zh": "典型并行度", "en": "typical degree"},
    "column_hardware": {"zh": "硬件位置", "en": "where in the hardware"},
    "degree_cell": {"zh": "{degree}（{n_gpus} 卡）", "en": "{degree} ({n_gpus} GPUs)"},
    "comm_cell": {"zh": "{gib:.2f} GiB", "en": "{gib:.2f} GiB"},
    "comm_cell_dims": {"zh": "{gib:.2f} GiB（{dims}）", "en": "{gib:.2f} GiB ({dims})"},
    "yes": {"zh": "是", "en": "yes"},
    "no": {"zh": "否", "en": "no"},
    "table_line": {"zh": "  {name}：{value}", "en": "  {name}: {value}"},
    # --- errors ----------------------------------------------------------------------------
    "no_layout_fits": {
        "zh": "{n_gpus} × {gpu} 上没有能放下 {params:.1f}B 参数的布局：{rejected}",
        "en": "no layout fits {params:.1f}B parameters on {n_gpus} × {gpu}: {rejected}",
    },
    "cannot_lay_out": {
        "zh": "TP {tp} × PP {pp} × DP {dp} 无法布局：{error}",
        "en": "TP {tp} × PP {pp} × DP {dp} cannot be laid out: {error}",
    },
    "degree": {
        "zh": "degree={degree!r} 必须是 >= 2 的整数（每种范式用的 GPU 数）",
        "en": "degree={degree!r} must be an integer >= 2 (GPUs per paradigm)",
    },
    "no_loss_line": {
        "zh": "输出里没有 'loss A -> B' 这一行：\n{output}",
        "en": "no 'loss A -> B' line in the output:\n{output}",
    },
    "port": {
        "zh": "port={port!r} 必须是 TCP 端口（1-65535）",
        "en": "port={port!r} must be a TCP port (1-65535)",
    },
    "timed_out": {"zh": "{timeout:g} s 内没有结束", "en": "did not finish within {timeout:g} s"},
    "exited": {"zh": "第 {i} 条命令退出，返回码 {code}",
               "en": "command {i} exited with {code}"},
    "run_failed": {"zh": "运行失败：{failed}\n{shown}", "en": "the run failed: {failed}\n{shown}"},
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the comparison table of 2.5: a row's name, the column headers, cells
    "hybrid_name", "column_paradigm", "column_split", "column_degree", "column_memory",
    "column_step", "column_typical", "no_step", "comm_cell", "yes", "no",
    "table_line",  # one cell of a row as text: its column's header, a colon, the cell
})
