"""The measured experiments of notebook 2.1: data-parallel step times, the speedup of N ranks
over one, and compute vs all-reduce time, as rank bodies for ``labs.launch``.

Conditions (the notebook and ``python -m labs.bench ddp`` print them with the results): an MLP
trained with SGD on gloo ranks; every rank runs ``torch.set_num_threads(threads)`` (default 1:
one rank = one "device" of one core, so ranks do not fight for cores); a step time is the
*minimum* over the timed steps of the slowest rank: other programs on the machine only ever add
time, so the minimum is the least disturbed estimate (the load average is printed too). 1 and N
ranks are measured alternately, in rounds. Speedup is weak scaling, as in the chapter (per-rank
batch fixed, the global batch grows with the ranks): throughput of N ranks over throughput of
1 rank = N · t(1) / t(N); scaling efficiency = speedup / N.

The ``interpret_*`` functions turn these measurements into the notebook's conclusions (in
Chinese), so that the text next to a measurement always follows its numbers, including when
this machine disagrees with the usual picture.
"""
from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist

import labs
from labs.data_parallel.buckets import BUCKET_BYTES
from labs.data_parallel.ddp import VARIANTS, train_data_parallel
from labs.data_parallel.scaling import scaling_efficiency
from labs.models import MLP

__all__ = ["COMPUTE_HEAVY", "SMALL", "step_times", "speedup", "compute_vs_comm",
           "interpret_speedup", "interpret_compute_vs_comm", "interpret_model_size",
           "interpret_gpu_gap"]

COMPUTE_HEAVY = dict(sizes=[512, 2048, 2048, 512], batch_per_rank=512)
SMALL = dict(sizes=[32, 64, 32], batch_per_rank=32)


def _fixed_batches(sizes, global_batch, seed=0):
    """One global batch, returned at every step (generating data is not what we time)."""
    device = labs.device()
    g = torch.Generator(device).manual_seed(seed)
    x = torch.randn(global_batch, sizes[0], generator=g, device=device)
    y = torch.randn(global_batch, sizes[-1], generator=g, device=device)
    return lambda step: (x, y)


def step_times(sizes, batch_per_rank, variants=VARIANTS, *, steps=5, warmup=2,
               threads=1, bucket_bytes=BUCKET_BYTES, group=None) -> dict:
    """Run on every rank: ``{variant: seconds per training step}`` (minimum over the timed
    steps of the slowest rank's step time). Every variant trains the same ``MLP(sizes)`` with SGD."""
    torch.set_num_threads(threads)
    world_size = dist.get_world_size(group)
    batches = _fixed_batches(sizes, batch_per_rank * world_size)
    out = {}
    for variant in variants:
        stamps = []
        dist.barrier(group=group)
        start = time.perf_counter()
        train_data_parallel(
            MLP(sizes), batches, steps=warmup + steps, lr=1e-3, variant=variant,
            optimizer="sgd", bucket_bytes=bucket_bytes, group=group,
            on_step=lambda s: stamps.append(time.perf_counter()))
        times = torch.tensor([b - a for a, b in zip([start] + stamps, stamps)][warmup:],
                             dtype=torch.float64, device=labs.device())
        dist.all_reduce(times, op=dist.ReduceOp.MAX, group=group)
        out[variant] = min(times.tolist())
    return out


def speedup(sizes=None, batch_per_rank=None, *, world_size=2, steps=4, warmup=1, threads=1,
            variant="ddp", rounds=2, timeout=300.0) -> dict:
    """Measure 1 rank and ``world_size`` ranks (torch DDP by default) at a fixed per-rank batch.

    Returns seconds per step at 1 and N ranks, the speedup N·t1/tN, the scaling efficiency and
    the conditions (sizes, batch, threads per rank, cores).
    """
    sizes = sizes or COMPUTE_HEAVY["sizes"]
    batch_per_rank = batch_per_rank or COMPUTE_HEAVY["batch_per_rank"]
    args = (sizes, batch_per_rank, (variant,))
    kwargs = dict(steps=steps, warmup=warmup, threads=threads)
    t1 = tn = float("inf")
    for _ in range(rounds):  # alternate, so a burst of outside load hits both alike
        t1 = min(t1, labs.launch(step_times, 1, args=args, kwargs=kwargs,
                                 timeout=timeout)[0][variant])
        tn = min(tn, labs.launch(step_times, world_size, args=args, kwargs=kwargs,
                                 timeout=timeout)[0][variant])
    s = world_size * t1 / tn
    return dict(t1=t1, tn=tn, world_size=world_size, speedup=s,
                efficiency=scaling_efficiency(s, world_size), sizes=list(sizes),
                batch_per_rank=batch_per_rank, threads_per_rank=threads, variant=variant,
                params=MLP(sizes).num_params(), cores=labs.cpu_count(),
                load_average=round(os.getloadavg()[0], 2))


