"""ZeRO-2 and ZeRO-3 written by hand, on flat parameters (Rajbhandari et al., arXiv:1910.02054).

Both cut parameters as one flat vector (:class:`FlatShard`): the tensors one after the other in
``parameters()`` order, zero-padded to a multiple of the world size N; rank r owns elements
``[r·S, (r+1)·S)`` with ``S = ceil(numel / N)``. Cutting through tensors makes the shards equal
(ZeRO-1 hands out whole tensors) and needs an elementwise optimizer: SGD, Adam, AdamW (each
element's update depends on that element alone), not LAMB or Adafactor (per-tensor norms).

- :class:`Zero2Optimizer` (stage 2, §5.2): every rank keeps all parameters, as views into one
  flat buffer. In ``step()`` the gradients are reduce-scattered -- rank r receives the average
  of its shard only, the full gradients are dropped --, the local optimizer updates the shard
  (a view of the flat buffer, so in place), and an all-gather brings everyone's new shards.
- :class:`Zero3Optimizer` (stage 3, §5.3): the cut is per unit, every submodule with parameters
  of its own (for the MLP: each ``nn.Linear``); a rank keeps only its shard of each unit. A
  forward pre-hook all-gathers the unit's full parameters just before its forward; a forward
  hook frees them (their storage resized to 0, as FSDP does: the tensors autograd saved for
  backward stay the same objects) and hooks the unit's output, so that they are gathered again
  just before the unit's backward; when backward has produced all of the unit's gradients they
  are reduce-scattered into the shard's gradient and the full parameters are freed again. The
  optimizer updates the shards; the next forward gathers the new values.

Left out, next to DeepSpeed and FSDP: overlap (every collective is synchronous), prefetching the
next unit, and for ZeRO-2 reduce-scattering bucket by bucket during backward (here once after
it, so the full gradients exist for a moment). What a rank holds between steps -- what the ZeRO
paper counts -- is what ``state_bytes()`` measures::

    opt = Zero3Optimizer(model, torch.optim.AdamW, lr=1e-3)   # every rank, same model
    _, loss = model(x, y); loss.backward()                    # the hooks gather and scatter
    opt.step(); opt.zero_grad()
    weights = opt.full_state_dict()                           # every rank: gathered copies

Owns: ZeRO-2 and ZeRO-3 on flat shards. Must not: print, keep process groups in globals, or import
the checks, the planner or the grader.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor, nn

from labs.data_parallel.zero import (check_group, check_optimizer_class, held_bytes,
                                     optimizer_state_tensors)
from labs.formulas.memory import ModelStateBytes
from labs.messages import text

__all__ = ["FlatShard", "Zero2Optimizer", "Zero3Optimizer"]


class FlatShard:
    """``params`` as one zero-padded flat vector, cut into equal shards over ``group``."""

    def __init__(self, params, group=None):
        self.params, self.group = list(params), group
        self.rank, self.world_size = check_group(group)
        if len({(p.dtype, p.device) for p in self.params}) != 1:
            raise ValueError(text("data_parallel.flat_shard_mixed",
                                  found=sorted({(str(p.dtype), str(p.device))
                                                for p in self.params})))
        self.numels = [p.numel() for p in self.params]
        self.numel = sum(self.numels)
        self.shard_numel = -(-self.numel // self.world_size)  # S = ceil(numel / N)
        self.padding = self.shard_numel * self.world_size - self.numel  # zeros at the end, < N
        self.like = dict(dtype=self.params[0].dtype, device=self.params[0].device)

    def flatten(self, tensors) -> Tensor:
        """``tensors`` (shaped like the parameters; None: zeros) in one padded flat tensor."""
        flat = torch.zeros(self.numel + self.padding, **self.like)
        for piece, t in zip(flat[:self.numel].split(self.numels), tensors):
            if t is not None:
                piece.copy_(t.reshape(-1))
        return flat

    def views(self, flat: Tensor) -> list[Tensor]:
        """Pieces of ``flat`` shaped like the parameters (views: they share its storage)."""
        pieces = flat[:self.numel].split(self.numels)
        return [piece.view_as(p) for piece, p in zip(pieces, self.params)]

    def own(self, flat: Tensor) -> Tensor:
        """This rank's shard of ``flat`` (a view)."""
        return flat.narrow(0, self.rank * self.shard_numel, self.shard_numel)

    def reduce_scatter_grads(self) -> Tensor:
        """The gradients averaged over the group, this rank's shard of them only: (S,)."""
        flat = self.flatten(p.grad for p in self.params)
        shard = torch.empty(self.shard_numel, **self.like)
        dist.reduce_scatter_single(shard, flat, group=self.group)  # sum; rank r gets piece r
        return shard.div_(self.world_size)

    def all_gather(self, full: Tensor, shard: Tensor) -> None:
        """Every rank's ``shard`` into ``full`` (padded_numel,), in rank order."""
        dist.all_gather_single(full, shard, group=self.group)


def _checked_params(model: nn.Module, optimizer_class) -> list[nn.Parameter]:
    check_optimizer_class(optimizer_class)
    params = list(model.parameters())
    if not params:
        raise ValueError(text("data_parallel.model_has_no_parameters", model=type(model).__name__))
    return params


def _bytes(params, grads, optim) -> ModelStateBytes:
    return ModelStateBytes(params=held_bytes(params), grads=held_bytes(grads), master_params=0,
                           optimizer_states=held_bytes(optimizer_state_tensors(optim)))


