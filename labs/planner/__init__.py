"""A 3D-parallelism planner: memory, traffic and time of one (tp, pp, dp) layout, from sizes.

Composes the course's formulas (memory bytes from :mod:`labs.formulas.memory`; bytes on the wire, the
bubble, FLOPs and time from :mod:`labs.formulas.cost`) with the hardware of :mod:`labs.hardware`::

    from labs import planner as pl
    model = pl.Model(n_layers=96, hidden=12288, n_heads=96, seq_len=2048, vocab=51200)
    cluster = pl.Cluster(gpu=pl.GPUS["A100-80GB"], n_gpus=1024, gpus_per_node=8)
    train = pl.Training(global_batch=1536, micro_batch=1, precision="bf16", recompute="full")
    est = pl.estimate(model, cluster, train, tp=8, pp=16, dp=8)   # one layout
    print(est.summary())
    plans = pl.plan(model, cluster, train, top=5)                  # best first, + .rejected
    # (the search also explores recompute: none, else selective, else full; each plan's
    #  config.recompute says which it runs)
    steps = pl.decide(model, cluster, train)                       # the chapter's five steps

Units are SI base units (bytes, seconds, FLOP/s); GiB and TFLOP/s appear only in ``summary()``.
Layout: TP innermost (consecutive ranks, one node), then PP, DP outermost (:mod:`labs.hybrid.mesh`);
a layout's degrees are the mesh's declaration (``Config.dims``: :mod:`labs.parallel_dims`).

The time model, first principles and a few named constants (:class:`Efficiency`, sources
there; none fitted to the published runs of ``tests/labs/planner/test_planner_published.py``):

- compute: executed matmul FLOPs (:func:`labs.formulas.cost.matmul_flops`, recomputation included) of
  the slowest stage per micro-batch ÷ (peak of the run's precision on its GPU, e.g. 19.5
  TFLOP/s for fp32 on A100, × GEMM efficiency), times (1 + the share of memory-bound kernels);
- tensor parallelism: 4 ring all-reduces of b·s·h per layer and micro-batch (6 with full
  recomputation, which repeats the forward), not overlapped, on NVLink when tp fits a node;
- pipeline: one activation and one gradient per micro-batch and chunk, split over the TP
  ranks (PTD-P's scatter/gather), on the critical path; the step is (m + (p-1)/v) micro-batch
  times (:func:`labs.formulas.cost.pipeline_step_seconds`); the slowest stage sets the micro-batch time
  (the last, with the output layer, unless ``Training.embedding_in_split`` gives the first and
  last stages one layer fewer, as Llama 3 did);
- data parallelism (:mod:`labs.planner.traffic`): :func:`labs.formulas.cost.dp_bytes_per_step`, hidden
  under the backward pass of the last micro-batch (ZeRO-2: every micro-batch's backward) when
  ``Training.overlap_grad_reduce``; ZeRO-3 gathers the parameters for every pass of every
  micro-batch (forward, the recomputed forward under full recomputation, backward) and hides
  each pass's gathers only under that pass's compute. With ``Training.shard_group`` (MiCS,
  HSDP) those passes run over the group only, as MiCS's hierarchical collectives, plus one
  all-reduce of the gradient shard across the replicas per step.

Memory: FlashAttention only where it runs (``Training.flash_attention=None`` follows the GPU;
V100: none, so attention keeps its s² terms); sequence parallelism also splits the layer inputs
that full recomputation saves (2sbh/t, as Megatron-Core keeps them).

MFU uses model FLOPs 6·N·tokens + 12·L·s·h·tokens (PaLM, arXiv:2204.02311, App. B), N the
weights that multiply (the layers and the output layer; the input embedding is a lookup and
learned positions an add): :func:`labs.formulas.cost.matmul_flops` without recomputation.
``flops_per_gpu`` and ``hfu`` use the same count with recomputation (executed FLOPs), the
convention of Megatron-LM's reported TFLOP/s (PTD-P eq. 3): MFU <= HFU always.

Must not: hold logic of its own, or import the widget (ipywidgets) at import time.
"""
from __future__ import annotations

from labs.hardware import GPUS
from labs.planner.model import estimate
from labs.planner.search import Plans, Step, decide, plan
from labs.planner.types import (PRECISIONS, Cluster, Config, Efficiency, Estimate,
                                       MemoryBreakdown, Model, Training)

__all__ = ["GPUS", "Model", "Cluster", "Training", "Efficiency", "Config", "MemoryBreakdown",
           "Estimate", "estimate", "plan", "decide", "Plans", "Step", "PRECISIONS"]
