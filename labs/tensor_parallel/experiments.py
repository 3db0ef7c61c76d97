"""The measured experiments of notebook 2.2: rank bodies for ``labs.launch`` that return numbers
and timeline events (``labs.timeline.Event``, in seconds from a shared barrier).

- :func:`layerwise_step`: naive (layer-wise) model parallelism, one stage of blocks per rank,
  activations sent forward and gradients back: one rank busy at a time.
- :func:`tp_step_times`: compute vs communication per rank of a TP block as t grows.
- :func:`overlap_backward`: Megatron's overlap of the input-gradient all-reduce with the weight
  gradient in a column-parallel layer's backward (arXiv:1909.08053; Megatron's
  ``LinearWithGradAccumulationAndAsyncCommunication``), timed with and without it;
  :func:`overlap_timeline` lays both out as compute and communication lanes.
- :func:`pairing_mlp`: the MLP split column->row (one all-reduce) vs wrong pairings, counted.
- :func:`activation_bytes_per_rank`: activation memory per rank, TP / SP / checkpointing.

The ``interpret_*`` functions turn those measurements into the notebook's conclusion, in
Chinese: what the general expectation is, whether this machine's numbers agree, and why not
when they do not (a few CPU cores shared by the ranks, gloo over loopback instead of NVLink).
They take plain numbers, so the same wording follows any machine's measurement.
"""
from __future__ import annotations

import statistics
import time
from typing import Sequence

import torch
import torch.distributed as dist

import labs
from labs.models import TinyGPT, TinyGPTConfig, language_model_loss
from labs.tensor_parallel.comm import CommCounter
from labs.tensor_parallel.layers import ColumnParallelLinear, ParallelMLP, RowParallelLinear
from labs.tensor_parallel.model import ParallelBlock, ParallelTinyGPT
from labs.timeline import REAL_COMPUTE, Event, Timeline

__all__ = ["layerwise_step", "tp_step_times", "overlap_backward", "overlap_timeline",
           "pairing_mlp", "activation_bytes_per_rank", "PAIRINGS", "overlap_parts",
           "interpret_layerwise", "interpret_overlap", "interpret_tp_scaling",
           "interpret_activations"]

NOISE = 0.05  # relative differences below 5 % are within this course's timing noise


def _clock_start() -> float:
    dist.barrier()
    return time.perf_counter()  # CLOCK_MONOTONIC: one clock for all processes of the machine


def layerwise_step(config: TinyGPTConfig, batch: int, *, seed: int = 0):
    """Rank body: one forward + backward of TinyGPT split into ``world`` stages of blocks.

    Returns (loss or None, this rank's timeline events (stage = rank), counter events, this
    stage's gradients by full name); ``Timeline.from_ranks`` joins the ranks' events.
    """
    from labs.data import get_batch

    rank, world = dist.get_rank(), dist.get_world_size()
    if config.n_layer % world:
        raise ValueError(f"{config.n_layer} layers cannot be split into {world} equal stages")
    per = config.n_layer // world
    device = labs.device()
    model = TinyGPT(config, seed=seed).to(device)
    x_ids, y_ids = (t.to(device) for t in get_batch(0, batch, config.block_size, seed=seed))
    shape = (batch, config.block_size, config.n_embd)
    counter, events = CommCounter(), []
    t0 = _clock_start()

    def timed(what, fn):
        start = time.perf_counter()
        out = fn()
        events.append(Event(what, None, rank, start - t0, time.perf_counter() - t0))
        return out

    def p2p(kind, tensor, peer, phase):
        start = time.perf_counter()
        (dist.send if kind == "send" else dist.recv)(tensor, peer)
        counter.record(kind, phase, tensor, f"stage {rank}", start)

    if rank == 0:
        inp = None
        x = timed("forward", lambda: model.run_blocks(model.embed(x_ids), 0, per))
    else:
        inp = torch.empty(shape, device=device)
        p2p("recv", inp, rank - 1, "forward")
        inp.requires_grad_()
        x = timed("forward", lambda: model.run_blocks(inp, rank * per, (rank + 1) * per))
    loss = None
    if rank < world - 1:
        p2p("send", x.detach(), rank + 1, "forward")
        grad = torch.empty(shape, device=device)
        p2p("recv", grad, rank + 1, "backward")
        timed("backward", lambda: x.backward(grad))
    else:
        loss = timed("forward", lambda: language_model_loss(model.head(x), y_ids))
        timed("backward", lambda: loss.backward())
    if inp is not None:
        p2p("send", inp.grad, rank - 1, "backward")
    grads = {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None}
    return (None if loss is None else loss.item()), events, counter.events, grads