def compute_vs_comm(sizes, batch_per_rank, *, repeats=5, threads=1, group=None) -> dict:
    """Run on every rank: seconds of forward+backward of ``MLP(sizes)`` on the rank's batch,
    and of one all-reduce of all its gradients (one flat float32 tensor), each the minimum
    over ``repeats`` of the slowest rank (the least disturbed estimate, as for step times)."""
    torch.set_num_threads(threads)
    device = labs.device()
    model = MLP(sizes).to(device)
    x = torch.randn(batch_per_rank, sizes[0], device=device)
    y = torch.randn(batch_per_rank, sizes[-1], device=device)
    flat = torch.zeros(model.num_params(), device=device)
    compute, comm = [], []
    for i in range(repeats + 1):
        dist.barrier(group=group)
        start = time.perf_counter()
        model.zero_grad()
        model(x, y)[1].backward()
        middle = time.perf_counter()
        dist.all_reduce(flat, group=group)
        end = time.perf_counter()
        if i:  # the first round warms up
            compute.append(middle - start)
            comm.append(end - middle)
    times = torch.tensor([compute, comm], dtype=torch.float64, device=device)
    dist.all_reduce(times, op=dist.ReduceOp.MAX, group=group)  # the slowest rank, per repeat
    compute_s, comm_s = times.min(dim=1).values.tolist()
    return dict(compute=compute_s, comm=comm_s, params=model.num_params(),
                bytes=4 * model.num_params(), batch_per_rank=batch_per_rank,
                world_size=dist.get_world_size(group))


# --- what the measurements say about this machine ------------------------------------------
#
# The notebook states the general expectation; these return, in Chinese (the notebooks'
# language), what this machine measured -- including where it disagrees and why (a few cores
# shared by the ranks, the notebook's kernel and other programs; loopback instead of NVLink).

NEAR_LINEAR = 0.85  # scaling efficiency from which a speedup reads "close to linear"
NO_GAIN = 0.55  # below this efficiency (1.1x on 2 ranks) data parallelism barely helps
TIE = 0.1  # speedups closer than this (in x) are a tie on a shared, noisy machine


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"


def _size(n_bytes: float) -> str:
    from labs.plots import format_bytes
    return format_bytes(n_bytes)


def _busy(sp: dict) -> str:
    """A sentence when the machine was busy while measuring (load average above the cores)."""
    if sp["load_average"] > sp["cores"]:
        return (f"测量时 load average {sp['load_average']} 高于核数 {sp['cores']}：有别的程序在抢核，"
                "加速比会偏低，请在空闲时重跑（`python -m labs.bench ddp`）。")
    return ""


def interpret_speedup(sp: dict) -> str:
    """What :func:`speedup` measured, in words: the speedup against the limit N, whether it is
    close to linear, and what on this machine holds it back."""
    n, s, eff = sp["world_size"], sp["speedup"], sp["efficiency"]
    head = f"{n} 个 rank 比 1 个 rank 加速 {s:.2f} 倍（上限 {n} 倍），扩展效率 {eff:.0%}"
    if eff >= NEAR_LINEAR:
        text = (head + f"：接近线性。这个模型一步的计算（1 个 rank {_ms(sp['t1'])}）比梯度的 "
                "all-reduce 长得多，数据并行划算。")
    elif eff >= NO_GAIN:
        text = head + "：有加速，但离线性还有距离。"
        if sp["cores"] <= n:
            text += (f"本机只有 {sp['cores']} 个 CPU 核：{n} 个 rank 各占一个，笔记本内核和别的程序"
                     "只能挤进同样的核，rank 之间还共用内存带宽和缓存。")
    else:
        text = head + ("：比 1 个 rank 还慢。" if s < 1 else "：几乎不加速。")
        if not _busy(sp):
            text += "每一步的通信和等待抵消了多出来的算力。"
    return text + _busy(sp)


