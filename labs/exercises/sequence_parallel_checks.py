"""Check of notebook 2.2's 练习 7: the sequence-parallel MLP, written end to end on real ranks
(``check_sequence_parallel_mlp(GatherFromSP, ScatterToSP, sp_mlp_forward)``, ex2_2_sequence_parallel_mlp;
served to the notebook by :mod:`labs.exercises.tensor_parallel_checks`).

Owns: 练习 7's cases, rank body, expected values, the refusal of the ready-made SP regions and of
every collective other than an all-gather and a reduce-scatter (however reached).
Must not: import the grader or the planner widget, print (the verdict is labs.exercises.checks'),
or keep process groups in globals.
"""
from __future__ import annotations

from labs.exercises import routes
from labs.exercises.checks import ExerciseFailed, case, compare_tensors, graded, msg
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int
from labs.messages import text
from labs.tensor_parallel.layers import shard
from labs.exercises.tensor_parallel_common import (SECRET_TAG, compare_gradients as _compare_gradients,
    group_hint, group_rank as _group_rank, seed as _seed, tp_group as _group)

__all__ = ["check_sequence_parallel_mlp"]


# --- exercise 7: the sequence-parallel MLP, written end to end on real ranks ----------------

# (label, world size, tp group size, batch, sequence length, hidden size, hidden case);
# labels are lazy messages
SP_CASES = ((msg("checks_2_2.case_sp", n=1, world_size=2, seq=4), 2, 2, 2, 4, 8, False),
            (msg("checks_2_2.case_sp", n=2, world_size=4, seq=8), 4, 4, 2, 8, 8, False),
            # 6 positions: a multiple of t = 2, not of 4
            (msg("checks_2_2.case_hidden_odd_positions", n=1, world_size=2), 2, 2, 3, 6, 4, True),
            # 3 positions per rank
            (msg("checks_2_2.case_hidden_odd_positions", n=2, world_size=4), 4, 4, 1, 12, 12, True),
            # 4 ranks, two TP groups {0, 1} {2, 3}, each on its own data; 10 positions
            (msg("checks_2_2.case_hidden_two_groups", n=3, world_size=4), 4, 2, 2, 10, 6, True))

#: the collectives the two Functions may use (any spelling of an all-gather and a
#: reduce-scatter); every other route to a collective is refused (labs.exercises.routes), the
#: all-reduce in particular: all-reduce + slice is not the structure asked (twice the bytes)
SP_ALLOWED = ("all_gather_single", "all_gather_into_tensor", "all_gather",
              "reduce_scatter_single", "reduce_scatter_tensor", "reduce_scatter")

#: the deprecation warnings of torch's old names (all_gather_into_tensor, reduce_scatter_tensor):
#: a right answer using them is not buried under one warning per rank and call
_DEPRECATED = r"`torch\.distributed\.\w+` is deprecated"

#: what the student may not call inside the check: the course's sequence-parallel operators and
#: its gather/scatter helpers, and torch's autograd-aware collectives (``torch.distributed.nn``)
SP_READY_MADE = (("labs.tensor_parallel.comm", ("GatherFromSequenceParallelRegion",
                                                "ReduceScatterToSequenceParallelRegion"),
                  ("gather_from_sequence_parallel_region",
                   "reduce_scatter_to_sequence_parallel_region", "all_gather_along",
                   "reduce_scatter_along")),
                 ("torch.distributed.nn.functional", ("_AllGather", "_AllGatherBase",
                                                      "_Reduce_Scatter"),
                  ("all_gather", "reduce_scatter", "_all_gather_base")))


class _SpRefused:
    """Inside a rank: the ready-made operators of SP_READY_MADE raise when used."""

    def __enter__(self):
        import importlib

        self.saved = []
        for module_name, classes, functions in SP_READY_MADE:
            module = importlib.import_module(module_name)
            for name in classes + functions:
                shown = f"{module_name}.{name}"

                def refuse(*args, _shown=shown, **kwargs):
                    raise ExerciseFailed(text("checks_2_2.ready_made_sp", shown=_shown))
                if name in classes:
                    cls = getattr(module, name)
                    self.saved.append((cls, "forward", vars(cls)["forward"]))
                    cls.forward = staticmethod(refuse)
                else:
                    self.saved.append((module, name, getattr(module, name)))
                    setattr(module, name, refuse)
        return self

    def __exit__(self, *exc):
        for owner, name, original in reversed(self.saved):
            setattr(owner, name, original)
        return False


