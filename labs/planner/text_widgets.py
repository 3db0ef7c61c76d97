"""Messages of the planner widget (labs.planner.widgets, labs.planner.view): controls,
outputs, tables, errors and its two figures.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- errors for bad control values (widgets) -------------------------------------------
    "layout_value": {
        "zh": "{name}={value!r} 必须是正整数，或用 0 / 'auto' 让规划器（planner）来选",
        "en": "{name}={value!r} must be a positive integer, or 0 / 'auto' to let the planner "
              "choose",
    },
    "unknown_preset": {
        "zh": "未知的 preset {preset!r}；请用其中之一：{choices}",
        "en": "preset {preset!r} is unknown; use one of {choices}",
    },
    "fixed_product": {
        "zh": "固定的并行度之积是 {known}，不整除 n_gpus = {n_gpus}；请改这些并行度或 GPU 数",
        "en": "the fixed degrees multiply to {known}, which does not divide n_gpus = {n_gpus}; "
              "change them or the GPU count",
    },
    "degree_divides": {
        "zh": "{name}={x} 不整除 n_gpus = {n_gpus}",
        "en": "{name}={x} does not divide n_gpus = {n_gpus}",
    },
    "v_searched": {
        "zh": "v={v}：搜索只试 v ∈ {chunks}；固定 tp / pp / dp 中的两个，才能估算别的 v",
        "en": "v={v}: the search tries v in {chunks}; fix two of tp / pp / dp to estimate "
              "another v",
    },
    "rejected_family": {"zh": "{family}：{reason}", "en": "{family}: {reason}"},
    # no layout fits: which (what was fixed, or none), what the search tried, the families out
    "no_layout_fits_fixed": {
        "zh": "在 {n_gpus} 张 {gpu} 上，{fixed} 没有放得下的布局。",
        "en": "No layout fits with {fixed} on {n_gpus} {gpu}.",
    },
    "no_layout_fits_any": {
        "zh": "在 {n_gpus} 张 {gpu} 上没有放得下的布局。",
        "en": "No layout fits on {n_gpus} {gpu}.",
    },
    "search_tried": {
        "zh": "搜索已经试过 ZeRO 0～1（有 PP 时）与 ZeRO 0～3（没有 PP 时）、micro-batch 1～8 与 v 1～4；"
              "还能做的：开启全重计算、增加 GPU，或放开一个并行度。",
        "en": "The search already tried ZeRO 0-1 (with PP) and ZeRO 0-3 (without PP), "
              "micro-batches 1-8 and v 1-4; what is left: full recomputation, more GPUs, or "
              "freeing a degree.",
    },
    "families_ruled_out": {
        "zh": "被排除的布局族：\n{families}",
        "en": "Families ruled out:\n{families}",
    },
    "more_rejected": {"zh": "……另有 {n} 类", "en": "... and {n} more"},
    "decide_stops": {
        "zh": "五个步骤到此为止：{error}",
        "en": "the five steps stop: {error}",
    },
    "unknown_controls": {
        "zh": "未知的控件 {names}；可用的有 {choices}",
        "en": "unknown controls {names}; use {choices}",
    },
    "not_accepted": {
        "zh": "{name}={value!r} 不被接受：{error}",
        "en": "{name}={value!r} is not accepted: {error}",
    },
    # --- controls (widgets_view) -----------------------------------------------------------
    "control_n_layers": {"zh": "层数", "en": "Layers"},
    "control_hidden": {"zh": "隐藏维度", "en": "Hidden"},
    "control_n_heads": {"zh": "注意力头数", "en": "Heads"},
    "control_seq_len": {"zh": "序列长度", "en": "Seq len"},
    "control_vocab": {"zh": "词表大小", "en": "Vocab"},
    "control_n_kv_heads": {"zh": "KV 头数（0=同头数）", "en": "KV heads (0=heads)"},
    "control_ffn_hidden": {"zh": "MLP 宽度（0=4h）", "en": "FFN width (0=4h)"},
    "control_mlp": {"zh": "MLP 类型", "en": "MLP"},
    "control_gpu": {"zh": "GPU", "en": "GPU"},
    "control_n_gpus": {"zh": "GPU 数", "en": "GPUs"},
    "control_gpus_per_node": {"zh": "每节点 GPU", "en": "GPUs/node"},
    "control_global_batch": {"zh": "全局 batch", "en": "Global batch"},
    "control_micro_batch": {"zh": "micro-batch", "en": "Micro-batch"},
    "control_precision": {"zh": "精度", "en": "Precision"},
    "control_zero_stage": {"zh": "ZeRO stage", "en": "ZeRO stage"},
    "control_recompute": {"zh": "重算", "en": "Recompute"},
    "control_schedule": {"zh": "流水线调度", "en": "Pipeline schedule"},
    "control_tp": {"zh": "TP（0=自动）", "en": "TP (0=auto)"},
    "control_pp": {"zh": "PP（0=自动）", "en": "PP (0=auto)"},
    "control_dp": {"zh": "DP（0=自动）", "en": "DP (0=auto)"},
    "control_v": {"zh": "v（0=自动）", "en": "v (0=auto)"},
    "group_model": {"zh": "模型", "en": "Model"},
    "group_cluster": {"zh": "集群", "en": "Cluster"},
    "group_training": {"zh": "训练", "en": "Training"},
    "group_layout": {"zh": "布局", "en": "Layout"},
    # --- outputs ---------------------------------------------------------------------------
    "output_message": {"zh": "输入的问题", "en": "Problems with the inputs"},
    "output_summary": {"zh": "所选布局：步时与 MFU", "en": "Chosen layout: time and MFU"},
    "output_steps": {"zh": "decide 的五个步骤", "en": "The five steps of decide"},
    "output_memory": {"zh": "每卡显存", "en": "Memory per GPU"},
    "output_timeline": {"zh": "流水线 bubble（模拟）", "en": "Pipeline bubble (simulated)"},
    "output_comm": {"zh": "各维度的通信", "en": "Communication per dimension"},
    "output_plans": {"zh": "最佳方案", "en": "Top plans"},
    "no_layout": {"zh": "没有布局", "en": "no layout"},
    "decided_at": {"zh": "在第 {step} 步定下", "en": "decided at step {step}"},
    "does_not_fit": {"zh": "放不下：{reasons}", "en": "does NOT fit: {reasons}"},
    "mode_auto": {"zh": "自动选择的布局：", "en": "auto layout:"},
    "mode_fixed": {"zh": "固定的布局：", "en": "fixed layout:"},
    "summary_head": {"zh": "{config}（{fits}）", "en": "{config} ({fits})"},
    "summary_line": {
        "zh": "步时 {step:.2f} s，{tokens:,.0f} tokens/s（每卡 {per_gpu:,.0f}），MFU {mfu:.1%}，"
              "bubble {bubble:.1%}",
        "en": "step {step:.2f} s, {tokens:,.0f} tokens/s ({per_gpu:,.0f} per GPU), "
              "MFU {mfu:.1%}, bubble {bubble:.1%}",
    },
    "comm_dim": {"zh": "维度", "en": "dim"},
    "comm_gib": {"zh": "每卡每步 GiB", "en": "GiB per GPU per step"},
    "comm_time": {"zh": "耗时（s）", "en": "time (s)"},
    "comm_exposed": {"zh": "暴露的时间（s）", "en": "exposed (s)"},
    "comm_link": {"zh": "链路", "en": "link"},
    "no_fitting_plan": {"zh": "没有放得下的方案", "en": "no fitting plan"},
    "plans_layout": {"zh": "布局", "en": "layout"},
    "plans_step": {"zh": "步时（s）", "en": "step (s)"},
    "plans_tokens": {"zh": "tokens/s", "en": "tokens/s"},
    "plans_mfu": {"zh": "MFU", "en": "MFU"},
    "plans_gib": {"zh": "每卡 GiB", "en": "GiB per GPU"},
    "cannot_plan": {"zh": "无法规划：", "en": "Cannot plan this:"},
    # --- the two figures -------------------------------------------------------------------
    "memory_weights": {"zh": "权重", "en": "weights"},
    "memory_grads": {"zh": "梯度", "en": "gradients"},
    "memory_optimizer": {"zh": "优化器状态", "en": "optimizer"},
    "memory_activations": {"zh": "激活", "en": "activations"},
    "memory_usable": {"zh": "可用", "en": "usable"},
    "memory_capacity": {"zh": "显存容量", "en": "capacity"},
    "memory_title": {"zh": "每卡显存（GiB）", "en": "GiB per GPU"},
    "memory_title_of": {"zh": "每卡显存（GiB；{title}）", "en": "GiB per GPU ({title})"},
    "memory_stage": {"zh": "stage {stage}，{gpu}", "en": "stage {stage}, {gpu}"},
    "timeline_stage_idle": {"zh": "stage {stage} 空闲 {idle:.0%}",
                            "en": "stage {stage} idle {idle:.0%}"},
    "timeline_time": {"zh": "时间（t_F = 1）", "en": "time (t_F = 1)"},
    "timeline_backward_input": {"zh": "反向 B（输入梯度）", "en": "backward B (input grad)"},
    "timeline_weight": {"zh": "W（权重梯度）", "en": "W (weight grad)"},
    "timeline_title": {
        "zh": "画出前 {ranks}/{pp} 个 stage、前 {mbs}/{m} 个 micro-batch（v={v}）\n"
              "行标：这一段的空闲占比；整步的 bubble {bubble:.1%}",
        "en": "first {ranks} of {pp} stages, {mbs} of {m} micro-batches drawn (v={v})\n"
              "rows: idle share of this window; whole step's bubble {bubble:.1%}",
    },
    # --- notes under the summary: what the screen would otherwise leave unsaid --------------
    "note_auto_searched": {
        "zh": "auto 模式：micro-batch、v、ZeRO 阶段与重计算由搜索决定（当前：micro-batch "
              "{micro_batch}、v {v}、ZeRO-{zero_stage}、重计算 {recompute}），这些控件只在固定布局时"
              "起作用",
        "en": "auto mode: the search chooses the micro-batch, v, the ZeRO stage and the "
              "recomputation (now: micro-batch {micro_batch}, v {v}, ZeRO-{zero_stage}, recompute "
              "{recompute}); those controls act only on a fixed layout",
    },
    "note_v_searched": {
        "zh": "v 留空（auto）：在 {chunks} 中取了最快的 v = {v}",
        "en": "v left free (auto): the fastest of {chunks} was taken, v = {v}",
    },
    "note_tp_across_nodes": {
        "zh": "TP = {tp} 超过每节点的 {per_node} 张卡：TP 的 all-reduce 走 InfiniBand，"
              "练习里这样的布局不合格",
        "en": "TP = {tp} exceeds the {per_node} GPUs of a node: its all-reduces cross "
              "InfiniBand, and the exercises count such a layout as invalid",
    },
    "note_steps_differ": {
        "zh": "上面显示的是{shown}；五步流程面板高亮的是它自己走出的布局 {steps}，两者不同",
        "en": "shown above: {shown}; the five-steps panel highlights the layout its walk reached, "
              "{steps}, a different one",
    },
    "shown_search": {"zh": "搜索的最快配置", "en": "the search's fastest layout"},
    "shown_fixed": {"zh": "你固定的布局", "en": "the layout you fixed"},
    "note_schedule": {
        "zh": "调度：{schedule}。选了 zb-h1 时，搜索在 v=1 的布局上把 ZB-H1 和 1F1B 并排试，取更快的；"
              "ZB-H1 的 bubble 约为 1F1B 的三分之一（W 填进空闲），但每个 stage 都要存 min(pp, m) 个 "
              "micro-batch 的激活（1F1B 的最后一个 stage 只存 1 个）",
        "en": "schedule: {schedule}. With zb-h1 chosen, the search tries ZB-H1 beside 1F1B on the "
              "v=1 layouts and keeps the faster; ZB-H1's bubble is about a third of 1F1B's (W fills "
              "the idle time), but every stage keeps min(pp, m) micro-batches' activations (1F1B's "
              "last stage keeps 1)",
    },
    "note_recompute": {
        "zh": "重计算：{recompute}。搜索对每个布局依次试 none、selective、full，取第一个放得下的"
              "（重算越多越慢）；你固定的布局用上面设置的方式",
        "en": "recomputation: {recompute}. The search tries none, then selective, then full for "
              "every layout and keeps the first that fits (more recomputation is slower); a "
              "layout you fix runs the setting above",
    },
    "note_zero3": {
        "zh": "ZeRO-3：规划器让每一遍（前向、重算的前向、反向）的参数 all-gather 只藏在这一遍的计算"
              "下面，并且重叠期间计算按实测平均慢 18.9%（通信 kernel 占用 SM 和显存带宽）；"
              "PTD-P 表 2 的三次 ZeRO-3 运行误差在 +1% 到 +13% 之间（2.4 节的校准表）",
        "en": "ZeRO-3: the planner hides each pass's parameter all-gathers (forward, recomputed "
              "forward, backward) only under that pass's compute, and slows that compute by the "
              "measured average of 18.9% while they overlap (the collective's kernels take SMs "
              "and memory bandwidth); PTD-P Table 2's three ZeRO-3 runs come out between +1% "
              "and +13% (the calibration table of 2.4)",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # the controls' labels and their groups; the outputs' names; headings
    "control_n_layers", "control_hidden", "control_n_heads", "control_seq_len", "control_vocab",
    "control_n_kv_heads", "control_ffn_hidden", "control_mlp", "control_gpu", "control_n_gpus",
    "control_gpus_per_node", "control_global_batch", "control_micro_batch", "control_precision",
    "control_zero_stage", "control_recompute", "control_schedule", "control_tp", "control_pp",
    "control_dp", "control_v", "group_model", "group_cluster", "group_training",
    "group_layout", "output_memory", "output_plans", "mode_auto", "mode_fixed", "cannot_plan",
    # the tables' column headers, and what a table or a step shows when it has no row
    "comm_dim", "comm_time", "comm_exposed", "comm_link", "plans_layout", "plans_step",
    "plans_tokens", "plans_mfu", "plans_gib", "no_fitting_plan", "no_layout",
    # the memory figure's legend and title; the timeline's axis and legend
    "memory_weights", "memory_grads", "memory_optimizer", "memory_activations",
    "memory_usable", "memory_capacity", "memory_title", "timeline_time", "timeline_weight",
    "summary_head",  # the summary's head: the layout, then its verdict label in brackets
    "rejected_family",  # a list item: the family's name, a colon, why it was ruled out
    "more_rejected",  # the last line of that list, alone
})
