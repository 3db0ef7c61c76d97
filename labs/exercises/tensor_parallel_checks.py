"""Checks of the graded exercises of notebook 2.2 (tensor parallelism).

The student's code runs on real ranks (``labs.launch``, gloo) and is compared with the full,
unsharded layer on the same inputs: the forward output and every gradient, each by name, so a
broken f/g pairing is reported as exactly the gradient it breaks::

    check_conjugate_ops(CopyToRegion, ReduceFromRegion)   # ex2_2_conjugate_ops, 2 points
    check_column_parallel(column_parallel_forward)        # ex2_2_column_linear, 2 points
    check_row_parallel(row_parallel_forward)              # ex2_2_row_linear, 2 points
    check_parallel_mlp(parallel_mlp_forward)              # ex2_2_parallel_mlp, 2 points
    check_qkv_shard(qkv_shard)                            # ex2_2_attention_heads, 2 points
    check_tp_bytes(tp_bytes_per_layer)                    # ex2_2_tp_bytes, 1 point
    check_sequence_parallel_mlp(SeqAllGather, SeqReduceScatter, sp_mlp_forward)
                                                          # ex2_2_sequence_parallel_mlp, 4 points

Owns: 2.2's checks and their hidden cases. Must not: import the grader or the planner widget, print
(the verdict is labs.exercises.checks'), or keep process groups in globals.
"""
from __future__ import annotations

from labs.collectives import ring_all_reduce_bytes_per_rank
from labs.cost import tp_layer_comm
from labs.exercises.checks import ExerciseFailed, assert_close, case, compare_tensors, graded, msg
from labs.exercises.ranks import as_number, run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig
from labs.tensor_parallel.comm import CommCounter
from labs.tensor_parallel.layers import shard
from labs.tensor_parallel.model import ParallelBlock
from labs.exercises.tensor_parallel_common import (SECRET_TAG, compare_gradients as _compare_gradients,
    group_hint, group_rank as _group_rank, seed as _seed, size as _size, tp_group as _group)

__all__ = ["check_conjugate_ops", "check_column_parallel", "check_row_parallel",
           "check_parallel_mlp", "check_qkv_shard", "check_tp_bytes", "check_sequence_parallel_mlp"]

# 练习 7 lives in labs.exercises.sequence_parallel_checks; the notebook imports it from here
from labs.exercises.sequence_parallel_checks import check_sequence_parallel_mlp  # noqa: E402

# (label, world size, tp group size, tokens, in, out, hidden); labels are lazy messages
CASES = ((msg("checks_2_2.case_ranks", n=1, world_size=2), 2, 2, 4, 8, 12, False),
         (msg("checks_2_2.case_ranks", n=2, world_size=4), 4, 4, 3, 8, 16, False),
         (msg("checks_2_2.case_hidden_two_groups", n=1, world_size=4), 4, 2, 5, 6, 10, True))


def _cases():
    """CASES, the hidden case's sizes drawn from the secret when one is set (still 4 ranks in
    two TP groups of 2; the features and outputs still split evenly between the 2)."""
    (label, world, tp, tokens, n_in, n_out, hidden), = [c for c in CASES if c[-1]]
    drawn = (label, world, tp, _size(10_001, 2, 7, tokens), _size(10_002, 4, 12, n_in, tp),
             _size(10_003, 4, 16, n_out, tp), hidden)
    return tuple(drawn if c[-1] else c for c in CASES)


def _data(seed, tokens, n_in, n_out, world):
    import torch

    g = torch.Generator().manual_seed(seed)
    return (torch.randn(tokens, n_in, generator=g), torch.randn(n_out, n_in, generator=g),
            torch.randn(n_out, generator=g), torch.randn(tokens, n_out, generator=g),
            [torch.randn(tokens, n_in, generator=g) for _ in range(world)])


def _on_rank_conjugate(copy_cls, reduce_cls, tp, per_rank):
    import torch.distributed as dist

    group = _group(tp)
    rank = dist.get_rank()
    x = per_rank[rank].clone().requires_grad_()
    cot = per_rank[(rank + 1) % len(per_rank)]  # a different cotangent on every rank
    f = copy_cls.apply(x, group)
    f.backward(cot)
    f_out, f_grad = f.detach(), x.grad.clone()
    x.grad = None
    g = reduce_cls.apply(x * 1.0, group)
    g.backward(cot)
    return f_out, f_grad, g.detach(), x.grad.clone()


