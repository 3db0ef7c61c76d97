"""Notebook 2.4's answers: meshes read in the wrong order, layouts by another rule, DP × TP and
DP × PP × TP steps that get the numbers without the mechanism (the whole MLP on every rank,
stage 1 recomputing stage 0, the course's groups); and right answers written unusually (a
dataclass, a generator, an Enum, a class, one flattened all-reduce), one of them on the hidden
case whose gradient shard and activation have the same shape."""

from tests.support.both_ways import Answer

COORDS, GROUPS, MEMORY, LAYOUT = "ex2_4_coords", "ex2_4_groups", "ex2_4_memory", "ex2_4_layout"
STEP, STEP_3D = "ex2_4_hybrid_step", "ex2_4_3d_step"

# --- exercise 5: pieces of a right answer, recombined below ---------------------------------
_GROUPS = """
    rank = dist.get_rank()
    dp_index, tp_index = divmod(rank, tp)
    for d in range(dp):
        group = dist.new_group(list(range(d * tp, (d + 1) * tp)))
        if d == dp_index:
            tp_group = group
    for t in range(tp):
        group = dist.new_group(list(range(t, dp * tp, tp)))
        if t == tp_index:
            dp_group = group
"""
_SHARDS = """
    w1_mine = w1.chunk(tp, dim=0)[tp_index].clone().requires_grad_()
    w2_mine = w2.chunk(tp, dim=1)[tp_index].clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]
"""
_FORWARD = """
    h = torch.relu(copy_to_tensor_parallel_region(x_mine, group=tp_group) @ w1_mine.T)
    out = reduce_from_tensor_parallel_region(h @ w2_mine.T, group=tp_group)
    ((out - y_mine) ** 2).mean().backward()
"""
_AVERAGE = """
    grads = []
    for grad in (w1_mine.grad, w2_mine.grad):
        dist.all_reduce(grad, group=dp_group)
        grads.append(grad / dp)
    return grads
"""


def _step(groups=_GROUPS, shards=_SHARDS, forward=_FORWARD, average=_AVERAGE) -> str:
    return "def my_hybrid_step(dp, tp, w1, w2, x, y):" + groups + shards + forward + average


# --- exercise 6: the reference cell's body, with one part replaced --------------------------
_3D_HEAD = """
def my_3d_step(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
    rank = dist.get_rank()
    rest, tp_index = divmod(rank, tp)
    dp_index, stage = divmod(rest, 2)
    w1_mine = w1s[stage].chunk(tp, dim=0)[tp_index].clone().requires_grad_()
    w2_mine = w2s[stage].chunk(tp, dim=1)[tp_index].clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]

    def block(h):
        h = torch.relu(copy_to_tensor_parallel_region(h, group=tp_group) @ w1_mine.T)
        return reduce_from_tensor_parallel_region(h @ w2_mine.T, group=tp_group)
"""
_3D_PIPE = """
    loss = None
    if stage == 0:
        out = block(x_mine)
        dist.send(out.detach().contiguous(), dst=rank + tp)
        grad_out = torch.empty_like(out)
        dist.recv(grad_out, src=rank + tp)
        out.backward(grad_out)
    else:
        h = torch.empty(x_mine.shape[0], w1s[1].shape[1])
        dist.recv(h, src=rank - tp)
        h.requires_grad_()
        loss = ((block(h) - y_mine) ** 2).mean()
        loss.backward()
        dist.send(h.grad.contiguous(), dst=rank - tp)
        loss = loss.detach()
"""
_3D_TAIL = """
    grads = []
    for grad in (w1_mine.grad, w2_mine.grad):
        dist.all_reduce(grad, group=dp_group)
        grads.append(grad / dp)
    weights = [w.detach() - lr * g for w, g in zip((w1_mine, w2_mine), grads)]
    return loss, grads, weights
"""


def _3d(head=_3D_HEAD, pipe=_3D_PIPE, tail=_3D_TAIL) -> str:
    return head + pipe + tail