def _tp_block(config: TinyGPTConfig, counter):
    return ParallelBlock(TinyGPT(config, seed=0).transformer.h[0], counter=counter)


def tp_step_times(config: TinyGPTConfig, batch: int, *, repeats: int = 5):
    """Rank body: median seconds of a TP block's forward + backward, split into communication
    (time inside blocking collectives, waiting for peers included) and the rest (compute)."""
    torch.set_num_threads(1)  # one core per rank, as one GPU per rank: TP=1 gets one core too
    counter = CommCounter()
    block = _tp_block(config, counter)
    device = labs.device()
    x = torch.randn(batch, config.block_size, config.n_embd, device=device,
                    generator=torch.Generator(device).manual_seed(0))
    totals, comms = [], []
    for i in range(repeats + 1):  # the first run warms up
        dist.barrier()
        counter.reset()
        start = time.perf_counter()
        block(x.requires_grad_()).sum().backward()
        if i:
            totals.append(time.perf_counter() - start)
            comms.append(counter.seconds)
    total, comm = statistics.median(totals), statistics.median(comms)
    return {"step": total, "communication": comm, "compute": total - comm}


class _OverlappedColumnLinear(torch.autograd.Function):
    """y = x W^T (column-parallel, after f). Backward: grad_x = grad_y W, all-reduced; with
    ``overlap`` the all-reduce is started before grad_W = grad_y^T x is computed, and waited after."""

    @staticmethod
    def forward(ctx, x, weight, overlap, events, clock):
        ctx.save_for_backward(x, weight)
        ctx.overlap, ctx.events, ctx.clock = overlap, events, clock
        return x @ weight.t()  # (N, in) x (in, out/t) -> (N, out/t)

    @staticmethod
    def backward(ctx, grad_y):
        x, weight = ctx.saved_tensors
        t0, log = ctx.clock[0], ctx.events
        start = time.perf_counter()
        grad_x = grad_y @ weight  # (N, out/t) x (out/t, in) -> (N, in): a partial sum
        log.append(Event("grad input", None, None, start - t0, time.perf_counter() - t0))
        start = time.perf_counter()
        work = dist.all_reduce(grad_x, async_op=True) if ctx.overlap else None
        if work is None:
            dist.all_reduce(grad_x)
            log.append(Event("all-reduce", None, None, start - t0, time.perf_counter() - t0))
        w_start = time.perf_counter()
        grad_w = grad_y.t() @ x  # (out/t, N) x (N, in) -> (out/t, in)
        log.append(Event("grad weight", None, None, w_start - t0, time.perf_counter() - t0))
        if work is not None:
            work.wait()  # the all-reduce ran in gloo's thread while grad_w was computed
            log.append(Event("all-reduce", None, None, start - t0, time.perf_counter() - t0))
        return grad_x, grad_w, None, None, None


def overlap_backward(tokens: int, in_features: int, out_features: int, *, overlap: bool,
                     repeats: int = 3):
    """Rank body: backward of one column-parallel layer; returns (median seconds, events of
    the last repeat, grad_x of the last repeat)."""
    tp, device = dist.get_world_size(), labs.device()
    g = torch.Generator(device).manual_seed(0)
    x = torch.randn(tokens, in_features, generator=g, device=device)
    weight = torch.randn(out_features, in_features, generator=g,
                         device=device).chunk(tp)[dist.get_rank()]
    times = []
    for _ in range(repeats + 1):
        events, clock = [], [0.0]
        xi, w = x.clone().requires_grad_(), weight.clone().requires_grad_()
        y = _OverlappedColumnLinear.apply(xi, w, overlap, events, clock)
        clock[0] = _clock_start()  # all ranks start the backward together
        y.backward(torch.ones_like(y))
        times.append(time.perf_counter() - clock[0])
    return statistics.median(times[1:]), events, xi.grad.cpu()


OVERLAP_LANES = {"grad input": "compute", "grad weight": "compute", "all-reduce": "comm"}


def overlap_timeline(events_by_mode: dict) -> Timeline:
    """One Timeline of :func:`overlap_backward`'s events, ``{overlap: events}``: for mode 0 (no
    overlap) and mode 1 (overlap), a lane of compute and a lane of communication."""
    rows: dict[str, list] = {}
    for mode, events in sorted(events_by_mode.items()):
        for lane in ("comm", "compute"):
            rows[f"mode {int(mode)} {lane}"] = [e for e in events if OVERLAP_LANES[e.kind] == lane]
    return Timeline(list(rows.values()), mode=REAL_COMPUTE, rows=list(rows))


