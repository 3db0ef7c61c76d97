"""Check of notebook 2.2's exercise 7, the sequence-parallel MLP (ex2_2_sequence_parallel_mlp;
the notebook imports it from :mod:`labs.exercises.tensor_parallel_checks`): on every rank the two
Functions alone, then the student's block, against the full MLP on one process; then each part's
mechanism (:data:`SP`: all-gathers and reduce-scatters only, each moving one activation).

Owns: exercise 7's cases, rank body, expected values and mechanism. Must not: import the grader,
print, or keep process groups in globals.
"""
from __future__ import annotations

import math

import torch
import torch.distributed as dist

from labs.exercises.checks import compare_tensors, graded, msg
from labs.exercises.invariants import count, hold, only, wire
from labs.exercises.ranks import check_cases
from labs.exercises.secret import hidden_int, hidden_seed
from labs.exercises.tensor_parallel_common import IN_GROUP, TAG, Case, Mark, compare_layer, \
    forward_backward, mlp, parts, traced
from labs.messages import text
from labs.tensor_parallel.layers import shard
from labs.tensor_parallel.model import tensor_parallel_group

__all__ = ["check_sequence_parallel_mlp", "SP", "SP_EXERCISE"]


# (label, world size, tp, batch, sequence length, C, hidden)
SP_CASES = ((msg("checks_2_2.case_sp", n=1, world_size=2, seq=4), 2, 2, 2, 4, 8, False),
            (msg("checks_2_2.case_sp", n=2, world_size=4, seq=8), 4, 4, 2, 8, 8, False),
            (msg("checks_2_2.case_hidden_odd_positions", n=1, world_size=2), 2, 2, 3, 6, 4, True),
            (msg("checks_2_2.case_hidden_odd_positions", n=2, world_size=4), 4, 4, 1, 12, 12, True),
            (msg("checks_2_2.case_hidden_two_groups", n=3, world_size=4), 4, 2, 2, 10, 6, True))