WRONG = [
    Answer(COORDS, "TP outermost", """
def my_coords(rank, dp, pp, tp):
    tp_index, rest = divmod(rank, dp * pp)
    dp_index, pp_index = divmod(rest, pp)
    return dp_index, pp_index, tp_index
""", 0),
    Answer(COORDS, "the course's MeshShape.coords", """
from labs.hybrid import MeshShape as M
def my_coords(rank, dp, pp, tp):
    return tuple(M(dp, pp, tp).coords(rank))
""", 0),
    Answer(GROUPS, "DP groups tp apart (right only when pp = 1)", """
def my_groups(dp, pp, tp, dim):
    n = dp * pp * tp
    if dim == "tp":
        return [list(range(s, s + tp)) for s in range(0, n, tp)]
    if dim == "pp":
        return [[d * pp * tp + p * tp + t for p in range(pp)] for d in range(dp) for t in range(tp)]
    return [list(range(s, n, tp)) for s in range(tp)]
""", 0),
    Answer(GROUPS, "the course's group_ranks", """
def my_groups(dp, pp, tp, dim):
    from labs.hybrid.mesh import MeshShape
    return MeshShape(dp, pp, tp).group_ranks(dim)
""", 0),
    Answer(GROUPS, "the course's group_ranks, reached through the planner's Config.dims", """
from labs import planner as pl
def my_groups(dp, pp, tp, dim):
    return pl.Config(tp, pp, dp).dims.group_ranks(dim)
""", 0),
    Answer(COORDS, "the course's coords under torchtitan's name (labs.parallel_dims)", """
from labs.parallel_dims import ParallelDims
def my_coords(rank, dp, pp, tp):
    return tuple(ParallelDims(dp=dp, pp=pp, tp=tp).coords(rank))
""", 0),
    Answer(MEMORY, "ZeRO stages tested with == (a stage forgets the earlier shards)", """
def my_states_per_gpu(n_params, tp, pp, dp, zero_stage):
    n = n_params / (tp * pp)
    weights, grads, optimizer = 2 * n, 2 * n, 12 * n
    if zero_stage == 1:
        optimizer /= dp
    if zero_stage == 2:
        grads /= dp
    if zero_stage == 3:
        weights /= dp
    return weights + grads + optimizer
""", 0),
    Answer(MEMORY, "the course's formula", """
from labs.formulas import memory
def my_states_per_gpu(n_params, tp, pp, dp, zero_stage):
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, dp=dp, zero_stage=zero_stage,
                                            optimizer="adam", precision="mixed").total
""", 0),
    Answer(LAYOUT, "ties of tp·pp to the smaller tp (pipeline first)", """
def my_choose_layout(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes):
    best = None
    for tp in range(1, min(gpus_per_node, n_heads) + 1):
        for pp in range(1, n_layers + 1):
            if n_heads % tp or n_layers % pp or n_gpus % (tp * pp):
                continue
            if my_states_per_gpu(n_params, tp, pp, n_gpus // (tp * pp), 0) <= budget_bytes:
                if best is None or (tp * pp, tp) < best[0]:
                    best = ((tp * pp, tp), (n_gpus // (tp * pp), pp, tp))
    return None if best is None else best[1]
""", 0),
    Answer(LAYOUT, "the budget as a strict bound (< instead of <=)", """
def my_choose_layout(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes):
    best = None
    for tp in range(1, min(gpus_per_node, n_heads) + 1):
        for pp in range(1, n_layers + 1):
            if n_heads % tp or n_layers % pp or n_gpus % (tp * pp):
                continue
            if my_states_per_gpu(n_params, tp, pp, n_gpus // (tp * pp), 0) < budget_bytes:
                if best is None or (tp * pp, -tp) < best[0]:
                    best = ((tp * pp, -tp), (n_gpus // (tp * pp), pp, tp))
    return None if best is None else best[1]
""", 0),
    Answer(LAYOUT, "the least pipeline first (pp, then tp·pp)", """
def my_choose_layout(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes):
    for pp in range(1, n_layers + 1):
        for tp in range(min(gpus_per_node, n_heads), 0, -1):
            if n_heads % tp or n_layers % pp or n_gpus % (tp * pp):
                continue
            if my_states_per_gpu(n_params, tp, pp, n_gpus // (tp * pp), 0) <= budget_bytes:
                return n_gpus // (tp * pp), pp, tp
    return None
""", 0),
    Answer(LAYOUT, "the checks' own reference", """
from labs.exercises import hybrid_checks
def my_choose_layout(*args):
    return hybrid_checks.choose_layout(*args)
""", 0),
    Answer(STEP, "the whole MLP on every rank, the gradient sliced with chunk, averaged over DP",
           _step(shards="""
    w1_all, w2_all = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]
""", forward="""
    ((torch.relu(x_mine @ w1_all.T) @ w2_all.T - y_mine) ** 2).mean().backward()
""", average="""
    grads = [w1_all.grad.chunk(tp, dim=0)[tp_index], w2_all.grad.chunk(tp, dim=1)[tp_index]]
    for grad in grads:
        dist.all_reduce(grad, group=dp_group)
    return [grad / dp for grad in grads]
"""), 0),
    Answer(STEP, "the whole MLP on every rank, with a g all-reduce for show", _step(shards="""
    w1_all, w2_all = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]
""", forward="""
    out = torch.relu(x_mine @ w1_all.T) @ w2_all.T
    out = reduce_from_tensor_parallel_region(out / tp, group=tp_group)
    ((out - y_mine) ** 2).mean().backward()
""", average="""
    grads = [w1_all.grad.chunk(tp, dim=0)[tp_index].contiguous(),
             w2_all.grad.chunk(tp, dim=1)[tp_index].contiguous()]
    for grad in grads:
        dist.all_reduce(grad, group=dp_group)
    return [grad / dp for grad in grads]
"""), 0),
    Answer(STEP, "the course's new_groups, imported with the cell", """
from labs.hybrid import MeshShape, new_groups
""" + _step(groups="""
    dp_index, tp_index = divmod(dist.get_rank(), tp)
    mine = new_groups(MeshShape(dp=dp, pp=1, tp=tp))
    tp_group, dp_group = mine["tp"], mine["dp"]
"""), 0),
    Answer(STEP, "the TP and DP groups swapped", _step(groups=_GROUPS.replace(
        "tp_group = group", "dp_group_ = group").replace("dp_group = group", "tp_group = group")
        .replace("dp_group_ = group", "dp_group = group")), 0),
    Answer(STEP, "every replica on the whole batch", _step(shards=_SHARDS.replace(
        "x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]", "x, y")), 0),
    Answer(STEP, "no DP all-reduce: each replica's own gradient, divided by dp",
           _step(average="""
    return [w1_mine.grad / dp, w2_mine.grad / dp]
"""), 0),
    Answer(STEP, "the DP average by all_gather and a mean", _step(average="""
    grads = []
    for grad in (w1_mine.grad, w2_mine.grad):
        parts = [torch.empty_like(grad) for _ in range(dp)]
        dist.all_gather(parts, grad, group=dp_group)
        grads.append(torch.stack(parts).mean(0))
    return grads
"""), 0),
    Answer(STEP, "only its own groups created", _step(groups="""
    rank = dist.get_rank()
    dp_index, tp_index = divmod(rank, tp)
    tp_group = dist.new_group(list(range(dp_index * tp, (dp_index + 1) * tp)))
    dp_group = dist.new_group(list(range(tp_index, dp * tp, tp)))
"""), 0),
    Answer(STEP_3D, "stage 1 recomputes stage 0's forward itself (and sends a token back)",
           _3d(pipe="""
    loss = None
    if stage == 0:
        out = block(x_mine)
        token = torch.zeros(1)
        dist.send(token, dst=rank + tp)
        dist.recv(token, src=rank + tp)
        grad_out = torch.empty_like(out)
        dist.recv(grad_out, src=rank + tp)
        out.backward(grad_out)
    else:
        token = torch.zeros(1)
        dist.recv(token, src=rank - tp)
        dist.send(token, dst=rank - tp)
        with torch.no_grad():
            w1_0 = w1s[0].chunk(tp, dim=0)[tp_index]
            w2_0 = w2s[0].chunk(tp, dim=1)[tp_index]
            h = torch.relu(x_mine @ w1_0.T) @ w2_0.T
            dist.all_reduce(h, group=tp_group)
        h.requires_grad_()
        loss = ((block(h) - y_mine) ** 2).mean()
        loss.backward()
        dist.send(h.grad.contiguous(), dst=rank - tp)
        loss = loss.detach()
"""), 0),
    Answer(STEP_3D, "the whole stage's MLP on every rank, gradients sliced", _3d(head="""
def my_3d_step(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
    rank = dist.get_rank()
    rest, tp_index = divmod(rank, tp)
    dp_index, stage = divmod(rest, 2)
    w1_all = w1s[stage].clone().requires_grad_()
    w2_all = w2s[stage].clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]

    def block(h):
        return torch.relu(h @ w1_all.T) @ w2_all.T
""", tail="""
    grads = [w1_all.grad.chunk(tp, dim=0)[tp_index].contiguous(),
             w2_all.grad.chunk(tp, dim=1)[tp_index].contiguous()]
    for grad in grads:
        dist.all_reduce(grad, group=dp_group)
    grads = [g / dp for g in grads]
    mine = (w1s[stage].chunk(tp, dim=0)[tp_index], w2s[stage].chunk(tp, dim=1)[tp_index])
    return loss, grads, [w - lr * g for w, g in zip(mine, grads)]
"""), 0),
    Answer(STEP_3D, "the activations broadcast instead of sent", _3d(pipe=_3D_PIPE.replace(
        "dist.send(out.detach().contiguous(), dst=rank + tp)",
        "dist.broadcast(out.detach().contiguous(), src=rank)")), 0),
    Answer(STEP_3D, "the DP average over every rank (group= forgotten)", _3d(
        tail=_3D_TAIL.replace("dist.all_reduce(grad, group=dp_group)", "dist.all_reduce(grad)")),
        0),
    Answer(STEP_3D, "the lab's three_d.hybrid_step", """
def my_3d_step(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
    from labs.hybrid.mesh import MeshShape
    return three_d.hybrid_step(None, MeshShape(dp=dp, pp=2, tp=tp))
""", 0),
    Answer(STEP_3D, "no DP average", _3d(tail="""
    grads = [w1_mine.grad, w2_mine.grad]
    return loss, grads, [w.detach() - lr * g for w, g in zip((w1_mine, w2_mine), grads)]
"""), 0),
]

