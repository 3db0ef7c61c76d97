"""Checks of the graded exercises of notebook 2.4 (hybrid parallelism).

The student's functions are compared with the lab's reference (:mod:`labs.hybrid.mesh`,
:mod:`labs.memory`) on shown and hidden cases::

    check_coords(coords)                  # ex2_4_coords, 1 point
    check_groups(groups)                  # ex2_4_groups, 2 points
    check_states_per_gpu(states_per_gpu)  # ex2_4_memory, 2 points
    check_choose_layout(choose_layout)    # ex2_4_layout, 3 points

:func:`choose_layout` is the reference of the last exercise: the rule of PTD-P's first
takeaway (Narayanan et al. 2021, arXiv:2104.04473, §3.3) on model states alone.
"""

from __future__ import annotations

import random

from labs import memory
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.hybrid.mesh import DIMS, MeshShape

__all__ = ["check_coords", "check_groups", "check_states_per_gpu", "check_choose_layout",
           "choose_layout", "states_per_gpu"]


def _shapes(seed: int, count: int) -> list[MeshShape]:
    rng = random.Random(seed)
    return [MeshShape(dp=rng.choice([1, 2, 3, 4]), pp=rng.choice([1, 2, 3, 4]),
                      tp=rng.choice([1, 2, 4, 8])) for _ in range(count)]


def _as_ints(got, n: int, what: str) -> tuple[int, ...]:
    if not isinstance(got, (tuple, list)) or len(got) != n:
        raise ExerciseFailed(f"{what}应该是 {n} 个整数的 tuple，实际得到 {got!r}")
    try:
        return tuple(int(x) for x in got)
    except (TypeError, ValueError):
        raise ExerciseFailed(f"{what}应该是整数，实际得到 {got!r}") from None


@graded("ex2_4_coords", points=1)
def check_coords(student_fn):
    """student_fn(rank, dp, pp, tp) -> (dp_index, pp_index, tp_index), TP innermost."""
    shown = [MeshShape(2, 2, 2), MeshShape(1, 2, 4)]
    for k, shape in enumerate(shown + _shapes(41, 6)):
        hidden = k >= len(shown)
        label = f"隐藏用例 {k - len(shown) + 1}" if hidden else \
            f"用例 dp={shape.dp}, pp={shape.pp}, tp={shape.tp}"
        with case(label, hidden=hidden):
            for rank in range(shape.world_size):
                got = _as_ints(student_fn(rank, shape.dp, shape.pp, shape.tp), 3,
                               f"rank {rank} 的坐标")
                expected = tuple(shape.coords(rank))
                if got != expected:
                    raise ExerciseFailed(
                        f"rank {rank} 的坐标 (dp, pp, tp) 应为 {expected}，实际 {got}"
                        f"（TP 在最内层：rank = (dp·{shape.pp} + pp)·{shape.tp} + tp）")
    return True


def _normalise(groups, what: str) -> list[tuple[int, ...]]:
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, (list, tuple)) for g in groups):
        raise ExerciseFailed(f"{what}应该是 rank 列表的列表，例如 [[0, 1], [2, 3]]，实际 {groups!r}")
    try:
        return sorted(tuple(sorted(int(r) for r in g)) for g in groups)
    except (TypeError, ValueError):
        raise ExerciseFailed(f"{what}里应该都是整数 rank：{groups!r}") from None


@graded("ex2_4_groups", points=2)
def check_groups(student_fn):
    """student_fn(dp, pp, tp, dim) -> every group of dimension dim as lists of ranks."""
    shown = [(MeshShape(2, 2, 2), "tp"), (MeshShape(2, 2, 2), "dp")]
    hidden = [(shape, dim) for shape in _shapes(43, 4) for dim in DIMS]
    for k, (shape, dim) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = f"隐藏用例 {k - len(shown) + 1}" if is_hidden else \
            f"用例 dp={shape.dp}, pp={shape.pp}, tp={shape.tp}, dim={dim!r}"
        with case(label, hidden=is_hidden):
            got = _normalise(student_fn(shape.dp, shape.pp, shape.tp, dim), f"{dim} 组")
            expected = sorted(tuple(g) for g in shape.group_ranks(dim))
            if got != expected:
                size = getattr(shape, dim)
                raise ExerciseFailed(
                    f"{dim} 组不对：应有 {len(expected)} 组、每组 {size} 个 rank，"
                    f"例如 rank 0 所在的组是 {list(expected[0])}；实际得到 {[list(g) for g in got]}")
    return True


