"""What notebook 2.2's checks share: the hidden cases' seeds and sizes (from the instructor's
secret), the TP group a rank body builds, the one-failure comparison of named gradients, and the
likely cause named when only the case with two TP groups fails (a collective without ``group=``).

Owns: these helpers of :mod:`labs.exercises.tensor_parallel_checks` and
:mod:`labs.exercises.sequence_parallel_checks`. Must not: import either of them, the grader or the
planner widget; print; keep process groups in globals.
"""
from __future__ import annotations

import contextlib

from labs.exercises.checks import ExerciseFailed, compare_tensors
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text
from labs.tensor_parallel.model import tensor_parallel_group

__all__ = ["SECRET_TAG", "seed", "size", "tp_group", "group_rank", "compare_gradients",
           "group_hint"]

#: the domain of 2.2's hidden seeds and sizes (labs.exercises.secret)
SECRET_TAG = "2.2"


def seed(seed: int) -> int:
    """``seed`` itself, or the instructor's secret's seed for it (labs.exercises.secret)."""
    return hidden_seed(SECRET_TAG, seed)


def size(key: int, low: int, high: int, default: int, multiple: int = 1) -> int:
    """A hidden case's size: ``default`` without a secret, else a multiple of ``multiple`` in
    ``[low, high]`` (both multiples of it) drawn from the secret."""
    return multiple * hidden_int(SECRET_TAG, key, low // multiple, high // multiple,
                                 default // multiple)


def tp_group(tp):
    return tensor_parallel_group(tp)


def group_rank(group):
    import torch.distributed as dist
    return dist.get_rank(group), dist.get_world_size(group)


def compare_gradients(rank, names, expected, grads, correct_so_far: str, advice: str):
    """Compare each named gradient; one failure that lists the wrong ones and the right ones."""
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
        raise ExerciseFailed(text(
            "checks_2_2.wrong_gradients", rank=rank, correct_so_far=correct_so_far,
            wrong=text("checks.clause_separator").join(wrong),
            right=text("checks.list_separator").join(right) or text("checks_2_2.none"),
            advice=advice))


@contextlib.contextmanager
def group_hint(two_groups: bool):
    """Around a ``case`` with two TP groups {0,1} {2,3} that follows cases with one group: a
    failure there (after those passed) most likely comes from a collective called without
    ``group=`` (it then runs over all 4 ranks and mixes the other group's data in), so the
    failure says so. Other cases pass through unchanged."""
    try:
        yield
    except ExerciseFailed as exc:
        if not two_groups:
            raise
        failed = ExerciseFailed(text("checks_2_2.likely_missing_group", message=exc))
        for name in ("kind", "full_traceback"):
            if name in vars(exc):
                setattr(failed, name, vars(exc)[name])
        raise failed from None
