"""Messages of the checks of notebook 2.0, collectives (labs.exercises.collectives_checks).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

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
    "not_in_place": {
        "zh": "rank {rank} 的输入张量没有被原地改成总和：题目要求原地（in place）修改 tensor，"
              "而不是在副本上计算后返回。",
        "en": "rank {rank}'s input tensor was not changed in place into the sum: the statement "
              "asks to modify tensor in place, not to compute on a copy and return it.",
    },
    "not_a_ring": {
        "zh": "rank {rank} 与 rank {peers} 通信了：ring 中每个 rank 只与左右两个邻居"
              "（rank {left} 和 rank {right}）交换数据。",
        "en": "rank {rank} exchanged data with rank {peers}: in a ring each rank talks only to "
              "its two neighbours (rank {left} and rank {right}).",
    },
    "ring_bytes_off": {
        "zh": "rank {rank} 发送了 {sent} 字节，ring all-reduce 每个 rank 应发送约 "
              "2(N-1)/N·S = {expected:.0f} 字节（S={size} 字节，N={n}）：{why}",
        "en": "rank {rank} sent {sent} bytes; in a ring all-reduce each rank sends about "
              "2(N-1)/N·S = {expected:.0f} bytes (S={size} bytes, N={n}): {why}",
    },
    "why_too_many_bytes": {
        "zh": "发送得太多——每一步只传一个块（约 S/N），而不是整个张量。",
        "en": "too many: each step passes one chunk (about S/N), not the whole tensor.",
    },
    "why_too_few_bytes": {
        "zh": "发送得太少——结果不可能只靠这些点对点通信得到。",
        "en": "too few: the result cannot come from these point-to-point messages alone.",
    },
    "why_formula": {
        "zh": "这个练习要你自己写出公式，而不是调用课程里的实现。",
        "en": "this exercise is to write the formula yourself, not to call the course's.",
    },
    "p2p_dtype": {
        "zh": "{kind} 的张量是 {got}，而输入是 {dtype}：点对点通信两端的 dtype 必须相同"
              "（接收缓冲区用 torch.empty_like(...) 按输入的 dtype 创建）",
        "en": "a {kind} tensor is {got} while the input is {dtype}: both ends of a point-to-point "
              "message need the same dtype (create the receive buffer with torch.empty_like(...))",
    },
}
