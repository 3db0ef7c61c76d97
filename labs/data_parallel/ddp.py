"""Data parallelism written by hand, in the steps PyTorch's DistributedDataParallel took.

Every rank holds a full replica, trains on its own slice of the global batch, and averages
the gradients with the others before the optimizer step, so all replicas take the same step
as one process on the whole batch would (Li et al., "PyTorch Distributed: Experiences on
Accelerating Data Parallel Training", VLDB 2020, arXiv:2006.15704):

1. :func:`allreduce_gradients` -- after backward, one all-reduce per gradient;
2. :func:`allreduce_gradients_bucketed` -- gradients packed into buckets of ``bucket_bytes``,
   one all-reduce per bucket (fewer, larger messages);
3. :class:`OverlappedGradReducer` -- each bucket all-reduced asynchronously as soon as backward
   has produced its last gradient (post-accumulate-grad hooks), while backward goes on;
4. :func:`parameter_server_step` -- the contrast: gradients gathered on one root, which steps
   the only optimizer and sends the weights back; the root moves (N-1)·S each way.

Steps 1 to 3 are also small ``nn.Module`` wrappers, as in picotron's ``DataParallelNaive`` /
``DataParallelBucket`` (:class:`AllReduceGradReducer`, :class:`BucketedGradReducer`,
:class:`OverlappedGradReducer`): ``forward`` runs the replica, ``no_sync()`` accumulates locally,
``finish_gradient_synchronization()`` leaves the averaged gradients in ``.grad``.
:func:`train_data_parallel` picks one of them, or ``torch.nn.parallel.DistributedDataParallel``,
or the parameter server's step, and runs one plain training loop inside a launched rank; it
returns a ``TrainResult`` to compare with ``labs.reference.train_reference``. Groups are passed
explicitly (``group=None``: default).

Owns: the hand-written DDP variants, their wrappers and ``train_data_parallel``. Must not: time
or plot (experiments, plots), print, keep process groups in globals, or import the checks or the
grader.
"""
from __future__ import annotations

import contextlib
import functools

import torch
import torch.distributed as dist
from torch import nn

import labs
from labs.data import shard_batch
from labs.data_parallel.buckets import BUCKET_BYTES, assign_buckets
from labs.messages import text
from labs.reference import TrainResult, make_optimizer

__all__ = ["ReplicaMismatchError", "check_replicas_identical", "allreduce_gradients",
           "allreduce_gradients_bucketed", "GradReducer", "AllReduceGradReducer",
           "BucketedGradReducer", "OverlappedGradReducer", "parameter_server_step",
           "train_data_parallel", "VARIANTS"]

VARIANTS = ("allreduce", "bucketed", "overlapped", "parameter_server", "ddp")


# --- replicas ----------------------------------------------------------------------------

class ReplicaMismatchError(ValueError):
    """The replicas' parameters differ across ranks before training starts."""


def check_replicas_identical(model: nn.Module, group=None, src: int = 0) -> None:
    """Raise ReplicaMismatchError on every rank unless all ranks hold ``src``'s parameters bit
    for bit (``src`` is a rank of ``group``)."""
    params = [p.detach() for p in model.parameters()]
    mine = (torch.cat([p.reshape(-1) for p in params]) if params
            else torch.zeros(0, device=labs.device()))
    theirs = mine.clone()
    dist.broadcast(theirs, group=group, group_src=src)
    names, offset = [], 0
    for name, p in model.named_parameters():
        if not torch.equal(mine[offset:offset + p.numel()], theirs[offset:offset + p.numel()]):
            names.append(name)
        offset += p.numel()
    bad = torch.tensor([len(names)], device=mine.device)
    dist.all_reduce(bad, op=dist.ReduceOp.MAX, group=group)
    if bad.item():
        rank = dist.get_rank(group)
        raise ReplicaMismatchError(text(
            "data_parallel.replicas_differ", rank=rank, count=len(names), src=src,
            names=", ".join(names[:3]) or text("data_parallel.replicas_differ_elsewhere")))