class Zero2Optimizer:
    """ZeRO-2 for ``model`` (the same replica on every rank of ``group``): parameters kept
    whole, gradients and optimizer states sharded. ``optimizer_class(**defaults)`` steps the
    shard; ``step()`` takes the local (not yet averaged) gradients after backward.

    Held between steps, in elements: parameters numel + padding (the flat buffer), gradients
    S, optimizer states k·S (k state tensors per parameter): the ZeRO-2 prediction
    ``numel·(1 + 1/N + k/N)`` plus the padding, ``padding + (1 + k)·(S - numel/N)``.
    """

    def __init__(self, model: nn.Module, optimizer_class, *, group=None, **defaults):
        self.flat = FlatShard(_checked_params(model, optimizer_class), group)
        self.full = self.flat.flatten(p.detach() for p in self.flat.params)
        for p, view in zip(self.flat.params, self.flat.views(self.full)):
            p.data = view  # the model now computes with the flat buffer
        self.shard = nn.Parameter(self.flat.own(self.full))  # a view: stepping it updates full
        self.optim = optimizer_class([self.shard], **defaults)

    def zero_grad(self) -> None:
        for p in self.flat.params:
            p.grad = None
        self.shard.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """Reduce-scatter the gradients, drop the full ones, update the own shard, all-gather."""
        self.shard.grad = self.flat.reduce_scatter_grads()
        for p in self.flat.params:
            p.grad = None
        self.optim.step()
        self.flat.all_gather(self.full, self.shard.detach().clone())  # input must not alias

    def state_bytes(self) -> ModelStateBytes:
        """Bytes this rank holds now (the flat buffer counts whole, padding included)."""
        return _bytes(self.flat.params, [self.shard.grad] + [p.grad for p in self.flat.params],
                      self.optim)


class _Unit:
    """One module whose own parameters live as a shard of their flat vector (ZeRO-3)."""

    def __init__(self, module: nn.Module, group):
        self.flat = FlatShard(module.parameters(recurse=False), group)
        self.full = self.flat.flatten(p.detach() for p in self.flat.params)
        self.shard = nn.Parameter(self.flat.own(self.full).clone())  # kept: 1/N of the unit
        for p, view in zip(self.flat.params, self.flat.views(self.full)):
            p.data = view  # the module computes with the gathered buffer, when it exists
        self.free()
        self.ready = 0
        self.handles = [module.register_forward_pre_hook(lambda *_: self.gather()),
                        module.register_forward_hook(self._after_forward)]
        self.handles += [p.register_post_accumulate_grad_hook(self._grad_ready)
                         for p in self.flat.params]

    def gather(self) -> None:
        storage = self.full.untyped_storage()
        if storage.nbytes() == 0:
            storage.resize_(self.full.numel() * self.full.element_size())
            self.flat.all_gather(self.full, self.shard.detach())

    def free(self) -> None:
        self.full.untyped_storage().resize_(0)  # the views stay, their bytes go

    def _after_forward(self, module, args, output) -> None:
        self.free()
        if torch.is_tensor(output) and output.requires_grad:
            output.register_hook(lambda grad: self.gather())  # just before the unit's backward

    @torch.no_grad()
    def _grad_ready(self, param: Tensor) -> None:
        self.ready += 1
        if self.ready < len(self.flat.params):
            return
        self.ready = 0
        grad = self.flat.reduce_scatter_grads()
        for p in self.flat.params:
            p.grad = None
        self.shard.grad = grad if self.shard.grad is None else self.shard.grad.add_(grad)
        self.free()


class Zero3Optimizer:
    """ZeRO-3 for ``model`` (the same replica on every rank of ``group``): parameters,
    gradients and optimizer states all sharded, unit by unit (every submodule with parameters
    of its own; each must run once per forward and share no parameter with another).

    Held between steps, per unit of u elements (S_u = ceil(u/N)): parameters S_u, gradients
    S_u, optimizer states k·S_u: the ZeRO-3 prediction ``numel·(2 + k)/N`` plus
    ``(2 + k)·Σ(S_u - u/N)``, the padding of each unit's shard.
    """

    def __init__(self, model: nn.Module, optimizer_class, *, group=None, **defaults):
        params = _checked_params(model, optimizer_class)
        modules = [m for m in model.modules()
                   if next(m.parameters(recurse=False), None) is not None]
        owned = [id(p) for m in modules for p in m.parameters(recurse=False)]
        if len(owned) != len(set(owned)) or len(owned) != len(params):
            raise ValueError(text("data_parallel.tied_weights"))
        self.names = {id(p): name for name, p in model.named_parameters()}
        self.units = [_Unit(m, group) for m in modules]
        self.optim = optimizer_class([u.shard for u in self.units], **defaults)

    def zero_grad(self) -> None:
        for unit in self.units:
            unit.shard.grad = None

    def step(self) -> None:
        """Update the own shards; the next forward gathers the new parameters."""
        self.optim.step()

    @torch.no_grad()
    def full_state_dict(self) -> dict[str, Tensor]:
        """Every parameter gathered and copied, by name (a collective: call on every rank)."""
        state = {}
        for unit in self.units:
            unit.gather()
            state.update({self.names[id(p)]: p.detach().clone() for p in unit.flat.params})
            unit.free()
        return state

    def state_bytes(self) -> ModelStateBytes:
        """Bytes this rank holds now (freed full parameters count 0)."""
        grads = [u.shard.grad for u in self.units]
        grads += [p.grad for u in self.units for p in u.flat.params]
        return _bytes([u.full for u in self.units] + [u.shard for u in self.units], grads,
                      self.optim)
