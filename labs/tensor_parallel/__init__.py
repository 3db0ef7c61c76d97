"""Tensor parallelism (TP), Megatron-style, notebook 2.2. Read the files in this order:

1. :mod:`~labs.tensor_parallel.comm` -- the communication: the conjugate autograd operators f / g
   (``copy_to_tensor_parallel_region``: identity forward, all-reduce backward, and its partners)
   and the sequence-parallel ones; every collective is counted by a ``labs.collectives.CommCounter``.
2. :mod:`~labs.tensor_parallel.layers` -- the maths: ``ColumnParallelLinear``,
   ``RowParallelLinear``, ``ParallelMLP``, ``ParallelSelfAttention``, cut from the full layers.
3. :mod:`~labs.tensor_parallel.model` -- ``ParallelTinyGPT``: the whole model with the same
   ``embed`` / ``blocks`` / ``head`` interface as ``labs.models.TinyGPT`` (so pipeline stages
   can hold tensor-parallel blocks), its layout checks and its groups.
4. :mod:`~labs.tensor_parallel.dtensor` -- the same layers with PyTorch's DTensor
   (``ColwiseParallel`` / ``RowwiseParallel``), to compare.
5. :mod:`~labs.tensor_parallel.verify` -- rank bodies checking all of it against the full model.
6. :mod:`~labs.tensor_parallel.experiments` -- the measured experiments of 2.2 (layer-wise model
   parallelism, TP step times, overlap, pairings, activation memory) and their conclusions in
   words (``interpret_*``, in the notebook's language, printed after each measurement).
7. :mod:`~labs.tensor_parallel.plots` -- its figures.

Bytes per layer and "how much TP?" are :mod:`labs.formulas.cost`. ``from labs import tensor_parallel as
tp`` gives the layer names below::

    mlp = tp.ParallelMLP(full_block.mlp, group=tp_group)      # same weights, split

Must not: hold logic of its own, or import the experiments, plots or the DTensor versions at import
time.
"""
from labs.tensor_parallel.layers import (
    ColumnParallelLinear,
    ParallelMLP,
    ParallelSelfAttention,
    RowParallelLinear,
    scope,
    shard,
    unshard,
)

__all__ = ["shard", "unshard", "ColumnParallelLinear", "RowParallelLinear", "ParallelMLP",
           "ParallelSelfAttention", "scope"]
