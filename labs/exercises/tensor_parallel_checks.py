"""Checks of the graded exercises of notebook 2.2 (tensor parallelism): on ranks, the student's
layer against the full one on one process (output and every gradient by name), then its
mechanism, stated as data below, over what each rank did; exercise 7 is sequence_parallel_checks'::

    check_conjugate_ops(CopyToRegion, ReduceFromRegion)   # ex2_2_conjugate_ops, 2 points
    check_column_parallel(column_parallel_forward)        # ex2_2_column_linear, 2 points
    check_row_parallel(row_parallel_forward)              # ex2_2_row_linear, 2 points
    check_parallel_mlp(parallel_mlp_forward)              # ex2_2_parallel_mlp, 2 points
    check_qkv_shard(qkv_shard)                            # ex2_2_attention_heads, 2 points
    check_tp_bytes(tp_bytes_per_layer)                    # ex2_2_tp_bytes, 1 point

Owns: 2.2's cases, rank bodies, mechanisms. Must not: import the grader, print, keep groups.
"""
from __future__ import annotations

import functools

import torch
import torch.distributed as dist
import torch.nn.functional as F

from labs.formulas.cost import tp_layer_comm
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, assert_close, compare_tensors, graded, msg
from labs.exercises.invariants import count, flops, hold, only, sharded, wire
from labs.exercises.ranks import as_number, check_cases
from labs.exercises.secret import drawing, hidden_int, hidden_seed
from labs.exercises.sequence_parallel_checks import SP_EXERCISE, check_sequence_parallel_mlp
from labs.exercises.tensor_parallel_common import IN_GROUP, TAG, Case, Mark, compare_layer, \
    forward_backward, members, mlp, parts, traced
from labs.messages import text
from labs.tensor_parallel.layers import shard
from labs.tensor_parallel.model import tensor_parallel_group

__all__ = ["check_conjugate_ops", "check_column_parallel", "check_row_parallel",
           "check_parallel_mlp", "check_qkv_shard", "check_tp_bytes", "check_sequence_parallel_mlp",
           "RANK_EXERCISES"]


# (label, world size, tp, tokens, in, out): tokens odd, so no activation has a weight's shape;
# the features multiples of tp. The hidden case: two TP groups of 2.
CASES = ((msg("checks_2_2.case_ranks", n=1, world_size=2), 2, 2, 3, 8, 12),
         (msg("checks_2_2.case_ranks", n=2, world_size=4), 4, 4, 3, 8, 16),
         (msg("checks_2_2.case_hidden_two_groups", n=1, world_size=4), 4, 2, 5, 6, 10))