PAIRINGS = ("column->row", "row->column", "column->column")


def pairing_mlp(pairing: str, n_embd: int, tokens: int):
    """Rank body: the MLP with its two linears split as ``pairing``; returns (output, input
    gradient, counter summary, full-MLP output, full input gradient)."""
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing={pairing!r}: use one of {PAIRINGS}")
    config = TinyGPTConfig(vocab_size=96, block_size=8, n_layer=1, n_head=4, n_embd=n_embd)
    device = labs.device()
    full = TinyGPT(config, seed=0).transformer.h[0].mlp.to(device)
    counter = CommCounter()
    kw = dict(counter=counter)
    if pairing == "column->row":  # Megatron: GELU on local slices, one all-reduce
        mlp = ParallelMLP(full, **kw)
    elif pairing == "row->column":  # GELU needs the full sum: all-reduce 4h, gather the output
        first = RowParallelLinear.from_linear(full.c_fc, input_is_parallel=False, **kw)
        second = ColumnParallelLinear.from_linear(full.c_proj, gather_output=True, **kw)
        mlp = torch.nn.Sequential(first, torch.nn.GELU(), second)
    else:  # column->column: gather the 4h activation for the second layer, gather the output
        first = ColumnParallelLinear.from_linear(full.c_fc, gather_output=True, **kw)
        second = ColumnParallelLinear.from_linear(full.c_proj, gather_output=True, **kw)
        mlp = torch.nn.Sequential(first, torch.nn.GELU(), second)
    x = torch.randn(tokens, n_embd, device=device, generator=torch.Generator(device).manual_seed(1))
    out = []
    for module in (mlp, full):
        xi = x.clone().requires_grad_()
        y = module(xi)
        y.backward(torch.ones_like(y))
        out += [y.detach().cpu(), xi.grad.cpu()]
    return out[0], out[1], counter.summary(), out[2], out[3]


def activation_bytes_per_rank(config: TinyGPTConfig, batch: int, *,
                              sequence_parallel: bool = False, checkpoint: bool = False,
                              repeats: int = 2):
    """Rank body: (activation bytes autograd keeps on this rank, median seconds of forward +
    backward) for the TP TinyGPT on the default group (t = world size)."""
    from labs import memory
    from labs.data import get_batch

    torch.set_num_threads(1)  # one core per rank, whatever the world size
    model = ParallelTinyGPT(TinyGPT(config, seed=0), sequence_parallel=sequence_parallel,
                            checkpoint=checkpoint)
    x, y = (t.to(labs.device()) for t in get_batch(0, batch, config.block_size))
    saved = memory.measured_activation_bytes(model, x, y)
    times = []
    for _ in range(repeats + 1):
        dist.barrier()
        start = time.perf_counter()
        model(x, y)[1].backward()
        times.append(time.perf_counter() - start)
    return saved, statistics.median(times[1:])


# --- what the measurements say (Chinese, for the notebook) ----------------------------------------

def _crowded(ranks: int, cores: int | None) -> str:
    """Why a CPU run differs from GPUs: the ranks share the cores, gloo goes over loopback."""
    shared = (f"{ranks} 个 rank 挤在 {cores} 个 CPU 核上，互相抢核；"
              if cores is not None and ranks > cores else "")
    return (f"{shared}gloo 的集合通信由 CPU 线程执行、经本机的回环网络（loopback）传输，"
            "要占用与计算相同的核，而不是像 GPU 上那样走 NVLink、由专门的硬件搬运数据")


def interpret_layerwise(busy: Sequence[float]) -> str:
    """Section 1 of 2.2: each rank's busy share of one layer-wise step (``Timeline.busy_seconds``
    divided by the span). Expected: at most one rank computes at a time, so the shares add up
    to at most 100 % and each is about 1/n."""
    n, total = len(busy), sum(busy)
    mean = total / n
    head = (f"{n} 个 rank 的忙碌占比 {'、'.join(f'{b:.0%}' for b in busy)}，合计 {total:.0%}；"
            f"各 stage 计算量相同时，每个 rank 的理想值是 1/{n} = {1 / n:.0%}。")
    if total > 1 + NOISE:
        return head + ("\n结论：合计超过 100%，说明有两个 rank 在同一时刻计算。层间并行的依赖链不允许"
                       "这样，这是计时误差（例如某个 rank 的计时起点晚了），请重新运行这个单元格。")
    text = head + (f"\n结论：合计不超过 100%，任一时刻至多一个 rank 在计算，平均每个 rank 只忙 "
                   f"{mean:.0%}：显存分开了，计算没有并行。")
    if total < 0.7:
        text += (f"其余 {1 - total:.0%} 的时间没有任何 rank 在计算：send/recv、进程间的等待和 "
                 "Python 的开销在这台机器上和这个小模型的计算一样长。")
    return text


