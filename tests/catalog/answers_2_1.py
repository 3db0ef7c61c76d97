"""Notebook 2.1's answers: averages by another collective, in another group or off by the
group's size; formulas borrowed from the course or one comparison off; ZeRO-1s that shard
nothing, update everything or never send; and right answers written unusually."""

from tests.support.both_ways import Answer

AVG, BUCKETS, BYTES = "ex2_1_average_gradients", "ex2_1_buckets", "ex2_1_model_state_bytes"
LR, HOURS, ZERO = "ex2_1_warmup_lr", "ex2_1_hours_per_epoch", "ex2_1_zero1"

_ZERO_PARTITION = """
        self.params, self.group = list(params), group
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        n, me = dist.get_world_size(group), dist.get_rank(group)
        loads, self.owner = [0] * n, {}
        for i in sorted(range(len(self.params)), key=lambda i: -self.params[i].numel()):
            self.owner[i] = loads.index(min(loads))
            loads[self.owner[i]] += self.params[i].numel()
        mine = [p for i, p in enumerate(self.params) if self.owner[i] == me]
"""

WRONG = [
    Answer(AVG, "the course's allreduce_gradients through the package", """
def average_gradients(model, group=None):
    dp.allreduce_gradients(model, group=group)
""", 0),
    Answer(AVG, "a sum: never divided by the group's size", """
def average_gradients(model, group=None):
    for p in model.parameters():
        dist.all_reduce(p.grad, group=group)
""", 0),
    Answer(AVG, "divided by the world size, not the group's size", """
def average_gradients(model, group=None):
    for p in model.parameters():
        dist.all_reduce(p.grad, group=group)
        p.grad.div_(dist.get_world_size())
""", 0),
    Answer(AVG, "the group ignored: averaged over every rank", """
def average_gradients(model, group=None):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad.div_(dist.get_world_size())
""", 0),
    Answer(AVG, "all_gather and a local mean", """
def average_gradients(model, group=None):
    n = dist.get_world_size(group)
    for p in model.parameters():
        parts = [torch.empty_like(p.grad) for _ in range(n)]
        dist.all_gather(parts, p.grad, group=group)
        p.grad.copy_(torch.stack(parts).mean(0))
""", 0),
    Answer(AVG, "every gradient averaged twice (the same numbers, twice the bytes)", """
def average_gradients(model, group=None):
    n = dist.get_world_size(group)
    for _ in range(2):
        for p in model.parameters():
            dist.all_reduce(p.grad, group=group)
            p.grad.div_(n)
""", 0),
    Answer(AVG, "p.grad replaced by a new tensor", """
def average_gradients(model, group=None):
    n = dist.get_world_size(group)
    for p in model.parameters():
        total = p.grad.clone()
        dist.all_reduce(total, group=group)
        p.grad = total / n
""", 0),
    Answer(BUCKETS, "the course's assign_buckets through the package", """
def make_buckets(sizes_bytes, bucket_bytes):
    return dp.assign_buckets(sizes_bytes, bucket_bytes)
""", 0),
    Answer(BUCKETS, "filled from the front, then flipped", """
def make_buckets(sizes_bytes, bucket_bytes):
    if bucket_bytes <= 0:
        raise ValueError(bucket_bytes)
    buckets, current, filled = [], [], 0
    for i in range(len(sizes_bytes)):
        if current and filled + sizes_bytes[i] > bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes_bytes[i]
    if current:
        buckets.append(current)
    return [list(reversed(b)) for b in reversed(buckets)]
""", 0),
    Answer(BUCKETS, "a full bucket closed at >= (an exact fit opens a new one)", """
def make_buckets(sizes_bytes, bucket_bytes):
    if bucket_bytes <= 0:
        raise ValueError(bucket_bytes)
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes_bytes))):
        if current and filled + sizes_bytes[i] >= bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes_bytes[i]
    if current:
        buckets.append(current)
    return buckets
""", 0),
    Answer(BUCKETS, "an empty first bucket before a tensor over the cap", """
def make_buckets(sizes_bytes, bucket_bytes):
    if bucket_bytes <= 0:
        raise ValueError(bucket_bytes)
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes_bytes))):
        if filled + sizes_bytes[i] > bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes_bytes[i]
    if current:
        buckets.append(current)
    return buckets
""", 0),
    Answer(BUCKETS, "a cap of 0 accepted (no ValueError)", """
def make_buckets(sizes_bytes, bucket_bytes):
    buckets, current, filled = [], [], 0
    for i in reversed(range(len(sizes_bytes))):
        if current and filled + sizes_bytes[i] > bucket_bytes:
            buckets.append(current)
            current, filled = [], 0
        current.append(i)
        filled += sizes_bytes[i]
    return buckets + [current] if current else buckets
""", 0),
    Answer(BYTES, "the course's formula", """
def model_state_bytes(num_params, optimizer, precision):
    return memory.model_state_bytes(num_params, optimizer, precision).total
""", 0),
    Answer(BYTES, "the course's bytes per parameter", """
def model_state_bytes(num_params, optimizer, precision):
    return num_params * memory.bytes_per_param(optimizer, precision).total
""", 0),
    Answer(BYTES, "mixed precision without the fp32 master weights", """
def model_state_bytes(num_params, optimizer, precision):
    states = {"sgd": 0, "sgd_momentum": 1, "adam": 2}[optimizer]
    low = 4 if precision == "fp32" else 2
    return num_params * (2 * low + 4 * states)
""", 0),
    Answer(LR, "the course's warmup_lr through the package", """
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    return dp.warmup_lr(step, base_lr=base_lr, base_batch=base_batch, batch=batch,
                        warmup_steps=warmup_steps)
""", 0),
    Answer(LR, "the course's linear scaling for the target", """
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    target = dp.linear_scaling_lr(base_lr, base_batch, batch)
    if warmup_steps <= 0 or step >= warmup_steps:
        return target
    return base_lr + (target - base_lr) * step / warmup_steps
""", 0),
    Answer(LR, "a warmup from 0, not from base_lr", """
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    target = base_lr * batch / base_batch
    return target if step >= warmup_steps else target * step / warmup_steps
""", 0),
    Answer(LR, "an integer batch ratio", """
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    target = base_lr * (batch // base_batch)
    if warmup_steps <= 0 or step >= warmup_steps:
        return target
    return base_lr + (target - base_lr) * step / warmup_steps
""", 0),
    Answer(LR, "the warmup counted from step 1", """
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    target = base_lr * batch / base_batch
    if warmup_steps <= 1 or step >= warmup_steps - 1:
        return target
    return base_lr + (target - base_lr) * step / (warmup_steps - 1)
""", 0),
    Answer(HOURS, "the last, partial batch left out (floor)", """
def hours_per_epoch(num_samples, batch_size, seconds_per_iter):
    return num_samples // batch_size * seconds_per_iter / 3600
""", 0),
    Answer(ZERO, "the course's ShardedOptimizer", """
from labs.data_parallel.zero import ShardedOptimizer
class MyZero1(ShardedOptimizer):
    pass
""", 0),
    Answer(ZERO, "the course's partition, a broadcast of its own", """
from labs.data_parallel import zero
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        self.params, self.group = list(params), group
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        parts = zero.partition_by_size([p.numel() for p in self.params],
                                       dist.get_world_size(group))
        self.owner = {i: r for r, part in enumerate(parts) for i in part}
        me = dist.get_rank(group)
        self.optim = optimizer_class([self.params[i] for i in parts[me]], **defaults)

    def step(self):
        self.optim.step()
        for i, p in enumerate(self.params):
            dist.broadcast(p.data, src=self.ranks[self.owner[i]], group=self.group)
""", 0),
    Answer(ZERO, "the course's module reloaded", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        import importlib
        import labs.data_parallel.zero as zero
        self.inner = importlib.reload(zero).ShardedOptimizer(params, optimizer_class,
                                                             group=group, **defaults)
        self.optim = self.inner.optim

    def step(self):
        self.inner.step()
""", 0),
    Answer(ZERO, "the course's class recompiled from its source under another name", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        import inspect
        import labs.data_parallel.zero as zero
        space = dict(vars(zero))
        exec(inspect.getsource(zero.ShardedOptimizer).replace("class ShardedOptimizer",
                                                              "class Mine"), space)
        self.inner = space["Mine"](params, optimizer_class, group=group, **defaults)

    def step(self):
        self.inner.step()
""", 0),
    Answer(ZERO, "shards nothing: every rank's optimizer over every parameter", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        self.params, self.group = list(params), group
        self.optim = optimizer_class(self.params, **defaults)
        self.src = dist.get_process_group_ranks(group or dist.group.WORLD)[0]

    @torch.no_grad()
    def step(self):
        self.optim.step()
        for p in self.params:
            dist.broadcast(p, src=self.src, group=self.group)
""", 0),
    Answer(ZERO, "a shard in self.optim, the rest in a second optimizer, all broadcast", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.optim = optimizer_class(mine, **defaults)  # what a check of self.optim would see
        self.rest = optimizer_class([p for p in self.params if all(p is not q for q in mine)],
                                    **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        self.rest.step()
        for i, p in enumerate(self.params):
            dist.broadcast(p, src=self.ranks[self.owner[i]], group=self.group)
""", 0),
    Answer(ZERO, "the whole state in an optimizer kept out of the object's sight", """
_KEEP = []
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.optim = optimizer_class(mine[:1], **defaults)
        _KEEP.append(optimizer_class([p for p in self.params if p is not mine[0]], **defaults))

    @torch.no_grad()
    def step(self):
        self.optim.step()
        _KEEP[-1].step()
        for i, p in enumerate(self.params):
            dist.broadcast(p, src=self.ranks[self.owner[i]], group=self.group)
""", 0),
    Answer(ZERO, "a shard, never sent to the other ranks", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.optim = optimizer_class(mine, **defaults)

    def step(self):
        self.optim.step()
""", 0),
    Answer(ZERO, "the owner's rank in the group as broadcast's src", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.optim = optimizer_class(mine, **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        for i, p in enumerate(self.params):
            dist.broadcast(p, src=self.owner[i], group=self.group)
""", 0),
    Answer(ZERO, "parameters dealt round-robin (i % n): not balanced", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        self.params, self.group = list(params), group
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        self.n, me = dist.get_world_size(group), dist.get_rank(group)
        self.optim = optimizer_class(self.params[me::self.n], **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        for i, p in enumerate(self.params):
            dist.broadcast(p, src=self.ranks[i % self.n], group=self.group)
""", 0),
    Answer(ZERO, "every whole parameter all-gathered from every rank", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.n = n
        self.optim = optimizer_class(mine, **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        for i, p in enumerate(self.params):
            copies = [torch.empty_like(p) for _ in range(self.n)]
            dist.all_gather(copies, p, group=self.group)
            p.copy_(copies[self.owner[i]])
""", 0),
]

RIGHT = [
    Answer(AVG, "one all-reduce of all the gradients flattened, copied back", """
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors
def average_gradients(model, group=None):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = _flatten_dense_tensors(grads)
    dist.all_reduce(flat, group=group)
    flat /= dist.get_world_size(group)
    for g, averaged in zip(grads, _unflatten_dense_tensors(flat, grads)):
        g.copy_(averaged)
"""),
    Answer(AVG, "ReduceOp.AVG, every all-reduce started before any is waited for", """
def average_gradients(model, group=None):
    works = [dist.all_reduce(p.grad, op=dist.ReduceOp.AVG, group=group, async_op=True)
             for p in model.parameters() if p.grad is not None]
    for work in works:
        work.wait()
"""),
    Answer(BUCKETS, "a generator of tuples, listed", """
def _walk(sizes_bytes, bucket_bytes):
    current, filled = (), 0
    for i in range(len(sizes_bytes) - 1, -1, -1):
        if current and filled + sizes_bytes[i] > bucket_bytes:
            yield current
            current, filled = (), 0
        current, filled = current + (i,), filled + sizes_bytes[i]
    if current:
        yield current
def make_buckets(sizes_bytes, bucket_bytes):
    if bucket_bytes <= 0:
        raise ValueError("bucket_bytes must be positive")
    return list(_walk(sizes_bytes, bucket_bytes))
"""),
    Answer(BYTES, "an Enum of optimizers and a dataclass of precisions", """
import enum
from dataclasses import dataclass
class States(enum.Enum):
    sgd = 0
    sgd_momentum = 1
    adam = 2
@dataclass(frozen=True)
class Precision:
    weight: int
    grad: int
    master: int
PRECISIONS = {"fp32": Precision(4, 4, 0), "mixed": Precision(2, 2, 4)}
def model_state_bytes(num_params, optimizer, precision):
    p = PRECISIONS[precision]
    return num_params * (p.weight + p.grad + p.master + 4 * States[optimizer].value)
"""),
    Answer(LR, "exact fractions", """
from fractions import Fraction
def warmup_lr(step, *, base_lr, base_batch, batch, warmup_steps):
    target = Fraction(base_lr) * batch / base_batch
    done = Fraction(min(step, warmup_steps), warmup_steps) if warmup_steps > 0 else 1
    return Fraction(base_lr) + (target - Fraction(base_lr)) * done
"""),
    Answer(HOURS, "math.ceil and a numpy float", """
import numpy as np
def hours_per_epoch(num_samples, batch_size, seconds_per_iter):
    return np.float64(math.ceil(num_samples / batch_size) * seconds_per_iter) / 3600
"""),
    Answer(ZERO, "a class of its own: ties to the last rank, broadcasts waited together", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):
        self.params, self.group = list(params), group
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        n, me = dist.get_world_size(group), dist.get_rank(group)
        loads, self.owner = [0] * n, [None] * len(self.params)
        for i in sorted(range(len(self.params)), key=lambda i: (-self.params[i].numel(), -i)):
            r = max(range(n), key=lambda r: (-loads[r], r))
            self.owner[i] = r
            loads[r] += self.params[i].numel()
        self.optim = optimizer_class([p for p, r in zip(self.params, self.owner) if r == me],
                                     **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        works = [dist.broadcast(p, src=self.ranks[r], group=self.group, async_op=True)
                 for p, r in zip(self.params, self.owner)]
        for work in works:
            work.wait()
"""),
    Answer(ZERO, "the others' parameters zeroed, then one all-reduce each", """
class MyZero1:
    def __init__(self, params, optimizer_class, group=None, **defaults):""" + _ZERO_PARTITION + """
        self.me = me
        self.optim = optimizer_class(mine, **defaults)

    @torch.no_grad()
    def step(self):
        self.optim.step()
        for i, p in enumerate(self.params):
            if self.owner[i] != self.me:
                p.zero_()
            dist.all_reduce(p, group=self.group)
"""),
]