def tp_cases(kind: str = "conjugate") -> list:
    """CASES for ``kind``, the hidden one's sizes drawn from the secret."""
    out = []
    for k, (label, world, tp, tokens, n_in, n_out) in enumerate(CASES):
        if hidden := k == 2:
            tokens = 2 * hidden_int(TAG, 10_001, 1, 3, tokens // 2) + 1
            n_in = tp * hidden_int(TAG, 10_002, 2, 6, n_in // tp)
            n_out = tp * hidden_int(TAG, 10_003, 2, 8, n_out // tp)
        out.append(Case(label, world, tp, (tokens, n_in, n_out), hidden, hidden_seed(TAG, 100 + k),
                        kind))
    return out


def _data(c: Case) -> dict:
    """A case's tensors, from its seed: a linear layer, an MLP (h = n_in), per-rank inputs."""
    g = torch.Generator().manual_seed(c.seed)
    t, i, o = c.sizes
    shapes = ([(t, i), (4 * i, i), (4 * i,), (i, 4 * i), (i,), (t, i)] if c.kind == "mlp" else
              [] if c.kind == "conjugate" else [(t, i), (o, i), (o,), (t, o)])
    return {"layer": [torch.randn(s, generator=g) for s in shapes],
            "per_rank": [torch.randn(t, i, generator=g) for _ in range(c.world_size)]}


def all_reduces(forward: int, backward: int, nbytes) -> tuple:
    """Exactly ``forward`` / ``backward`` all-reduces of ``nbytes(c)`` in the TP group, no other."""
    def ring(k):
        return lambda c: k * 2 * (c.tp - 1) / c.tp * nbytes(c)
    return (IN_GROUP, only("all_reduce"), count("all_reduce", forward, backward=False),
            count("all_reduce", backward, backward=True),
            wire(most=ring(forward), least=ring(forward), backward=False),
            wire(most=ring(backward), least=ring(backward), backward=True))


_x_bytes = lambda c: 4 * c.sizes[0] * c.sizes[1]  # noqa: E731 - a float32 x, its grad, MLP's y
#: Each rank multiplies its shards only, 1/t of the full layer's FLOPs (traced the same way).
SHARDED = (sharded(lambda c: [(4 * c.sizes[1], c.sizes[1])] if c.kind == "mlp" else
                   [(c.sizes[2], c.sizes[1])]),
           flops(lambda c: 1 / c.tp, lambda c: _reference(c)[2]))
#: f: identity forward, one all-reduce of the input's gradient backward; g: the converse.
CONJUGATE = {"f": all_reduces(0, 1, _x_bytes), "g": all_reduces(1, 0, _x_bytes)}
#: column: f in front, nothing forward; row: g, one all-reduce of the output (tokens, out)
#: forward, none backward; the MLP: f and g, one all-reduce in each pass.
MECHANISMS = {"column": all_reduces(0, 1, _x_bytes) + SHARDED,
              "row": all_reduces(1, 0, lambda c: 4 * c.sizes[0] * c.sizes[2]) + SHARDED,
              "mlp": all_reduces(1, 1, _x_bytes) + SHARDED}


# --- exercise 1: f and g --------------------------------------------------------------------

def _conjugate_body(student, c: Case, run):
    """Rank body: f, then g, on this rank's input, each backward of the next rank's input."""
    group, rank, x, out = tensor_parallel_group(c.tp), dist.get_rank(), _data(c)["per_rank"], {}
    for name, op in zip("fg", student):
        leaf = x[rank].clone().requires_grad_()
        run(Mark(), name)
        out[name] = forward_backward(run, op.apply, (leaf, group), x[(rank + 1) % c.world_size])
        out[name + "_grad"], out[name + "_input"] = leaf.grad, leaf.detach()
    return out


def _judge_conjugate(c: Case, values, traces) -> None:
    hold((IN_GROUP,), c, traces)
    x, n = _data(c)["per_rank"], c.world_size
    for rank, value in enumerate(values):
        group = members(c.tp, rank)
        for want, key, what in (
                (x[rank], "f", "checks_2_2.what_copy_forward"),
                (sum(x[(m + 1) % n] for m in group), "f_grad", "checks_2_2.what_copy_backward"),
                (sum(x[m] for m in group), "g", "checks_2_2.what_reduce_forward"),
                (x[(rank + 1) % n], "g_grad", "checks_2_2.what_reduce_backward"),
                (x[rank], "g_input", "checks_2_2.what_input_after")):
            compare_tensors(want, value[key], rank=rank, what=text(what), factors={"t": c.tp})
    for name, part in parts(traces).items():
        hold(CONJUGATE[name], c, part)


# --- exercises 2-4: column, row, the MLP ----------------------------------------------------

#: Per layer: the dim each tensor (x, weight, bias; the MLP's x, c_fc.*, c_proj.*) reaches a rank
#: cut along (None: whole), the dims of the whole ones it uses a shard of only (0 elsewhere in
#: their gradients), the output shard's dim; the weights' names; what the output should be.
_LAYERS = {"column": ((None,) * 3, (None, 0, 0), -1, ("weight", "bias"),
                      "checks_2_2.what_column_output"),
           "row": ((-1, None, None), (None, 1, None), None, ("weight", "bias"),
                   "checks_2_2.what_row_output"),
           "mlp": ((None, 0, 0, 1, None), (None,) * 5, None,
                   ("c_fc.weight", "c_fc.bias", "c_proj.weight", "c_proj.bias"),
                   "checks_2_2.what_mlp_output")}


@functools.lru_cache(maxsize=4)
def _reference(c: Case):
    """The full layer of ``c`` on one process: (output, gradients, FLOPs)."""
    *tensors, cot = _data(c)["layer"]
    return traced(mlp if c.kind == "mlp" else F.linear, tensors, cot)


def _cut(tensors, dims, r, t):
    return [x if d is None else shard(x, d, r, t) for x, d in zip(tensors, dims)]


def _zero_outside(full, dim, r, t):
    """``full`` with everything but rank ``r``'s shard along ``dim`` zeroed."""
    return torch.cat([shard(full, dim, k, t) * (k == r) for k in range(t)], dim=dim)


def _layer_body(student, c: Case, run):
    """Rank body: the student's layer on what this rank gets; its output and the gradients."""
    group, r = tensor_parallel_group(c.tp), dist.get_rank() % c.tp
    *tensors, cot = _data(c)["layer"]
    dims, _, cot_dim, _, _ = _LAYERS[c.kind]
    leaves = [x.requires_grad_() for x in _cut(tensors, dims, r, c.tp)]
    y = forward_backward(run, student, (*leaves, group), _cut([cot], [cot_dim], r, c.tp)[0])
    return {"y": y, "grads": [x.grad for x in leaves]}


def _judge_layer(c: Case, values, traces) -> None:
    hold((IN_GROUP,), c, traces)
    y, grads, _ = _reference(c)
    dims, used, y_dim, weights, what = _LAYERS[c.kind]
    for rank, value in enumerate(values):
        r, t = rank % c.tp, c.tp
        expected = [g if u is None else _zero_outside(g, u, r, t)
                    for g, u in zip(_cut(grads, dims, r, t), used)]
        compare_layer(rank, t, _cut([y], [y_dim], r, t)[0], value["y"], text(what),
                      [text("checks_2_2.name_input_x"), *weights], expected, value["grads"],
                      text("checks_2_2.advice_f_g"))
    hold(MECHANISMS[c.kind], c, traces)


_KIND = {"ex2_2_column_linear": "column", "ex2_2_row_linear": "row", "ex2_2_parallel_mlp": "mlp"}
#: The exercises on ranks: ``id -> (cases, rank body, judge)`` (tests/catalog/test_secrets.py).
RANK_EXERCISES = {"ex2_2_conjugate_ops": (tp_cases, _conjugate_body, _judge_conjugate),
                  **{eid: (functools.partial(tp_cases, kind), _layer_body, _judge_layer)
                     for eid, kind in _KIND.items()}, **SP_EXERCISE}


@graded("ex2_2_conjugate_ops")
def check_conjugate_ops(copy_cls, reduce_cls):
    """CopyToRegion: identity / all-reduce; ReduceFromRegion: all-reduce / identity."""
    check_cases("ex2_2_conjugate_ops", (copy_cls, reduce_cls),
                *RANK_EXERCISES["ex2_2_conjugate_ops"])


@graded("ex2_2_column_linear")
def check_column_parallel(student_fn):
    """``student_fn(x, weight, bias, group)`` -> this rank's column slice of x W^T + b."""
    check_cases("ex2_2_column_linear", student_fn, *RANK_EXERCISES["ex2_2_column_linear"])


@graded("ex2_2_row_linear")
def check_row_parallel(student_fn):
    """``student_fn(x_shard, weight, bias, group)`` -> the full x W^T + b on every rank."""
    check_cases("ex2_2_row_linear", student_fn, *RANK_EXERCISES["ex2_2_row_linear"])


@graded("ex2_2_parallel_mlp")
def check_parallel_mlp(student_fn):
    """``student_fn(x, fc_w, fc_b, proj_w, proj_b, group)``: the MLP, column then row."""
    check_cases("ex2_2_parallel_mlp", student_fn, *RANK_EXERCISES["ex2_2_parallel_mlp"])


# --- exercise 5: q/k/v by heads -------------------------------------------------------------

def _qkv_cases() -> list:
    """(C, rank, tp, hidden): weight (3C, C), bias (3C,), as the prose says; a hidden rank holds
    >= 2 rows of each of q, k, v (a strided pick is no block), the first not rank 0 nor tp-1."""
    hidden = []
    for k, (c, rank, tp) in enumerate(((16, 3, 4), (32, 1, 8), (4, 0, 1))):
        key = 10_100 + 10 * k
        if tp > 1:  # the last keeps tp = 1 (nothing to split)
            tp = hidden_int(TAG, key, 2, 8, tp)
            rank = hidden_int(TAG, key + 1, 1 - k, tp - 1, rank)
            rank = (rank + 1) % tp if k == 0 and 2 * rank == tp - 1 else rank
        hidden.append((tp * hidden_int(TAG, key + 2, 2, 4, c // tp), rank, tp, True))
    return [(8, 0, 2, False), (8, 1, 2, False)] + hidden


@graded("ex2_2_attention_heads")
def check_qkv_shard(student_fn):
    """``student_fn(weight, bias, rank, tp)`` -> this rank's rows of the fused q/k/v weight."""
    def compare(cols, rank, tp, _):
        rows = 3 * cols
        w = torch.arange(rows * cols, dtype=torch.float32).view(rows, cols)
        b = torch.arange(rows, dtype=torch.float32)
        got = student_fn(w, b, rank, tp)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise ExerciseFailed(text("checks_2_2.return_two_tensors"))
        if tp > 1 and torch.equal(torch.as_tensor(got[0]), w.chunk(tp)[rank]):
            raise ExerciseFailed(text("checks_2_2.contiguous_block", rank=rank,
                                      first=rank * rows // tp, last=(rank + 1) * rows // tp - 1))
        assert_close((shard(w, 0, rank, tp, stride=3), shard(b, 0, rank, tp, stride=3)), got,
                     what=text("checks_2_2.what_shards"))
    found = _qkv_cases()
    each_case(found[:2], found[2:], lambda cols, rank, tp, _: text(
        "checks_2_2.case_qkv", rows=3 * cols, rank=rank, tp=tp), compare)


# --- exercise 6: bytes per layer ------------------------------------------------------------

def _bytes_cases() -> list:
    """(b, s, h, t, e, hidden): two shown; a large layer, one without TP, a small one whose t
    divides no power of two (8(t-1)/t no whole number); h a multiple of t: whole bytes."""
    draw = drawing(TAG, 10_200)
    big, small = draw(3, 2, 8, 8), (3, 5, 6, 7)[draw(8, 0, 3, 1)]
    return [(8, 1024, 1600, 8, 2, False), (4, 16, 32, 2, 4, False),
            (draw(0, 1, 4, 1), draw(1, 512, 4096, 2048), big * draw(2, 512, 2048, 1536), big, 2,
             True),
            (draw(4, 1, 4, 2), draw(5, 16, 128, 64), draw(6, 16, 128, 64), 1, 4, True),
            (draw(7, 1, 7, 3), draw(9, 1, 9, 5), small * draw(10, 1, 4, 2), small,
             (2, 4)[draw(11, 0, 1, 1)], True)]


@graded("ex2_2_tp_bytes")
def check_tp_bytes(student_fn):
    """``student_fn(batch, seq, hidden, tp, bytes_per_element)`` = bytes each rank sends for
    one TP transformer layer, forward + backward (ring all-reduce)."""
    returned, found = text("checks.what_returned"), _bytes_cases()

    def compare(b, s, h, t, e, _):
        got = as_number(student_fn(b, s, h, t, e), returned)
        expected = tp_layer_comm(batch=b, seq_len=s, hidden=h, tp=t, bytes_per_element=e)
        assert_close(float(expected["sent_bytes_per_rank"]), float(got), what=returned,
                     dtype="float64", factors={"t": t})
    each_case(found[:2], found[2:], lambda b, s, h, t, e, _: text(
        "checks_2_2.case_tp_bytes", b=b, s=s, h=h, t=t, e=e), compare)
