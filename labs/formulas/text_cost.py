"""Messages of labs.formulas.cost: the "does it fit?" verdicts (2.1, 2.2, 2.3) and bad input.

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
    # --- bad input ---------------------------------------------------------------------------
    "target_out_of_range": {
        "zh": "target={target} 必须严格介于 0 和 1 之间",
        "en": "target={target} must lie strictly between 0 and 1",
    },
    "card_bytes_not_positive": {
        "zh": "card_bytes={card_bytes} 必须 > 0（例如 A100-40GB 是 40e9）",
        "en": "card_bytes={card_bytes} must be > 0 (e.g. 40e9 for an A100-40GB)",
    },
    "budget_out_of_range": {
        "zh": "budget={budget} 必须在 (0, 1] 之内",
        "en": "budget={budget} must lie in (0, 1]",
    },
    # --- one card (2.1, decimal GB) ----------------------------------------------------------
    "one_card_head": {
        "zh": "模型状态 {states:.2f} GB，占 {card:.0f} GB 显卡的 {share:.0%}（预算 {budget:.0%}）",
        "en": "model states {states:.2f} GB = {share:.0%} of the {card:.0f} GB card "
              "(budget {budget:.0%})",
    },
    "one_card_head_activations": {
        "zh": "模型状态 {states:.2f} GB，占 {card:.0f} GB 显卡的 {share:.0%}（预算 {budget:.0%}）；"
              "加上激活值共 {total:.2f} GB",
        "en": "model states {states:.2f} GB = {share:.0%} of the {card:.0f} GB card "
              "(budget {budget:.0%}); with activations {total:.2f} GB",
    },
    "one_card_fits": {
        "zh": "{head} -> 放得下：普通的数据并行（DDP）就够了",
        "en": "{head} -> fits: plain data parallelism (DDP) works",
    },
    "one_card_does_not_fit": {
        "zh": "{head} -> 放不下：把模型状态分片（ZeRO/FSDP）、切分模型（TP/PP），"
              "或者减少激活值（checkpointing 重计算、更小的 micro-batch）",
        "en": "{head} -> does not fit: shard the states (ZeRO/FSDP), split the model (TP/PP) or "
              "cut activations (checkpointing, smaller micro-batch)",
    },
    # --- tensor parallelism (2.2, GiB) -------------------------------------------------------
    "tp_head": {
        "zh": "模型状态 {states:.1f} GiB，占 {card:.0f} GiB 显卡的 {share:.0%}（预算 {budget:.0%}）；"
              "一层的模型状态 {layer:.2f} GiB",
        "en": "model states {states:.1f} GiB = {share:.0%} of the {card:.0f} GiB card "
              "(budget {budget:.0%}); one layer's model states {layer:.2f} GiB",
    },
    "tp_not_needed": {
        "zh": "{head} -> 不需要 TP：一张卡就放得下（DDP，2.1）",
        "en": "{head} -> TP not needed: one card holds it (DDP, 2.1)",
    },
    "tp_not_enough": {
        "zh": "{head} -> 即使 TP={tp}（搜索到注意力头不能再均分为止），每个 GPU 上仍有 "
              "{per_gpu:.1f} GiB：光是模型状态就需要至少 {min_shards} 路分片，即节点内的 TP"
              "（<= {gpus_per_node} 个 GPU）乘以流水线级数（2.3）或 ZeRO",
        "en": "{head} -> even TP={tp} (the search stops where the heads no longer split) leaves "
              "{per_gpu:.1f} GiB per GPU: the model states alone need >= {min_shards}-way "
              "sharding, i.e. TP inside the node (<= {gpus_per_node} GPUs) times pipeline "
              "stages (2.3) or ZeRO",
    },
    "tp_leaves_node": {
        "zh": "{head} -> TP={tp} 放得下（每个 GPU {per_gpu:.1f} GiB），但超出了一个节点"
              "（{gpus_per_node} 个 GPU）：让 TP 留在节点内，再加流水线级（2.3）或 ZeRO",
        "en": "{head} -> TP={tp} fits ({per_gpu:.1f} GiB per GPU) but leaves the node "
              "({gpus_per_node} GPUs): keep TP inside the node, add pipeline stages (2.3) or ZeRO",
    },
    "tp_smallest": {
        "zh": "{head} -> 放得下的最小 TP：{tp}（状态/TP = {per_gpu:.1f} GiB）；再大只会多花通信",
        "en": "{head} -> smallest TP that fits: {tp} (states/TP = {per_gpu:.1f} GiB); more only "
              "costs communication",
    },
    # --- pipeline stages (2.3, GiB) ----------------------------------------------------------
    "pp_head": {
        "zh": "一层的模型状态 {layer:.1f} GiB，预算为 {card:.0f} GiB 显卡的 {budget:.0%} -> TP 至少 "
              "{tp_needed}",
        "en": "one layer's model states {layer:.1f} GiB, budget {budget:.0%} of the {card:.0f} GiB "
              "card -> TP at least {tp_needed}",
    },
    "pp_no_layer_fits": {
        "zh": "{head}；TP={tp} 时一个 GPU 连一层都放不下",
        "en": "{head}; with TP={tp} not even one layer fits a GPU",
    },
    "pp_stages": {
        "zh": "{head}；TP={tp} 时每个 GPU {layers_per_gpu} 层，流水线级数（PP stages）>= {pp}",
        "en": "{head}; with TP={tp}: {layers_per_gpu} layers per GPU, PP stages >= {pp}",
    },
}
