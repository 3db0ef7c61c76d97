"""The check of notebook 2.3's exercise 6, the 1F1B executor, on real ranks (served to the
notebook by labs.exercises.pipeline_checks): each rank runs one stage of a small model with the
student's loop; the loss and every stage's gradients against one process running the whole
model, then :data:`ONE_F_ONE_B` over what each rank did (the stage module handed in marks each
F and B with its micro-batch: F_i then B_i, or stage 0's order everywhere, is another schedule).
Owns: exercise 6's cases, rank body, stage module and mechanism. Must not: import the grader,
or print (the verdict is labs.exercises.checks').
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn.functional as fn
from torch import nn

from labs import pipeline as pp
from labs.exercises import trace
from labs.exercises.checks import ExerciseFailed, Message, assert_close, compare_tensors, graded, \
    msg
from labs.exercises.invariants import count, hold, only, order, peers
from labs.exercises.ranks import check_cases
from labs.exercises.secret import drawing, hidden_seed
from labs.messages import text

__all__ = ["check_1f1b_executor", "ONE_F_ONE_B", "RANK_EXERCISES"]

TAG = "2.3"  # the domain of 2.3's hidden seeds and sizes (labs.exercises.secret)


@dataclass(frozen=True)
class Case:
    label: Message
    n_stages: int
    n_micro: int
    micro: int  # rows of one micro-batch
    width: int
    out: int
    pairs: bool = False  # two pipelines {0, 1} and {2, 3}, each with its own model and data
    hidden: bool = False
    seed: int = 0  # pipeline k's model and data: seed + k

    @property
    def world_size(self) -> int:
        return 2 * self.n_stages if self.pairs else self.n_stages

    def stage(self, rank: int) -> int:
        return rank % self.n_stages

    def neighbours(self, rank: int) -> set:
        return {rank + d for d in (-1, 1) if 0 <= self.stage(rank) + d < self.n_stages}


def _stage_order(c: Case, rank: int) -> list:
    return [(a.kind, a.mb) for a in pp.one_f_one_b_order(c.n_stages, c.n_micro, c.stage(rank))]


#: 1F1B on real ranks: every stage's F/B in 1F1B's order for that stage; point-to-point only,
#: with the neighbouring stages only (a barrier carries nothing), one activation and one
#: gradient per micro-batch each way.
ONE_F_ONE_B = (order(_stage_order, kinds=("F", "B")), only("send", "recv", "barrier"),
               peers(lambda c, rank: c.neighbours(rank)),
               *(count(op, lambda c, rank: c.n_micro * len(c.neighbours(rank)))
                 for op in ("send", "recv")))


def executor_cases() -> list[Case]:
    """Two shown, then hidden (sizes drawn, <= 4 ranks): m < p, m > p, m = 1, two pipelines."""
    draw = drawing(TAG, 14_000)
    few, more, one = draw(0, 3, 4, 4), draw(2, 2, 4, 4), draw(4, 2, 4, 2)
    out = [Case(msg("checks.case_numbered", n=n, what=msg("checks_2_3.executor_case", stages=p,
                                                          micro=4)), p, 4, 3, 8, 4)
           for n, p in ((1, 2), (2, 4))]
    for k, (p, m, pairs) in enumerate(((few, draw(1, 2, few - 1, 2), False),
                                       (more, draw(3, more + 1, 9, 7), False), (one, 1, False),
                                       (2, draw(5, 2, 8, 5), True)), 1):
        label = (msg("checks_2_3.case_hidden_pipelines", n=k, stages=p) if pairs else
                 msg("checks_2_3.case_hidden_executor", n=k, stages=p, micro=m))
        out.append(Case(label, p, m, draw(10 + 3 * k, 1, 4, 3), draw(11 + 3 * k, 3, 8, 6),
                        draw(12 + 3 * k, 1, 6, 4), pairs, True, hidden_seed(TAG, 100 * k)))
    return out


def _model(c: Case, k: int):
    """Pipeline k's stages (Linear + Tanh, the last + Linear(width, out)), batch; RNG untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(c.seed + k)
        stages = [nn.Sequential(nn.Linear(c.width, c.width), nn.Tanh())
                  for _ in range(c.n_stages)]
        stages[-1].append(nn.Linear(c.width, c.out))
        rows = c.n_micro * c.micro
        return stages, torch.randn(rows, c.width), torch.randn(rows, c.out)


