"""The check of notebook 2.4's 练习 5, one DP × TP step on real ranks (served to the notebook
by labs.exercises.hybrid_checks, whose module the notebook imports).

The student's step builds the groups with ``dist.new_group`` (every call recorded), runs a
Megatron-split MLP and averages over DP; the check compares every gradient shard with one
process, and verifies the mechanism on every rank: each DP replica computes on its own share
of the global batch only (the rows of x that reach a matrix product are recorded by a torch
function mode and compared with the replica's share: skipping the data split gives the same
averaged gradients, and is refused), and the ready-made groups and layers are refused.

Owns: 练习 5's cases and rank body. Must not: import the grader, print (the verdict is
labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

from labs.exercises.checks import ExerciseFailed, assert_close, case, graded
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.hybrid.mesh import MeshShape
from labs.messages import text

__all__ = ["check_hybrid_step", "HYBRID_TIMEOUT"]

#: The domain of 2.4's hidden seeds and numbers (as labs.exercises.hybrid_checks).
_TAG = "2.4"


# --- exercise 5: one DP × TP step on real ranks ----------------------------------------------

HYBRID_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s once started

#: Ready-made pieces that would do the exercise's work: they raise inside the check's ranks.
_READY_MADE_FUNCTIONS = (("labs.hybrid.mesh", "new_groups"), ("labs.hybrid.mesh", "device_mesh"),
                         ("torch.distributed.device_mesh", "init_device_mesh"))
_READY_MADE_CLASSES = (("labs.tensor_parallel.layers", "ColumnParallelLinear"),
                       ("labs.tensor_parallel.layers", "RowParallelLinear"),
                       ("labs.tensor_parallel.layers", "ParallelMLP"),
                       ("torch.distributed.device_mesh", "DeviceMesh"))


class _guarded:
    """Inside a rank: the ready-made groups and layers raise; every ``dist.new_group`` call is
    recorded (the ranks it was given) and passed on, and so is every ``dist.all_reduce`` (its
    tensor's shape and its group's members: which group served as TP and which as DP)."""

    def __init__(self, calls: list, reduced: list | None = None):
        self.calls = calls
        self.reduced = [] if reduced is None else reduced  # (shape, group members) per all-reduce

    def __enter__(self):
        import importlib

        import torch.distributed as dist

        self.saved = []

        def refusal(shown):
            return ExerciseFailed(text("checks_2_4.no_ready_made", shown=shown))

        for module_name, name in _READY_MADE_FUNCTIONS:
            module = importlib.import_module(module_name)

            def refuse(*args, _shown=f"{module_name}.{name}", **kwargs):
                raise refusal(_shown)
            self.saved.append((module, name, getattr(module, name)))
            setattr(module, name, refuse)
        for module_name, name in _READY_MADE_CLASSES:
            cls = getattr(importlib.import_module(module_name), name)

            def refuse_init(self_, *args, _shown=f"{module_name}.{name}", **kwargs):
                raise refusal(_shown)
            self.saved.append((cls, "__init__", cls.__init__))
            cls.__init__ = refuse_init
        new_group, calls = dist.new_group, self.calls

        def recording_new_group(ranks=None, *args, **kwargs):
            mine = None if ranks is None else sorted(int(r) for r in ranks)
            calls.append(mine)
            # torch wants every rank to create every group, in the same order: compare the
            # ranks every rank gives this call (over the default group) before creating it
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, mine)
            other = next((r for r, g in enumerate(everyone) if g != everyone[0]), None)
            if other is not None:
                failed = ExerciseFailed(text("checks_2_4.new_group_differs", call=len(calls),
                                             first=everyone[0], other=other,
                                             theirs=everyone[other]))
                failed.kind = "wrong"  # a rule of hint 1, not an error in the student's code
                raise failed
            return new_group(ranks, *args, **kwargs)
        self.saved.append((dist, "new_group", new_group))
        dist.new_group = recording_new_group
        all_reduce, reduced = dist.all_reduce, self.reduced

        def recording_all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
            members = (list(range(dist.get_world_size())) if group is None
                       else sorted(dist.get_process_group_ranks(group)))
            reduced.append((tuple(tensor.shape), members))
            return all_reduce(tensor, op, group, async_op)
        self.saved.append((dist, "all_reduce", all_reduce))
        dist.all_reduce = recording_all_reduce
        return self

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        return False


def _mlp_case(sizes, batch, seed):
    """Full weights w1 (H, D_in), w2 (D_out, H) and the global batch x (B, D_in), y (B, D_out)."""
    import torch

    d_in, hidden, d_out = sizes
    gen = torch.Generator().manual_seed(seed)
    w1 = torch.randn(hidden, d_in, generator=gen) / d_in ** 0.5
    w2 = torch.randn(d_out, hidden, generator=gen) / hidden ** 0.5
    x = torch.randn(batch, d_in, generator=gen)
    y = torch.randn(batch, d_out, generator=gen)
    return w1, w2, x, y


def _mlp_grads(w1, w2, x, y):
    """One process: the full gradients of mean((relu(x w1^T) w2^T - y)^2) on rows x, y."""
    import torch

    w1, w2 = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    loss = ((torch.relu(x @ w1.T) @ w2.T - y) ** 2).mean()
    loss.backward()
    return w1.grad, w2.grad


def _partial_grads(w1, w2, x, y, tp):
    """The gradient shards of a step without the TP all-reduce of the second layer (each TP
    rank's loss on its partial sum), DP-averaged: what forgetting g gives."""
    return [_mlp_grads(a, b, x, y) for a, b in zip(w1.chunk(tp, dim=0), w2.chunk(tp, dim=1))]


def _rows_mode(x, rows: set):
    """A torch function mode that adds to ``rows`` the index of every row of ``x`` found (equal,
    as a row or as a column) in an operand of a matrix product: the rows that reach a matmul."""
    import torch
    from torch.overrides import TorchFunctionMode

    products = {torch.matmul, torch.mm, torch.addmm, torch.bmm, torch.nn.functional.linear,
                torch.Tensor.matmul, torch.Tensor.mm, torch.Tensor.__matmul__,
                torch.Tensor.__rmatmul__}

    class Rows(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in products:
                for a in list(args) + list(kwargs.values()):
                    if torch.is_tensor(a) and a.dim() == 2:
                        for m in (a, a.T):
                            if m.shape[1] == x.shape[1]:
                                same = (m.detach()[:, None, :] == x[None]).all(-1).any(0)
                                rows.update(int(i) for i in same.nonzero().flatten())
            return func(*args, **kwargs)
    return Rows()


def _hybrid_on_rank(student_fn, dp, tp, sizes, batch, seed):
    """Inside a rank: the student's step on the full weights and the global batch; the rows of
    the batch that reached a matrix product."""
    w1, w2, x, y = _mlp_case(sizes, batch, seed)
    calls: list = []
    reduced: list = []
    rows: set = set()
    with _guarded(calls, reduced), _rows_mode(x, rows):
        got = student_fn(dp, tp, w1.clone(), w2.clone(), x.clone(), y.clone())
    if isinstance(got, (list, tuple)):
        got = [g.detach().clone() if hasattr(g, "detach") else g for g in got]
    return dict(grads=got, calls=calls, rows=sorted(rows), reduced=reduced)


def _check_memberships(shape, sizes, results) -> None:
    """Every all-reduce of a gradient shard ran in the rank's DP group, every other one (the
    activations: g's forward, f's backward) in its TP group; a group of the wrong layout (TP
    strided, DP consecutive: the two swapped) is named with its members."""
    d_in, hidden, d_out = sizes
    tp = shape.tp
    grad_shapes = {(hidden // tp, d_in), (d_out, hidden // tp)}
    for rank, result in enumerate(results):
        tp_members = next(g for g in shape.group_ranks("tp") if rank in g)
        dp_members = next(g for g in shape.group_ranks("dp") if rank in g)
        for tensor_shape, members in result.get("reduced", ()):
            role, want = (("dp", dp_members) if tuple(tensor_shape) in grad_shapes
                          else ("tp", tp_members))
            if len(members) == 1 and len(want) == 1 or members == want:
                continue
            other = dp_members if role == "tp" else tp_members
            key = ("checks_2_4.groups_swapped" if members == other
                   else "checks_2_4.group_membership_wrong")
            raise ExerciseFailed(text(key, rank=rank, role=role.upper(), got=members, want=want,
                                      tp=tp))


def _shard_of(tensor, tp, dim, grads, rank):
    """Which TP shard of ``tensor`` (chunked along ``dim``) ``grads`` equals, or None."""
    import torch

    for t, chunk in enumerate(tensor.chunk(tp, dim=dim)):
        if chunk.shape == grads.shape and torch.allclose(chunk, grads, rtol=1e-4, atol=1e-6):
            return t
    return None


def _check_hybrid_case(student_fn, dp, tp, sizes, batch, seed):
    import torch

    shape = MeshShape(dp=dp, pp=1, tp=tp)
    results = run_on_ranks(_hybrid_on_rank, shape.world_size,
                           (student_fn, dp, tp, sizes, batch, seed), timeout=HYBRID_TIMEOUT)
    w1, w2, x, y = _mlp_case(sizes, batch, seed)
    full = _mlp_grads(w1, w2, x, y)
    local = [_mlp_grads(w1, w2, xs, ys) for xs, ys in zip(x.chunk(dp), y.chunk(dp))]
    partial = _partial_grads(w1, w2, x, y, tp) if tp > 1 else None
    needed = [g for dim in ("tp", "dp") for g in shape.group_ranks(dim) if len(g) > 1]
    first = results[0]["calls"]
    for rank, result in enumerate(results):
        calls = result["calls"]
        missing = [g for g in needed if g not in calls]
        if missing:
            raise ExerciseFailed(text("checks_2_4.new_group_missing", rank=rank, group=missing[0]))
        if calls != first:
            raise ExerciseFailed(text("checks_2_4.new_group_order", rank=rank, first=first,
                                      calls=calls))
    _check_memberships(shape, sizes, results)
    for rank, result in enumerate(results):  # each DP replica on its own share of the batch
        d = shape.coords(rank)[0]
        share = list(range(batch))[d * (batch // dp):(d + 1) * (batch // dp)]
        others = sorted(set(result["rows"]) - set(share))
        if others:
            raise ExerciseFailed(text("checks_2_4.rows_of_other_replicas", rank=rank, d=d,
                                      dp=dp, row=others[0], count=len(others), first=share[0],
                                      last=share[-1]))
    names = [text("checks_2_4.what_shard", weight=weight) for weight in ("w1", "w2")]
    for rank, result in enumerate(results):
        got = result["grads"]
        if not isinstance(got, (list, tuple)) or len(got) != 2 or \
                not all(torch.is_tensor(g) for g in got):
            raise ExerciseFailed(text("checks_2_4.not_two_tensors", rank=rank, got=got))
        d, _, t = shape.coords(rank)
        for k, (what, dim) in enumerate(zip(names, (0, 1))):
            expected = full[k].chunk(tp, dim=dim)[t]
            g = got[k].to(expected.dtype)
            if g.shape != expected.shape:
                raise ExerciseFailed(text("checks_2_4.shard_shape", rank=rank, what=what,
                                          expected=tuple(expected.shape), got=tuple(g.shape)))
            if torch.allclose(g, expected, rtol=1e-4, atol=1e-6):
                continue
            other = _shard_of(full[k], tp, dim, g, rank)
            if other is not None:
                raise ExerciseFailed(text("checks_2_4.shard_other_rank", rank=rank, other=other,
                                          what=what, t=t, tp=tp))
            if dp > 1 and torch.allclose(g, dp * expected, rtol=1e-4, atol=1e-6):
                raise ExerciseFailed(text("checks_2_4.shard_times_dp", rank=rank, what=what, dp=dp))
            mine = local[d][k].chunk(tp, dim=dim)[t]
            if dp > 1 and any(torch.allclose(g, m, rtol=1e-4, atol=1e-6) for m in (mine, mine / dp)):
                raise ExerciseFailed(text("checks_2_4.shard_local_batch", rank=rank, what=what,
                                          dp=dp))
            if partial is not None and torch.allclose(g, partial[t][k], rtol=1e-4, atol=1e-6):
                raise ExerciseFailed(text("checks_2_4.shard_partial_sum", rank=rank, what=what))
            assert_close(expected, g, what=what, rank=rank)


#: The hidden cases of the hybrid step: (dp, tp) among the meshes listed (at most 4 ranks; the
#: first is the notebook tests' one), then the ranges of D_in, of the rows of w1 per TP rank, of
#: D_out and of the rows of the batch per DP rank, each with the tests' value.
_STEP_HIDDEN = (
    # DP strides and TP strides differ: a mesh built with dp and tp swapped fails
    (((4, 1), (3, 1)), (3, 7, 5), (4, 10, 6), (2, 5, 3), (2, 3, 2)),
    (((1, 4), (1, 3), (1, 2)), (2, 5, 3), (2, 4, 3), (2, 4, 2), (3, 6, 4)),
    (((2, 1), (3, 1)), (3, 6, 4), (6, 12, 10), (3, 6, 5), (2, 4, 3)),
    # an uneven hidden size that tp divides: an odd number of rows (3 in the tests) per TP rank
    (((2, 2),), (3, 7, 5), None, (2, 5, 4), (4, 8, 6)),
)


def _step_cases() -> list[tuple]:
    """(dp, tp, (D_in, H, D_out), B) of every case of :func:`check_hybrid_step`: the shown
    one, then the hidden ones (drawn from the secret when one is set)."""
    cases = [(2, 2, (4, 8, 3), 8)]  # the shown case
    for k, (meshes, d_in, rows, d_out, per_dp) in enumerate(_STEP_HIDDEN):
        seed = 300 + 10 * k
        dp, tp = meshes[hidden_int(_TAG, seed, 0, len(meshes) - 1, 0)]
        if rows is None:  # 2·j + 1 rows per TP rank, j in 1..3 (1 without a secret)
            per_tp = 2 * hidden_int(_TAG, seed + 2, 1, 3, 1) + 1
        else:
            per_tp = hidden_int(_TAG, seed + 2, *rows)
        sizes = (hidden_int(_TAG, seed + 1, *d_in), tp * per_tp, hidden_int(_TAG, seed + 3, *d_out))
        cases.append((dp, tp, sizes, dp * hidden_int(_TAG, seed + 4, *per_dp)))
    return cases


@graded("ex2_4_hybrid_step")
def check_hybrid_step(student_fn):
    """student_fn(dp, tp, w1, w2, x, y) on every rank of a dp × tp mesh (pp = 1, TP innermost)
    -> (grad of this rank's rows of w1, grad of this rank's columns of w2), averaged over DP."""
    for k, (dp, tp, sizes, batch) in enumerate(_step_cases()):
        d_in, hidden, d_out = sizes
        label = (text("checks.case_hidden", n=k) if k > 0
                 else text("checks.case_numbered", n=k + 1, what=text(
                     "checks_2_4.step_case", dp=dp, tp=tp, d_in=d_in, hidden=hidden, d_out=d_out,
                     batch=batch)))
        with case(label, hidden=k > 0):
            _check_hybrid_case(student_fn, dp, tp, sizes, batch, seed=hidden_seed(_TAG, 90 + k))
