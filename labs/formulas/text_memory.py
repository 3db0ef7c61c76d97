"""Messages of labs.formulas.memory: bad input to the memory formulas.

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
    "unknown_optimizer": {
        "zh": "optimizer={optimizer!r} 未知；请用其中之一：{choices}",
        "en": "optimizer={optimizer!r} is unknown; use one of {choices}",
    },
    "unknown_precision": {
        "zh": "precision={precision!r} 未知；请用 'fp32' 或 'mixed'"
              "（fp16/bf16 的权重和梯度，外加一份 fp32 的主权重副本，即 master copy）",
        "en": "precision={precision!r} is unknown; use 'fp32' or 'mixed' "
              "(fp16/bf16 weights and grads with an fp32 master copy)",
    },
    "n_params_negative": {
        "zh": "n_params={n_params} 必须 >= 0",
        "en": "n_params={n_params} must be >= 0",
    },
    "not_positive_integer": {
        "zh": "{name}={value!r} 必须是正整数",
        "en": "{name}={value!r} must be a positive integer",
    },
    "unknown_zero_stage": {
        "zh": "zero_stage={zero_stage!r}：请用其中之一：{stages}（0 = 不分片）",
        "en": "zero_stage={zero_stage!r}: use one of {stages} (0 = no sharding)",
    },
    "unknown_recompute": {
        "zh": "recompute={recompute!r} 未知；请用其中之一：{choices}",
        "en": "recompute={recompute!r} is unknown; use one of {choices}",
    },
    "stage_out_of_range": {
        "zh": "stage={stage} 必须在 [0, {p}) 之内",
        "en": "stage={stage} must lie in [0, {p})",
    },
}