def _sp_data(seed, batch, seq, hidden):
    """The full (unsharded) input, MLP parameters and output cotangent of one TP group."""
    import torch

    g = torch.Generator().manual_seed(seed)
    return dict(x=torch.randn(batch, seq, hidden, generator=g),
                fc_w=torch.randn(4 * hidden, hidden, generator=g) / hidden ** 0.5,
                fc_b=torch.randn(4 * hidden, generator=g),
                proj_w=torch.randn(hidden, 4 * hidden, generator=g) / (2 * hidden ** 0.5),
                proj_b=torch.randn(hidden, generator=g),
                cot=torch.randn(batch, seq, hidden, generator=g),
                # per rank of the group: an input of the full length and a cotangent of a shard,
                # to check the two autograd Functions on their own
                pieces=[(torch.randn(batch, seq, hidden, generator=g),
                         torch.randn(batch, seq, hidden, generator=g)) for _ in range(4)])


def _sp_seed(rank, tp):
    return _seed(100 + rank // tp)  # one data set per TP group


def _sp_cases():
    """SP_CASES, the hidden cases' sizes drawn from the secret when one is set, each keeping
    what it tests: a sequence that 2 ranks split evenly and 4 would not (2 × an odd number of
    positions per rank); 4 ranks with an odd number of positions each; two TP groups of 2 with
    an odd number of positions per rank."""
    out = []
    for k, (label, world, tp, batch, seq, hidden, is_hidden) in enumerate(SP_CASES):
        if is_hidden:
            key = 10_300 + 10 * k
            per_rank = 2 * hidden_int(SECRET_TAG, key, 0, 2, (seq // tp - 1) // 2) + 1  # odd
            batch = hidden_int(SECRET_TAG, key + 1, 1, 3, batch)
            seq = tp * per_rank
            hidden = hidden_int(SECRET_TAG, key + 2, 2, 12, hidden)
        out.append((label, world, tp, batch, seq, hidden, is_hidden))
    return tuple(out)


def _sp_on_rank(gather_cls, scatter_cls, student_fn, tp, batch, seq, hidden):
    """Rank body: the two Functions on their own, then the student's block; what came out."""
    import warnings

    import torch
    import torch.distributed as dist

    group = _group(tp)
    r, t = _group_rank(group)
    data = _sp_data(_sp_seed(dist.get_rank(), tp), batch, seq, hidden)
    out = dict(rank=dist.get_rank(), r=r, t=t)

    def refuse(shown):
        raise ExerciseFailed(text("checks_2_2.sp_forbidden_call", shown=shown))

    with _SpRefused(), routes.guarded(refuse, allowed=SP_ALLOWED), \
            routes.borrowed(("labs.tensor_parallel.comm",)) as seen, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_DEPRECATED, category=FutureWarning)
        # the all-gather along the sequence: forward, then backward of a cotangent of the full length
        xi = shard(data["pieces"][0][0], 1, r, t).requires_grad_()  # one tensor, split
        y = gather_cls.apply(xi, group)
        out["gather"] = y.detach().clone() if isinstance(y, torch.Tensor) else y
        if isinstance(y, torch.Tensor) and y.requires_grad and y.shape == data["cot"].shape:
            y.backward(data["pieces"][r][1])
        out["gather_grad"] = xi.grad
        # the reduce-scatter along the sequence: forward of a full-length input, backward of a shard
        xi = data["pieces"][r][0].clone().requires_grad_()
        y = scatter_cls.apply(xi * 1.0, group)
        out["scatter"] = y.detach().clone() if isinstance(y, torch.Tensor) else y
        cot = shard(data["pieces"][r][1], 1, r, t)
        if isinstance(y, torch.Tensor) and y.requires_grad and y.shape == cot.shape:
            y.backward(cot)
        out["scatter_grad"] = xi.grad
        # the block: my sequence shard in, my sequence shard out
        params = [shard(data["fc_w"], 0, r, t), shard(data["fc_b"], 0, r, t),
                  shard(data["proj_w"], 1, r, t), data["proj_b"].clone()]
        params = [p.requires_grad_() for p in params]
        xi = shard(data["x"], 1, r, t).requires_grad_()
        y = student_fn(xi, *params, group)
        cot = shard(data["cot"], 1, r, t)
        out["y"] = y.detach().clone() if isinstance(y, torch.Tensor) else y
        if isinstance(y, torch.Tensor) and y.requires_grad and y.shape == cot.shape:
            y.backward(cot)
        out["grads"] = [xi.grad] + [p.grad for p in params]
        if seen:  # the course's operators reached another way (a reloaded module, its source)
            raise ExerciseFailed(text("checks_2_2.ready_made_sp", shown=seen[0]))
    return out


def _sp_expected(tp, batch, seq, hidden, rank):
    """The full MLP on one process, for the group of global ``rank``."""
    import torch.nn.functional as F

    data = _sp_data(_sp_seed(rank, tp), batch, seq, hidden)
    full = [data[k].clone().requires_grad_() for k in ("x", "fc_w", "fc_b", "proj_w", "proj_b")]
    y = F.linear(F.gelu(F.linear(full[0], full[1], full[2])), full[3], full[4])
    y.backward(data["cot"])
    return data, y.detach(), [p.grad for p in full]


def _require_tensor(value, what, rank):
    import torch

    if not isinstance(value, torch.Tensor):
        raise ExerciseFailed(text("checks_2_2.not_a_tensor", rank=rank, what=what,
                                  got_type=type(value).__name__))


def _check_sp_case(gather_cls, scatter_cls, student_fn, world, tp, batch, seq, hidden):
    import torch

    results = run_on_ranks(_sp_on_rank, world,
                           (gather_cls, scatter_cls, student_fn, tp, batch, seq, hidden))
    for rank, res in enumerate(results):
        r, t = rank % tp, tp  # consecutive TP groups, not what the rank reports
        data, y_full, grads_full = _sp_expected(tp, batch, seq, hidden, rank)
        pieces = [data["pieces"][k] for k in range(t)]
        # SeqAllGather: forward all-gather along dim 1, backward reduce-scatter along dim 1
        _require_tensor(res["gather"], text("checks_2_2.what_gather_forward_call"), rank)
        compare_tensors(pieces[0][0], res["gather"], rank=rank,
                        what=text("checks_2_2.what_gather_forward"))
        expected = shard(torch.stack([p[1] for p in pieces]).sum(0), 1, r, t)
        if res["gather_grad"] is None:
            raise ExerciseFailed(text("checks_2_2.gather_no_grad", rank=rank))
        compare_tensors(expected, res["gather_grad"], rank=rank,
                        what=text("checks_2_2.what_gather_backward"))
        # SeqReduceScatter: forward reduce-scatter along dim 1, backward all-gather along dim 1
        _require_tensor(res["scatter"], text("checks_2_2.what_scatter_forward_call"), rank)
        expected = shard(torch.stack([p[0] for p in pieces]).sum(0), 1, r, t)
        compare_tensors(expected, res["scatter"], rank=rank,
                        what=text("checks_2_2.what_scatter_forward"))
        if res["scatter_grad"] is None:
            raise ExerciseFailed(text("checks_2_2.scatter_no_grad", rank=rank))
        expected = torch.cat([shard(p[1], 1, k, t) for k, p in enumerate(pieces)], dim=1)
        compare_tensors(expected, res["scatter_grad"], rank=rank,
                        what=text("checks_2_2.what_scatter_backward"))
        # the block against the full MLP
        y = res["y"]
        _require_tensor(y, "sp_mlp_forward", rank)
        want = tuple(shard(y_full, 1, r, t).shape)
        if tuple(y.shape) != want:
            raise ExerciseFailed(text("checks_2_2.sp_wrong_shape", rank=rank, got=tuple(y.shape),
                                      want=want))
        compare_tensors(shard(y_full, 1, r, t), y, rank=rank,
                        what=text("checks_2_2.what_sp_output"))
        expected = [shard(grads_full[0], 1, r, t), shard(grads_full[1], 0, r, t),
                    shard(grads_full[2], 0, r, t), shard(grads_full[3], 1, r, t),
                    shard(data["cot"], 1, r, t).sum((0, 1))]
        names = (text("checks_2_2.name_x_shard"),
                 *(text("checks_2_2.name_shard", name=name)
                   for name in ("c_fc.weight", "c_fc.bias", "c_proj.weight")),
                 text("checks_2_2.name_proj_bias"))
        _compare_gradients(rank, names, expected, res["grads"], text("checks_2_2.output_correct"),
                           text("checks_2_2.advice_sp_grads"))


@graded("ex2_2_sequence_parallel_mlp")
def check_sequence_parallel_mlp(gather_cls, scatter_cls, student_fn):
    """``SeqAllGather`` / ``SeqReduceScatter`` (autograd Functions, ``apply(x, group)``, along
    the sequence dim 1) and ``student_fn(x_shard, fc_w, fc_b, proj_w, proj_b, group)``: the
    sequence-parallel MLP, (B, T/t, C) in and out, against the full MLP on one process."""
    for label, world, tp, batch, seq, hidden, is_hidden in _sp_cases():
        with group_hint(tp < world), case(label, hidden=is_hidden):
            _check_sp_case(gather_cls, scatter_cls, student_fn, world, tp, batch, seq, hidden)
