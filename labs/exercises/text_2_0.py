"""Messages of the checks of notebook 2.0, collectives (labs.exercises.collectives_checks).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

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
    "not_in_place": {
        "zh": "rank {rank} 的输入张量没有被原地改成总和：题目要求原地（in place）修改 tensor，"
              "而不是在副本上计算后返回。",
        "en": "rank {rank}'s input tensor was not changed in place into the sum: the statement "
              "asks to modify tensor in place, not to compute on a copy and return it.",
    },
    "p2p_dtype": {
        "zh": "{kind} 的张量是 {got}，而输入是 {dtype}：点对点通信两端的 dtype 必须相同"
              "（接收缓冲区用 torch.empty_like(...) 按输入的 dtype 创建）",
        "en": "a {kind} tensor is {got} while the input is {dtype}: both ends of a point-to-point "
              "message need the same dtype (create the receive buffer with torch.empty_like(...))",
    },
}
