"""Checks of the graded exercises of notebook 2.4 (hybrid parallelism).

The student's functions are compared with the lab's reference (:mod:`labs.hybrid.mesh`,
:mod:`labs.memory`) on shown and hidden cases (with the instructor's secret set, the hidden
cases' seeds and numbers are drawn from it: :mod:`labs.exercises.secret`)::

    check_coords(coords)                  # ex2_4_coords, 1 point
    check_groups(groups)                  # ex2_4_groups, 2 points
    check_states_per_gpu(states_per_gpu)  # ex2_4_memory, 2 points
    check_choose_layout(choose_layout)    # ex2_4_layout, 3 points
    check_hybrid_step(hybrid_step)        # ex2_4_hybrid_step, 4 points (real ranks;
                                          # labs.exercises.hybrid_step_checks, served here)
    check_3d_step(step_3d)                # ex2_4_3d_step, 5 points (real ranks;
                                          # labs.exercises.three_d_checks, served here)

:func:`choose_layout` is the reference of the last exercise: the rule of PTD-P's first
takeaway (Narayanan et al. 2021, arXiv:2104.04473, §3.3) on model states alone.

Owns: 2.4's checks and their hidden cases. Must not: import the grader or the planner widget, print
(the verdict is labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

import random

from labs import memory
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.hybrid_step_checks import HYBRID_TIMEOUT, check_hybrid_step  # noqa: F401
from labs.exercises.secret import hidden_int, hidden_seed
from labs.exercises.three_d_checks import STEP_3D_TIMEOUT, check_3d_step  # noqa: F401
from labs.hybrid.mesh import DIMS, MeshShape
from labs.messages import text

__all__ = ["check_coords", "check_groups", "check_states_per_gpu", "check_choose_layout",
           "check_hybrid_step", "check_3d_step", "choose_layout", "states_per_gpu",
           "HYBRID_TIMEOUT", "STEP_3D_TIMEOUT"]


#: The domain of this module's hidden seeds and numbers (labs.exercises.secret).
_TAG = "2.4"


def _shapes(seed: int, count: int) -> list[MeshShape]:
    rng = random.Random(hidden_seed(_TAG, seed))
    return [MeshShape(dp=rng.choice([1, 2, 3, 4]), pp=rng.choice([1, 2, 3, 4]),
                      tp=rng.choice([1, 2, 4, 8])) for _ in range(count)]


def _as_ints(got, n: int, what: str) -> tuple[int, ...]:
    if not isinstance(got, (tuple, list)) or len(got) != n:
        raise ExerciseFailed(text("checks_2_4.not_a_tuple", what=what, n=n, got=got))
    try:
        return tuple(int(x) for x in got)
    except (TypeError, ValueError):
        raise ExerciseFailed(text("checks_2_4.not_integers", what=what, got=got)) from None


@graded("ex2_4_coords")
def check_coords(student_fn):
    """student_fn(rank, dp, pp, tp) -> (dp_index, pp_index, tp_index), TP innermost."""
    shown = [MeshShape(2, 2, 2), MeshShape(1, 2, 4)]
    for k, shape in enumerate(shown + _shapes(41, 6)):
        hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if hidden
                 else text("checks.case_call",
                           call=f"dp={shape.dp}, pp={shape.pp}, tp={shape.tp}"))
        with case(label, hidden=hidden):
            for rank in range(shape.world_size):
                got = _as_ints(student_fn(rank, shape.dp, shape.pp, shape.tp), 3,
                               text("checks_2_4.what_coords", rank=rank))
                expected = tuple(shape.coords(rank))
                if got != expected:
                    raise ExerciseFailed(text("checks_2_4.coords_wrong", rank=rank,
                                              expected=expected, got=got, pp=shape.pp,
                                              tp=shape.tp))


def _normalise(groups, what: str) -> list[tuple[int, ...]]:
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, (list, tuple)) for g in groups):
        raise ExerciseFailed(text("checks_2_4.groups_not_lists", what=what, groups=groups))
    try:
        return sorted(tuple(sorted(int(r) for r in g)) for g in groups)
    except (TypeError, ValueError):
        raise ExerciseFailed(text("checks_2_4.groups_not_integers", what=what,
                                  groups=groups)) from None


@graded("ex2_4_groups")
def check_groups(student_fn):
    """student_fn(dp, pp, tp, dim) -> every group of dimension dim as lists of ranks."""
    shown = [(MeshShape(2, 2, 2), "tp"), (MeshShape(2, 2, 2), "dp")]
    hidden = [(shape, dim) for shape in _shapes(43, 4) for dim in DIMS]
    for k, (shape, dim) in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks.case_call",
                           call=f"dp={shape.dp}, pp={shape.pp}, tp={shape.tp}, dim={dim!r}"))
        with case(label, hidden=is_hidden):
            got = _normalise(student_fn(shape.dp, shape.pp, shape.tp, dim),
                             text("checks_2_4.what_groups", dim=dim))
            expected = sorted(tuple(g) for g in shape.group_ranks(dim))
            if got != expected:
                size = getattr(shape, dim)
                raise ExerciseFailed(text("checks_2_4.groups_wrong", dim=dim, count=len(expected),
                                          size=size, example=list(expected[0]),
                                          got=[list(g) for g in got]))


def states_per_gpu(n_params: float, tp: int, pp: int, dp: int, zero_stage: int) -> float:
    """Reference: bytes of model states per GPU, mixed precision with Adam (16 B/param)."""
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, dp=dp, zero_stage=zero_stage,
                                            optimizer="adam", precision="mixed").total


GIB = 2**30

#: The parts of the model states a student sums (mixed precision, Adam): fp16 weights, fp16
#: gradients, and the optimizer's fp32 master weights + two moments (ZeRO shards each in turn).
_PARTS = (("params",), ("grads",), ("master_params", "optimizer_states"))
_PART_KEYS = ("checks_2_4.part_weights", "checks_2_4.part_grads", "checks_2_4.part_optimizer")


def _explain_states(args, got) -> None:
    """A wrong total in GiB, split into the three parts, and the part that alone explains the
    difference (it is 0, dp, 1/dp, tp·pp, 1/(tp·pp), 2, 1/2 or 2/3 -- no master weights --
    times what it should be)."""
    n, tp, pp, dp, z = args
    try:
        got = float(got)
    except (TypeError, ValueError):
        return  # assert_close has said what the value is
    states = memory.model_state_bytes_per_gpu(n, tp=tp, pp=pp, dp=dp, zero_stage=z,
                                              optimizer="adam", precision="mixed").as_dict()
    parts = [sum(states[k] for k in keys) for keys in _PARTS]
    total = sum(parts)
    which = ""
    for key, part in zip(_PART_KEYS, parts):
        implied = got - (total - part)  # this part, if the other two are right
        for factor in (0.0, dp, 1 / dp, tp * pp, 1 / (tp * pp), 2.0, 0.5, 2 / 3):
            if factor != 1 and part and abs(implied - factor * part) <= 1e-6 * total:
                which = text("checks_2_4.states_part_off", part=text(key),
                             got_gib=implied / GIB, want_gib=part / GIB)
                break
        if which:
            break
    raise ExerciseFailed(text("checks_2_4.states_wrong", want_gib=total / GIB, got_gib=got / GIB,
                              weights_gib=parts[0] / GIB, grads_gib=parts[1] / GIB,
                              optimizer_gib=parts[2] / GIB, which=which))


@graded("ex2_4_memory")
def check_states_per_gpu(student_fn):
    """student_fn(n_params, tp, pp, dp, zero_stage) -> bytes per GPU (mixed precision, Adam)."""
    shown = [(175e9, 8, 16, 8, 0), (530e9, 8, 35, 8, 1)]
    rng = random.Random(hidden_seed(_TAG, 47))
    hidden = [(rng.choice([1.3e9, 6.7e9, 65.2e9, 175e9]), rng.choice([1, 2, 4, 8]),
               rng.choice([1, 2, 8]), rng.choice([1, 4, 64]), stage) for stage in (0, 1, 2, 3)
              for _ in range(2)]
    for k, args in enumerate(shown + hidden):
        is_hidden = k >= len(shown)
        n, tp, pp, dp, z = args
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks.case_call",
                           call=f"N={n:.3g}, tp={tp}, pp={pp}, dp={dp}, ZeRO-{z}"))
        with case(label, hidden=is_hidden):
            got = student_fn(*args)
            try:
                assert_close(states_per_gpu(*args), got,
                             what=text("checks_2_4.what_state_bytes"), dtype="float64")
            except ExerciseFailed:
                _explain_states(args, got)
                raise


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


#: The hidden layout cases: (millions of parameters, layers, heads, GPUs, GPUs per node, GB
#: of budget) as the notebook's tests know them, and what the secret may draw instead: the
#: parameters within ±20 %, the GPUs among the counts listed, the budget within the range
#: (layers, heads and GPUs per node are the model's and the node's: kept).
_LAYOUT_HIDDEN = (  # (row, GPU counts, budget range in GB)
    ((530_000, 105, 128, 2240, 8, 70), (1920, 2240, 2520, 2800, 3360), (60, 80)),
    ((65_200, 80, 64, 2048, 8, 70), (1024, 1536, 2048, 3072, 4096), (50, 80)),
    ((6_700, 32, 32, 64, 8, 30), (32, 48, 64, 96, 128), (20, 40)),
    ((175_000, 96, 96, 64, 8, 60), (48, 64, 96), (40, 80)),
    ((13_000, 40, 40, 96, 8, 24), (48, 72, 96, 120, 144), (16, 32)),
    ((2_000_000, 120, 128, 512, 8, 75), (384, 512, 640, 768, 1024), (60, 80)),
    ((340, 24, 16, 8, 4, 10), (4, 8, 12, 16), (8, 12)),
)
_LAYOUT_TRIES = 200


def _layout_kind(layout) -> tuple | None:
    """What a hidden layout case stands for: nothing fits, or which of dp, pp, tp exceed 1
    and whether pp is odd (105 layers: stages that are not a power of two)."""
    if layout is None:
        return None
    dp, pp, tp = layout
    return dp > 1, pp > 1, tp > 1, pp % 2


def _layout_cases() -> list[tuple]:
    """The hidden cases of :func:`check_choose_layout`: the table's rows without a secret; with
    one, rows drawn from it that keep each row's kind (:func:`_layout_kind`)."""
    cases = []
    for k, ((n, layers, heads, gpus, per_node, budget), counts, (low, high)) in \
            enumerate(_LAYOUT_HIDDEN):
        row = (n * 1e6, layers, heads, gpus, per_node, budget * 1e9)
        kind = _layout_kind(choose_layout(*row))
        for attempt in range(_LAYOUT_TRIES):
            seed = 200 + 10 * k + 1000 * attempt
            drawn = (hidden_int(_TAG, seed, n * 4 // 5, n * 6 // 5, n) * 1e6, layers, heads,
                     counts[hidden_int(_TAG, seed + 1, 0, len(counts) - 1, counts.index(gpus))],
                     per_node, hidden_int(_TAG, seed + 2, low, high, budget) * 1e9)
            if _layout_kind(choose_layout(*drawn)) == kind:
                row = drawn
                break
        cases.append(row)
    return cases


@graded("ex2_4_layout")
def check_choose_layout(student_fn):
    """student_fn(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes) ->
    (dp, pp, tp) or None, by the rule of :func:`choose_layout`."""
    shown = [(175e9, 96, 96, 1024, 8, 60e9), (1.3e9, 24, 32, 16, 8, 60e9)]
    for k, args in enumerate(shown + _layout_cases()):
        is_hidden = k >= len(shown)
        n, layers, heads, gpus, per_node, budget = args
        label = (text("checks.case_hidden", n=k - len(shown) + 1) if is_hidden
                 else text("checks.case_call", call=text(
                     "checks_2_4.layout_case", n=n, layers=layers, heads=heads, gpus=gpus,
                     per_node=per_node, budget_gb=budget / 1e9)))
        with case(label, hidden=is_hidden):
            expected = choose_layout(*args)
            got = student_fn(*args)
            if expected is None or got is None:
                assert_equal(expected, got, what=text("checks_2_4.what_layout_none"))
                continue
            got = _as_ints(got, 3, text("checks_2_4.what_layout"))
            if got != expected and got == tuple(reversed(expected)):
                raise ExerciseFailed(text("checks_2_4.layout_reversed", expected=expected,
                                          got=got))
            if got != expected:
                dp, pp, tp = got
                if dp * pp * tp != gpus:
                    why = text("checks_2_4.layout_gpu_count", product=dp * pp * tp, gpus=gpus)
                elif heads % tp or tp > per_node:
                    why = text("checks_2_4.layout_tp", tp=tp, heads=heads, per_node=per_node)
                elif states_per_gpu(n, tp, pp, dp, 0) > budget:
                    why = text("checks_2_4.layout_memory", budget_gb=budget / 1e9,
                               need_gb=states_per_gpu(n, tp, pp, dp, 0) / 1e9)
                else:
                    why = text("checks_2_4.layout_not_best")
                raise ExerciseFailed(text("checks_2_4.layout_wrong", expected=expected, got=got,
                                          why=why))
