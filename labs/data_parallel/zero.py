"""ZeRO-1 written by hand: each rank keeps the optimizer states of its own parameters only.

Plain data parallelism keeps on every rank the whole optimizer, e.g. Adam's two fp32 moments:
8 of the 16 bytes per parameter. ZeRO stage 1 (Rajbhandari et al., arXiv:1910.02054, §5.1)
shards them: the parameters are divided among the ranks, each rank steps only its own with a
local optimizer, then sends the new values to the others. The gradients stay averaged in
full on every rank (DDP's all-reduce); only the states are 1/N. The interface is the one of
``torch.distributed.optim.ZeroRedundancyOptimizer``::

    opt = ShardedOptimizer(model.parameters(), torch.optim.AdamW, lr=1e-3)
    loss.backward()
    opt.average_gradients()     # or DDP / allreduce_gradients: step() expects averaged grads
    opt.step()                  # update own shard, broadcast each parameter from its owner

Stages 2 and 3 (gradients and parameters sharded too) are :mod:`labs.data_parallel.zero_stages`;
the bytes each stage predicts are ``labs.formulas.memory.model_state_bytes_per_gpu(zero_stage=k)``.
Groups are passed explicitly (``group=None``: the default group).

Owns: ZeRO-1's sharded optimizer and its byte counts. Must not: print, keep process groups in
globals, or import the checks, the planner or the grader.
"""
from __future__ import annotations

import torch
import torch.distributed as dist

from labs.formulas.memory import ModelStateBytes
from labs.messages import text

__all__ = ["partition_by_size", "ShardedOptimizer", "held_bytes", "optimizer_state_tensors"]


def partition_by_size(sizes, world_size: int, loads=None) -> list[list[int]]:
    """Indices of ``sizes`` for each rank, greedily: largest size first (equal sizes in index
    order), each to the rank with the fewest elements so far (the lowest rank on a tie).

    Deterministic, so every rank computes the same assignment without talking; the rule of
    ``ZeroRedundancyOptimizer``. ``loads`` (per-rank element counts, updated in place) carries
    the sums from one parameter group to the next, as there.
    """
    loads = [0] * world_size if loads is None else loads
    parts: list[list[int]] = [[] for _ in range(world_size)]
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):  # sorted() is stable
        rank = loads.index(min(loads))
        parts[rank].append(i)
        loads[rank] += sizes[i]
    return parts


# --- checks shared with zero_stages ------------------------------------------------------

def check_optimizer_class(optimizer_class) -> None:
    if isinstance(optimizer_class, torch.optim.Optimizer):
        raise TypeError(text("data_parallel.optimizer_instance",
                             name=type(optimizer_class).__name__))
    if not (isinstance(optimizer_class, type)
            and issubclass(optimizer_class, torch.optim.Optimizer)):
        raise TypeError(text("data_parallel.optimizer_not_a_class", value=optimizer_class))


def check_group(group) -> tuple[int, int]:
    """(rank in ``group``, its size); a clear error outside a process group or the group."""
    if not dist.is_initialized():
        raise RuntimeError(text("data_parallel.no_process_group"))
    rank = dist.get_rank(group)
    if rank < 0:
        raise ValueError(text("data_parallel.not_in_group", rank=dist.get_rank()))
    return rank, dist.get_world_size(group)


def _param_groups(params) -> list[dict]:
    params = list(params)
    groups = ([dict(g, params=list(g["params"])) for g in params]
              if params and isinstance(params[0], dict) else [{"params": params}])
    if not any(g["params"] for g in groups):
        raise ValueError(text("data_parallel.params_empty"))
    return groups


# --- measuring what a rank holds ---------------------------------------------------------

def held_bytes(tensors) -> int:
    """Bytes of the distinct storages behind ``tensors`` as allocated now: a view counts its
    whole storage once, a storage freed with ``resize_(0)`` (ZeRO-3) counts 0."""
    storages = {}
    for t in tensors:
        if t is not None:
            storage = t.untyped_storage()
            storages[storage.data_ptr() or id(t)] = storage.nbytes()
    return sum(storages.values())