RIGHT = [
    Answer(COORDS, "a dataclass", """
from dataclasses import dataclass
@dataclass
class Where:
    dp_index: int
    pp_index: int
    tp_index: int
def my_coords(rank, dp, pp, tp):
    rest, t = divmod(rank, tp)
    return Where(*divmod(rest, pp), t)
"""),
    Answer(COORDS, "a NamedTuple of numpy integers", """
from typing import NamedTuple
import numpy as np
class Where(NamedTuple):
    dp: int
    pp: int
    tp: int
def my_coords(rank, dp, pp, tp):
    return Where(np.int64(rank // (pp * tp)), np.int64(rank // tp % pp), np.int64(rank % tp))
"""),
    Answer(GROUPS, "a generator, dims as an Enum", """
import enum
class Dim(enum.Enum):
    dp = 0
    pp = 1
    tp = 2
def my_groups(dp, pp, tp, dim):
    position = Dim[dim].value
    keys = sorted({tuple(c for i, c in enumerate(my_coords(r, dp, pp, tp)) if i != position)
                   for r in range(dp * pp * tp)})
    for key in keys:
        yield [r for r in range(dp * pp * tp)
               if tuple(c for i, c in enumerate(my_coords(r, dp, pp, tp)) if i != position) == key]
"""),
    Answer(MEMORY, "an exact Fraction", """
from fractions import Fraction
def my_states_per_gpu(n_params, tp, pp, dp, zero_stage):
    n = Fraction(n_params) / (tp * pp)
    parts = [2 * n, 2 * n, 12 * n]
    for stage, part in ((1, 2), (2, 1), (3, 0)):
        if zero_stage >= stage:
            parts[part] /= dp
    return sum(parts)
"""),
    Answer(LAYOUT, "a numpy array of floats, candidates sorted by key", """
import numpy as np
def my_choose_layout(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes):
    candidates = sorted((tp * pp, -tp, pp) for tp in range(1, gpus_per_node + 1)
                        for pp in range(1, n_layers + 1)
                        if n_heads % tp == 0 and n_layers % pp == 0 and n_gpus % (tp * pp) == 0)
    for _, minus_tp, pp in candidates:
        dp = n_gpus / (-minus_tp * pp)
        if my_states_per_gpu(n_params, -minus_tp, pp, dp, 0) <= budget_bytes:
            return np.array([dp, pp, -minus_tp], dtype=float)
    return None
"""),
    Answer(STEP, "a class; groups made in comprehensions; one flattened all-reduce, then / dp", """
class HybridStep:
    def groups(self, dp, tp):
        tp_groups = [dist.new_group(list(range(d * tp, (d + 1) * tp))) for d in range(dp)]
        dp_groups = [dist.new_group(list(range(t, dp * tp, tp))) for t in range(tp)]
        d, t = divmod(dist.get_rank(), tp)
        return d, t, tp_groups[d], dp_groups[t]

    def __call__(self, dp, tp, w1, w2, x, y):
        d, t, tp_group, dp_group = self.groups(dp, tp)
        a = w1.chunk(tp, dim=0)[t].clone().requires_grad_()
        b = w2.chunk(tp, dim=1)[t].clone().requires_grad_()
        xs, ys = x.chunk(dp)[d], y.chunk(dp)[d]
        h = torch.relu(copy_to_tensor_parallel_region(xs, group=tp_group) @ a.T)
        out = reduce_from_tensor_parallel_region(h @ b.T, group=tp_group)
        ((out - ys) ** 2).mean().backward()
        flat = torch.cat([a.grad.flatten(), b.grad.flatten()])
        dist.all_reduce(flat, group=dp_group)
        flat = flat / dp
        return [flat[:a.numel()].view_as(a), flat[a.numel():].view_as(b)]
my_hybrid_step = HybridStep()
"""),
    Answer(STEP, "g and f written by hand (its own autograd functions)", """
class G(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, group):
        t = t.clone()
        dist.all_reduce(t, group=group)
        return t
    @staticmethod
    def backward(ctx, grad):
        return grad, None
""" + _step(forward="""
    h = torch.relu(x_mine @ w1_mine.T)
    out = G.apply(h @ w2_mine.T, tp_group)
    ((out - y_mine) ** 2).mean().backward()
""")),
    Answer(STEP_3D, "the stages as an Enum, two GPipe micro-batches sent with isend", _3d(head="""
import enum
class Stage(enum.Enum):
    FIRST = 0
    LAST = 1
def my_3d_step(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
    rank = dist.get_rank()
    rest, tp_index = divmod(rank, tp)
    dp_index, s = divmod(rest, 2)
    where = Stage(s)
    stage = where.value
    w1_mine = w1s[stage].chunk(tp, dim=0)[tp_index].clone().requires_grad_()
    w2_mine = w2s[stage].chunk(tp, dim=1)[tp_index].clone().requires_grad_()
    x_mine, y_mine = x.chunk(dp)[dp_index], y.chunk(dp)[dp_index]

    def block(h):
        h = torch.relu(copy_to_tensor_parallel_region(h, group=tp_group) @ w1_mine.T)
        return reduce_from_tensor_parallel_region(h @ w2_mine.T, group=tp_group)
""", pipe="""
    loss = None
    if where is Stage.FIRST:
        outs = [block(part) for part in x_mine.chunk(2)]
        for request in [dist.isend(o.detach().contiguous(), dst=rank + tp) for o in outs]:
            request.wait()
        for o in outs:
            grad_out = torch.empty_like(o)
            dist.recv(grad_out, src=rank + tp)
            o.backward(grad_out)
    else:
        hs = []
        for part in y_mine.chunk(2):
            h = torch.empty(part.shape[0], w1s[1].shape[1])
            dist.recv(h, src=rank - tp)
            hs.append(h.requires_grad_())
        losses = [((block(h) - part) ** 2).mean() / 2 for h, part in zip(hs, y_mine.chunk(2))]
        for h, part_loss in zip(hs, losses):
            part_loss.backward()
            dist.send(h.grad.contiguous(), dst=rank - tp)
        loss = sum(part_loss.detach() for part_loss in losses)
""")),
    Answer(STEP_3D, "a class whose step prints a dataclass of its coordinates", """
from dataclasses import dataclass
@dataclass
class Where:
    replica: int
    stage: int
    tp_index: int
class Step3D:
    def __call__(self, dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
        rest, t = divmod(dist.get_rank(), tp)
        where = Where(*divmod(rest, 2), t)
        print(where)
        return self.run(where, dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr)
    def run(self, where, dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr):
        s, t, rank = where.stage, where.tp_index, dist.get_rank()
        a = w1s[s].chunk(tp, dim=0)[t].clone().requires_grad_()
        b = w2s[s].chunk(tp, dim=1)[t].clone().requires_grad_()
        xs, ys = x.chunk(dp)[where.replica], y.chunk(dp)[where.replica]
        def block(h):
            h = torch.relu(copy_to_tensor_parallel_region(h, group=tp_group) @ a.T)
            return reduce_from_tensor_parallel_region(h @ b.T, group=tp_group)
        loss = None
        if s == 0:
            out = block(xs)
            dist.send(out.detach(), dst=rank + tp)
            grad = torch.empty_like(out)
            dist.recv(grad, src=rank + tp)
            out.backward(grad)
        else:
            h = torch.empty(xs.shape).requires_grad_()
            with torch.no_grad():
                dist.recv(h, src=rank - tp)
            loss = ((block(h) - ys) ** 2).mean()
            loss.backward()
            dist.send(h.grad, dst=rank - tp)
        grads = [a.grad, b.grad]
        for g in grads:
            dist.all_reduce(g, group=dp_group)
        grads = [g / dp for g in grads]
        return loss, grads, [w.detach() - lr * g for w, g in zip((a, b), grads)]
my_3d_step = Step3D()
"""),
]
