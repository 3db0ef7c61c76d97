"""Messages of the checks of notebook 2.0, collectives (labs.exercises.collectives_checks)."""

MESSAGES = {
    "case_ranks_length": {
        "zh": "用例 {n}：{world_size} 个 rank，长度 {length}",
        "en": "Case {n}: {world_size} ranks, length {length}",
    },
    "case_hidden_uneven": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，长度不能被 {world_size} 整除",
        "en": "Hidden case {n}: {world_size} ranks, a length not divisible by {world_size}",
    },
    "case_hidden_2d": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，二维张量，{dtype}",
        "en": "Hidden case {n}: {world_size} ranks, a 2-D tensor, {dtype}",
    },
    "case_hidden_dtype": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，{dtype}",
        "en": "Hidden case {n}: {world_size} ranks, {dtype}",
    },
    "case_hidden_few": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，元素比 rank 少",
        "en": "Hidden case {n}: {world_size} ranks, fewer elements than ranks",
    },
    "case_hidden_long": {
        "zh": "隐藏用例 {n}：{world_size} 个 rank，较长的随机张量",
        "en": "Hidden case {n}: {world_size} ranks, a longer random tensor",
    },
    "forbidden_call": {
        "zh": "本练习不能调用 {shown}：{why}",
        "en": "This exercise may not call {shown}: {why}",
    },
    "why_ring": {
        "zh": "这个练习要用点对点通信（dist.isend / dist.irecv）自己实现 ring all-reduce。",
        "en": "this exercise is to write ring all-reduce yourself with point-to-point "
              "communication (dist.isend / dist.irecv).",
    },
    "why_rs_ag": {
        "zh": "这个练习要用 reduce-scatter 加 all-gather 组合出 all-reduce。",
        "en": "this exercise is to build all-reduce from reduce-scatter plus all-gather.",
    },
    "missing_call": {
        "zh": "rank {rank} 没有调用 {what}（例如 dist.{example}）：这个练习要求先 "
              "reduce-scatter 再 all-gather。",
        "en": "rank {rank} did not call {what} (e.g. dist.{example}): this exercise asks for a "
              "reduce-scatter, then an all-gather.",
    },
    "what_result": {
        "zh": "all-reduce 的结果",
        "en": "the all-reduce result",
    },
    "case_bytes": {
        "zh": "用例 S={size} 字节，N={n}",
        "en": "Case S={size} bytes, N={n}",
    },
    "case_measured": {
        "zh": "实测：{n} 个 rank 上用 ByteCounter 数出的字节数",
        "en": "Measured: the bytes ByteCounter counts on {n} ranks",
    },
    "measured_mismatch": {
        "zh": "rank {rank} 实测发送了 {measured} 字节（S={size} 字节，N={n}），你的公式给出 {got:g}",
        "en": "rank {rank} measured {measured} bytes sent (S={size} bytes, N={n}); your formula "
              "gives {got:g}",
    },
}