def sp_cases() -> list:
    """SP_CASES, the hidden ones' sizes drawn, each keeping an odd number of positions per rank
    (on 2 ranks, on 4, and in two TP groups {0, 1} {2, 3} of 2, each on its own data)."""
    out = []
    for k, (label, world, tp, batch, seq, dim, hidden) in enumerate(SP_CASES):
        if hidden:
            key = 10_300 + 10 * k
            seq = tp * (2 * hidden_int(TAG, key, 0, 2, (seq // tp - 1) // 2) + 1)
            batch, dim = hidden_int(TAG, key + 1, 1, 3, batch), hidden_int(TAG, key + 2, 2, 12, dim)
        out.append(Case(label, world, tp, (batch, seq, dim), hidden, hidden_seed(TAG, 300 + k),
                        "sp"))
    return out


def _along_sequence(forward: list, backward: list) -> tuple:
    """The ops of each pass, each moving one float32 (B, T, C) over the TP group (a ring: (t-1)/t
    of its bytes sent): no other collective, no more (or fewer) bytes on the wire."""
    def per_pass(ops, back):
        def sent(c):
            return len(ops) * (c.tp - 1) / c.tp * 4 * math.prod(c.sizes)
        return (wire(most=sent, least=sent, backward=back),
                *(count(op, ops.count(op), backward=back) for op in _OPS))
    return (IN_GROUP, only(*_OPS), *per_pass(forward, False), *per_pass(backward, True))


_OPS = ("all_gather", "reduce_scatter")
#: SeqAllGather: all-gather forward, reduce-scatter backward; SeqReduceScatter: the converse;
#: the block: both, in turn, and no all-reduce (the same bytes as TP's all-reduce, in halves).
SP = {"gather": _along_sequence(["all_gather"], ["reduce_scatter"]),
      "scatter": _along_sequence(["reduce_scatter"], ["all_gather"]),
      "block": _along_sequence(["all_gather", "reduce_scatter"], ["reduce_scatter", "all_gather"])}


def _sp_data(c: Case, group_index: int) -> dict:
    """One TP group's full input and MLP, the output's cotangent, and per rank an input and a
    cotangent of the full length (the two Functions' own test)."""
    g = torch.Generator().manual_seed(c.seed + group_index)
    b, s, h = c.sizes  # the weights scaled as an initialisation would
    w = [torch.randn(4 * h, h, generator=g) / h ** .5, torch.randn(4 * h, generator=g),
         torch.randn(h, 4 * h, generator=g) / (2 * h ** .5), torch.randn(h, generator=g)]
    return dict(mlp=[torch.randn(b, s, h, generator=g), *w],
                cot=torch.randn(b, s, h, generator=g),
                pieces=[(torch.randn(b, s, h, generator=g), torch.randn(b, s, h, generator=g))
                        for _ in range(c.tp)])


#: The dim along which x, c_fc.weight, c_fc.bias, c_proj.weight reach a rank cut (proj_b whole).
_DIMS = (1, 0, 0, 1, None)


def _sp_body(student, c: Case, run):
    """Rank body: the two Functions on their own, then the student's block; what came out."""
    gather, scatter, block = student
    group, r, t = tensor_parallel_group(c.tp), dist.get_rank() % c.tp, c.tp
    data = _sp_data(c, dist.get_rank() // c.tp)
    (x, cot), out = data["pieces"][r], {}
    for name, op, xi, cot_i in (("gather", gather, shard(data["pieces"][0][0], 1, r, t), cot),
                                ("scatter", scatter, x, shard(cot, 1, r, t))):
        leaf = xi.clone().requires_grad_()
        run(Mark(), name)
        out[name] = forward_backward(run, op.apply, (leaf, group), cot_i)
        out[name + "_grad"] = leaf.grad
    leaves = [(p if d is None else shard(p, d, r, t)).requires_grad_()
              for p, d in zip(data["mlp"], _DIMS)]
    run(Mark(), "block")
    out["y"] = forward_backward(run, block, (*leaves, group), shard(data["cot"], 1, r, t))
    out["grads"] = [p.grad for p in leaves]
    return out


def _judge_sp(c: Case, values, traces) -> None:
    hold((IN_GROUP,), c, traces)
    for rank, value in enumerate(values):
        r, t = rank % c.tp, c.tp
        data = _sp_data(c, rank // c.tp)
        xs, cots = zip(*data["pieces"])
        for want, key, what in (
                (xs[0], "gather", "checks_2_2.what_gather_forward"),
                (shard(sum(cots), 1, r, t), "gather_grad", "checks_2_2.what_gather_backward"),
                (shard(sum(xs), 1, r, t), "scatter", "checks_2_2.what_scatter_forward"),
                (torch.cat([shard(p, 1, k, t) for k, p in enumerate(cots)], dim=1),
                 "scatter_grad", "checks_2_2.what_scatter_backward")):
            compare_tensors(want, value[key], rank=rank, what=text(what), factors={"t": t})
        y, grads, _ = traced(mlp, data["mlp"], data["cot"])
        names = (text("checks_2_2.name_x_shard"), "c_fc.weight", "c_fc.bias", "c_proj.weight",
                 text("checks_2_2.name_proj_bias"))
        expected = [shard(g, d, r, t) for g, d in zip(grads, _DIMS[:4])]
        compare_layer(rank, t, shard(y, 1, r, t), value["y"], text("checks_2_2.what_sp_output"),
                      names, expected + [shard(data["cot"], 1, r, t).sum((0, 1))],
                      value["grads"], text("checks_2_2.advice_sp_grads"))
    for name, part in parts(traces).items():
        hold(SP[name], c, part)


#: Exercise 7 on ranks (merged into tensor_parallel_checks.RANK_EXERCISES).
SP_EXERCISE = {"ex2_2_sequence_parallel_mlp": (sp_cases, _sp_body, _judge_sp)}


@graded("ex2_2_sequence_parallel_mlp")
def check_sequence_parallel_mlp(gather_cls, scatter_cls, student_fn):
    """``SeqAllGather`` / ``SeqReduceScatter`` (``apply(x, group)``, along dim 1) and the block
    ``student_fn(x_shard, fc_w, fc_b, proj_w, proj_b, group)``, (B, T/t, C) in and out."""
    check_cases("ex2_2_sequence_parallel_mlp", (gather_cls, scatter_cls, student_fn),
                *SP_EXERCISE["ex2_2_sequence_parallel_mlp"])
