"""Data parallelism (DP/DDP), notebook 2.1. Read the files in this order:

1. :mod:`~labs.data_parallel.ddp` -- DDP written by hand, in the steps PyTorch's
   DistributedDataParallel took: one all-reduce per gradient, buckets, buckets overlapped with
   backward, each also a small ``nn.Module`` wrapper with ``no_sync()``; the parameter-server
   contrast; ``train_data_parallel`` runs any of them (or torch DDP) and returns what the
   single-process reference returns.
2. :mod:`~labs.data_parallel.buckets` -- which gradients share one all-reduce (pure maths).
3. :mod:`~labs.data_parallel.scaling` -- linear learning-rate scaling and warmup, scaling
   efficiency, the batches DistributedSampler hands each rank (pure maths).
4. :mod:`~labs.data_parallel.experiments` -- the measured step times and speedups of 2.1, and
   the ``interpret_*`` functions that say what they show on this machine.
5. :mod:`~labs.data_parallel.plots` -- its figures.
6. :mod:`~labs.data_parallel.script` -- the same training under torchrun:
   ``torchrun --nproc-per-node=2 -m labs.data_parallel.script --check``.
7. :mod:`~labs.data_parallel.zero` -- ZeRO-1 by hand; :mod:`~labs.data_parallel.zero_stages`: 2, 3.

Memory (model states, ZeRO) is :mod:`labs.formulas.memory`; bytes on the wire and "does it fit" are
:mod:`labs.formulas.cost`. ``from labs import data_parallel as dp`` gives the names below::

    result = dp.train_data_parallel(model, batches, steps=10, lr=1e-3, variant="overlapped")

Must not: hold logic of its own, or import the experiments or plots (matplotlib) at import time.
"""
from labs.data_parallel.buckets import BUCKET_BYTES, assign_buckets
from labs.data_parallel.ddp import (
    VARIANTS,
    AllReduceGradReducer,
    BucketedGradReducer,
    GradReducer,
    OverlappedGradReducer,
    ReplicaMismatchError,
    allreduce_gradients,
    allreduce_gradients_bucketed,
    check_replicas_identical,
    parameter_server_step,
    train_data_parallel,
)
from labs.data_parallel.scaling import (
    linear_scaling_lr,
    sampler_global_batches,
    scaling_efficiency,
    warmup_lr,
)

__all__ = ["assign_buckets", "linear_scaling_lr", "warmup_lr", "scaling_efficiency",
           "sampler_global_batches", "ReplicaMismatchError", "check_replicas_identical",
           "allreduce_gradients", "allreduce_gradients_bucketed", "GradReducer",
           "AllReduceGradReducer", "BucketedGradReducer", "OverlappedGradReducer",
           "parameter_server_step", "train_data_parallel", "VARIANTS", "BUCKET_BYTES"]
