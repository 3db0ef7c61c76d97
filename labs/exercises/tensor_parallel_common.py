"""What notebook 2.2's checks (tensor_parallel_checks, sequence_parallel_checks) share: the case,
the TP group as an invariant, a case's parts cut out of a rank's trace, the full layer on one
process (output, gradients, FLOPs: the ``flops`` invariant's reference), the comparison of a
layer's output and gradients. Must not: import the checks, the grader; print; keep groups.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from labs.exercises import trace
from labs.exercises.checks import ExerciseFailed, Message, compare_tensors
from labs.exercises.invariants import groups
from labs.messages import joined, text

__all__ = ["TAG", "Case", "members", "IN_GROUP", "Mark", "parts", "forward_backward", "traced",
           "mlp", "compare_layer"]

#: the domain of 2.2's hidden seeds and sizes (labs.exercises.secret)
TAG = "2.2"


@dataclass(frozen=True)
class Case:
    """A case on ``world_size`` ranks in TP groups of ``tp`` consecutive ranks."""
    label: Message
    world_size: int
    tp: int
    sizes: tuple  # (tokens, in, out) of a layer; (batch, sequence, C) of the SP block
    hidden: bool = False
    seed: int = 0
    kind: str = ""  # the layer: "conjugate" (f and g), "column", "row", "mlp", "sp"


def members(tp: int, rank: int) -> list:
    """The TP group of global ``rank``: ``tp`` consecutive ranks (tensor_parallel_group's)."""
    return list(range(rank - rank % tp, rank - rank % tp + tp))


#: Every collective runs over the rank's own TP group (``c.tp``: the group's size).
IN_GROUP = groups(lambda c, rank, comm: {"tp": members(c.tp, rank)})


class Mark:
    """Called through a case's ``run``: the rank's trace notes that part ``name`` starts here."""

    def __call__(self, name: str) -> None:
        trace.current().mark("part", name)


def parts(traces) -> dict:
    """``{part: [each rank's Trace of that part]}``: the traces cut at their :class:`Mark`\\ s."""
    found: dict = {}
    for data in traces:
        whole = trace.Trace.from_data(data)
        cuts = [(seq, name) for seq, kind, name in whole.marks if kind == "part"]
        for (start, name), (end, _) in zip(cuts, cuts[1:] + [(float("inf"), None)]):
            found.setdefault(name, []).append(trace.Trace(
                whole.rank, [x for x in whole.comms if start < x.seq < end],
                [x for x in whole.products if start < x.seq < end]))
    return found


def forward_backward(run, fn, args: tuple, cot):
    """On a rank: ``fn(*args)`` and, when its output can take it, the backward of ``cot``, both
    through ``run`` (watched, the course's answers refused); the output, detached."""
    y = run(fn, *args)
    if isinstance(y, torch.Tensor) and y.requires_grad and y.shape == cot.shape:
        run(y.backward, cot)
    return y.detach() if isinstance(y, torch.Tensor) else y


def traced(fn, tensors, cot):
    """The full layer ``fn(*tensors)`` on this process, forward and backward of ``cot``,
    watched like a rank: (output, the tensors' gradients, FLOPs of its matrix products)."""
    leaves = [t.detach().clone().requires_grad_() for t in tensors]
    with trace.watching() as record:
        y = fn(*leaves)
        y.backward(cot)
    return y.detach(), [t.grad for t in leaves], record.flops()


def mlp(x, fc_w, fc_b, proj_w, proj_b):
    """The GPT MLP, c_proj(gelu(c_fc(x))), on whole tensors."""
    return F.linear(F.gelu(F.linear(x, fc_w, fc_b)), proj_w, proj_b)


def compare_layer(rank, t, want_y, y, what: str, names, expected, grads, advice: str):
    """The output, then each named gradient: one failure listing the wrong ones and the right."""
    compare_tensors(want_y, y, rank=rank, what=what, factors={"t": t})
    wrong, right = [], []
    for name, exp, got in zip(names, expected, grads):
        try:
            if got is None:
                raise ExerciseFailed(text("checks_2_2.no_grad", name=name))
            compare_tensors(exp, got, what=text("checks_2_2.what_named_grad", name=name))
            right.append(name)
        except ExerciseFailed as exc:
            wrong.append(str(exc))
    if wrong:
        if not right:
            raise ExerciseFailed(text("checks_2_2.all_gradients_wrong", rank=rank, advice=advice,
                                      wrong=joined(wrong, "clauses")))
        raise ExerciseFailed(text("checks_2_2.wrong_gradients", rank=rank, advice=advice,
                                  wrong=joined(wrong, "clauses"), right=joined(right)))
