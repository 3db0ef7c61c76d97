"""The check of notebook 2.3's 练习 6, the 1F1B executor, on real ranks (served to the notebook
by labs.exercises.pipeline_checks, whose module the notebook imports).

Each rank runs one stage of a small model with the student's loop; the check compares the loss
and every stage's gradients with one process running the whole model, and verifies the schedule
on EVERY stage: stage s of p, with m micro-batches, never holds more than min(p - s, m)
micro-batches in flight (forwarded, not yet backwarded), 1F1B's own bound; so a loop that gives
every stage stage 0's order (p in flight on the last stage instead of 1) is refused. The lab's
executor is refused however it is reached (its code objects are swapped while the student runs).

Owns: 练习 6's cases and rank body. Must not: import the grader, or print (the verdict is
labs.exercises.checks').
"""

from __future__ import annotations

import torch

from labs.exercises.checks import ExerciseFailed, assert_close, case, graded
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text
from labs.pipeline import executor

__all__ = ["check_1f1b_executor", "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch; a solution needs well under 1 s
SECRET_TAG = "2.3"  # the domain of 2.3's hidden seeds (as labs.exercises.pipeline_checks)


def _seed(seed: int) -> int:
    """``seed`` itself, or the instructor's secret's seed for it (labs.exercises.secret)."""
    return hidden_seed(SECRET_TAG, seed)


def _int(key: int, low: int, high: int, default: int) -> int:
    """A hidden case's number: ``default`` without a secret, else one in [low, high]."""
    return hidden_int(SECRET_TAG, key, low, high, default)


# --- exercise 6: the 1F1B executor on real ranks -----------------------------------------

def _pipeline_model(seed: int, n_stages: int, width: int, out: int) -> list[torch.nn.Module]:
    """The stages of one small model, the same on every process for the same arguments:
    stage s = Linear(width, width) + Tanh, the last one followed by Linear(width, out)."""
    from torch import nn

    torch.manual_seed(_seed(seed))
    stages = [nn.Sequential(nn.Linear(width, width), nn.Tanh()) for _ in range(n_stages)]
    stages[-1].append(nn.Linear(width, out))
    return stages


def _pipeline_batch(seed: int, n_micro: int, micro: int, width: int, out: int):
    g = torch.Generator().manual_seed(_seed(1000 + seed))
    return (torch.randn(n_micro * micro, width, generator=g),
            torch.randn(n_micro * micro, out, generator=g))


class _InFlight(torch.autograd.Function):
    """Identity on a stage's output whose backward marks the micro-batch as done."""

    @staticmethod
    def forward(ctx, y, counter):
        ctx.counter = counter
        return y.view_as(y)

    @staticmethod
    def backward(ctx, grad):
        ctx.counter.live -= 1
        return grad, None


class _CountedStage(torch.nn.Module):
    """The stage module the student gets: counts micro-batches forwarded and not yet
    backwarded (the activations kept alive), and notices inputs that cannot get a gradient."""

    def __init__(self, inner, stage: int):
        super().__init__()
        self.inner, self.stage = inner, stage
        self.live = self.peak = 0

    def forward(self, x):
        if self.stage > 0 and not x.requires_grad:
            raise ExerciseFailed(text("checks_2_3.no_grad_input", stage=self.stage))
        y = self.inner(x)
        self.live += 1
        self.peak = max(self.peak, self.live)
        return _InFlight.apply(y, self)


def _refuse_executor(*args, **kwargs):
    """Stands in for the body of labs.pipeline.executor.run_schedule while the student runs
    (its code runs with the executor's globals, so it imports what it needs)."""
    # why here: this code runs as run_schedule's, with the executor's globals (no ExerciseFailed)
    from labs.exercises.checks import ExerciseFailed as Refused
    from labs.messages import text  # why here: as above (not relying on the executor's imports)

    raise Refused(text("checks_2_3.no_ready_executor"))


def _executor_on_rank(student_fn, n_stages, n_micro, micro, width, out, pairs):
    """Inside a rank: this rank's stage of the model, its micro-batches, the student's loop."""
    import torch.distributed as dist
    import torch.nn.functional as fn

    group, seed = None, 0
    if pairs:  # two independent pipelines {0, 1} and {2, 3}, each with its own model and data
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        seed = dist.get_rank() // 2
        group = groups[seed]
    stage = dist.get_rank(group)
    stage_module = _CountedStage(_pipeline_model(seed, n_stages, width, out)[stage], stage)
    x, y = _pipeline_batch(seed, n_micro, micro, width, out)
    inputs = list(x.split(micro)) if stage == 0 else None
    targets = list(y.split(micro)) if stage == n_stages - 1 else None
    # the executor's own code objects are swapped, so every way of reaching them is refused
    ready = (executor.run_schedule, executor.run_actions)
    codes = [f.__code__ for f in ready]
    for f in ready:
        f.__code__ = _refuse_executor.__code__
    try:
        loss = student_fn(stage_module, inputs, targets, fn.mse_loss, n_micro, (micro, width),
                          group=group)
    finally:
        for f, code in zip(ready, codes):
            f.__code__ = code
    if torch.is_tensor(loss):
        loss = loss.detach().clone() if loss.numel() == 1 else loss
    return dict(seed=seed, stage=stage, loss=loss, peak=stage_module.peak,
                grads={name: None if q.grad is None else q.grad.clone()
                       for name, q in stage_module.inner.named_parameters()})


def _executor_expected(seed, n_stages, n_micro, micro, width, out):
    """One process, the whole model, the whole batch: the loss and every stage's gradients."""
    import torch.nn.functional as fn

    stages = _pipeline_model(seed, n_stages, width, out)
    x, y = _pipeline_batch(seed, n_micro, micro, width, out)
    h = x
    for stage in stages:
        h = stage(h)
    loss = fn.mse_loss(h, y)
    loss.backward()
    return loss.detach(), [{n: q.grad.clone() for n, q in s.named_parameters()} for s in stages]


def _stage_named(stage, members, pairs) -> str:
    """The stage a sentence is about (None: the last one), naming its process group when there
    are two pipelines: "stage 1 ", "最后一个 stage（进程组 [2, 3]）"."""
    if stage is None:
        return (text("checks_2_3.last_stage_in_group", members=members) if pairs
                else text("checks_2_3.last_stage"))
    return (text("checks_2_3.stage_in_group", stage=stage, members=members) if pairs
            else text("checks_2_3.stage", stage=stage))


def _check_executor_case(student_fn, n_stages, n_micro, micro, width, out, pairs):
    world_size = 2 * n_stages if pairs else n_stages
    results = run_on_ranks(_executor_on_rank, world_size,
                           (student_fn, n_stages, n_micro, micro, width, out, pairs),
                           timeout=CHECK_TIMEOUT)
    groups = ([list(range(k, k + n_stages)) for k in range(0, world_size, n_stages)] if pairs
              else [list(range(world_size))])
    for seed, members in enumerate(groups):  # pipeline k runs seed k (as _executor_on_rank)
        loss, grads = _executor_expected(seed, n_stages, n_micro, micro, width, out)
        for stage, rank in enumerate(members):
            got = results[rank]
            who = _stage_named(stage, members, pairs)
            missing = [n for n, g in got["grads"].items() if g is None]
            if missing:
                raise ExerciseFailed(text("checks_2_3.param_no_grad", who=who, name=missing[0]))
            for name, value in grads[stage].items():
                g = got["grads"][name]
                if n_micro > 1 and torch.allclose(g, value * n_micro, rtol=1e-4, atol=1e-6):
                    raise ExerciseFailed(text("checks_2_3.grad_times_microbatches", who=who,
                                              name=name, n_micro=n_micro))
                assert_close(value, g, rank=rank,
                             what=text("checks_2_3.what_param_grad", who=who, name=name))
        last, who = results[members[-1]], _stage_named(None, members, pairs)
        if last["loss"] is None:
            raise ExerciseFailed(text("checks_2_3.loss_none", who=who))
        value = last["loss"]
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                or torch.is_tensor(value) and value.numel() == 1):
            raise ExerciseFailed(text("checks_2_3.loss_not_a_number", who=who,
                                      type=type(value).__name__))
        assert_close(loss, torch.as_tensor(value, dtype=loss.dtype).reshape(loss.shape),
                     what=text("checks_2_3.what_loss", who=who), rank=members[-1])
        for stage, rank in enumerate(members):  # 1F1B's bound, on every stage
            peak, bound = results[rank]["peak"], min(n_stages - stage, n_micro)
            if peak > bound:
                raise ExerciseFailed(text("checks_2_3.executor_stage_in_flight",
                                          who=_stage_named(stage, members, pairs), peak=peak,
                                          bound=bound, p=n_stages, s=stage, m=n_micro))