# --- step 1: one all-reduce per gradient -------------------------------------------------

def allreduce_gradients(model: nn.Module, group=None) -> None:
    """After backward: replace every gradient by its average over the ranks of ``group``."""
    world_size = dist.get_world_size(group)
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad, group=group)  # sum over ranks, in place
            p.grad.div_(world_size)


# --- step 2: buckets ---------------------------------------------------------------------

def _grad_params(model: nn.Module) -> list[nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def allreduce_gradients_bucketed(model: nn.Module, bucket_bytes: int = BUCKET_BYTES,
                                 group=None) -> None:
    """After backward: average the gradients with one all-reduce per bucket of ~bucket_bytes."""
    params = _grad_params(model)
    world_size = dist.get_world_size(group)
    for bucket in assign_buckets([p.numel() * p.element_size() for p in params], bucket_bytes):
        grads = [params[i].grad for i in bucket]
        flat = torch.cat([g.reshape(-1) for g in grads])  # one message for the whole bucket
        dist.all_reduce(flat, group=group)
        flat.div_(world_size)
        for g, part in zip(grads, flat.split([g.numel() for g in grads])):
            g.copy_(part.view_as(g))


# --- steps 1 and 2 as nn.Module wrappers, with no_sync -----------------------------------

class GradReducer(nn.Module):
    """The wrappers' common shape (picotron's ``DataParallelNaive``, torch's DDP).

    Wraps one replica (refused unless it equals rank 0's on every rank of ``group``); its
    ``forward`` runs the replica. After ``backward()`` and before ``optimizer.step()``, call
    :meth:`finish_gradient_synchronization`: it leaves in every ``.grad`` the average over
    ``group``. Inside :meth:`no_sync` the gradients only accumulate locally (gradient
    accumulation) and :meth:`finish_gradient_synchronization` does nothing::

        model = AllReduceGradReducer(model, group=group)
        _, loss = model(x, y); loss.backward()
        model.finish_gradient_synchronization(); optimizer.step()

    This base class communicates nothing: the parameter server's ranks use it as it is.
    """

    def __init__(self, module: nn.Module, group=None):
        super().__init__()
        check_replicas_identical(module, group)
        self.module, self.group = module, group
        self.world_size = dist.get_world_size(group)
        self.require_backward_grad_sync = True

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate gradients locally, no communication."""
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = True

    def finish_gradient_synchronization(self) -> None:
        """Average the gradients over ``group`` (here: nothing to do)."""

    def remove(self) -> None:
        """Take any hooks off the parameters (here: none)."""


class AllReduceGradReducer(GradReducer):
    """Step 1 as a wrapper: after backward, one all-reduce per gradient."""

    def finish_gradient_synchronization(self) -> None:
        if self.require_backward_grad_sync:
            allreduce_gradients(self.module, self.group)


class BucketedGradReducer(GradReducer):
    """Step 2 as a wrapper: after backward, one all-reduce per bucket of ~``bucket_bytes``."""

    def __init__(self, module: nn.Module, bucket_bytes: int = BUCKET_BYTES, group=None):
        super().__init__(module, group)
        self.bucket_bytes = bucket_bytes

    def finish_gradient_synchronization(self) -> None:
        if self.require_backward_grad_sync:
            allreduce_gradients_bucketed(self.module, self.bucket_bytes, self.group)


# --- step 3: buckets overlapped with backward --------------------------------------------

class OverlappedGradReducer(GradReducer):
    """All-reduce each bucket while backward is still computing the earlier layers' gradients.

    A post-accumulate-grad hook copies each gradient into its bucket's flat buffer; when a
    bucket is complete it is all-reduced asynchronously (``async_op=True``), buckets strictly
    in order so that every rank issues the same collectives in the same order.
    :meth:`finish_gradient_synchronization` (or its short name :meth:`wait`) waits for them and
    writes the averages back into ``.grad``; call it after ``backward()`` and before
    ``optimizer.step()``. The hooks sit on the parameters, so a backward through the bare
    module communicates too (picotron's ``DataParallelBucket``)::

        model = OverlappedGradReducer(model, bucket_bytes=2**20)
        _, loss = model(x, y); loss.backward(); model.wait(); optimizer.step()
    """

    def __init__(self, module: nn.Module, bucket_bytes: int = BUCKET_BYTES, group=None):
        super().__init__(module, group)
        self.params = _grad_params(module)
        self.buckets = assign_buckets([p.numel() * p.element_size() for p in self.params],
                                      bucket_bytes)
        self.flats, self.slots = [], {}  # one flat buffer per bucket; param -> (bucket, offset)
        for b, bucket in enumerate(self.buckets):
            offset = 0
            for i in bucket:
                self.slots[i] = (b, offset)
                offset += self.params[i].numel()
            first = self.params[bucket[0]]
            self.flats.append(torch.zeros(offset, dtype=first.dtype, device=first.device))
        self.handles = [p.register_post_accumulate_grad_hook(functools.partial(self._ready, i))
                        for i, p in enumerate(self.params)]
        self._reset()

    def _reset(self) -> None:
        self.missing = [len(bucket) for bucket in self.buckets]
        self.works, self.next_bucket = [], 0

    def _ready(self, i: int, param: torch.Tensor) -> None:
        if not self.require_backward_grad_sync:
            return
        b, offset = self.slots[i]
        self.flats[b][offset:offset + param.numel()].copy_(param.grad.reshape(-1))
        self.missing[b] -= 1
        while self.next_bucket < len(self.buckets) and self.missing[self.next_bucket] == 0:
            self.works.append(dist.all_reduce(self.flats[self.next_bucket], group=self.group,
                                              async_op=True))
            self.next_bucket += 1

    def finish_gradient_synchronization(self) -> None:
        """Wait for all buckets, then write the averaged gradients back into ``.grad``."""
        if not self.require_backward_grad_sync:
            return
        if self.next_bucket < len(self.buckets):
            stuck = [b for b, m in enumerate(self.missing) if m]
            for work in self.works:
                work.wait()
            self._reset()
            raise RuntimeError(text("data_parallel.buckets_never_completed", buckets=stuck))
        for work, flat, bucket in zip(self.works, self.flats, self.buckets):
            work.wait()
            flat.div_(self.world_size)
            for i in bucket:
                b, offset = self.slots[i]
                p = self.params[i]
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
        self._reset()

    wait = finish_gradient_synchronization

    def remove(self) -> None:
        """Take the hooks off the parameters."""
        for handle in self.handles:
            handle.remove()


# --- the contrast: gather to a root, broadcast back --------------------------------------

def parameter_server_step(model: nn.Module, optimizer, *, root: int = 0, group=None,
                          counter=None) -> None:
    """One update the "parameter server" way: every rank sends its gradients to ``root``, the
    root averages them, steps the only ``optimizer`` (None on the other ranks) and sends the
    new weights to every rank. ``counter`` (a ``labs.collectives.CommCounter``) records bytes.
    """
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    params = _grad_params(model)
    grads = torch.cat([p.grad.reshape(-1) for p in params])
    peers = [r for r in range(world_size) if r != root]

    def send(t, peer):
        dist.send(t, group=group, group_dst=peer)
        if counter is not None:
            counter.record_send(t)

    def recv(t, peer):
        dist.recv(t, group=group, group_src=peer)
        if counter is not None:
            counter.record_recv(t)

    if rank == root:
        incoming = torch.empty_like(grads)
        for peer in peers:
            recv(incoming, peer)
            grads.add_(incoming)
        grads.div_(world_size)
        for p, g in zip(params, grads.split([p.numel() for p in params])):
            p.grad.copy_(g.view_as(p))
        optimizer.step()
        weights = torch.cat([p.detach().reshape(-1) for p in params])
        for peer in peers:
            send(weights, peer)
    else:
        send(grads, root)
        weights = torch.empty_like(grads)
        recv(weights, root)
        with torch.no_grad():
            for p, w in zip(params, weights.split([p.numel() for p in params])):
                p.copy_(w.view_as(p))


# --- one training loop for every variant -------------------------------------------------

class _TorchDDP(nn.parallel.DistributedDataParallel):
    """torch's DDP under the wrappers' names: its backward has already averaged the gradients."""

    def finish_gradient_synchronization(self) -> None:
        pass

    def remove(self) -> None:
        pass


def _wrap(variant: str, module: nn.Module, bucket_bytes: int, group):
    """The wrapper of ``variant`` around ``module``."""
    if variant == "ddp":
        return _TorchDDP(module, process_group=group, bucket_cap_mb=bucket_bytes / 2**20)
    if variant == "allreduce":
        return AllReduceGradReducer(module, group)
    if variant == "bucketed":
        return BucketedGradReducer(module, bucket_bytes, group)
    if variant == "overlapped":
        return OverlappedGradReducer(module, bucket_bytes, group)
    return GradReducer(module, group)  # parameter server: the root averages, in its own step


def _grads(module: nn.Module, average: bool, group) -> dict:
    """The gradients on the CPU; ``average``: all-reduced over ``group`` first (the parameter
    server averages on its root only; every rank reports the average)."""
    if average:
        allreduce_gradients(module, group)
    return {n: p.grad.detach().cpu().clone() for n, p in module.named_parameters()}


def train_data_parallel(model: nn.Module, batches, *, steps: int, lr: float,
                        variant: str = "ddp", optimizer: str = "adamw",
                        bucket_bytes: int = BUCKET_BYTES, group=None,
                        on_step=None) -> TrainResult:
    """Train ``model`` (the same replica on every rank) data-parallel; call on every rank.

    ``batches(step)`` returns the *global* batch (x, y), the same on every rank; each rank
    trains on its ``shard_batch`` slice (the global batch must divide by the world size).
    Returns what ``train_reference`` returns on one process for the same model and batches:
    the mean loss over the global batch of each step, the final weights, and the averaged
    gradients of the last step. The hand-written variants refuse replicas that differ
    (ReplicaMismatchError); torch DDP instead broadcasts rank 0's weights at construction.
    ``on_step(step)``, if given, is called after each optimizer step (the benchmark times it).
    The model is moved to this rank's device (``labs.device()``); the weights and gradients come
    back on the CPU, comparable with the single-process reference wherever it ran.
    """
    if variant not in VARIANTS:
        raise ValueError(text("data_parallel.unknown_variant", variant=variant, variants=VARIANTS))
    assign_buckets([], bucket_bytes)  # validates bucket_bytes on every variant
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    device = labs.device()
    module = model.to(device)  # in place: nccl needs the replica on this rank's GPU
    model = _wrap(variant, module, bucket_bytes, group)
    server = variant == "parameter_server"  # one optimizer, on the root: a step of its own
    opt = make_optimizer(module.parameters(), optimizer, lr=lr) if not server or rank == 0 else None
    update = (functools.partial(parameter_server_step, module, opt, group=group) if server
              else opt.step)
    losses = torch.zeros(steps, dtype=torch.float64, device=device)
    for step in range(steps):
        x, y = shard_batch(*batches(step), rank, world_size)
        _, loss = model(x.to(device), y.to(device))
        module.zero_grad(set_to_none=False)
        loss.backward()
        losses[step] = loss.item()
        model.finish_gradient_synchronization()  # torch DDP, parameter server: nothing
        if step == steps - 1:
            grads = _grads(module, server, group)
        update()
        if on_step is not None:
            on_step(step)
    model.remove()
    dist.all_reduce(losses, group=group)  # equal shards: mean of the means = global mean
    state = {n: t.detach().cpu().clone() for n, t in module.state_dict().items()}
    return TrainResult(losses=(losses / world_size).tolist(), state_dict=state,
                       grads_of_last_step=grads)