@graded("ex2_2_conjugate_ops")
def check_conjugate_ops(copy_cls, reduce_cls):
    """CopyToRegion: identity / all-reduce; ReduceFromRegion: all-reduce / identity."""
    import torch

    for label, world, tp, tokens, n_in, _, hidden in _cases():
        with group_hint(tp < world), case(label, hidden=hidden):
            per_rank = _data(_seed(7), tokens, n_in, 1, world)[4]
            results = run_on_ranks(_on_rank_conjugate, world, (copy_cls, reduce_cls, tp, per_rank))
            for rank, (f_out, f_grad, g_out, g_grad) in enumerate(results):
                members = range(rank - rank % tp, rank - rank % tp + tp)
                total_x = torch.stack([per_rank[m] for m in members]).sum(0)
                total_cot = torch.stack([per_rank[(m + 1) % world] for m in members]).sum(0)
                cot = per_rank[(rank + 1) % world]
                compare_tensors(per_rank[rank], f_out, rank=rank,
                                what=text("checks_2_2.what_copy_forward"))
                compare_tensors(total_cot, f_grad, rank=rank,
                                what=text("checks_2_2.what_copy_backward"))
                compare_tensors(total_x, g_out, rank=rank,
                                what=text("checks_2_2.what_reduce_forward"))
                compare_tensors(cot, g_grad, rank=rank,
                                what=text("checks_2_2.what_reduce_backward"))


def _on_rank_linear(student_fn, kind, tp, x, weight, bias, cot):
    import torch
    import torch.distributed as dist

    group = _group(tp)
    r, t = _group_rank(group)
    w = weight.clone().requires_grad_()
    b = bias.clone().requires_grad_()
    if kind == "column":
        xi = x.clone().requires_grad_()
        cot = shard(cot, -1, r, t)  # my columns of the output's gradient
    else:
        xi = shard(x, -1, r, t).requires_grad_()
    y = student_fn(xi, w, b, group)
    if isinstance(y, torch.Tensor) and y.shape == cot.shape and y.requires_grad:
        y.backward(cot)  # else the comparison of the output says what is wrong
    return dist.get_rank(), r, t, y.detach(), xi.grad, w.grad, b.grad


def _check_linear(student_fn, kind):
    import torch

    for label, world, tp, tokens, n_in, n_out, hidden in _cases():
        with group_hint(tp < world), case(label, hidden=hidden):
            x, weight, bias, cot, _ = _data(_seed(11), tokens, n_in, n_out, world)
            xf, wf, bf = (t.clone().requires_grad_() for t in (x, weight, bias))
            y_full = torch.nn.functional.linear(xf, wf, bf)
            y_full.backward(cot)
            results = run_on_ranks(_on_rank_linear, world, (student_fn, kind, tp, x, weight, bias, cot))
            for rank, (_, _, _, y, gx, gw, gb) in enumerate(results):
                r, t = rank % tp, tp  # consecutive TP groups (tensor_parallel_group), not
                # what the rank reports: the grader trusts only the data it checks
                if kind == "column":
                    compare_tensors(shard(y_full.detach(), -1, r, t), y, rank=rank,
                                    what=text("checks_2_2.what_column_output"))
                    compare_tensors(xf.grad, gx, rank=rank,
                                    what=text("checks_2_2.what_column_input_grad"))
                    expected_w = torch.zeros_like(wf.grad)
                    rows = torch.arange(n_out).chunk(t)[r]
                    expected_w[rows] = wf.grad[rows]
                    expected_b = torch.zeros_like(bf.grad)
                    expected_b[rows] = bf.grad[rows]
                else:
                    compare_tensors(y_full.detach(), y, rank=rank,
                                    what=text("checks_2_2.what_row_output"))
                    compare_tensors(shard(xf.grad, -1, r, t), gx, rank=rank,
                                    what=text("checks_2_2.what_row_input_grad"))
                    expected_w = torch.zeros_like(wf.grad)
                    cols = torch.arange(n_in).chunk(t)[r]
                    expected_w[:, cols] = wf.grad[:, cols]
                    expected_b = bf.grad
                compare_tensors(expected_w, gw if gw is not None else torch.zeros_like(wf),
                                rank=rank, what=text("checks_2_2.what_weight_grad"))
                if gb is None:
                    raise ExerciseFailed(text("checks_2_2.no_bias_grad", rank=rank))
                compare_tensors(expected_b, gb, rank=rank, what=text("checks_2_2.what_bias_grad"))


@graded("ex2_2_column_linear")
def check_column_parallel(student_fn):
    """``student_fn(x, weight, bias, group)`` -> this rank's column slice of x W^T + b."""
    _check_linear(student_fn, "column")


