"""The measured experiments of notebook 2.2: rank bodies for ``labs.launch`` that return numbers
and timeline events (``labs.notebook.timeline.Event``, in seconds from a shared barrier).

- :func:`layerwise_step`: naive (layer-wise) model parallelism, one stage of blocks per rank,
  activations sent forward and gradients back: one rank busy at a time.
- :func:`tp_step_times`: compute vs communication per rank of a TP block as t grows.
- :func:`overlap_backward`: Megatron's overlap of the input-gradient all-reduce with the weight
  gradient in a column-parallel layer's backward (arXiv:1909.08053; Megatron's
  ``LinearWithGradAccumulationAndAsyncCommunication``), timed with and without it;
  :func:`overlap_timeline` lays both out as compute and communication lanes.
- :func:`pairing_mlp`: the MLP split column->row (one all-reduce) vs wrong pairings, counted.
- :func:`activation_bytes_per_rank`: activation memory per rank, TP / SP / checkpointing.

The ``interpret_*`` readings that turn these measurements into the notebook's conclusions live
in :mod:`labs.tensor_parallel.readings` and are re-exported here (the notebook calls them as
``tpx.interpret_*``). Rank bodies time from one origin shared by all ranks (:func:`_clock_start`).

Owns: 2.2's rank bodies and their numbers. Must not: hold the readings' text or logic
(labs.tensor_parallel.readings), draw or print, keep process groups in globals, or import the checks
or the grader.
"""
from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist

import labs
from labs.formulas import memory
from labs.data import get_batch
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig, language_model_loss
from labs.tensor_parallel.comm import CommCounter
from labs.tensor_parallel.layers import ColumnParallelLinear, ParallelMLP, RowParallelLinear
from labs.tensor_parallel.model import ParallelBlock, ParallelTinyGPT
from labs.notebook.timeline import REAL_COMPUTE, Event, Timeline
from labs.tensor_parallel.readings import (NOISE, interpret_activations, interpret_layerwise,  # noqa: F401
                                           interpret_overlap, interpret_tp_scaling,
                                           layerwise_spans, overlap_parts)

__all__ = ["layerwise_step", "tp_step_times", "overlap_backward", "overlap_timeline",
           "pairing_mlp", "activation_bytes_per_rank", "PAIRINGS", "overlap_parts", "layerwise_spans",
           "interpret_layerwise", "interpret_overlap", "interpret_tp_scaling",
           "interpret_activations"]



def _clock_start() -> float:
    """One time origin for every rank: after a barrier, the earliest rank's reading of the
    clock. ``time.perf_counter`` is CLOCK_MONOTONIC, one clock for all processes of a machine,
    so events measured from this origin line up across ranks (each rank's own barrier exit
    would not: under load the ranks leave the barrier milliseconds apart)."""
    dist.barrier()
    now = torch.tensor([time.perf_counter()], dtype=torch.float64, device=labs.device())
    dist.all_reduce(now, op=dist.ReduceOp.MIN)
    return float(now.item())


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
    """Rank body: backward of one column-parallel layer; returns (seconds of the median repeat,
    events of that same repeat, grad_x of the last repeat): the figure draws the repeat whose
    time the reading prints."""
    tp, device = dist.get_world_size(), labs.device()
    g = torch.Generator(device).manual_seed(0)
    x = torch.randn(tokens, in_features, generator=g, device=device)
    weight = torch.randn(out_features, in_features, generator=g,
                         device=device).chunk(tp)[dist.get_rank()]
    runs = []
    for _ in range(repeats + 1):
        events, clock = [], [0.0]
        xi, w = x.clone().requires_grad_(), weight.clone().requires_grad_()
        y = _OverlappedColumnLinear.apply(xi, w, overlap, events, clock)
        clock[0] = _clock_start()  # all ranks start the backward together
        y.backward(torch.ones_like(y))
        runs.append((time.perf_counter() - clock[0], events))
    # the median repeat (the first one warms up): its time is printed, its events are drawn
    seconds, events = sorted(runs[1:], key=lambda run: run[0])[(len(runs) - 2) // 2]
    return seconds, events, xi.grad.cpu()


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
