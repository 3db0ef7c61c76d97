"""Messages of the invariants the checks hold over what each rank did
(labs.exercises.invariants, labs.exercises.trace).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded
by labs.messages) or format, print or decide."""

MESSAGES = {
    "in_forward": {
        "zh": "（前向）",
        "en": " in the forward pass",
    },
    "in_backward": {
        "zh": "（反向）",
        "en": " in the backward pass",
    },
    "only": {
        "zh": "rank {rank} 调用了 {what}；这个练习只允许用 {allowed}。",
        "en": "rank {rank} called {what}; this exercise allows only {allowed}.",
    },
    "uses": {
        "zh": "rank {rank} 没有调用过 {op}：这个练习的机制要用到它。",
        "en": "rank {rank} never called {op}: the exercise's mechanism needs it.",
    },
    "count": {
        "zh": "rank {rank}{where} 调用了 {got} 次 {op}，这个机制应当恰好 {expected} 次。",
        "en": "rank {rank} called {op} {got} times{where}; the mechanism calls it exactly "
              "{expected} times.",
    },
    "peers": {
        "zh": "rank {rank} 的 {what} 找错了对端：这个机制里它只和 rank {allowed} 交换数据。",
        "en": "rank {rank}'s {what} goes to the wrong peer: in this mechanism it exchanges data "
              "with ranks {allowed} only.",
    },
    "wire_most": {
        "zh": "rank {rank}{where} 发出了 {sent:.0f} 字节，这个机制最多 {most:.0f} 字节："
              "传了多余的数据。",
        "en": "rank {rank} put {sent:.0f} bytes on the wire{where}; the mechanism needs at most "
              "{most:.0f}: it sends more than it has to.",
    },
    "wire_least": {
        "zh": "rank {rank}{where} 只发出了 {sent:.0f} 字节，这个机制至少要 {least:.0f} 字节："
              "少传了数据。",
        "en": "rank {rank} put only {sent:.0f} bytes on the wire{where}; the mechanism needs at "
              "least {least:.0f}: some data is not exchanged.",
    },
    "group": {
        "zh": "rank {rank} 的 {what} 用的是进程组 {got}，应当是它的 {role} 组 {expected}。",
        "en": "rank {rank}'s {what} ran over the group {got}; it belongs in its {role} group "
              "{expected}.",
    },
    "flops": {
        "zh": "rank {rank}{where} 的矩阵乘法做了 {got} 次浮点运算，是应有的 {ratio:.2f} 倍"
              "（应约为 {expected}）：每个 rank 应当只用自己的分片做乘法。",
        "en": "rank {rank}'s matrix products did {got} FLOPs{where}, {ratio:.2f}x the "
              "{expected} its share needs: each rank multiplies with its own shard only.",
    },
    "sharded": {
        "zh": "rank {rank}{where} 用整个权重做了矩阵乘法（{op} 的一个操作数形状是 {shape}）："
              "每个 rank 只用自己的分片相乘，算出完整结果再切片不算切分。",
        "en": "rank {rank} multiplied a whole weight{where} ({op} with an operand of shape "
              "{shape}): each rank multiplies its own shard only; computing the whole result "
              "and slicing it is no sharding.",
    },
    "order": {
        "zh": "rank {rank} 的计算顺序在第 {index} 步与要求的调度不同：得到 {got}，应为 {expected}。",
        "en": "rank {rank}'s compute order departs from the schedule at step {index}: got "
              "{got}, expected {expected}.",
    },
    "not_waited": {
        "zh": "rank {rank} 的 {what}（第 {seq} 个操作）返回的 Work 从没有 wait()：数据可能还没到"
              "就被读取，或者对端一直等着——这是死锁的前兆。请对每个 isend / irecv 返回的 Work "
              "调用 wait()。",
        "en": "rank {rank}'s {what} (operation #{seq}) was never waited for: its buffer may be "
              "read before the data arrives, or the peer left waiting -- a deadlock in the "
              "making. Call wait() on every Work that isend / irecv return.",
    },
}
