"""Messages of labs.planner about the hardware a run asks for (the precision's arithmetic,
FlashAttention on the chosen GPU), a layout no whole dp can complete, and step 2 when no TP
divides the heads (the rest of the planner's messages: labs.messages.hybrid).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

MESSAGES = {
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
