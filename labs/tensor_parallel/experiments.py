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

The ``interpret_*`` functions turn those measurements into the notebook's conclusion, in its
language (the messages ``tensor_parallel.*`` of :mod:`labs.messages`): what the general
expectation is, whether this machine's numbers agree, and why not when they do not (a few CPU
cores shared by the ranks, gloo over loopback instead of NVLink).
They take plain numbers, so the same wording follows any machine's measurement.
"""
from __future__ import annotations

import statistics
import time
from typing import Sequence

import torch
import torch.distributed as dist

import labs
from labs import memory
from labs.data import get_batch
from labs.messages import text
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
    rank, world = dist.get_rank(), dist.get_world_size()
    if config.n_layer % world:
        raise ValueError(text("tensor_parallel.layers_not_divisible", n_layer=config.n_layer,
                              world=world))
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
        raise ValueError(text("tensor_parallel.unknown_pairing", pairing=pairing, pairings=PAIRINGS))
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


# --- what the measurements say (in the notebook's language) ---------------------------------------


def _crowded(ranks: int, cores: int | None) -> str:
    """Why a CPU run differs from GPUs: the ranks share the cores, gloo goes over loopback."""
    if cores is not None and ranks > cores:
        return text("tensor_parallel.crowded_cores", ranks=ranks, cores=cores)
    return text("tensor_parallel.crowded")


def interpret_layerwise(busy: Sequence[float]) -> str:
    """Section 1 of 2.2: each rank's busy share of one layer-wise step (``Timeline.busy_seconds``
    divided by the span). Expected: at most one rank computes at a time, so the shares add up
    to at most 100 % and each is about 1/n."""
    n, total = len(busy), sum(busy)
    mean = total / n
    shares = text("tensor_parallel.list_sep").join(f"{b:.0%}" for b in busy)
    head = text("tensor_parallel.layerwise_head", n=n, shares=shares, total=total, ideal=1 / n)
    if total > 1 + NOISE:
        return head + "\n" + text("tensor_parallel.layerwise_overlapping")
    conclusion = text("tensor_parallel.layerwise_serial", mean=mean)
    if total < 0.7:
        conclusion = text("tensor_parallel.layerwise_idle", conclusion=conclusion, rest=1 - total)
    return head + "\n" + conclusion


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
    times = dict(no_ms=no_overlap_s * 1e3, yes_ms=overlap_s * 1e3, speedup=speedup)
    if comm_s is not None and weight_grad_s is not None:
        hidden = min(comm_s, weight_grad_s)
        best = no_overlap_s / max(no_overlap_s - hidden, 1e-12)
        head = text("tensor_parallel.overlap_times_bound", **times, comm_ms=comm_s * 1e3,
                  wgrad_ms=weight_grad_s * 1e3, best=best)
    else:
        head = text("tensor_parallel.overlap_times", **times)
    if speedup >= 1 + NOISE:
        conclusion = text("tensor_parallel.overlap_gain", saved=1 - 1 / speedup)
        if cores is not None and ranks > cores:
            conclusion = text("tensor_parallel.overlap_gain_fewer_cores", conclusion=conclusion)
        return head + "\n" + conclusion
    if speedup > 1 - NOISE:
        conclusion = text("tensor_parallel.overlap_noise")
    else:
        conclusion = text("tensor_parallel.overlap_slower", slower=1 / speedup - 1)
    return head + "\n" + text("tensor_parallel.overlap_why", conclusion=conclusion,
                               crowded=_crowded(ranks, cores))


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
    lines.append(text("tensor_parallel.tp_share_rising" if rising
                      else "tensor_parallel.tp_share_not_rising", trend=trend))
    for t, c in zip(degrees, compute):
        if t == 1 or degrees[0] != 1:
            continue
        ratio = c / compute[0]
        if ratio > 1 + NOISE:
            lines.append(text("tensor_parallel.tp_compute_slower", t=t, ratio=ratio, cores=cores))
        elif ratio <= 1.3 / t:
            lines.append(text("tensor_parallel.tp_compute_scaled", t=t, ratio=ratio, ideal=1 / t))
        elif cores is not None and t > cores:
            lines.append(text("tensor_parallel.tp_compute_few_cores", t=t, ratio=ratio,
                              ideal=1 / t, cores=cores))
        else:
            lines.append(text("tensor_parallel.tp_compute_small_matrices", t=t, ratio=ratio, ideal=1 / t))
    if base is not None:
        effs = [base / (t * s) for t, s in zip(degrees, steps)]
        slower = [t for t, s in zip(degrees, steps) if t > 1 and s > base * (1 + NOISE)]
        falling = all(b <= a + NOISE for a, b in zip(effs, effs[1:]))
        efficiency = text("tensor_parallel.tp_efficiency_falling" if falling
                          else "tensor_parallel.tp_efficiency_noisy",
                        effs=" → ".join(f"{e:.0%}" for e in effs))
        if slower:
            efficiency = text("tensor_parallel.tp_slower_than_one", efficiency=efficiency,
                            degrees=text("tensor_parallel.list_sep").join(map(str, slower)),
                            crowded=_crowded(max(slower), cores))
        lines.append(efficiency)
    lines.append(text("tensor_parallel.tp_conclusion_expected" if rising
                      else "tensor_parallel.tp_conclusion_unexpected"))
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
        memory = text("tensor_parallel.act_tp2", ratio=b2 / b1)
        if "TP=2 + SP" in measured:
            memory = text("tensor_parallel.act_tp2_sp", memory=memory, ratio=measured["TP=2 + SP"][0] / b1)
        lines.append(memory)
        ratio = s2 / s1
        if ratio > 1 + NOISE:
            lines.append(text("tensor_parallel.act_time_slower", ratio=ratio, crowded=_crowded(2, cores)))
        elif ratio < 1 - NOISE:
            lines.append(text("tensor_parallel.act_time_faster", ratio=ratio))
        else:
            lines.append(text("tensor_parallel.act_time_noise", ratio=ratio))
    if "TP=1 + checkpointing" in measured:
        bc, sc = measured["TP=1 + checkpointing"]
        cost_ratio = sc / s1
        head = text("tensor_parallel.act_ckpt_head", bytes_ratio=bc / b1, cost_ratio=cost_ratio)
        if cost_ratio > 1.6:
            lines.append(text("tensor_parallel.act_ckpt_expensive", head=head))
        elif cost_ratio < 1.15:
            lines.append(text("tensor_parallel.act_ckpt_cheap", head=head))
        else:
            lines.append(text("tensor_parallel.act_ckpt_expected", head=head))
    lines.append(text("tensor_parallel.act_conclusion"))
    return "\n".join(lines)
