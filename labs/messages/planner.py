"""Messages of labs.planner about the hardware a run asks for: the precision's arithmetic and
FlashAttention on the chosen GPU (the rest of the planner's messages: labs.messages.hybrid).

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
}
