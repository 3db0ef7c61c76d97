"""Notebook 2.2's answers: sharding that is no sharding, f and g in the wrong places, the
course's layers and operators by another name, collectives that send more than the mechanism
needs, hidden shapes the prose promises; and right answers written unusually."""

from tests.support.both_ways import Answer

F_G, COLUMN, ROW, MLP = ("ex2_2_conjugate_ops", "ex2_2_column_linear", "ex2_2_row_linear",
                         "ex2_2_parallel_mlp")
QKV, BYTES, SP = "ex2_2_attention_heads", "ex2_2_tp_bytes", "ex2_2_sequence_parallel_mlp"

_G = """
class ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        out = x.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None
"""
_F = """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None
"""
# exercise 7: the two Functions with the reduce-scatter written as ``{rs}`` (x: the (T, B, C)
# tensor, t the group's size; it leaves ``mine``), the all-gather as ``{ag}`` (``mine`` in,
# ``full`` out)
_SP = """
def _gather(x, group):
    t = dist.get_world_size(group)
    mine = x.movedim(1, 0).contiguous()
{ag}
    return full.movedim(0, 1)

def _scatter(x, group):
    t = dist.get_world_size(group)
    x = x.movedim(1, 0).contiguous()
{rs}
    return mine.movedim(0, 1)

class SeqAllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _gather(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _scatter(grad, ctx.group), None

class SeqReduceScatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _scatter(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _gather(grad, ctx.group), None

def sp_mlp_forward(x_shard, fc_w, fc_b, proj_w, proj_b, group):
    x = SeqAllGather.apply(x_shard, group)
    partial = F.linear(F.gelu(F.linear(x, fc_w, fc_b)), proj_w)
    return SeqReduceScatter.apply(partial, group) + proj_b
"""
_AG = """    full = mine.new_empty((t * mine.size(0),) + mine.shape[1:])
    dist.all_gather_single(full, mine, group=group)"""
_RS = """    mine = x.new_empty((x.size(0) // t,) + x.shape[1:])
    dist.reduce_scatter_single(mine, x, group=group)"""