@graded("ex2_2_row_linear")
def check_row_parallel(student_fn):
    """``student_fn(x_shard, weight, bias, group)`` -> the full x W^T + b on every rank."""
    _check_linear(student_fn, "row")


def _on_rank_mlp(student_fn, tp, x, fc_w, fc_b, proj_w, proj_b, cot):
    import torch.distributed as dist

    group = _group(tp)
    r, t = _group_rank(group)
    params = [shard(fc_w, 0, r, t), shard(fc_b, 0, r, t), shard(proj_w, 1, r, t), proj_b.clone()]
    params = [p.requires_grad_() for p in params]
    xi = x.clone().requires_grad_()
    y = student_fn(xi, *params, group)
    y.backward(cot)
    return dist.get_rank(), r, t, y.detach(), [xi.grad] + [p.grad for p in params]


def _refuse_swapped_f_g(y, y_full, x, full, r, t, rank):
    """f and g swapped (g entering: the group's copies of x summed, t·x; f leaving: the partial
    sum returned as it is) gives a wrong output of its own shape: name that mistake."""
    import torch
    import torch.nn.functional as F

    if t == 1 or not isinstance(y, torch.Tensor) or y.shape != y_full.shape:
        return
    h = F.gelu(F.linear(t * x, shard(full[0], 0, r, t), shard(full[1], 0, r, t)))
    swapped = F.linear(h, shard(full[2], 1, r, t)) + full[3]
    if (torch.allclose(y, swapped, rtol=1e-4, atol=1e-5)
            and not torch.allclose(y, y_full.detach(), rtol=1e-4, atol=1e-5)):
        raise ExerciseFailed(text("checks_2_2.f_g_swapped", rank=rank))


@graded("ex2_2_parallel_mlp")
def check_parallel_mlp(student_fn):
    """``student_fn(x, fc_w, fc_b, proj_w, proj_b, group)``: the MLP, column then row."""
    import torch
    import torch.nn.functional as F

    names = (text("checks_2_2.name_input_x"), "c_fc.weight", "c_fc.bias", "c_proj.weight",
             "c_proj.bias")
    for label, world, tp, tokens, n_in, _, hidden in _cases():
        with group_hint(tp < world), case(label, hidden=hidden):
            g = torch.Generator().manual_seed(_seed(3))
            x, cot = torch.randn(tokens, n_in, generator=g), torch.randn(tokens, n_in, generator=g)
            full = [torch.randn(4 * n_in, n_in, generator=g), torch.randn(4 * n_in, generator=g),
                    torch.randn(n_in, 4 * n_in, generator=g), torch.randn(n_in, generator=g)]
            xf, *pf = (t.clone().requires_grad_() for t in [x] + full)
            y_full = F.linear(F.gelu(F.linear(xf, pf[0], pf[1])), pf[2], pf[3])
            y_full.backward(cot)
            results = run_on_ranks(_on_rank_mlp, world, (student_fn, tp, x, *full, cot))
            for rank, (_, _, _, y, grads) in enumerate(results):
                r, t = rank % tp, tp  # consecutive TP groups, not what the rank reports
                _refuse_swapped_f_g(y, y_full, x, full, r, t, rank)
                compare_tensors(y_full.detach(), y, rank=rank,
                                what=text("checks_2_2.what_mlp_output"))
                expected = [xf.grad, shard(pf[0].grad, 0, r, t), shard(pf[1].grad, 0, r, t),
                            shard(pf[2].grad, 1, r, t), pf[3].grad]
                _compare_gradients(rank, names, expected, grads, text("checks_2_2.forward_correct"),
                                   text("checks_2_2.advice_f_g"))