def optimizer_state_tensors(optimizer) -> list[torch.Tensor]:
    """The optimizer's state tensors, without the scalar ``step`` counters (labs.formulas.memory leaves
    them out too)."""
    return [v for state in optimizer.state.values() for k, v in state.items()
            if torch.is_tensor(v) and k != "step"]


# --- ZeRO-1 ------------------------------------------------------------------------------

class ShardedOptimizer:
    """ZeRO-1: ``optimizer_class`` over this rank's share of ``params``; call on every rank of
    ``group`` with the same parameters (a replica each, as in data parallelism).

    ``params`` are tensors or parameter groups (dicts, options per group), as for any torch
    optimizer; ``defaults`` are the optimizer's options (lr=...). Parameters go to ranks by
    :func:`partition_by_size` (whole tensors); ``partition[r]`` lists rank r's parameters,
    :meth:`owner_of` says who owns one. ``optim`` is the local optimizer (its ``state`` holds
    only the own shard's states; ``param_groups`` are its groups, own parameters only: set a
    new lr there on every rank). Whole-tensor shards keep any optimizer exact whose update of a
    tensor depends on that tensor alone (SGD, Adam, AdamW, Adagrad...), not e.g. LBFGS.
    """

    def __init__(self, params, optimizer_class, *, group=None, **defaults):
        check_optimizer_class(optimizer_class)
        groups = _param_groups(params)
        self.group = group
        self.rank, self.world_size = check_group(group)
        self.global_ranks = dist.get_process_group_ranks(
            dist.group.WORLD if group is None else group)
        self.params = [p for g in groups for p in g["params"]]
        self.partition: list[list[torch.Tensor]] = [[] for _ in range(self.world_size)]
        self._owner: dict[int, int] = {}
        loads, local_groups = [0] * self.world_size, []
        for g in groups:
            parts = partition_by_size([p.numel() for p in g["params"]], self.world_size, loads)
            for rank, indices in enumerate(parts):
                for i in indices:
                    self.partition[rank].append(g["params"][i])
                    self._owner[id(g["params"][i])] = rank
            mine = [g["params"][i] for i in sorted(parts[self.rank])]
            local_groups.append(dict(g, params=mine))
        self.optim = optimizer_class(local_groups, **defaults)

    @property
    def param_groups(self) -> list[dict]:
        return self.optim.param_groups

    @property
    def state(self):
        return self.optim.state

    def owner_of(self, param: torch.Tensor) -> int:
        """The rank (in ``group``) that keeps ``param``'s optimizer state and updates it."""
        try:
            return self._owner[id(param)]
        except KeyError:
            raise KeyError(text("data_parallel.not_a_parameter")) from None

    def average_gradients(self) -> None:
        """All-reduce every parameter's gradient over ``group`` and divide by its size: what DDP
        does in backward. :meth:`step` expects averaged gradients; call this or use DDP."""
        for p in self.params:
            if p.grad is not None:
                dist.all_reduce(p.grad, group=self.group)
                p.grad.div_(self.world_size)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of all parameters: in ZeRO-1 every rank computes all of them."""
        for p in self.params:
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()

    @torch.no_grad()
    def step(self, closure=None):
        """Update the own shard, then broadcast every parameter from its owner, so that all
        replicas hold the same new weights. Broadcast takes a *global* rank as ``src``: the
        owner's rank in ``group`` is translated (``group_src=`` would do it for us)."""
        loss = self.optim.step(closure)
        for rank, params in enumerate(self.partition):
            for p in params:
                dist.broadcast(p, src=self.global_ranks[rank], group=self.group)
        return loss

    def state_dict(self) -> dict:
        """The local optimizer's state dict: this rank's shard only (save one per rank)."""
        return self.optim.state_dict()

    def load_state_dict(self, state_dict: dict) -> None:
        self.optim.load_state_dict(state_dict)

    def state_bytes(self) -> ModelStateBytes:
        """Bytes this rank holds now: all parameters and gradients, its own optimizer states."""
        return ModelStateBytes(params=held_bytes(self.params),
                               grads=held_bytes(p.grad for p in self.params), master_params=0,
                               optimizer_states=held_bytes(optimizer_state_tensors(self.optim)))