def interpret_compute_vs_comm(results: dict) -> str:
    """``results`` maps a model's name to :func:`compute_vs_comm`'s dict. Says each model's
    communication/compute ratio and whether this machine shows the rule: the ratio falls as
    the computation per step grows (traffic grows with the parameters only, computation with
    parameters × batch)."""
    lines, ratios = [], {}
    for name, r in results.items():
        ratios[name] = r["comm"] / r["compute"]
        lines.append(f"{name}：一次梯度 all-reduce（{_size(r['bytes'])}）{_ms(r['comm'])}，"
                     f"前向+反向 {_ms(r['compute'])}，通信/计算 = {ratios[name]:.2f}。")
    by_work = sorted(results, key=lambda k: results[k]["params"] * results[k]["batch_per_rank"])
    light, heavy = by_work[0], by_work[-1]
    if ratios[light] > ratios[heavy]:
        lines.append(f"符合规律：通信量只随参数量增长，计算量随参数量 × batch 增长，所以计算少的"
                     f"{light}通信占比高（{ratios[light]:.2f}），计算多的{heavy}占比低"
                     f"（{ratios[heavy]:.2f}）。")
    else:
        lines.append(f"与规律不符：计算少的{light}通信占比（{ratios[light]:.2f}）反而不高于"
                     f"{heavy}（{ratios[heavy]:.2f}）。多半是测量受到了干扰（别的程序在抢核），"
                     "请在空闲时重跑。")
    return "\n".join(lines)


def _predicted_speedup(sp: dict, cc: dict) -> float:
    """N·t1 / (t1 + one gradient all-reduce): the speedup if nothing overlaps the all-reduce."""
    return sp["world_size"] * sp["t1"] / (sp["t1"] + cc["comm"])


