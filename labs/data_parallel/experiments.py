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

The ``interpret_*`` functions turn these measurements into the notebook's conclusions (in the
notebook's language, :mod:`labs.messages`), so that the text next to a measurement always
follows its numbers, including when this machine disagrees with the usual picture.

Owns: 2.1's measurements as rank bodies and their readings. Must not: print (the notebook prints),
assert a speed target, draw figures itself, or import the checks or the grader.
"""
from __future__ import annotations

import os
import time

import torch
import torch.distributed as dist

import labs
from labs.collectives import describe_link_gap, orders_of_magnitude
from labs.formulas.cost import bus_bandwidth, training_flops
from labs.data_parallel.buckets import BUCKET_BYTES
from labs.data_parallel.ddp import VARIANTS, train_data_parallel
from labs.data_parallel.scaling import scaling_efficiency
from labs.hardware import GPUS
from labs.messages import sentences, text
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
# The notebook states the general expectation; these return, in the notebook's language
# (labs.messages), what this machine measured -- including where it disagrees and why (a few
# cores shared by the ranks, the notebook's kernel and other programs; loopback instead of
# NVLink).

NEAR_LINEAR = 0.85  # scaling efficiency from which a speedup reads "close to linear"
NO_GAIN = 0.55  # below this efficiency (1.1x on 2 ranks) data parallelism barely helps
TIE = 0.1  # speedups closer than this (in x) are a tie on a shared, noisy machine
BOUND_SLACK = 0.1  # an N-rank step may come out this much shorter than its all-reduce (timer noise)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"


def _size(n_bytes: float) -> str:
    from labs.notebook.plots import format_bytes  # why here: labs.notebook.plots imports matplotlib (~3 s)
    return format_bytes(n_bytes)


def _busy(sp: dict) -> str:
    """A sentence when the machine was busy while measuring (load average above the cores)."""
    if sp["load_average"] > sp["cores"]:
        return text("data_parallel.busy", load=sp["load_average"], cores=sp["cores"])
    return ""


def interpret_speedup(sp: dict) -> str:
    """What :func:`speedup` measured, in words: the speedup against the limit N, whether it is
    close to linear, and what on this machine holds it back."""
    n, s, eff = sp["world_size"], sp["speedup"], sp["efficiency"]
    head = text("data_parallel.speedup_head", n=n, speedup=s, efficiency=eff)
    parts = []
    if eff >= NEAR_LINEAR:
        parts.append(text("data_parallel.speedup_near_linear", head=head, t1=_ms(sp["t1"])))
    elif eff >= NO_GAIN:
        parts.append(text("data_parallel.speedup_some_gain", head=head))
        if sp["cores"] <= n:
            parts.append(text("data_parallel.speedup_few_cores", cores=sp["cores"], n=n))
    else:
        parts.append(text("data_parallel.speedup_slower" if s < 1 else "data_parallel.speedup_none",
                          head=head))
        if not _busy(sp):
            parts.append(text("data_parallel.speedup_eaten"))
    return sentences(*parts, _busy(sp))


def interpret_compute_vs_comm(results: dict) -> str:
    """``results`` maps a model's name to :func:`compute_vs_comm`'s dict. Says each model's
    communication/compute ratio and whether this machine shows the rule: the ratio falls as
    the computation per step grows (traffic grows with the parameters only, computation with
    parameters × batch)."""
    lines, ratios = [], {}
    for name, r in results.items():
        ratios[name] = r["comm"] / r["compute"]
        lines.append(text("data_parallel.compute_vs_comm_line", name=name, size=_size(r["bytes"]),
                          comm=_ms(r["comm"]), compute=_ms(r["compute"]), ratio=ratios[name]))
    by_work = sorted(results, key=lambda k: results[k]["params"] * results[k]["batch_per_rank"])
    light, heavy = by_work[0], by_work[-1]
    rule = dict(light=light, heavy=heavy, light_ratio=ratios[light], heavy_ratio=ratios[heavy])
    lines.append(text("data_parallel.compute_vs_comm_rule" if ratios[light] > ratios[heavy]
                      else "data_parallel.compute_vs_comm_against_rule", **rule))
    return "\n".join(lines)


def _predicted_speedup(sp: dict, cc: dict) -> float:
    """N·t1 / (t1 + one gradient all-reduce): the speedup if nothing overlaps the all-reduce."""
    return sp["world_size"] * sp["t1"] / (sp["t1"] + cc["comm"])


def interpret_model_size(small_sp: dict, heavy_sp: dict, small_cc: dict, heavy_cc: dict, *,
                         names: tuple[str, str]) -> str:
    """Does a small model gain less from data parallelism than a compute-heavy one, here?

    ``*_sp``: :func:`speedup` results; ``*_cc``: :func:`compute_vs_comm` results of the same
    models. Prints the measured step times and speedups, the speedup the all-reduce time
    predicts (N·t1/(t1 + t_comm), no overlap), and a conclusion that follows the numbers: as
    expected, as expected in direction only (the small model still speeds up: say why), or
    the machine disagrees (say why). First the bound the numbers imply: an N-rank step holds one
    gradient all-reduce, so tN >= t_comm; a step shorter than its own all-reduce means the
    measurements contradict each other (load decides sub-millisecond steps): noise, no
    conclusion, rerun. ``names``: the two models' names in the text, as the notebook names
    them (its ``MODELS``, in its language)."""
    small, heavy = names
    n = small_sp["world_size"]
    p_small = _predicted_speedup(small_sp, small_cc)
    p_heavy = _predicted_speedup(heavy_sp, heavy_cc)
    lines = [
        text("data_parallel.model_size_small_line", small=small, t1=_ms(small_sp["t1"]),
             compute=_ms(small_cc["compute"]), comm=_ms(small_cc["comm"]), predicted=p_small,
             measured=small_sp["speedup"]),
        text("data_parallel.model_size_heavy_line", heavy=heavy, t1=_ms(heavy_sp["t1"]),
             comm=_ms(heavy_cc["comm"]), predicted=p_heavy, measured=heavy_sp["speedup"])]
    noise = _bound_broken(((small, small_sp, small_cc), (heavy, heavy_sp, heavy_cc)), n)
    lines.append(noise or _model_size_conclusion(small, heavy, small_sp, heavy_sp, small_cc,
                                                 p_small, p_heavy))
    return "\n".join(lines)


def _bound_broken(models, n: int) -> str:
    """The conclusion "noise, rerun" when a model's measurements contradict each other, else "".

    ``models``: (name, :func:`speedup` result, :func:`compute_vs_comm` result) each. An N-rank
    step contains one all-reduce of the gradients, so it cannot take less than that all-reduce
    measured alone (tN >= t_comm, up to BOUND_SLACK of timer noise)."""
    for name, sp, cc in models:
        if sp["tn"] < (1 - BOUND_SLACK) * cc["comm"]:
            return text("data_parallel.conclusion_bound_broken", name=name, n=n,
                        tn=_ms(sp["tn"]), comm=_ms(cc["comm"]), speedup=sp["speedup"],
                        load=sp["load_average"], cores=sp["cores"])
    return ""


def _model_size_conclusion(small: str, heavy: str, small_sp: dict, heavy_sp: dict,
                           small_cc: dict, p_small: float, p_heavy: float) -> str:
    """The conclusion from consistent measurements: as expected (the small model gains little or
    nothing, and the heavy one more), as expected in direction only (the small model still
    speeds up: why), or this machine disagrees (a tie, or the small model gains more: why)."""
    n = small_sp["world_size"]
    s_small, s_heavy = small_sp["speedup"], heavy_sp["speedup"]
    gap = s_heavy - s_small
    if gap > TIE and small_sp["efficiency"] < NO_GAIN:
        return text("data_parallel.conclusion_expected_slower" if s_small < 1
                    else "data_parallel.conclusion_expected_flat",
                    small=small, heavy=heavy, n=n, small_speedup=s_small,
                    heavy_says=_heavy_says(heavy, heavy_sp, n, p_heavy))
    why_small = _why_small(small, small_sp, small_cc, p_small)
    if gap > TIE:
        return text("data_parallel.conclusion_direction_only", small=small, heavy=heavy,
                    small_speedup=s_small, heavy_speedup=s_heavy, why_small=why_small)
    verdict = (text("data_parallel.models_tie", tie=TIE) if gap >= -TIE
               else text("data_parallel.small_gains_more", small=small))
    reasons = sentences(why_small, _why_heavy(heavy, heavy_sp, n, p_heavy), _busy(heavy_sp),
                        _busy(small_sp))
    return text("data_parallel.conclusion_disagrees", small=small, heavy=heavy,
                small_speedup=s_small, heavy_speedup=s_heavy, verdict=verdict, reasons=reasons)


def _why_small(small: str, sp: dict, cc: dict, predicted: float) -> str:
    """Why the small model speeds up as it does: its all-reduce's share of a step, and the
    fixed cost of a step beyond forward and backward, when that is over 30 % of the step."""
    fixed = sp["t1"] - cc["compute"]
    why = dict(small=small, t1=_ms(sp["t1"]), comm=_ms(cc["comm"]), share=cc["comm"] / sp["t1"],
               predicted=predicted)
    return (text("data_parallel.why_small_fixed", fixed=_ms(fixed), **why)
            if fixed > 0.3 * sp["t1"] else text("data_parallel.why_small", **why))


def _crowded(heavy_sp: dict, n: int, predicted: float) -> str:
    """Why the compute-heavy model falls short of the speedup its communication predicts (its
    ranks crowd the cores), or "" when it does not."""
    return (text("data_parallel.heavy_crowded", n=n, cores=heavy_sp["cores"])
            if heavy_sp["speedup"] < predicted - TIE else "")


def _why_heavy(heavy: str, heavy_sp: dict, n: int, predicted: float) -> str:
    """The compute-heavy model's shortfall as a reason (see :func:`_crowded`), or ""."""
    crowded = _crowded(heavy_sp, n, predicted)
    return (text("data_parallel.why_heavy", heavy=heavy, predicted=predicted,
                 measured=heavy_sp["speedup"], crowded=crowded) if crowded else "")


