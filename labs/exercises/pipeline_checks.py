"""Checks of the graded exercises of notebook 2.3 (pipeline parallelism). Must not: import the
grader or the planner widget, or print (the verdict is labs.exercises.checks').

The student's functions are compared with the lab's reference (``labs.pipeline``) on shown
and hidden cases; the schedules are also run through the simulator, so a wrong order is
reported with what it would do (deadlock, too many micro-batches in flight)::

    check_gpipe_order(gpipe_order)                  # ex2_3_gpipe_order, 2 points
    check_1f1b_order(one_f_one_b_order)             # ex2_3_1f1b_order, 3 points
    check_bubble_fraction(bubble_fraction)          # ex2_3_bubble, 1 point
    check_min_microbatches(min_microbatches)        # ex2_3_min_microbatches, 1 point
    check_balanced_partition(balanced_partition)    # ex2_3_balanced_partition, 3 points
    check_1f1b_executor(my_1f1b_run)                 # ex2_3_1f1b_executor, 4 points (real ranks)
"""

from __future__ import annotations

import random

import torch

from labs import pipeline as pp
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import active as secret_active
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text

__all__ = ["check_gpipe_order", "check_1f1b_order", "check_bubble_fraction",
           "check_min_microbatches", "check_balanced_partition", "check_1f1b_executor",
           "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch of the executor exercise; a solution needs well under 1 s

#: the domain of this module's hidden seeds and sizes (labs.exercises.secret)
SECRET_TAG = "2.3"


def _seed(seed: int) -> int:
    """``seed`` itself, or the instructor's secret's seed for it (labs.exercises.secret)."""
    return hidden_seed(SECRET_TAG, seed)


def _int(key: int, low: int, high: int, default: int) -> int:
    """A hidden case's number: ``default`` without a secret, else one in [low, high]."""
    return hidden_int(SECRET_TAG, key, low, high, default)


def _as_strings(got) -> list[str]:
    if not isinstance(got, (list, tuple)):
        raise ExerciseFailed(text("checks_2_3.order_not_a_list", type=type(got).__name__))
    return [str(a) for a in got]


def _order_cases(seed: int):
    rng = random.Random(_seed(seed))
    cases = []
    for _ in range(6):
        p = rng.randint(2, 6)
        cases.append((p, rng.randint(1, 9), rng.randrange(p)))
    p = _int(10_000 + seed, 3, 6, 5)
    cases.append((p, _int(10_100 + seed, 1, p - 1, 2), _int(10_200 + seed, 0, p - 1, 0)))  # m < p
    return cases


def _check_order(student_fn, reference, shown, seed, name):
    for k, (p, m, stage) in enumerate(shown + _order_cases(seed)):
        hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if hidden
                 else text("checks.case_call", call=f"{name}({p}, {m}, {stage})"))
        with case(label, hidden=hidden):
            expected = pp.compute_order(reference(p, m, stage))
            got = _as_strings(student_fn(p, m, stage))
            if sorted(got) != sorted(expected):
                missing = sorted(set(expected) - set(got))
                extra = [a for a in got if a not in expected or got.count(a) > 1]
                raise ExerciseFailed(text("checks_2_3.order_actions_wrong", missing=missing,
                                          extra=sorted(set(extra))))
            if got != expected:
                first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
                raise ExerciseFailed(text("checks_2_3.order_wrong", index=first,
                                          expected=expected[first], got=got[first],
                                          head=expected[:first + 2]))
    return True