def overlap_parts(events) -> dict:
    """Seconds of the all-reduce and of the weight gradient in one repeat of
    :func:`overlap_backward` (its events): the most overlap can hide is the smaller one."""
    out = {"all-reduce": 0.0, "grad weight": 0.0}
    for e in events:
        if e.kind in out:
            out[e.kind] += e.end - e.start
    return out


def interpret_overlap(no_overlap_s: float, overlap_s: float, *, ranks: int, cores: int | None,
                      comm_s: float | None = None, weight_grad_s: float | None = None) -> str:
    """Section 5 of 2.2: backward of a column-parallel layer without and with the all-reduce
    overlapped with the weight gradient. Expected on GPUs: faster, by up to
    min(all-reduce, weight gradient); on a few shared CPU cores: little or nothing."""
    speedup = no_overlap_s / overlap_s
    text = (f"不重叠 {no_overlap_s * 1e3:.1f} ms，重叠 {overlap_s * 1e3:.1f} ms，"
            f"加速比 {speedup:.2f}×")
    if comm_s is not None and weight_grad_s is not None:
        hidden = min(comm_s, weight_grad_s)
        best = no_overlap_s / max(no_overlap_s - hidden, 1e-12)
        text += (f"；重叠最多能藏起 all-reduce（{comm_s * 1e3:.1f} ms）与权重梯度"
                 f"（{weight_grad_s * 1e3:.1f} ms）中较短的一个，即最多 {best:.2f}×")
    text += "。\n"
    if speedup >= 1 + NOISE:
        text += (f"结论：在这台机器上重叠有效，一步省下了 {1 - 1 / speedup:.0%}："
                 "all-reduce 在后台进行时，权重梯度的计算没有停下来等它。")
        if cores is not None and ranks > cores:
            text += "（这里的核比 rank 少，收益仍可能随机器负载变化。）"
        return text
    if speedup > 1 - NOISE:
        text += "结论：在这台机器上两种方式相差不到 5%，在计时噪声之内：重叠没有带来可见的收益。"
    else:
        text += f"结论：在这台机器上重叠反而慢了 {1 / speedup - 1:.0%}。"
    return text + (f"原因：{_crowded(ranks, cores)}，所以\"同时\"通信和计算其实是在抢同一批核。"
                   "在 GPU 上，NCCL 的通信在单独的 CUDA 流上进行，由 NVLink / 网卡的 DMA 和少量 SM "
                   "完成，能和计算真正并行，省下的时间接近上面的上限。")


