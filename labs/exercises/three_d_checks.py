"""The check of notebook 2.4's 练习 6, one DP × PP × TP step built by hand on real ranks (served
to the notebook by labs.exercises.hybrid_checks, whose module the notebook imports).

The model has two stages, each a Megatron-split MLP without bias (stage s: relu(h w1[s]ᵀ) w2[s]ᵀ),
loss = mean((out - y)²). Every rank of the dp × 2 × tp mesh (rank = (d·2 + s)·tp + t) gets its TP
and DP groups, the full weights of both stages, the global batch and the learning rate; it
returns its stage's loss (last stage) or None, its gradient shards (averaged over DP) and its
weight shards after one SGD step. The check compares them with one process on the whole batch,
and verifies the structure on every rank: no ready-made pipeline (labs.hybrid.three_d,
labs.pipeline's executor and step, torch.distributed.pipelining: refused however reached,
labs.exercises.routes.borrowed); no collective but all_reduce; stage boundaries crossed only by
send/recv between (d, 0, t) and (d, 1, t) (recorded, labs.exercises.routes.guarded), both ways;
rows of x reach a matrix product only on stage 0, and only the replica's own rows.

Owns: 练习 6's cases and rank body. Must not: import the grader, print (the verdict is
labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

import contextlib

from labs.exercises import routes
from labs.exercises.checks import ExerciseFailed, assert_close, case, graded
from labs.exercises.hybrid_step_checks import _rows_mode
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.hybrid.mesh import MeshShape
from labs.messages import text

__all__ = ["check_3d_step", "STEP_3D_TIMEOUT"]

_TAG = "2.4"  # the domain of 2.4's hidden seeds (as labs.exercises.hybrid_checks)
STEP_3D_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s once started
_PP = 2
#: Modules whose code does the exercise's work: any of their functions reached is refused.
_READY_MADE = ("labs.hybrid.three_d", "labs.pipeline.executor", "labs.pipeline.step",
               "torch.distributed.pipelining.schedules", "torch.distributed.pipelining.stage")


def _model(d, hidden, batch, seed):
    """w1s[s] (hidden, d), w2s[s] (d, hidden) for both stages; x (batch, d), y (batch, d)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    w1s = [torch.randn(hidden, d, generator=gen) / d ** 0.5 for _ in range(_PP)]
    w2s = [torch.randn(d, hidden, generator=gen) / hidden ** 0.5 for _ in range(_PP)]
    return w1s, w2s, torch.randn(batch, d, generator=gen), torch.randn(batch, d, generator=gen)


def _reference(w1s, w2s, x, y):
    """One process: (loss, [(grad w1, grad w2) per stage]) of the two-stage MLP on x, y."""
    import torch

    w1s = [w.clone().requires_grad_() for w in w1s]
    w2s = [w.clone().requires_grad_() for w in w2s]
    h = x
    for w1, w2 in zip(w1s, w2s):
        h = torch.relu(h @ w1.T) @ w2.T
    loss = ((h - y) ** 2).mean()
    loss.backward()
    return loss.detach(), [(a.grad, b.grad) for a, b in zip(w1s, w2s)]


