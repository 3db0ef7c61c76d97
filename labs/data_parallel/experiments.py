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
"""
from __future__ import annotations

import os
import statistics
import time

import torch
import torch.distributed as dist

import labs
from labs.data_parallel.buckets import BUCKET_BYTES
from labs.data_parallel.ddp import VARIANTS, train_data_parallel
from labs.data_parallel.scaling import scaling_efficiency
from labs.models import MLP

__all__ = ["COMPUTE_HEAVY", "SMALL", "step_times", "speedup", "compute_vs_comm"]

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
    and of one all-reduce of all its gradients (one flat float32 tensor), median of repeats."""
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
    times = torch.tensor([statistics.median(compute), statistics.median(comm)],
                         dtype=torch.float64, device=device)
    dist.all_reduce(times, op=dist.ReduceOp.MAX, group=group)
    return dict(compute=times[0].item(), comm=times[1].item(), params=model.num_params(),
                bytes=4 * model.num_params(), batch_per_rank=batch_per_rank)
