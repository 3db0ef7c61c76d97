"""Checks of the graded exercises of notebook 2.1 (data parallelism).

Each check compares the student's function with the lab's reference (labs.data_parallel,
labs.memory) on shown and hidden cases; the gradient exercise runs on real ranks::

    check_average_gradients(average_gradients)   # ex2_1_average_gradients, 3 points
    check_buckets(make_buckets)                   # ex2_1_buckets, 2 points
    check_model_state_bytes(model_state_bytes)    # ex2_1_model_state_bytes, 2 points
    check_warmup_lr(warmup_lr)                    # ex2_1_warmup_lr, 2 points
    check_hours_per_epoch(hours_per_epoch)        # ex2_1_hours_per_epoch, 1 point
"""
from __future__ import annotations

import random

from labs import numerics
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.ranks import run_on_ranks

__all__ = ["check_average_gradients", "check_buckets", "check_model_state_bytes",
           "check_warmup_lr", "check_hours_per_epoch", "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s


# --- exercise 1: average the gradients on real ranks -------------------------------------

def _grads_on_rank(student_fn, sizes, batch, seed):
    """Inside a rank: backward on this rank's shard, then the student's averaging."""
    import torch.distributed as dist

    from labs.data import regression_batch, shard_batch
    from labs.models import MLP

    model = MLP(sizes, seed=seed)
    x, y = shard_batch(*regression_batch(seed, batch, sizes[0], sizes[-1], seed=seed),
                       dist.get_rank(), dist.get_world_size())
    model(x, y)[1].backward()
    student_fn(model)
    return {name: p.grad for name, p in model.named_parameters()}


def _expected_grads(sizes, batch, seed):
    from labs.data import regression_batch
    from labs.models import MLP

    model = MLP(sizes, seed=seed)
    model(*regression_batch(seed, batch, sizes[0], sizes[-1], seed=seed))[1].backward()
    return {name: p.grad for name, p in model.named_parameters()}


@graded("ex2_1_average_gradients", points=3)
def check_average_gradients(student_fn):
    cases = [("用例 1：2 个 rank，MLP [8, 16, 4]，全局 batch 8", 2, [8, 16, 4], 8, 0, False),
             ("用例 2：4 个 rank，MLP [8, 16, 4]，全局 batch 8", 4, [8, 16, 4], 8, 1, False),
             ("隐藏用例 1", 3, [5, 7, 7, 3], 12, 2, True),
             ("隐藏用例 2", 4, [16, 32, 2], 16, 3, True)]
    for label, world_size, sizes, batch, seed, hidden in cases:
        with case(label, hidden=hidden):
            expected = _expected_grads(sizes, batch, seed)
            results = run_on_ranks(_grads_on_rank, world_size, (student_fn, sizes, batch, seed),
                                   timeout=CHECK_TIMEOUT)
            for rank, grads in enumerate(results):
                if grads == {} or any(g is None for g in grads.values()):
                    raise ExerciseFailed(f"rank {rank} 上有参数的 .grad 变成了 None")
                for name, value in expected.items():
                    # the ranks sum in another order than one process: float32 rounding only,
                    # so the policy's float32 tolerances (labs.numerics)
                    assert_close(value, grads[name], what=f"参数 {name} 的梯度", rank=rank)


# --- exercise 2: bucketing ---------------------------------------------------------------

@graded("ex2_1_buckets", points=2)
def check_buckets(student_fn):
    from labs.data_parallel import assign_buckets

    shown = [([4, 4, 4, 4], 8), ([4, 100, 4], 8), ([1, 2, 3], 1000)]
    for sizes, cap in shown:
        with case(f"用例 make_buckets({sizes}, {cap})"):
            assert_equal(assign_buckets(sizes, cap), student_fn(list(sizes), cap), what="分桶结果")
    rng = random.Random(21)
    for k in range(6):
        sizes = [rng.choice([4, 16, 64, 256, 1024]) * rng.randint(1, 8)
                 for _ in range(rng.randint(1, 12))]
        cap = rng.choice([64, 512, 2048, 8192])
        with case(f"隐藏用例 {k + 1}", hidden=True):
            assert_equal(assign_buckets(sizes, cap), student_fn(list(sizes), cap), what="分桶结果")
    with case("用例：make_buckets([4], 0) 应抛出 ValueError"):
        try:
            student_fn([4], 0)
        except ValueError:
            pass
        else:
            raise ExerciseFailed("bucket_bytes <= 0 时应该抛出 ValueError（桶的大小必须为正）")


# --- exercise 3: memory estimator --------------------------------------------------------

@graded("ex2_1_model_state_bytes", points=2)
def check_model_state_bytes(student_fn):
    from labs.memory import model_state_bytes

    shown = [(110e6, "adam", "fp32"), (1.5e9, "adam", "mixed"), (1000, "sgd", "fp32")]
    hidden = [(175e9, "adam", "mixed"), (7e9, "sgd_momentum", "fp32"), (123457, "sgd", "mixed"),
              (3e8, "sgd_momentum", "mixed")]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = f"隐藏用例 {k - len(shown) + 1}" if is_hidden else f"用例 model_state_bytes{args}"
        with case(label, hidden=is_hidden):
            got = student_fn(*args)
            assert_close(float(model_state_bytes(*args).total), float(got), what="总字节数",
                         dtype="float64")


# --- exercise 4: linear scaling with warmup ----------------------------------------------

@graded("ex2_1_warmup_lr", points=2)
def check_warmup_lr(student_fn):
    from labs.data_parallel import warmup_lr

    shown = [(0, 0.1, 256, 1024, 10), (5, 0.1, 256, 1024, 10), (50, 0.1, 256, 1024, 10)]
    rng = random.Random(5)
    hidden = [(rng.randint(0, 30), rng.choice([0.01, 0.05, 0.1]), 32, 32 * rng.choice([2, 4, 8]),
               rng.choice([5, 10, 20])) for _ in range(6)] + [(3, 0.1, 64, 64, 10),
                                                              (7, 0.1, 32, 256, 0)]
    for k, (step, lr, b0, b, warm) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (f"隐藏用例 {k - len(shown) + 1}" if is_hidden else
                 f"用例 step={step}, base_lr={lr}, base_batch={b0}, batch={b}, warmup_steps={warm}")
        with case(label, hidden=is_hidden):
            expected = warmup_lr(step, base_lr=lr, base_batch=b0, batch=b, warmup_steps=warm)
            got = student_fn(step, base_lr=lr, base_batch=b0, batch=b, warmup_steps=warm)
            assert_close(float(expected), float(got), what="学习率", dtype="float64")


# --- exercise 5: the case study's epoch time ---------------------------------------------

def _hours(samples, batch, seconds):
    return -(-samples // batch) * seconds / 3600  # the last, partial batch is a step too


@graded("ex2_1_hours_per_epoch", points=1)
def check_hours_per_epoch(student_fn):
    shown = [(5_000_000, 16, 0.8)]
    hidden = [(1_000_000, 32, 0.5), (100, 7, 36.0), (5_000_000, 64, 0.8)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = f"隐藏用例 {k}" if is_hidden else f"用例 hours_per_epoch{args}（本章的案例）"
        with case(label, hidden=is_hidden):
            got = student_fn(*args)
            expected = _hours(*args)
            if not is_hidden and numerics.is_close(float(got), expected / 10, dtype="float64"):
                raise ExerciseFailed(f"得到 {got:.3g} 小时：这是 10 个 epoch 的时间除以 10 吗？"
                                     "请算一个 epoch 的迭代次数 × 每次迭代的秒数")
            assert_close(float(expected), float(got), what="每个 epoch 的小时数", dtype="float64")