@contextlib.contextmanager
def _all_reduces(reduced: list):
    """Within the block, every ``dist.all_reduce`` is recorded as (tensor shape, the members of
    its group) and passed on: which group served as TP and which as DP."""
    import torch.distributed as dist

    original = dist.all_reduce

    def record(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        members = (list(range(dist.get_world_size())) if group is None
                   else sorted(dist.get_process_group_ranks(group)))
        reduced.append((tuple(tensor.shape), members))
        return original(tensor, op, group, async_op)

    dist.all_reduce = record
    try:
        yield reduced
    finally:
        dist.all_reduce = original


def _on_rank(student_fn, dp, tp, d, hidden, batch, seed, lr):
    """Inside a rank: the groups, then the student's step under the guards; what it returned,
    its traffic, the rows of x that reached a matrix product, the ready-made code it reached."""
    import torch.distributed as dist

    shape = MeshShape(dp=dp, pp=_PP, tp=tp)
    rank = dist.get_rank()
    groups = {}
    for dim in ("tp", "dp"):
        for members in shape.group_ranks(dim):
            group = dist.new_group(members)
            if rank in members:
                groups[dim] = group
    w1s, w2s, x, y = _model(d, hidden, batch, seed)
    traffic, rows, reduced = routes.Traffic(), set(), []

    def refuse(shown):
        raise ExerciseFailed(text("checks_2_4.step3d_collective", shown=shown))

    with routes.borrowed(_READY_MADE) as seen:
        try:
            with routes.guarded(refuse, allowed=("all_reduce",), traffic=traffic), \
                    _rows_mode(x, rows), _all_reduces(reduced):
                got = student_fn(dp, tp, groups["tp"], groups["dp"], [w.clone() for w in w1s],
                                 [w.clone() for w in w2s], x.clone(), y.clone(), lr)
        except Exception:
            if seen:  # the ready-made code failed inside the guards: say why it is refused
                raise ExerciseFailed(text("checks_2_4.no_ready_made", shown=seen[0])) from None
            raise
    if seen:
        raise ExerciseFailed(text("checks_2_4.no_ready_made", shown=seen[0]))
    if isinstance(got, (list, tuple)):
        got = [[t.detach().clone() if hasattr(t, "detach") else t for t in g]
               if isinstance(g, (list, tuple)) else (g.detach().clone() if hasattr(g, "detach")
                                                      else g) for g in got]
    return dict(got=got, sent=traffic.sent, received=traffic.received, rows=sorted(rows),
                reduced=reduced)


def _check_groups(shape, d, hidden, batch, results) -> None:
    """Every all-reduce of a gradient shard ran in the rank's DP group, every other one (f/g) in
    its TP group (a tensor of both shapes may use either); one over the whole world is a missing
    ``group=``."""
    grads = {(hidden // shape.tp, d), (d, hidden // shape.tp)}
    activation = (batch // shape.dp, d)
    for rank, result in enumerate(results):
        tp_members = next(g for g in shape.group_ranks("tp") if rank in g)
        dp_members = next(g for g in shape.group_ranks("dp") if rank in g)
        for tensor_shape, members in result["reduced"]:
            allowed = ([dp_members] if tensor_shape in grads else []) + (
                [tp_members] if tensor_shape not in grads or tensor_shape == activation else [])
            if members in allowed:
                continue
            role, want = ("dp", dp_members) if tensor_shape in grads else ("tp", tp_members)
            key = ("checks_2_4.step3d_group_missing" if len(members) == shape.world_size
                   else "checks_2_4.group_membership_wrong")
            raise ExerciseFailed(text(key, rank=rank, role=role.upper(), got=members, want=want,
                                      tp=shape.tp, group=f"{role}_group"))


def _check_structure(shape, batch, results) -> None:
    """Per rank: x only on stage 0 and only the replica's rows; send/recv only with the partner
    of the other stage, at least once each way."""
    for rank, result in enumerate(results):
        d, s, t = shape.coords(rank)
        if s > 0 and result["rows"]:
            raise ExerciseFailed(text("checks_2_4.step3d_stage_computes_x", rank=rank, s=s))
        share = range(d * (batch // shape.dp), (d + 1) * (batch // shape.dp))
        others = sorted(set(result["rows"]) - set(share))
        if others:
            raise ExerciseFailed(text("checks_2_4.rows_of_other_replicas", rank=rank, d=d,
                                      dp=shape.dp, row=others[0], count=len(others),
                                      first=share[0], last=share[-1]))
    for rank, result in enumerate(results):
        d, s, t = shape.coords(rank)
        partner = shape.rank(dp=d, pp=1 - s, tp=t)
        for kind, wrong_key, none_key in (
                ("sent", "checks_2_4.step3d_sent_wrong_peer", "checks_2_4.step3d_no_sent"),
                ("received", "checks_2_4.step3d_received_wrong_peer",
                 "checks_2_4.step3d_no_received")):
            peers = sorted({peer for peer, _ in result[kind]})
            wrong = [p for p in peers if p != partner]
            if wrong:
                raise ExerciseFailed(text(wrong_key, rank=rank, peer=wrong[0], partner=partner,
                                          s=s))
            if not peers:
                raise ExerciseFailed(text(none_key, rank=rank, s=s, partner=partner))


def _check_case(student_fn, dp, tp, d, hidden, batch, seed, lr):
    import torch

    shape = MeshShape(dp=dp, pp=_PP, tp=tp)
    results = run_on_ranks(_on_rank, shape.world_size,
                           (student_fn, dp, tp, d, hidden, batch, seed, lr),
                           timeout=STEP_3D_TIMEOUT, deadlock="checks_2_4.step3d_deadlock")
    _check_structure(shape, batch, results)
    _check_groups(shape, d, hidden, batch, results)
    w1s, w2s, x, y = _model(d, hidden, batch, seed)
    _, full = _reference(w1s, w2s, x, y)
    per_replica = [_reference(w1s, w2s, xs, ys) for xs, ys in zip(x.chunk(dp), y.chunk(dp))]
    for rank, result in enumerate(results):
        r, s, t = shape.coords(rank)
        got = result["got"]
        if not (isinstance(got, list) and len(got) == 3 and all(
                isinstance(g, list) and len(g) == 2 and all(torch.is_tensor(v) for v in g)
                for g in got[1:])):
            raise ExerciseFailed(text("checks_2_4.step3d_not_three", rank=rank, got=got))
        loss, grads, weights = got
        if s == _PP - 1:
            if not (torch.is_tensor(loss) and loss.numel() == 1 or isinstance(loss, float)):
                raise ExerciseFailed(text("checks_2_4.step3d_loss_missing", rank=rank, got=loss))
            assert_close(per_replica[r][0], torch.as_tensor(loss, dtype=torch.float32).reshape(()),
                         what=text("checks_2_4.step3d_what_loss", d=r), rank=rank)
        for k, (weight, dim) in enumerate(((w1s[s], 0), (w2s[s], 1))):
            name = f"w{k + 1}[{s}]"
            want = full[s][k].chunk(tp, dim=dim)[t]
            g = grads[k].to(want.dtype)
            if g.shape != want.shape:
                raise ExerciseFailed(text("checks_2_4.shard_shape", rank=rank,
                                          what=text("checks_2_4.what_shard", weight=name),
                                          expected=tuple(want.shape), got=tuple(g.shape)))
            mine = per_replica[r][1][s][k].chunk(tp, dim=dim)[t]
            if dp > 1 and not torch.allclose(g, want, rtol=1e-4, atol=1e-6) and any(
                    torch.allclose(g, m, rtol=1e-4, atol=1e-6) for m in (mine, mine / dp)):
                raise ExerciseFailed(text("checks_2_4.shard_local_batch", rank=rank, dp=dp,
                                          what=text("checks_2_4.what_shard", weight=name)))
            assert_close(want, g, what=text("checks_2_4.what_shard", weight=name), rank=rank)
            after = weight.chunk(tp, dim=dim)[t] - lr * want
            assert_close(after, weights[k].to(after.dtype), rank=rank,
                         what=text("checks_2_4.step3d_what_weight", weight=name))


def _cases() -> list[tuple]:
    """(dp, tp, D, H, B, seed, lr): the shown 8-rank case, then two hidden ones on 4 ranks
    (one replica, TP 2; two replicas, TP 1), their sizes drawn from the secret when one is set;
    every replica has an even number of rows (two equal GPipe micro-batches are allowed)."""
    cases = [(2, 2, 4, 6, 8, hidden_seed(_TAG, 600), 0.1)]
    for k, (dp, tp) in enumerate(((1, 2), (2, 1)), start=1):
        key = 610 + 10 * k
        cases.append((dp, tp, hidden_int(_TAG, key, 3, 6, 5),
                      tp * hidden_int(_TAG, key + 1, 2, 5, 3),
                      dp * 2 * hidden_int(_TAG, key + 2, 1, 3, 2), hidden_seed(_TAG, key + 3),
                      0.05))
    return cases


@graded("ex2_4_3d_step")
def check_3d_step(student_fn):
    """student_fn(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr) on every rank of a dp × 2 × tp
    mesh -> (loss on the last stage else None, [grad w1 shard, grad w2 shard] averaged over DP,
    [w1 shard, w2 shard] after one SGD step)."""
    for k, (dp, tp, d, hidden, batch, seed, lr) in enumerate(_cases()):
        what = text("checks_2_4.step3d_case", dp=dp, pp=_PP, tp=tp, d=d, hidden=hidden,
                    batch=batch)
        label = (text("checks_2_4.step3d_case_hidden", n=k, what=what) if k > 0
                 else text("checks.case_numbered", n=1, what=what))
        with case(label, hidden=k > 0):
            _check_case(student_fn, dp, tp, d, hidden, batch, seed, lr)
