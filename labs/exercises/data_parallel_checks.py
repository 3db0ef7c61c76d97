"""Checks of the graded exercises of notebook 2.1 (data parallelism).

Each check compares the student's function with the lab's reference (labs.data_parallel,
labs.memory) on shown and hidden cases; the gradient and ZeRO-1 exercises run on real ranks::

    check_average_gradients(average_gradients)   # ex2_1_average_gradients, 3 points
    check_buckets(make_buckets)                   # ex2_1_buckets, 2 points
    check_model_state_bytes(model_state_bytes)    # ex2_1_model_state_bytes, 2 points
    check_warmup_lr(warmup_lr)                    # ex2_1_warmup_lr, 2 points
    check_hours_per_epoch(hours_per_epoch)        # ex2_1_hours_per_epoch, 1 point
    check_zero1(MyZero1)                          # ex2_1_zero1, 4 points (real ranks;
                                                  # labs.exercises.zero1_checks, served here)

Owns: 2.1's checks and their hidden cases. Must not: import the grader or the planner widget, print
(the verdict is labs.exercises.checks'), or keep process groups in globals.
"""
from __future__ import annotations

import random

from labs import numerics
from labs.data import regression_batch, shard_batch
from labs.data_parallel import assign_buckets, warmup_lr
from labs.exercises import routes, rules
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded, msg
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.exercises.zero1_checks import check_zero1  # noqa: F401 (练习 6, imported from here)
from labs.memory import model_state_bytes
from labs.messages import text
from labs.models import MLP