@graded("ex2_3_gpipe_order")
def check_gpipe_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> ['F0', ..., 'B0', ...]."""
    return _check_order(student_fn, pp.gpipe_order, [(4, 3, 1), (2, 1, 0)], 23, "gpipe_order")


@graded("ex2_3_1f1b_order")
def check_1f1b_order(student_fn):
    """student_fn(n_stages, n_microbatches, stage) -> the 1F1B compute order as strings."""
    _check_order(student_fn, pp.one_f_one_b_order, [(4, 5, 1), (4, 5, 3)], 11, "one_f_one_b_order")
    p, m = 4, 8
    with case(text("checks.case_about",
                   what=text("checks_2_3.simulated_schedule", stages=p, micro=m))):
        orders = [[pp.Action(s[0], int(s[1:]), stage) for s in student_fn(p, m, stage)]
                  for stage in range(p)]
        timeline = pp.simulate(pp.add_communication(orders, p))
        peaks = timeline.peak_in_flight()
        if max(peaks) > p:
            raise ExerciseFailed(text("checks_2_3.too_many_in_flight", p=p, peaks=peaks))
    return True


@graded("ex2_3_bubble")
def check_bubble_fraction(student_fn):
    """student_fn(p, m) -> the idle share (p-1)/(m+p-1)."""
    shown = [(8, 32), (4, 4)]
    rng = random.Random(_seed(5))
    hidden = [(rng.randint(1, 64), rng.randint(1, 128)) for _ in range(8)] + [
        (1, _int(11_000, 1, 128, 7)), (_int(11_001, 2, 64, 12), _int(11_002, 1, 128, 32))]
    for k, (p, m) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"p={p}, m={m}"))
        with case(label, hidden=is_hidden):
            assert_close(pp.bubble_fraction(p, m), student_fn(p, m),
                         what=text("checks_2_3.what_bubble"), dtype="float64")
    return True


def _min_microbatches_case(k: int, p: int, target: float) -> tuple[int, float]:
    """Hidden case ``k`` of check_min_microbatches: ``(p, target)`` itself without a secret,
    else a p (1 stays 1: no bubble) and a target in hundredths drawn from the secret, never one
    that some m meets exactly (floats may land on either side of it)."""
    from fractions import Fraction

    if not secret_active():
        return p, target
    if p > 1:
        p = _int(12_010 + k, 2, 64, p)
    hundredths = _int(12_020 + k, 1, 60, round(target * 100))
    # an exact boundary: (p - 1) / (m + p - 1) = target, i.e. (p - 1)(1 - target) / target whole
    while p > 1 and (Fraction(p - 1) * (100 - hundredths) / hundredths).denominator == 1:
        hundredths += 1
    return p, hundredths / 100


@graded("ex2_3_min_microbatches")
def check_min_microbatches(student_fn):
    """student_fn(p, target) -> the smallest m whose bubble share is at most target."""
    shown = [(8, 0.10), (4, 0.25)]
    hidden = [_min_microbatches_case(k, p, target) for k, (p, target) in enumerate(
        [(12, 0.10), (35, 0.05), (2, 0.5), (16, 0.2), (1, 0.1), (64, 0.01)])]
    for k, (p, target) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"p={p}, target={target}"))
        with case(label, hidden=is_hidden):
            assert_equal(pp.min_microbatches(p, target), student_fn(p, target),
                         what=text("checks_2_3.what_min_microbatches"))
    return True


def _check_bounds(bounds, costs, n_stages) -> list[tuple[int, int]]:
    if not isinstance(bounds, (list, tuple)):
        raise ExerciseFailed(text("checks_2_3.partition_not_a_list", type=type(bounds).__name__))
    try:
        bounds = [(int(a), int(b)) for a, b in bounds]
    except (TypeError, ValueError):
        raise ExerciseFailed(text("checks_2_3.partition_not_pairs", bounds=bounds)) from None
    if len(bounds) != n_stages:
        raise ExerciseFailed(text("checks_2_3.partition_stage_count", n_stages=n_stages,
                                  got=len(bounds)))
    edge = 0
    for s, (a, b) in enumerate(bounds):
        if a != edge or b <= a:
            raise ExerciseFailed(text("checks_2_3.partition_invalid", stage=s, a=a, b=b, edge=edge))
        edge = b
    if edge != len(costs):
        raise ExerciseFailed(text("checks_2_3.partition_short", edge=edge, layers=len(costs)))
    return bounds


@graded("ex2_3_balanced_partition")
def check_balanced_partition(student_fn):
    """student_fn(costs, n_stages) -> consecutive (start, stop) per stage, minimal max cost."""
    shown = [([1, 1, 1, 1, 1, 1, 1, 5], 4), ([4, 1, 1, 1, 1, 4], 3)]
    rng = random.Random(_seed(7))
    n_equal = _int(13_000, 2, 6, 3)  # as many stages as layers
    hidden = [([rng.choice([1, 2, 3, 5, 8]) for _ in range(n)], rng.randint(1, n))
              for n in (5, 7, 9, 10, 12)] + [
        ([_int(13_010 + i, 1, 9, 2) for i in range(n_equal)], n_equal),
        ([_int(13_001, 1, 9, 9)], 1)]
    for k, (costs, p) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - 1) if is_hidden
                 else text("checks.case_call", call=f"costs={costs}, n_stages={p}"))
        with case(label, hidden=is_hidden):
            bounds = _check_bounds(student_fn(list(costs), p), costs, p)
            best = max(pp.stage_costs(costs, pp.balanced_partition(costs, p)))
            got = max(pp.stage_costs(costs, bounds))
            if got > best:
                raise ExerciseFailed(text("checks_2_3.partition_not_optimal", got=got, best=best,
                                          bounds=bounds))
    return True


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
    from labs.exercises.checks import ExerciseFailed as Refused
    from labs.messages import text

    raise Refused(text("checks_2_3.no_ready_executor"))


def _executor_on_rank(student_fn, n_stages, n_micro, micro, width, out, pairs):
    """Inside a rank: this rank's stage of the model, its micro-batches, the student's loop."""
    import torch.distributed as dist
    import torch.nn.functional as fn

    from labs.pipeline import executor

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
        peak = results[members[0]]["peak"]
        if peak > n_stages:
            raise ExerciseFailed(text("checks_2_3.executor_too_many_in_flight",
                                      who=_stage_named(0, members, pairs), peak=peak,
                                      n_stages=n_stages))


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
        label = (text("checks.case_hidden", n=number) if hidden else
                 text("checks.case_numbered", n=number, what=text(
                     "checks_2_3.executor_case", stages=n_stages, micro=n_micro)))
        with case(label, hidden=hidden):
            _check_executor_case(student_fn, n_stages, n_micro, micro, width, out, pairs)
