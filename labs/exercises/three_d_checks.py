"""The check of notebook 2.4's exercise 6, one DP × PP × TP step built by hand on real ranks
(served by labs.exercises.hybrid_checks): two stages, each a Megatron-split MLP without bias, on
a dp × 2 × tp mesh (rank = (d·2 + s)·tp + t). :data:`STEP_3D`, on every rank: only all-reduces
and send/recv; inside each stage exercise 5's mechanism (its own stage's FLOPs: stage 1
recomputing stage 0 is seen); send/recv only with (d, 1 - s, t), rows × D bytes each way. Then
every number against one process.

Owns: exercise 6's cases, body and judge. Must not: import the grader, print, or keep process
groups in globals.
"""

from __future__ import annotations

import numbers

import torch
import torch.distributed as dist

from labs.exercises import trace
from labs.exercises.checks import ExerciseFailed, assert_close, graded, msg
from labs.exercises.hybrid_step_checks import TAG, TP_DP, Case, Guard, activation_bytes, \
    compare_shards, data, detached, moved, reference
from labs.exercises.invariants import hold, only, peers
from labs.exercises.ranks import check_cases
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_3d_step", "STEP_3D", "RANK_EXERCISES"]


#: The pipeline's boundary, with Megatron's split and the DP average inside every stage.
_OPS = ("all_reduce", "send", "recv", "barrier")
STEP_3D = (only(*_OPS), *TP_DP,
           peers(lambda c, rank: {rank + c.tp * (1 - 2 * c.stage(rank))}),  # (d, 1 - s, t)
           *(moved("checks_2_4.p2p_bytes", activation_bytes, op=op) for op in ("send", "recv")))


def _body(student_fn, c: Case, run):
    """Rank body: this rank's TP and DP groups, then the student's step."""
    guard, mine = Guard(*_OPS), {}
    for dim in ("tp", "dp"):
        for members in c.mesh.group_ranks(dim):
            guard.made.append(dist.new_group(members))
            if dist.get_rank() in members:
                mine[dim] = guard.made[-1]
    w1s, w2s, x, y = data(c)
    with trace.before_comm(guard.check):
        got = run(student_fn, c.dp, c.tp, mine["tp"], mine["dp"], [w.clone() for w in w1s],
                  [w.clone() for w in w2s], x.clone(), y.clone(), c.lr)
    guard.destroy()
    return detached(got)


def _judge(c: Case, values, traces) -> None:
    for rank, got in enumerate(values):
        if not (isinstance(got, list) and len(got) == 3 and all(
                isinstance(g, list) and len(g) == 2 and all(torch.is_tensor(v) for v in g)
                for g in got[1:])):
            raise ExerciseFailed(text("checks_2_4.step3d_not_three", rank=rank, got=got))
    hold(STEP_3D, c, traces)
    _, full = reference(c)
    w1s, w2s, _, _ = data(c)
    for rank, (loss, grads, weights) in enumerate(values):
        d, s, t = c.mesh.coords(rank)
        if s == c.pp - 1:
            if not (torch.is_tensor(loss) and loss.numel() == 1 or isinstance(loss, numbers.Real)):
                raise ExerciseFailed(text("checks_2_4.step3d_loss_missing", rank=rank, got=loss))
            assert_close(reference(c, d)[0], torch.as_tensor(float(loss)).reshape(()),
                         what=text("checks_2_4.step3d_what_loss", d=d), rank=rank)
        names = (f"w1[{s}]", f"w2[{s}]")
        compare_shards(c, rank, full[s], grads, names)
        for k, (weight, dim) in enumerate(((w1s[s], 0), (w2s[s], 1))):
            after = weight.chunk(c.tp, dim=dim)[t] - c.lr * full[s][k].chunk(c.tp, dim=dim)[t]
            assert_close(after, weights[k].to(after.dtype), rank=rank,
                         what=text("checks_2_4.step3d_what_weight", weight=names[k]))


def cases() -> list[Case]:
    """The shown 8-rank case, then two hidden ones on 4 ranks (dp, tp) = (1, 2), (2, 1): every
    replica's rows even (two GPipe micro-batches allowed) and below H, H apart from D."""
    found = [Case(msg("checks.case_numbered", n=1, what=msg(
        "checks_2_4.step3d_case", dp=2, pp=2, tp=2, d=4, hidden=6, batch=8)),
        2, 2, (4, 6, 4), 8, hidden_seed(TAG, 600), pp=2, lr=0.1)]
    for k, (dp, tp) in enumerate(((1, 2), (2, 1)), start=1):
        key = 610 + 10 * k
        d, rows = hidden_int(TAG, key, 3, 6, 5), 2 * hidden_int(TAG, key + 2, 1, 3, 2)
        hidden = tp * (rows // tp + hidden_int(TAG, key + 1, 1, 3, 1))
        d += d == hidden  # no activation of a whole weight's shape (whole_weights)
        found.append(Case(msg("checks.case_hidden", n=k), dp, tp, (d, hidden, d), dp * rows,
                          hidden_seed(TAG, key + 3), hidden=True, pp=2, lr=0.05))
    return found


RANK_EXERCISES = {"ex2_4_3d_step": (cases, _body, _judge)}


@graded("ex2_4_3d_step")
def check_3d_step(student_fn):
    """student_fn(dp, tp, tp_group, dp_group, w1s, w2s, x, y, lr) on every rank of a dp × 2 × tp
    mesh -> (loss on the last stage else None, [grad w1 shard, grad w2 shard] averaged over DP,
    [w1 shard, w2 shard] after one SGD step)."""
    check_cases("ex2_4_3d_step", student_fn, *RANK_EXERCISES["ex2_4_3d_step"])
