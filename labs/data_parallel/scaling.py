"""The arithmetic of scaling data parallelism out, with no communication: learning-rate
scaling and warmup, scaling efficiency, and the batches DistributedSampler gives each rank.

Kept apart from :mod:`labs.data_parallel.ddp` (which talks to other ranks), as picotron keeps
the maths of a parallelism beside its communication.

Owns: the scaling arithmetic. Must not: communicate (no torch.distributed), print, or import the
rest of labs.
"""
from __future__ import annotations

import torch
from torch.utils.data import DistributedSampler

__all__ = ["linear_scaling_lr", "warmup_lr", "scaling_efficiency", "sampler_global_batches"]


def linear_scaling_lr(base_lr: float, base_batch: int, batch: int) -> float:
    """Linear scaling rule (Goyal et al., arXiv:1706.02677): batch × k -> learning rate × k."""
    return base_lr * batch / base_batch


def warmup_lr(step: int, *, base_lr: float, base_batch: int, batch: int,
              warmup_steps: int) -> float:
    """Gradual warmup (Goyal et al. §2.2): from ``base_lr`` at step 0, linearly up to the
    linearly scaled rate at ``warmup_steps``, constant after."""
    target = linear_scaling_lr(base_lr, base_batch, batch)
    if warmup_steps <= 0 or step >= warmup_steps:
        return target
    return base_lr + (target - base_lr) * step / warmup_steps


def scaling_efficiency(speedup: float, world_size: int) -> float:
    """Speedup over one device divided by the number of devices (1.0 = perfect)."""
    return speedup / world_size


def sampler_global_batches(num_samples: int, world_size: int, per_rank_batch: int, *,
                           epoch: int = 0, shuffle: bool = True, seed: int = 0,
                           drop_last: bool = False) -> list[torch.Tensor]:
    """The global batches one epoch of ``DistributedSampler`` + ``DataLoader(batch_size=
    per_rank_batch)`` feeds the ranks: each rank's batch, concatenated in rank order.

    DistributedSampler pads the index list to a multiple of ``world_size`` by repeating its
    first indices (``drop_last=False``) or drops the tail (``drop_last=True``), so every rank
    gets as many samples, and the last per-rank batch is equally short on all ranks.
    ``shard_batch(global, rank, world_size)`` gives back rank ``rank``'s batch.
    """
    per_rank = []
    for rank in range(world_size):
        sampler = DistributedSampler(range(num_samples), num_replicas=world_size, rank=rank,
                                     shuffle=shuffle, seed=seed, drop_last=drop_last)
        sampler.set_epoch(epoch)
        per_rank.append(torch.tensor(list(sampler)).split(per_rank_batch))
    return [torch.cat(batch) for batch in zip(*per_rank)]