class _Marked(torch.autograd.Function):
    """Identity on a stage's output whose backward marks B of its micro-batch."""

    @staticmethod
    def forward(ctx, y, mb):
        ctx.mb = mb
        return y.view_as(y)

    @staticmethod
    def backward(ctx, grad):
        if trace.current() is not None:
            trace.current().mark("B", ctx.mb)
        return grad, None


class _MarkedStage(torch.nn.Module):
    """The stage module the student's loop gets: marks F (and, through its output, B) of each
    micro-batch on the rank's trace, the micro-batch told by its input's data."""

    def __init__(self, inner, stage: int, inputs: list):
        super().__init__()
        self.inner, self.stage, self.inputs = inner, stage, inputs

    def micro_batch(self, x):
        gaps = [float((x.detach() - e).abs().max()) if x.shape == e.shape else float("inf")
                for e in self.inputs]
        best = min(range(len(gaps)), key=gaps.__getitem__)
        return best if gaps[best] < 1e-4 else "?"

    def forward(self, x):
        if self.stage > 0 and not x.requires_grad:
            raise ExerciseFailed(text("checks_2_3.no_grad_input", stage=self.stage))
        mb = self.micro_batch(x)
        if trace.current() is not None:
            trace.current().mark("F", mb)
        return _Marked.apply(self.inner(x), mb)


def _body(student_fn, c: Case, run):
    """Rank body: this rank's stage (of pipeline rank // p), its micro-batches, the loop."""
    # two pipelines: every rank creates both groups, in the same order, and destroys them
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])] if c.pairs else []
    group = groups[dist.get_rank() // 2] if groups else None
    k, stage = divmod(dist.get_rank(), c.n_stages)
    stages, x, y = _model(c, k)
    with torch.no_grad():  # what each micro-batch brings to this stage
        h = torch.nn.Sequential(*stages[:stage])(x)
    module = _MarkedStage(stages[stage], stage, list(h.split(c.micro)))
    inputs = list(x.split(c.micro)) if stage == 0 else None
    targets = list(y.split(c.micro)) if stage == c.n_stages - 1 else None
    loss = run(student_fn, module, inputs, targets, fn.mse_loss, c.n_micro, (c.micro, c.width),
               group=group)
    for g in groups:
        dist.destroy_process_group(g)
    loss = loss.item() if torch.is_tensor(loss) and loss.numel() == 1 else loss
    return {"loss": loss, "grads": {n: q.grad for n, q in module.inner.named_parameters()}}


def _judge(c: Case, values, traces) -> None:
    """Per pipeline: its loss and every stage's gradients against one process; the mechanism."""
    for k in range(c.world_size // c.n_stages):
        stages, x, y = _model(c, k)
        loss = fn.mse_loss(torch.nn.Sequential(*stages)(x), y)
        loss.backward()
        for stage, module in enumerate(stages):
            rank = k * c.n_stages + stage
            for name, q in module.named_parameters():
                compare_tensors(q.grad, values[rank]["grads"][name], rank=rank,
                                factors={"m": c.n_micro},
                                what=text("checks_2_3.what_param_grad", stage=stage, name=name))
        last = (k + 1) * c.n_stages - 1
        assert_close(loss.item(), values[last]["loss"], what=text("checks_2_3.what_loss"),
                     rank=last, factors={"m": c.n_micro})
    hold(ONE_F_ONE_B, c, traces)


#: The exercise on ranks (tests/catalog/test_secrets.py runs it on many secrets at once).
RANK_EXERCISES = {"ex2_3_1f1b_executor": (executor_cases, _body, _judge)}


@graded("ex2_3_1f1b_executor")
def check_1f1b_executor(student_fn):
    """student_fn(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
    group=None) -> the batch's loss on the last stage; runs this rank's 1F1B schedule."""
    check_cases("ex2_3_1f1b_executor", student_fn, *RANK_EXERCISES["ex2_3_1f1b_executor"],
                timeout=30.0)