def _heavy_says(heavy: str, heavy_sp: dict, n: int, predicted: float) -> str:
    """What the compute-heavy model shows: a speedup close to the limit N, or how far below it
    it stays, and why."""
    fields = dict(heavy=heavy, n=n, measured=heavy_sp["speedup"])
    if heavy_sp["efficiency"] >= NEAR_LINEAR:
        return text("data_parallel.heavy_near_limit", **fields)
    crowded = _crowded(heavy_sp, n, predicted)
    return sentences(
        text("data_parallel.heavy_far_crowded", predicted=predicted, crowded=crowded, **fields)
        if crowded else text("data_parallel.heavy_far", predicted=predicted, **fields),
        _busy(heavy_sp))


def interpret_gpu_gap(cc: dict, *, gpu: str = "A100-80GB") -> str:
    """How far this machine is from a GPU server, from one :func:`compute_vs_comm` result:
    the measured bus bandwidth of the gradient all-reduce against NVLink, and one rank's
    forward+backward FLOP/s (6 per parameter per sample) against the GPU's bf16 peak
    (:mod:`labs.hardware`, each number sourced there)."""
    card = GPUS[gpu]
    busbw = bus_bandwidth(cc["bytes"], cc["comm"], cc["world_size"])
    flops = training_flops(cc["params"], cc["batch_per_rank"]) / cc["compute"]
    compute_ratio = card.peak_flops / flops
    return "\n".join([
        text("data_parallel.gpu_gap_here", busbw_gbps=busbw / 1e9, gflops=flops / 1e9),
        text("data_parallel.gpu_gap_gpu", gpu=gpu,
             link_gap=describe_link_gap(busbw, card.intra_node_bw),
             peak_tflops=card.peak_flops / 1e12, ratio=compute_ratio,
             orders=orders_of_magnitude(compute_ratio))])