WRONG = [
    # --- exercise 1: f and g
    Answer(F_G, "f with no all-reduce backward (identity both ways)", _G + """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad, None
""", 0),
    Answer(F_G, "f and g swapped", """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        out = x.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad, None

class ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None
""", 0),
    Answer(F_G, "g that all-reduces its caller's tensor in place", _F + """
class ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None
""", 0),
    Answer(F_G, "f's all-reduce without its group", _G + """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad)
        return grad, None
""", 0),
    Answer(F_G, "f's backward sums an all_gather (more bytes than the all-reduce)", _G + """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        parts = [torch.empty_like(grad) for _ in range(dist.get_world_size(ctx.group))]
        dist.all_gather(parts, grad.contiguous(), group=ctx.group)
        return torch.stack(parts).sum(0), None
""", 0),
    Answer(F_G, "the course's f and g inside", """
class CopyToRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        with torch.enable_grad():
            ctx.x = x.detach().requires_grad_()
            ctx.y = comm.copy_to_tensor_parallel_region(ctx.x, group=group)
        return ctx.y.detach()

    @staticmethod
    def backward(ctx, grad):
        return torch.autograd.grad(ctx.y, ctx.x, grad)[0], None

class ReduceFromRegion(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        return comm.reduce_from_tensor_parallel_region(x, group=group)

    @staticmethod
    def backward(ctx, grad):
        return grad, None
""", 0),
    # --- exercise 2: column
    Answer(COLUMN, "the full output on every rank, sliced", """
def column_parallel_forward(x, weight, bias, group):
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    x = comm.copy_to_tensor_parallel_region(x, group=group)
    return F.linear(x, weight, bias).chunk(t, dim=-1)[rank]
""", 0),
    Answer(COLUMN, "tp.ColumnParallelLinear through the package name", """
def column_parallel_forward(x, weight, bias, group):
    layer = tp.ColumnParallelLinear(weight.shape[1], weight.shape[0], group=group, device="cpu")
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    layer.weight = torch.nn.Parameter(weight.chunk(t)[rank])
    return layer(x)
""", 0),
    Answer(COLUMN, "no f: the input's gradient only a partial sum", """
def column_parallel_forward(x, weight, bias, group):
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    return F.linear(x, weight.chunk(t, dim=0)[rank], bias.chunk(t, dim=0)[rank])
""", 0),
    Answer(COLUMN, "the global rank picks the block", """
def column_parallel_forward(x, weight, bias, group):
    rank, t = dist.get_rank(), dist.get_world_size(group)
    w, b = weight.chunk(t, dim=0)[rank], bias.chunk(t, dim=0)[rank]
    return F.linear(comm.copy_to_tensor_parallel_region(x, group=group), w, b)
""", 0),
    # --- exercise 3: row
    Answer(ROW, "tp.RowParallelLinear through the package name", """
def row_parallel_forward(x_shard, weight, bias, group):
    layer = tp.RowParallelLinear(weight.shape[1], weight.shape[0], group=group, device="cpu")
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    layer.weight = torch.nn.Parameter(weight.chunk(t, dim=1)[rank])
    layer.bias = torch.nn.Parameter(bias)
    return layer(x_shard)
""", 0),
    Answer(ROW, "the bias added on every rank before g", """
def row_parallel_forward(x_shard, weight, bias, group):
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    partial = F.linear(x_shard, weight.chunk(t, dim=1)[rank], bias)
    return comm.reduce_from_tensor_parallel_region(partial, group=group)
""", 0),
    Answer(ROW, "g without its group", """
def row_parallel_forward(x_shard, weight, bias, group):
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    partial = F.linear(x_shard, weight.chunk(t, dim=1)[rank])
    return comm.reduce_from_tensor_parallel_region(partial) + bias
""", 0),
    Answer(ROW, "the input gathered and the full layer on every rank", """
def row_parallel_forward(x_shard, weight, bias, group):
    t = dist.get_world_size(group)
    parts = [torch.empty_like(x_shard) for _ in range(t)]
    dist.all_gather(parts, x_shard.contiguous(), group=group)
    return F.linear(torch.cat(parts, dim=-1), weight, bias)
""", 0),
    Answer(ROW, "each rank its block of tokens with the whole weight", """
def row_parallel_forward(x_shard, weight, bias, group):
    rank, t = dist.get_rank(group), dist.get_world_size(group)
    width = x_shard.shape[-1]
    x = x_shard.new_zeros(x_shard.shape[0], width * t)
    x[:, rank * width:(rank + 1) * width] = x_shard
    x = comm.reduce_from_tensor_parallel_region(x, group=group)
    rows = torch.arange(x.shape[0]).tensor_split(t)[rank]
    y = x.new_zeros(x.shape[0], weight.shape[0])
    y[rows] = F.linear(x[rows], weight)
    return comm.reduce_from_tensor_parallel_region(y, group=group) + bias
""", 0),
    # --- exercise 4: the MLP
    Answer(MLP, "no f", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    h = F.gelu(F.linear(x, fc_w, fc_b))
    return comm.reduce_from_tensor_parallel_region(F.linear(h, proj_w), group=group) + proj_b
""", 0),
    Answer(MLP, "f and g swapped", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    h = F.gelu(F.linear(comm.reduce_from_tensor_parallel_region(x, group=group), fc_w, fc_b))
    return comm.copy_to_tensor_parallel_region(F.linear(h, proj_w), group=group) + proj_b
""", 0),
    Answer(MLP, "proj_b inside g (added t times)", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    h = F.gelu(F.linear(comm.copy_to_tensor_parallel_region(x, group=group), fc_w, fc_b))
    return comm.reduce_from_tensor_parallel_region(F.linear(h, proj_w, proj_b), group=group)
""", 0),
    Answer(MLP, "the weights gathered and the full MLP on every rank", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    t = dist.get_world_size(group)
    def gathered(p, dim):
        parts = [torch.empty_like(p) for _ in range(t)]
        dist.all_gather(parts, p.contiguous(), group=group)
        return torch.cat(parts, dim=dim)
    h = F.gelu(F.linear(x, gathered(fc_w, 0), gathered(fc_b, 0)))
    return F.linear(h, gathered(proj_w, 1), proj_b)
""", 0),
    Answer(MLP, "the course's row-parallel layer under c_proj", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    h = F.gelu(F.linear(comm.copy_to_tensor_parallel_region(x, group=group), fc_w, fc_b))
    t = dist.get_world_size(group)
    proj = tp.RowParallelLinear(proj_w.shape[1] * t, proj_w.shape[0], group=group, device="cpu")
    proj.weight, proj.bias = torch.nn.Parameter(proj_w), torch.nn.Parameter(proj_b)
    return proj(h)
""", 0),
    # --- exercise 5: q/k/v
    Answer(QKV, "one contiguous block of rows", """
def qkv_shard(weight, bias, rank, tp):
    return weight.chunk(tp)[rank], bias.chunk(tp)[rank]
""", 0),
    Answer(QKV, "every tp-th row from the rank on", """
def qkv_shard(weight, bias, rank, tp):
    return weight[rank::tp], bias[rank::tp]
""", 0),
    Answer(QKV, "k, q, v instead of q, k, v", """
def qkv_shard(weight, bias, rank, tp):
    def mine(t):
        q, k, v = (part.chunk(tp, dim=0)[rank] for part in t.chunk(3, dim=0))
        return torch.cat([k, q, v])
    return mine(weight), mine(bias)
""", 0),
    Answer(QKV, "the course's shard with stride 3", """
def qkv_shard(weight, bias, rank, tp):
    return tp_shard(weight, 0, rank, tp, stride=3), tp_shard(bias, 0, rank, tp, stride=3)
from labs.tensor_parallel import shard as tp_shard
""", 0),
    # --- exercise 6: bytes
    Answer(BYTES, "the course's formula", """
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return cost.tp_layer_comm(batch=batch, seq_len=seq, hidden=hidden, tp=tp,
                              bytes_per_element=bytes_per_element)["sent_bytes_per_rank"]
""", 0),
    Answer(BYTES, "the forward pass only", """
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return 2 * 2 * (tp - 1) / tp * batch * seq * hidden * bytes_per_element
""", 0),
    Answer(BYTES, "8(t-1)/t floored before the bytes", """
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return 4 * 2 * (tp - 1) // tp * batch * seq * hidden * bytes_per_element
""", 0),
    Answer(BYTES, "the whole tensor each time, 8·S", """
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return 8 * batch * seq * hidden * bytes_per_element
""", 0),
    # --- exercise 7: sequence parallel
    Answer(SP, "a reduce-scatter made of an all_gather and a local sum", _SP.format(ag=_AG, rs="""
    everyone = x.new_empty((t * x.size(0),) + x.shape[1:])
    dist.all_gather_single(everyone, x, group=group)
    total = everyone.view(t, *x.shape).sum(0)
    mine = total.chunk(t)[dist.get_rank(group)].contiguous()"""), 0),
    Answer(SP, "an all-reduce and a slice for the reduce-scatter", _SP.format(ag=_AG, rs="""
    dist.all_reduce(x, group=group)
    mine = x.chunk(t)[dist.get_rank(group)]"""), 0),
    Answer(SP, "the all-gather's backward keeps its part without the sum", _SP.format(
        ag=_AG, rs=_RS).replace("return _scatter(grad, ctx.group), None",
                                "return grad.chunk(dist.get_world_size(ctx.group), dim=1)"
                                "[dist.get_rank(ctx.group)], None"), 0),
    Answer(SP, "the reduce-scatter without its group", _SP.format(ag=_AG, rs=_RS.replace(
        "mine, x, group=group", "mine, x")), 0),
    Answer(SP, "proj_b before the reduce-scatter", _SP.format(ag=_AG, rs=_RS).replace(
        "SeqReduceScatter.apply(partial, group) + proj_b",
        "SeqReduceScatter.apply(partial + proj_b, group)"), 0),
    Answer(SP, "the course's sequence-parallel operators", """
class SeqAllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        return comm.all_gather_along(x, 1, group=group)

    @staticmethod
    def backward(ctx, grad):
        return grad, None

SeqReduceScatter = SeqAllGather

def sp_mlp_forward(x_shard, fc_w, fc_b, proj_w, proj_b, group):
    x = comm.gather_from_sequence_parallel_region(x_shard, group=group)
    partial = F.linear(F.gelu(F.linear(x, fc_w, fc_b)), proj_w)
    return comm.reduce_scatter_to_sequence_parallel_region(partial, group=group) + proj_b
""", 0),
    Answer(SP, "the course's all_gather_along from a reloaded module", _SP.format(
        ag="""    import importlib, labs.tensor_parallel.comm as c
    full = importlib.reload(c).all_gather_along(mine, 0, group=group)""", rs=_RS), 0),
    Answer(SP, "torch.distributed.nn's autograd-aware all_gather", _SP.format(ag="""
    import torch.distributed.nn.functional as dnn
    full = torch.cat(dnn.all_gather(mine, group=group))""", rs=_RS), 0),
]

RIGHT = [
    Answer(F_G, "a functional all-reduce and a reshape for the identity", _F.replace(
        "dist.all_reduce(grad, group=ctx.group)\n        return grad, None",
        "import torch.distributed._functional_collectives as fc\n"
        "        group = ctx.group or dist.group.WORLD\n"
        "        return fc.all_reduce(grad, 'sum', group).wait(), None") + _G.replace(
        "out = x.clone()", "out = x.reshape(x.shape).clone()")),
    Answer(COLUMN, "einsum and tensor_split, in a module called like a function", """
class Column(torch.nn.Module):
    def forward(self, x, weight, bias, group):
        rank, t = dist.get_rank(group), dist.get_world_size(group)
        w = weight.tensor_split(t, dim=0)[rank]
        b = bias.tensor_split(t)[rank]
        x = comm.copy_to_tensor_parallel_region(x, group=group)
        return torch.einsum("ti,oi->to", x, w) + b
column_parallel_forward = Column()
"""),
    Answer(ROW, "matmul and narrow", """
def row_parallel_forward(x_shard, weight, bias, group):
    rank, width = dist.get_rank(group), x_shard.shape[-1]
    partial = x_shard @ weight.narrow(1, rank * width, width).T
    return comm.reduce_from_tensor_parallel_region(partial, group=group) + bias
"""),
    Answer(MLP, "matmul, torch.nn.functional.gelu by its module, a generator of steps", """
def parallel_mlp_forward(x, fc_w, fc_b, proj_w, proj_b, group):
    steps = (lambda v: comm.copy_to_tensor_parallel_region(v, group=group),
             lambda v: v @ fc_w.T + fc_b, torch.nn.GELU(), lambda v: v @ proj_w.T,
             lambda v: comm.reduce_from_tensor_parallel_region(v, group=group) + proj_b)
    for step in (s for s in steps):
        x = step(x)
    return x
"""),
    Answer(QKV, "a view by weight.shape[1] (C), as the prose's (3C, C) allows", """
def qkv_shard(weight, bias, rank, tp):
    C = weight.shape[1]
    per = C // tp
    w = weight.view(3, C, C)[:, rank * per:(rank + 1) * per].reshape(3 * per, C)
    b = bias.view(3, C)[:, rank * per:(rank + 1) * per].reshape(3 * per)
    return w, b
"""),
    Answer(QKV, "tensor_split, as a list", """
def qkv_shard(weight, bias, rank, tp):
    return [torch.cat([p.tensor_split(tp)[rank] for p in t.tensor_split(3)])
            for t in (weight, bias)]
"""),
    Answer(BYTES, "an exact fractions.Fraction", """
from fractions import Fraction
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return 8 * Fraction(tp - 1, tp) * batch * seq * hidden * bytes_per_element
"""),
    Answer(BYTES, "an exact int (whole bytes, floored last)", """
def tp_bytes_per_layer(batch, seq, hidden, tp, bytes_per_element):
    return 8 * (tp - 1) * batch * seq * hidden * bytes_per_element // tp
"""),
    Answer(SP, "list all_gather / reduce_scatter, and torch.cat", _SP.format(ag="""
    parts = [torch.empty_like(mine) for _ in range(t)]
    dist.all_gather(parts, mine, group=group)
    full = torch.cat(parts)""", rs="""
    mine = torch.empty_like(x.chunk(t)[0])
    dist.reduce_scatter(mine, [p.contiguous() for p in x.chunk(t)], group=group)""")),
    Answer(SP, "functional collectives and the deprecated names", _SP.format(ag="""
    import torch.distributed._functional_collectives as fc
    full = fc.all_gather_tensor(mine, 0, group or dist.group.WORLD).wait()""", rs="""
    mine = x.new_empty((x.size(0) // t,) + x.shape[1:])
    dist.reduce_scatter_tensor(mine, x, group=group)""")),
]