def states_per_gpu(n_params: float, tp: int, pp: int, dp: int, zero_stage: int) -> float:
    """Reference: bytes of model states per GPU, mixed precision with Adam (16 B/param)."""
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, dp=dp, zero_stage=zero_stage,
                                            optimizer="adam", precision="mixed").total


@graded("ex2_4_memory", points=2)
def check_states_per_gpu(student_fn):
    """student_fn(n_params, tp, pp, dp, zero_stage) -> bytes per GPU (mixed precision, Adam)."""
    shown = [(175e9, 8, 16, 8, 0), (530e9, 8, 35, 8, 1)]
    rng = random.Random(47)
    hidden = [(rng.choice([1.3e9, 6.7e9, 65.2e9, 175e9]), rng.choice([1, 2, 4, 8]),
               rng.choice([1, 2, 8]), rng.choice([1, 4, 64]), stage) for stage in (0, 1, 2, 3)
              for _ in range(2)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        n, tp, pp, dp, z = args
        label = f"隐藏用例 {k - len(shown) + 1}" if is_hidden else \
            f"用例 N={n:.3g}, tp={tp}, pp={pp}, dp={dp}, ZeRO-{z}"
        with case(label, hidden=is_hidden):
            assert_close(states_per_gpu(*args), student_fn(*args), what="每张卡的模型状态字节数",
                         dtype="float64")
    return True


def choose_layout(n_params: float, n_layers: int, n_heads: int, n_gpus: int, gpus_per_node: int,
                  budget_bytes: float):
    """Reference: (dp, pp, tp) whose model states (mixed Adam, no ZeRO) fit ``budget_bytes``,
    with tp inside a node and dividing the heads, pp dividing the layers (equal stages),
    dp·pp·tp = n_gpus; the smallest
    model-parallel size tp·pp (the most data parallelism), and among those the largest tp (TP
    inside a node costs no bubble). None if nothing fits."""
    best = None
    for tp in range(1, min(gpus_per_node, n_heads) + 1):
        if n_heads % tp or n_gpus % tp:
            continue
        for pp in range(1, n_layers + 1):
            if n_layers % pp or n_gpus % (tp * pp):
                continue
            if states_per_gpu(n_params, tp, pp, n_gpus // (tp * pp), 0) > budget_bytes:
                continue
            key = (tp * pp, -tp)
            if best is None or key < best[0]:
                best = (key, (n_gpus // (tp * pp), pp, tp))
    return None if best is None else best[1]


@graded("ex2_4_layout", points=3)
def check_choose_layout(student_fn):
    """student_fn(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes) ->
    (dp, pp, tp) or None, by the rule of :func:`choose_layout`."""
    shown = [(175e9, 96, 96, 1024, 8, 60e9), (1.3e9, 24, 32, 16, 8, 60e9)]
    hidden = [(530e9, 105, 128, 2240, 8, 70e9), (65.2e9, 80, 64, 2048, 8, 70e9),
              (6.7e9, 32, 32, 64, 8, 30e9), (175e9, 96, 96, 64, 8, 60e9),
              (13e9, 40, 40, 96, 8, 24e9), (2e12, 120, 128, 512, 8, 75e9),
              (340e6, 24, 16, 8, 4, 10e9)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        n, layers, heads, gpus, per_node, budget = args
        label = f"隐藏用例 {k - len(shown) + 1}" if is_hidden else \
            (f"用例 N={n:.3g}, {layers} 层, {heads} 头, {gpus} 卡（每节点 {per_node}）, "
             f"预算 {budget / 1e9:g} GB")
        with case(label, hidden=is_hidden):
            expected = choose_layout(*args)
            got = student_fn(*args)
            if expected is None or got is None:
                assert_equal(expected, got, what="返回值（没有能放下的配置时返回 None）")
                continue
            got = _as_ints(got, 3, "返回的 (dp, pp, tp)")
            if got != expected:
                dp, pp, tp = got
                why = ""
                if dp * pp * tp != gpus:
                    why = f"dp·pp·tp = {dp * pp * tp}，不等于 {gpus} 张卡"
                elif heads % tp or tp > per_node:
                    why = f"tp={tp} 必须整除 {heads} 个头并且不超过每节点的 {per_node} 张卡"
                elif states_per_gpu(n, tp, pp, dp, 0) > budget:
                    why = (f"这个配置每张卡要 {states_per_gpu(n, tp, pp, dp, 0) / 1e9:.1f} GB，"
                           f"超过预算 {budget / 1e9:g} GB")
                else:
                    why = "能放下，但不是 tp·pp 最小（其次 tp 最大）的那一个"
                raise ExerciseFailed(f"期望 (dp, pp, tp) = {expected}，实际 {got}：{why}")
    return True