def _executor_case(case_):
    """A hidden case of check_1f1b_executor, its sizes drawn from the secret when one is set,
    keeping what it tests (at most 4 ranks): fewer micro-batches than stages (at least 2), more,
    a single one, and two pipelines of 2 stages on 4 ranks."""
    number, n_stages, n_micro, micro, width, out, pairs, hidden = case_
    key = 14_000 + 10 * number
    if pairs:
        n_micro = _int(key, 2, 8, n_micro)
    elif n_micro == 1:
        n_stages = _int(key, 2, 4, n_stages)
    elif n_micro < n_stages:
        n_stages = _int(key, 3, 4, n_stages)
        n_micro = _int(key + 1, 2, n_stages - 1, n_micro)
    else:
        n_stages = _int(key, 2, 4, n_stages)
        n_micro = _int(key + 1, n_stages + 1, 9, n_micro)
    micro, width, out = (_int(key + 2, 1, 4, micro), _int(key + 3, 3, 8, width),
                         _int(key + 4, 1, 6, out))
    return number, n_stages, n_micro, micro, width, out, pairs, hidden


@graded("ex2_3_1f1b_executor")
def check_1f1b_executor(student_fn):
    """student_fn(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
    group=None) -> the batch's loss on the last stage; runs this rank's 1F1B schedule."""
    # (number, stages, micro-batches, micro-batch size, width, output size, two pipelines, hidden)
    cases = [(1, 2, 4, 3, 8, 4, False, False),
             (2, 4, 4, 2, 8, 4, False, False),
             (1, 4, 2, 3, 6, 5, False, True),  # fewer micro-batches than stages
             (2, 4, 7, 2, 5, 3, False, True),  # more micro-batches than stages
             (3, 2, 1, 4, 6, 2, False, True),  # a single micro-batch
             # 4 ranks, two pipelines {0, 1} and {2, 3}: send/recv take global ranks
             (4, 2, 5, 2, 7, 3, True, True)]
    cases = [_executor_case(c) if c[-1] else c for c in cases]
    for number, n_stages, n_micro, micro, width, out, pairs, hidden in cases:
        if not hidden:
            label = text("checks.case_numbered", n=number, what=text(
                "checks_2_3.executor_case", stages=n_stages, micro=n_micro))
        elif pairs:  # says what the case is, so that a missing group= is found
            label = text("checks_2_3.case_hidden_pipelines", n=number, stages=n_stages)
        else:
            label = text("checks_2_3.case_hidden_executor", n=number, stages=n_stages,
                         micro=n_micro)
        try:
            with case(label, hidden=hidden):
                _check_executor_case(student_fn, n_stages, n_micro, micro, width, out, pairs)
        except ExerciseFailed as exc:
            if pairs and "group" in str(exc):  # the same exception, the likely cause added
                exc.args = (text("checks_2_3.group_missing_likely", error=str(exc)),)
            raise