@graded("ex2_2_attention_heads")
def check_qkv_shard(student_fn):
    """``student_fn(weight, bias, rank, tp)`` -> this rank's rows of the fused q/k/v weight."""
    import torch

    shown = ((24, 8, 0, 2), (24, 8, 1, 2))
    hidden = []  # rows: a multiple of 3·tp (whole heads of q, k and v on every rank)
    for k, (rows, cols, rank, tp) in enumerate(((48, 16, 3, 4), (96, 32, 1, 8), (12, 4, 0, 1))):
        key = 10_100 + 10 * k
        if tp > 1:  # the last one keeps tp = 1 (nothing to split)
            tp = hidden_int(SECRET_TAG, key, 2, 8, tp)
            rank = hidden_int(SECRET_TAG, key + 1, 0, tp - 1, rank)
        rows = 3 * tp * hidden_int(SECRET_TAG, key + 2, 1, 4, rows // (3 * tp))
        hidden.append((rows, hidden_int(SECRET_TAG, key + 3, 1, 32, cols), rank, tp))
    hidden = tuple(hidden)
    for k, (rows, cols, rank, tp) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks_2_2.case_qkv", rows=rows, rank=rank, tp=tp))
        with case(label, hidden=is_hidden):
            w = torch.arange(rows * cols, dtype=torch.float32).view(rows, cols)
            b = torch.arange(rows, dtype=torch.float32)
            got = student_fn(w, b, rank, tp)
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise ExerciseFailed(text("checks_2_2.return_two_tensors"))
            if tp > 1 and torch.equal(torch.as_tensor(got[0]), w.chunk(tp)[rank]):
                raise ExerciseFailed(text("checks_2_2.contiguous_block", rank=rank,
                                          first=rank * rows // tp,
                                          last=(rank + 1) * rows // tp - 1))
            compare_tensors(shard(w, 0, rank, tp, stride=3), got[0],
                            what=text("checks_2_2.what_weight_shard"))
            compare_tensors(shard(b, 0, rank, tp, stride=3), got[1],
                            what=text("checks_2_2.what_bias_shard"))


def _measured_block_bytes(tp, batch, seq, hidden):
    """Rank body: bytes this rank sends (ring formula per counted collective) in one block step."""
    import torch

    counter = CommCounter()
    config = TinyGPTConfig(vocab_size=96, block_size=seq, n_layer=1, n_head=4, n_embd=hidden)
    block = ParallelBlock(TinyGPT(config, seed=hidden_seed(SECRET_TAG, 0)).transformer.h[0],
                          counter=counter)
    block(torch.randn(batch, seq, hidden, requires_grad=True)).sum().backward()
    sent = sum(ring_all_reduce_bytes_per_rank(e.nbytes, tp) for e in counter.events)
    return sent, len(counter.events)


def _tp_bytes_case(k, case_):
    """Hidden case ``k`` of check_tp_bytes, its sizes drawn from the secret when one is set: a
    large layer, one without tensor parallelism (tp = 1), a small one."""
    b, s, h, t, e, hidden = case_
    key = 10_200 + 10 * k
    low_high = {2: ((1, 4), (512, 4096), (4096, 16384), (2, 8)),
                3: ((1, 4), (16, 128), (16, 128), (1, 1)),
                4: ((1, 7), (1, 9), (1, 16), (2, 8))}[k]
    b, s, h, t = (hidden_int(SECRET_TAG, key + j, low, high, value)
                  for j, ((low, high), value) in enumerate(zip(low_high, (b, s, h, t))))
    e = (2, 4)[hidden_int(SECRET_TAG, key + 4, 0, 1, (2, 4).index(e))]
    return b, s, h, t, e, hidden


@graded("ex2_2_tp_bytes")
def check_tp_bytes(student_fn):
    """``student_fn(batch, seq, hidden, tp, bytes_per_element)`` = bytes each rank sends for
    one TP transformer layer, forward + backward (ring all-reduce)."""
    cases = ((8, 1024, 1600, 8, 2, False), (4, 16, 32, 2, 4, False), (1, 2048, 12288, 8, 2, True),
             (2, 64, 64, 1, 4, True), (3, 5, 8, 4, 4, True))
    cases = tuple(_tp_bytes_case(k, c) if c[-1] else c for k, c in enumerate(cases))
    for k, (b, s, h, t, e, hidden) in enumerate(cases):
        label = (text("checks.case_hidden", n=k - 1) if hidden
                 else text("checks_2_2.case_tp_bytes", b=b, s=s, h=h, t=t, e=e))
        returned = text("checks.what_returned")
        with case(label, hidden=hidden):
            got = as_number(student_fn(b, s, h, t, e), returned)
            expected = tp_layer_comm(batch=b, seq_len=s, hidden=h, tp=t, bytes_per_element=e)
            assert_close(float(expected["sent_bytes_per_rank"]), float(got), what=returned,
                         dtype="float64")
    with case(text("checks_2_2.case_measured_block")):
        sent, count = run_on_ranks(_measured_block_bytes, 2, (2, 4, 8, 32))[0]
        got = as_number(student_fn(4, 8, 32, 2, 4), text("checks.what_returned"))
        assert_close(float(sent), float(got),
                     what=text("checks_2_2.what_measured_bytes", count=count), dtype="float64")