def interpret_tp_scaling(degrees: Sequence[int], compute: Sequence[float],
                         communication: Sequence[float], *, cores: int | None) -> str:
    """Section 6 of 2.2 (myth 1): one TP block at t = degrees[i], seconds of compute and of
    communication per step (the slowest rank). Expected: compute ~ 1/t, communication share
    rising, efficiency T_1 / (t · T_t) falling."""
    steps = [c + m for c, m in zip(compute, communication)]
    shares = [m / s for m, s in zip(communication, steps)]
    base = steps[0] if degrees[0] == 1 else None
    lines = []
    rising = all(b >= a - NOISE for a, b in zip(shares, shares[1:]))
    trend = " → ".join(f"{x:.0%}" for x in shares)
    if rising:
        lines.append(f"通信占比随 TP 增大：{trend}，与预期一致（每层 4 次 all-reduce 的字节数不随 t 减少）。")
    else:
        lines.append(f"通信占比没有随 TP 单调上升（{trend}），与一般预期不同：这次的计时受机器负载"
                     "影响较大，可以重新运行。")
    for t, c in zip(degrees, compute):
        if t == 1 or degrees[0] != 1:
            continue
        ratio = c / compute[0]
        if ratio > 1 + NOISE:
            lines.append(f"TP={t} 的计算反而是 TP=1 的 {ratio:.0%}：{t} 个 rank 加上 gloo 的通信线程在这台机器上"
                         f"（{cores} 个核）分不到各自的核，计时受机器负载影响，可以重新运行。")
        elif ratio <= 1.3 / t:
            lines.append(f"TP={t} 的计算是 TP=1 的 {ratio:.0%}（理想 1/{t} = {1 / t:.0%}）：按 1/t 缩短了。")
        else:
            why = (f"：{t} 个 rank 只有 {cores} 个核，每个 rank 分不到一个完整的核"
                   if cores is not None and t > cores else
                   "：小矩阵的乘法效率更低，固定开销不随 t 缩短")
            lines.append(f"TP={t} 的计算是 TP=1 的 {ratio:.0%}，没有缩短到 1/{t} = {1 / t:.0%}{why}。")
    if base is not None:
        effs = [base / (t * s) for t, s in zip(degrees, steps)]
        slower = [t for t, s in zip(degrees, steps) if t > 1 and s > base * (1 + NOISE)]
        falling = all(b <= a + NOISE for a, b in zip(effs, effs[1:]))
        text = "并行效率 T₁/(t·T_t)：" + " → ".join(f"{e:.0%}" for e in effs)
        text += "，随 TP 下降。" if falling else "，这次没有随 TP 单调下降（计时噪声）。"
        if slower:
            text += (f"TP={'、'.join(map(str, slower))} 的一步甚至比单进程（TP=1）还慢：{_crowded(max(slower), cores)}。")
        lines.append(text)
    if rising:
        lines.append("结论：TP 不能无限扩展，这台机器上测到的正是这个趋势。在 GPU + NVLink 上通信快得多，"
                     "曲线更平缓，但字节数不减、占比上升的趋势相同，所以 Megatron 把 TP 限制在一个 NVLink 节点"
                     "（≤ 8 卡）之内。")
    else:
        lines.append("结论：这次的测量没有显示出预期的趋势（见上）；公式（第 3 节）给出的字节数不随 t 减少，"
                     "在 GPU 上通信占比会随 t 上升。")
    return "\n".join(lines)


def interpret_activations(measured: dict, *, cores: int | None) -> str:
    """Section 7 of 2.2 (myth 2): ``{variant: (activation bytes per rank, step seconds)}`` with
    the variants "TP=1", "TP=2", "TP=2 + SP", "TP=1 + checkpointing" (others are ignored).
    Bytes: TP=2 does not halve them (replicated regions), SP cuts more, checkpointing keeps one
    input per block. Time: checkpointing adds one forward, about 1/3 of forward + backward
    (backward ~ 2 x forward), i.e. ~1.33 x; TP on a few CPU cores may be slower than TP=1."""
    b1, s1 = measured["TP=1"]
    lines = []
    if "TP=2" in measured:
        b2, s2 = measured["TP=2"]
        lines.append(f"显存：TP=2 每个 rank 的激活值是 TP=1 的 {b2 / b1:.0%}，不是 50%：复制的区域"
                     "（LayerNorm 输入、残差、完整的 logits）没有切开。")
        if "TP=2 + SP" in measured:
            lines[-1] += f"加上序列并行是 {measured['TP=2 + SP'][0] / b1:.0%}。"
        ratio = s2 / s1
        if ratio > 1 + NOISE:
            lines.append(f"时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，反而更慢：{_crowded(2, cores)}，"
                         "对这么小的层，all-reduce 比省下的计算还贵。在 GPU + NVLink 上，大模型的 TP=2 会更快。")
        elif ratio < 1 - NOISE:
            lines.append(f"时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，比单进程快。")
        else:
            lines.append(f"时间：TP=2 的一步是 TP=1 的 {ratio:.2f}×，差别在计时噪声之内。")
    if "TP=1 + checkpointing" in measured:
        bc, sc = measured["TP=1 + checkpointing"]
        cost_ratio = sc / s1
        text = (f"检查点：激活值降到 TP=1 的 {bc / b1:.0%}，一步的时间是 {cost_ratio:.2f}×；"
                "预期约 1.33×（多一次前向，前向约占前向 + 反向的 1/3）")
        if cost_ratio > 1.6:
            text += ("。这次比预期贵：重算的前向里还有 Python 与自动求导的固定开销，小模型上它们占比大；"
                     "这台机器的计时也有噪声（可以重新运行）。")
        elif cost_ratio < 1.15:
            text += "。这次比预期便宜：计时噪声比一次前向还大，可以重新运行。"
        else:
            text += "，与预期相符。"
        lines.append(text)
    lines.append("结论：激活值要靠序列并行和检查点来省，代价是通信次数不变、多一次前向，"
                 "所以大模型训练几乎总是 TP + SP + 检查点一起用。")
    return "\n".join(lines)