__all__ = ["check_average_gradients", "check_buckets", "check_model_state_bytes",
           "check_warmup_lr", "check_hours_per_epoch", "check_zero1", "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s

#: The domain of this module's hidden seeds and sizes (labs.exercises.secret); each exercise
#: (and each ZeRO-1 case) has its own part of it, so that equal seeds of two exercises differ.
TAG = "2.1"


def _seed(part: str, seed: int) -> int:
    """Seed ``seed`` of ``part``: itself without the instructor's secret, else drawn from it."""
    return hidden_seed(f"{TAG}/{part}", seed)


def _int(part: str, key: int, low: int, high: int, default):
    """A hidden case's number: ``default`` without the instructor's secret, else one in
    [low, high] drawn from it (a float when ``default`` is one)."""
    return type(default)(hidden_int(f"{TAG}/{part}", key, low, high, default))


# --- exercise 1: average the gradients on real ranks -------------------------------------

def _grads_on_rank(student_fn, sizes, batch, seeds, pairs):
    """Inside a rank: backward on this rank's shard, then the student's averaging over the
    default group, or with ``pairs`` over this rank's pair {0, 1} or {2, 3} (its own model and
    data: seeds[pair]); any collective but all_reduce refused, the course's averaging too."""
    import torch.distributed as dist

    group, pair = None, 0
    if pairs:
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        pair = dist.get_rank() // 2
        group = groups[pair]
    seed = seeds[pair]
    model = MLP(sizes, seed=seed)
    x, y = shard_batch(*regression_batch(seed, batch, sizes[0], sizes[-1], seed=seed),
                       dist.get_rank(group), dist.get_world_size(group))
    model(x, y)[1].backward()
    before = {name: p.grad for name, p in model.named_parameters()}

    def refuse(shown):
        raise ExerciseFailed(text("checks_2_1.average_refused", shown=shown))

    with routes.guarded(refuse, allowed=("all_reduce", "all_reduce_coalesced")), \
            routes.borrowed(_COURSE_AVERAGING) as seen:
        student_fn(model) if group is None else student_fn(model, group=group)
    if seen:
        refuse(seen[0])
    moved = [name for name, p in model.named_parameters()
             if p.grad is not None and p.grad is not before[name]]
    return dict(grads={name: p.grad for name, p in model.named_parameters()}, moved=moved)


#: The course's own gradient averaging, which 练习 1 is to write.
_COURSE_AVERAGING = ("labs.data_parallel.ddp",)


def _expected_grads(sizes, batch, seed):
    model = MLP(sizes, seed=seed)
    model(*regression_batch(seed, batch, sizes[0], sizes[-1], seed=seed))[1].backward()
    return {name: p.grad for name, p in model.named_parameters()}


def _grads_cases() -> list:
    """(label, world size, sizes, batch, seeds, pairs, hidden): with the instructor's secret the
    seeds, and the hidden cases' world sizes (2 to 4), widths and batches (a multiple of the
    world size), are drawn from it. The last case runs two groups {0, 1} and {2, 3}: an answer
    that ignores ``group`` averages over all four ranks and fails."""
    def draw(key, low, high, default):
        return _int("average_gradients", key, low, high, default)

    ws1, ws2 = draw(100, 2, 4, 3), draw(110, 2, 4, 4)
    cases = [(msg("checks_2_1.case_grads", n=1, world_size=2, sizes=[8, 16, 4], batch=8),
              2, [8, 16, 4], 8, (0,), False, False),
             (msg("checks_2_1.case_grads", n=2, world_size=4, sizes=[8, 16, 4], batch=8),
              4, [8, 16, 4], 8, (1,), False, False),
             (msg("checks.case_hidden", n=1), ws1,
              [draw(101, 2, 12, 5), draw(102, 2, 12, 7), draw(103, 2, 12, 7), draw(104, 1, 6, 3)],
              ws1 * draw(105, 2, 8, 4), (2,), False, True),
             (msg("checks.case_hidden", n=2), ws2,
              [draw(111, 4, 24, 16), draw(112, 8, 48, 32), draw(113, 1, 6, 2)],
              ws2 * draw(114, 2, 8, 4), (3,), False, True),
             (msg("checks_2_1.case_hidden_groups", n=3), 4,
              [draw(121, 2, 12, 6), draw(122, 2, 12, 5), draw(123, 1, 6, 3)],
              2 * draw(124, 2, 8, 3), (4, 5), True, True)]
    return [(label, world_size, sizes, batch,
             tuple(_seed("average_gradients", seed) for seed in seeds), pairs, hidden)
            for label, world_size, sizes, batch, seeds, pairs, hidden in cases]


@graded("ex2_1_average_gradients")
def check_average_gradients(student_fn):
    import torch

    for label, world_size, sizes, batch, seeds, pairs, hidden in _grads_cases():
        with case(label, hidden=hidden):
            results = run_on_ranks(_grads_on_rank, world_size,
                                   (student_fn, sizes, batch, seeds, pairs),
                                   timeout=CHECK_TIMEOUT)
            for rank, result in enumerate(results):
                grads = result["grads"]
                expected = _expected_grads(sizes, batch, seeds[rank // 2 if pairs else 0])
                if grads == {} or any(g is None for g in grads.values()):
                    raise ExerciseFailed(text("checks_2_1.grad_is_none", rank=rank))
                for name, value in expected.items():
                    if pairs and not torch.allclose(value, grads[name], rtol=1e-4, atol=1e-6):
                        _ignored_group(results, sizes, batch, seeds, rank)
                    n = 2 if pairs else world_size
                    if torch.allclose(grads[name], n * value, rtol=1e-4, atol=1e-6):
                        raise ExerciseFailed(text("checks_2_1.grad_times_world_size", rank=rank,
                                                  name=name, n=n))
                    # the ranks sum in another order than one process: float32 rounding only,
                    # so the policy's float32 tolerances (labs.numerics)
                    assert_close(value, grads[name], what=text("checks_2_1.what_grad", name=name),
                                 rank=rank)
                if result["moved"]:
                    raise ExerciseFailed(text("checks_2_1.grad_not_in_place", rank=rank,
                                              name=result["moved"][0]))


def _ignored_group(results, sizes, batch, seeds, rank) -> None:
    """Raise the likely cause when the two-group case fails: the answer averaged over all
    four ranks (``group`` ignored)."""
    import torch

    both = [_expected_grads(sizes, batch, seed) for seed in seeds]
    over_all = {name: (both[0][name] + both[1][name]) / 2 for name in both[0]}
    got = results[rank]["grads"]
    if all(torch.allclose(over_all[n], got[n], rtol=1e-4, atol=1e-6) for n in over_all):
        raise ExerciseFailed(text("checks_2_1.group_ignored", rank=rank))


# --- exercise 2: bucketing ---------------------------------------------------------------

@graded("ex2_1_buckets")
def check_buckets(student_fn):
    shown = [([4, 4, 4, 4], 8), ([4, 100, 4], 8), ([1, 2, 3], 1000)]
    for sizes, cap in shown:
        with case(text("checks.case_call", call=f"make_buckets({sizes}, {cap})")):
            assert_equal(assign_buckets(sizes, cap), student_fn(list(sizes), cap),
                         what=text("checks_2_1.what_buckets"))
    # uneven remainders: greedy from the front then flipped gives [[2], [1, 0]] here, not
    # [[2, 1], [0]] (the walk must start from the last tensor)
    fixed = [([4, 4, 4], 8), ([3, 5, 2, 6, 1], 8)]
    for k, (sizes, cap) in enumerate(fixed):
        with case(text("checks.case_hidden", n=k + 1), hidden=True):
            assert_equal(assign_buckets(sizes, cap), student_fn(list(sizes), cap),
                         what=text("checks_2_1.what_buckets"))
    rng = random.Random(_seed("buckets", 21))
    for k in range(len(fixed), len(fixed) + 6):
        sizes = [rng.choice([4, 16, 64, 256, 1024]) * rng.randint(1, 8)
                 for _ in range(rng.randint(1, 12))]
        cap = rng.choice([64, 512, 2048, 8192])
        with case(text("checks.case_hidden", n=k + 1), hidden=True):
            assert_equal(assign_buckets(sizes, cap), student_fn(list(sizes), cap),
                         what=text("checks_2_1.what_buckets"))
    with case(text("checks_2_1.case_zero_cap")):
        try:
            student_fn([4], 0)
        except ValueError:
            pass
        else:
            raise ExerciseFailed(text("checks_2_1.zero_cap_accepted"))


# --- exercise 3: memory estimator --------------------------------------------------------

@graded("ex2_1_model_state_bytes")
def check_model_state_bytes(student_fn):
    shown = [(110e6, "adam", "fp32"), (1.5e9, "adam", "mixed"), (1000, "sgd", "fp32")]

    def draw(key, low, high, default):
        return _int("model_state_bytes", key, low, high, default)

    # with the instructor's secret the parameter counts are drawn from it (the kinds stay)
    hidden = [(draw(1, 10**10, 10**12, 175e9), "adam", "mixed"),
              (draw(2, 10**8, 10**11, 7e9), "sgd_momentum", "fp32"),
              (draw(3, 10**4, 10**6, 123457), "sgd", "mixed"),
              (draw(4, 10**7, 10**10, 3e8), "sgd_momentum", "mixed")]
    # "不要调用 labs.memory": checked on a rank, where the grader sees it too
    seen = rules.called(student_fn, [(args, {}) for args in shown + hidden],
                        modules=("labs.memory",))
    if seen:
        raise ExerciseFailed(text("checks_2_1.memory_refused", shown=seen[0]))
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks.case_call", call=f"model_state_bytes{args}"))
        with case(label, hidden=is_hidden):
            got = student_fn(*args)
            assert_close(float(model_state_bytes(*args).total), float(got),
                         what=text("checks_2_1.what_total_bytes"), dtype="float64")


# --- exercise 4: linear scaling with warmup ----------------------------------------------

@graded("ex2_1_warmup_lr")
def check_warmup_lr(student_fn):
    shown = [(0, 0.1, 256, 1024, 10), (5, 0.1, 256, 1024, 10), (50, 0.1, 256, 1024, 10)]
    rng = random.Random(_seed("warmup_lr", 5))

    def draw(key, low, high, default):
        return _int("warmup_lr", key, low, high, default)

    same = draw(2, 8, 512, 64)  # batch == base_batch, a step within the warmup
    hidden = [(rng.randint(0, 30), rng.choice([0.01, 0.05, 0.1]), 32, 32 * rng.choice([2, 4, 8]),
               rng.choice([5, 10, 20])) for _ in range(6)] + [
        (draw(1, 1, 9, 3), 0.1, same, same, 10),
        (draw(3, 0, 50, 7), 0.1, 32, 32 * draw(4, 2, 16, 8), 0),  # no warmup at all
        # non-integer ratios (batch / base_batch = 1.5, 0.75): integer division fails
        (draw(5, 0, 9, 4), 0.1, 256, 384, 10), (draw(6, 10, 40, 20), 0.2, 512, 384, 10)]
    for k, (step, lr, b0, b, warm) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden else
                 text("checks.case_call", call=f"step={step}, base_lr={lr}, base_batch={b0}, "
                                               f"batch={b}, warmup_steps={warm}"))
        with case(label, hidden=is_hidden):
            expected = warmup_lr(step, base_lr=lr, base_batch=b0, batch=b, warmup_steps=warm)
            got = student_fn(step, base_lr=lr, base_batch=b0, batch=b, warmup_steps=warm)
            assert_close(float(expected), float(got), what=text("checks_2_1.what_lr"),
                         dtype="float64")


# --- exercise 5: the case study's epoch time ---------------------------------------------

def _hours(samples, batch, seconds):
    return -(-samples // batch) * seconds / 3600  # the last, partial batch is a step too


@graded("ex2_1_hours_per_epoch")
def check_hours_per_epoch(student_fn):
    def draw(key, low, high, default):
        return _int("hours_per_epoch", key, low, high, default)

    shown = [(5_000_000, 16, 0.8)]
    # with the instructor's secret drawn from it: the batch divides the samples in the 1st and
    # 3rd hidden case, not in the 2nd (a partial last batch); seconds in tenths
    b1, b2, b3 = draw(10, 8, 512, 32), draw(20, 3, 64, 7), draw(30, 16, 1024, 64)
    partial = 1 + draw(22, 0, 10**6, 1) % (b2 - 1)
    hidden = [(b1 * draw(11, 1000, 100_000, 31250), b1, draw(12, 1, 20, 5) / 10),
              (b2 * draw(21, 1, 1000, 14) + partial, b2, draw(23, 10, 600, 360) / 10),
              (b3 * draw(31, 10_000, 1_000_000, 78125), b3, draw(32, 1, 20, 8) / 10)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k) if is_hidden
                 else text("checks_2_1.case_case_study", call=f"hours_per_epoch{args}"))
        with case(label, hidden=is_hidden):
            got = student_fn(*args)
            expected = _hours(*args)
            if not is_hidden and numerics.is_close(float(got), expected / 10, dtype="float64"):
                raise ExerciseFailed(text("checks_2_1.ten_epochs", got=got))
            assert_close(float(expected), float(got), what=text("checks_2_1.what_hours"),
                         dtype="float64")