def interpret_model_size(small_sp: dict, heavy_sp: dict, small_cc: dict, heavy_cc: dict, *,
                         names=("小模型", "计算量大的模型")) -> str:
    """Does a small model gain less from data parallelism than a compute-heavy one, here?

    ``*_sp``: :func:`speedup` results; ``*_cc``: :func:`compute_vs_comm` results of the same
    models. Prints the measured step times and speedups, the speedup the all-reduce time
    predicts (N·t1/(t1 + t_comm), no overlap), and a conclusion that follows the numbers: as
    expected, as expected in direction only (the small model still speeds up: say why), or
    the machine disagrees (say why)."""
    small, heavy = names
    n = small_sp["world_size"]
    s_small, s_heavy = small_sp["speedup"], heavy_sp["speedup"]
    p_small = _predicted_speedup(small_sp, small_cc)
    p_heavy = _predicted_speedup(heavy_sp, heavy_cc)
    lines = [
        f"{small}：1 个 rank 一步 {_ms(small_sp['t1'])}（其中前向+反向 {_ms(small_cc['compute'])}），"
        f"一次梯度 all-reduce {_ms(small_cc['comm'])}；按不重叠估算加速比约 {p_small:.2f} 倍，"
        f"实测 {s_small:.2f} 倍。",
        f"{heavy}：1 个 rank 一步 {_ms(heavy_sp['t1'])}，一次梯度 all-reduce "
        f"{_ms(heavy_cc['comm'])}；按不重叠估算约 {p_heavy:.2f} 倍，实测 {s_heavy:.2f} 倍。"]
    fixed = small_sp["t1"] - small_cc["compute"]
    share = small_cc["comm"] / small_sp["t1"]
    why_small = (f"{small}一步 {_ms(small_sp['t1'])}，一次 all-reduce {_ms(small_cc['comm'])}，"
                 f"t_comm/t₁ = {share:.2f}，按不重叠估算加速比约 {p_small:.2f} 倍")
    if fixed > 0.3 * small_sp["t1"]:
        why_small += (f"；这一步里有 {_ms(fixed)} 不是前向和反向，而是与通信无关、每个 rank 各自付"
                      "的固定开销（Python 调用、DDP 的簿记、优化器更新）：它在 rank 之间并行，不拖慢"
                      "加速比，反而让通信在一步里显得不那么长")
    why_small += "。"
    crowded = (f"{n} 个 rank 共用 {heavy_sp['cores']} 个 CPU 核和同一条内存总线，大矩阵乘法一起跑"
               "时每个 rank 都变慢，这与通信无关。" if s_heavy < p_heavy - TIE else "")
    why_heavy = (f"{heavy}按通信估算应有 {p_heavy:.2f} 倍，实测只有 {s_heavy:.2f} 倍：" + crowded
                 if crowded else "")
    if heavy_sp["efficiency"] >= NEAR_LINEAR:
        heavy_says = f"{heavy}接近 {n} 倍的上限（{s_heavy:.2f} 倍）。"
    else:
        heavy_says = (f"{heavy}也只有 {s_heavy:.2f} 倍（按通信估算应有 {p_heavy:.2f} 倍），离 {n} "
                      "倍的上限还远" + ("：" + crowded if crowded else "。") + _busy(heavy_sp))
    gap = s_heavy - s_small
    if gap > TIE and small_sp["efficiency"] < NO_GAIN:
        lines.append(f"结论：符合预期。{small}" +
                     (f"在 {n} 个 rank 上反而比 1 个 rank 慢" if s_small < 1 else "几乎不加速") +
                     f"（{s_small:.2f} 倍），加速比低于{heavy}；" + heavy_says +
                     "计算/通信比决定数据并行是否划算。")
    elif gap > TIE:
        lines.append(f"结论：方向符合预期（{small} {s_small:.2f} 倍 < {heavy} {s_heavy:.2f} 倍），"
                     f"但{small}并非几乎不加速。在本机上，" + why_small +
                     "只有当一次 all-reduce 和一步的用时相当或更长（链路的延迟更大，或每一步本身"
                     "更短）时，加速比才会跌向 1 倍。")
    else:
        verdict = (f"两者相差不到 {TIE} 倍，在本机的测量误差之内，看不出模型大小的差别"
                   if gap >= -TIE else f"{small}反而加速得更多")
        lines.append(
            f"结论：这台机器不符合通常的图景（{small} {s_small:.2f} 倍，{heavy} {s_heavy:.2f} "
            f"倍，{verdict}）。原因在这台机器：" + why_small + why_heavy +
            _busy(heavy_sp) + _busy(small_sp) +
            "规律本身不变：计算/通信比越小，数据并行越不划算；在空闲的机器上重跑再比较。")
    return "\n".join(lines)


def interpret_gpu_gap(cc: dict, *, gpu: str = "A100-80GB") -> str:
    """How far this machine is from a GPU server, from one :func:`compute_vs_comm` result:
    the measured bus bandwidth of the gradient all-reduce against NVLink, and one rank's
    forward+backward FLOP/s (6 per parameter per sample) against the GPU's bf16 peak
    (:mod:`labs.hybrid.hardware`, each number sourced there)."""
    from labs.collectives import describe_link_gap, orders_of_magnitude
    from labs.cost import bus_bandwidth, training_flops
    from labs.hybrid.hardware import GPUS

    card = GPUS[gpu]
    busbw = bus_bandwidth(cc["bytes"], cc["comm"], cc["world_size"])
    flops = training_flops(cc["params"], cc["batch_per_rank"]) / cc["compute"]
    compute_ratio = card.peak_flops / flops
    return (f"本机（gloo，回环网络）：梯度 all-reduce 的总线带宽 {busbw / 1e9:.2f} GB/s；"
            f"一个 rank（1 个 CPU 核）前向+反向 {flops / 1e9:.0f} GFLOP/s。\n"
            f"{gpu}：{describe_link_gap(busbw, card.intra_node_bw)}；bf16 峰值 "
            f"{card.peak_flops / 1e12:.0f} TFLOP/s，是本机一个 rank 的约 {compute_ratio:,.0f} 倍"
            f"（{orders_of_magnitude(compute_ratio)}）。两边都快得多，快的倍数却不同，所以"
            "计算/通信比要在 GPU 上重新测：规律相同，数字不同。")
