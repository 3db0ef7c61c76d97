"""Checks of the graded exercises of notebook 2.4 (hybrid parallelism), against the lab's
reference (:mod:`labs.hybrid.mesh`, :mod:`labs.formulas.memory`) on shown cases and hidden ones that, under
every secret, separate the plausible wrong answers from the right one::

    check_coords(coords)                  # ex2_4_coords, 1 point
    check_groups(groups)                  # ex2_4_groups, 2 points
    check_states_per_gpu(states_per_gpu)  # ex2_4_memory, 2 points
    check_choose_layout(choose_layout)    # ex2_4_layout, 3 points
    check_hybrid_step(hybrid_step)        # ex2_4_hybrid_step, 4 points (hybrid_step_checks)
    check_3d_step(step_3d)                # ex2_4_3d_step, 5 points (three_d_checks)

Owns: 2.4's function checks and their hidden cases. Must not: import the grader or the planner
widget, print, or keep process groups in globals.
"""

from __future__ import annotations

import dataclasses
import numbers
import random

from labs.formulas import memory
from labs.exercises import hybrid_step_checks, three_d_checks
from labs.exercises.cases import each_case
from labs.exercises.checks import ExerciseFailed, assert_close, graded
from labs.exercises.hybrid_step_checks import TAG, check_hybrid_step  # noqa: F401
from labs.exercises.secret import hidden_int, hidden_seed
from labs.exercises.three_d_checks import check_3d_step  # noqa: F401
from labs.hybrid.mesh import DIMS, MeshShape
from labs.messages import text

__all__ = ["check_coords", "check_groups", "check_states_per_gpu", "check_choose_layout",
           "check_hybrid_step", "check_3d_step", "choose_layout", "states_per_gpu",
           "RANK_EXERCISES"]

#: Exercises 5 and 6 on ranks (tests/catalog/test_secrets.py finds them through this module).
RANK_EXERCISES = {**hybrid_step_checks.RANK_EXERCISES, **three_d_checks.RANK_EXERCISES}


def _meshes(seed: int, count: int) -> list[MeshShape]:
    """Degrees 2, 3, 4 in a drawn order (a wrong order or stride differs), then ``count`` meshes."""
    rng = random.Random(hidden_seed(TAG, seed))
    return [MeshShape(*rng.sample((2, 3, 4), 3))] + [
        MeshShape(rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 4, 8]))
        for _ in range(count)]


def _whole(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and float(x).is_integer()


def _as_ints(got, n: int, what: str) -> tuple[int, ...]:
    """``got`` as n ints: any iterable, dataclass or array of whole numbers of any type."""
    if dataclasses.is_dataclass(got) and not isinstance(got, type):
        got = [getattr(got, f.name) for f in dataclasses.fields(got)]
    got = got.tolist() if hasattr(got, "tolist") else got
    items = list(got) if hasattr(got, "__iter__") and not isinstance(got, (str, dict)) else None
    if items is None or len(items) != n or not all(_whole(x) for x in items):
        raise ExerciseFailed(text("checks_2_4.not_a_tuple", what=what, n=n, got=got))
    return tuple(int(x) for x in items)


@graded("ex2_4_coords")
def check_coords(student_fn):
    """student_fn(rank, dp, pp, tp) -> (dp_index, pp_index, tp_index), TP innermost."""
    def compare(shape):
        for rank in range(shape.world_size):
            got = _as_ints(student_fn(rank, shape.dp, shape.pp, shape.tp), 3,
                           text("checks_2_4.what_coords", rank=rank))
            if got != tuple(shape.coords(rank)):
                raise ExerciseFailed(text("checks_2_4.coords_wrong", rank=rank, got=got,
                                          expected=tuple(shape.coords(rank)), pp=shape.pp,
                                          tp=shape.tp))
    each_case([(MeshShape(2, 2, 2),), (MeshShape(1, 2, 4),)], [(s,) for s in _meshes(41, 5)],
              "dp={0.dp}, pp={0.pp}, tp={0.tp}", compare)


def _normalise(groups, what: str) -> list[tuple[int, ...]]:
    """Any iterable (a list, a generator) of iterables of whole numbers, as sorted tuples."""
    try:
        return sorted(tuple(sorted(int(r) if _whole(r) else None for r in g)) for g in groups)
    except TypeError:
        raise ExerciseFailed(text("checks_2_4.groups_not_lists", what=what, groups=groups)) \
            from None


@graded("ex2_4_groups")
def check_groups(student_fn):
    """student_fn(dp, pp, tp, dim) -> every group of dimension dim as lists of ranks."""
    def compare(shape, dim):
        got = _normalise(student_fn(shape.dp, shape.pp, shape.tp, dim),
                         text("checks_2_4.what_groups", dim=dim))
        expected = sorted(tuple(g) for g in shape.group_ranks(dim))
        if got != expected:
            raise ExerciseFailed(text("checks_2_4.groups_wrong", dim=dim, count=len(expected),
                                      size=getattr(shape, dim), example=list(expected[0]),
                                      got=[list(g) for g in got]))
    each_case([(MeshShape(2, 2, 2), "tp"), (MeshShape(2, 2, 2), "dp")],
              [(shape, dim) for shape in _meshes(43, 3) for dim in DIMS],
              "dp={0.dp}, pp={0.pp}, tp={0.tp}, dim={1!r}", compare)


def states_per_gpu(n_params: float, tp: int, pp: int, dp: int, zero_stage: int) -> float:
    """Reference: bytes of model states per GPU, mixed precision with Adam (16 B/param)."""
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, dp=dp, zero_stage=zero_stage,
                                            optimizer="adam", precision="mixed").total


GIB = 2**30
#: The parts a student sums: fp16 weights, fp16 gradients, fp32 master weights + Adam's moments.
_PARTS = (("params",), ("grads",), ("master_params", "optimizer_states"))
_PART_KEYS = ("checks_2_4.part_weights", "checks_2_4.part_grads", "checks_2_4.part_optimizer",
              "checks_2_4.part_all")


def _explain_states(args, got) -> None:
    """A wrong total in GiB by part, and the part (or all) whose factor explains the difference."""
    n, tp, pp, dp, z = args
    if not isinstance(got, numbers.Real):
        return  # assert_close has said what the value is
    states = memory.model_state_bytes_per_gpu(n, tp=tp, pp=pp, dp=dp, zero_stage=z,
                                              optimizer="adam", precision="mixed").as_dict()
    parts = [sum(states[k] for k in keys) for keys in _PARTS]
    total, got, which = sum(parts), float(got), ""
    for key, part in zip(_PART_KEYS, (*parts, total)):
        implied = got - (total - part)  # this part, if the other two are right
        if any(f != 1 and part and abs(implied - f * part) <= 1e-6 * total
               for f in (0.0, dp, 1 / dp, tp * pp, 1 / (tp * pp), 2.0, 0.5, 2 / 3)):
            which = text("checks_2_4.states_part_off", part=text(key), got_gib=implied / GIB,
                         want_gib=part / GIB)
            break
    raise ExerciseFailed(text("checks_2_4.states_wrong", want_gib=total / GIB, got_gib=got / GIB,
                              weights_gib=parts[0] / GIB, grads_gib=parts[1] / GIB,
                              optimizer_gib=parts[2] / GIB, which=which))


def _states_cases() -> list[tuple]:
    """Every ZeRO stage twice, tp, pp, dp distinct and above 1 (a wrong degree or stage is seen)."""
    rng = random.Random(hidden_seed(TAG, 47))
    return [(rng.choice([1.3e9, 6.7e9, 65.2e9, 175e9]), rng.choice([2, 4, 8]),
             rng.choice([3, 6, 12]), rng.choice([16, 32, 64]), stage)
            for stage in (0, 1, 2, 3) for _ in range(2)]


@graded("ex2_4_memory")
def check_states_per_gpu(student_fn):
    """student_fn(n_params, tp, pp, dp, zero_stage) -> bytes per GPU (mixed precision, Adam)."""
    def compare(*args):
        got = student_fn(*args)
        try:
            assert_close(states_per_gpu(*args), got, what=text("checks_2_4.what_state_bytes"),
                         dtype="float64")
        except ExerciseFailed:
            _explain_states(args, got)
            raise
    each_case([(175e9, 8, 16, 8, 0), (530e9, 8, 35, 8, 1)], _states_cases(),
              "N={:.3g}, tp={}, pp={}, dp={}, ZeRO-{}", compare)


def choose_layout(n_params: float, n_layers: int, n_heads: int, n_gpus: int, gpus_per_node: int,
                  budget_bytes: float):
    """Reference (PTD-P's takeaways, arXiv:2104.04473 §3, on model states alone): (dp, pp, tp)
    whose states (mixed Adam, no ZeRO) fit the budget, tp inside a node dividing the heads, pp
    dividing the layers, dp·pp·tp = n_gpus; the smallest tp·pp, then the largest tp; or None."""
    fits = [(tp * pp, -tp, (n_gpus // (tp * pp), pp, tp))
            for tp in range(1, min(gpus_per_node, n_heads) + 1) for pp in range(1, n_layers + 1)
            if not (n_heads % tp or n_layers % pp or n_gpus % (tp * pp))
            and states_per_gpu(n_params, tp, pp, n_gpus // (tp * pp), 0) <= budget_bytes]
    return min(fits)[2] if fits else None


#: The hidden layout cases, one per rule a wrong answer breaks: (layers, heads, GPUs per node,
#: GPUs = unit × an odd k (dp is never tp: a reversed tuple is seen), the window (q, w] of the
#: smallest tp·pp that fits (w None: nothing fits)), and the layout each answers:
_LAYOUTS = (
    (32, 16, 8, 8, 2, 4),     # a tie of tp·pp = 4: (4, 1), not (1, 4) nor (8, 1)
    (20, 48, 8, 24, 4, 6),    # the budget met exactly (<=, not <): tp = 6, no power of 2
    (16, 12, 8, 8, 6, 8),     # 12 heads: (4, 2), not tp = 8
    (64, 20, 4, 40, 4, 5),    # 4 GPUs per node: (4, 2), not tp = 5 nor tp <= 3
    (87, 64, 8, 48, 12, 16),  # 87 layers: pp = 3, not 2
    (96, 64, 8, 24, 12, 16),  # 24k GPUs: tp·pp = 24, not 16
    (8, 8, 8, 8, 8, None),    # nothing fits: None
    (4, 2, 2, 8, 4, 8),       # pp = n_layers = 4
    (24, 32, 8, 24, 4, 6),    # tp·pp = 6 by (2, 3), not the pp = 1 of tp = 8
    (2, 16, 8, 8, 4, 8),      # 2 layers, tp = 8 > n_layers
)


def _layout_cases() -> list[tuple]:
    """:data:`_LAYOUTS`, parameters (a multiple of 24: the second row's budget exactly the states
    at tp·pp = 6), k and the budget's place in its window drawn from the secret."""
    rows = []
    for k, (layers, heads, per_node, unit, q, w) in enumerate(_LAYOUTS):
        n, odd, u = (hidden_int(TAG, 200 + 10 * k + j, *r) for j, r in
                     enumerate(((5, 5000, 100), (1, 7, 1), (10, 90, 50))))
        n, u = 24e6 * n, u / 100
        budget = 16 * n / q * (1 - u / 2) if w is None else \
            16 * n / w * (1 if k == 1 else 1 + (w / q - 1) * u)
        rows.append((n, layers, heads, unit * (2 * odd + 1), per_node, budget))
    return rows


def _layout_why(got, n, layers, heads, gpus, per_node, budget) -> str:
    """The first rule ``got`` (read as (dp, pp, tp)) breaks, in the exercise's order: the GPU
    count, tp (heads, node), pp (layers: its own message), the budget; '' if it breaks none."""
    dp, pp, tp = got
    if dp * pp * tp != gpus:
        return text("checks_2_4.layout_gpu_count", product=dp * pp * tp, gpus=gpus)
    if tp < 1 or heads % tp or tp > per_node:
        return text("checks_2_4.layout_tp", tp=tp, heads=heads, per_node=per_node)
    if pp < 1 or layers % pp:
        return text("checks_2_4.layout_pp", pp=pp, layers=layers)
    need = states_per_gpu(n, tp, pp, dp, 0)
    if need > budget:
        return text("checks_2_4.layout_memory", budget_gb=budget / 1e9, need_gb=need / 1e9)
    return ""


def _layout_failure(expected, got, args) -> ExerciseFailed:
    """What is wrong with ``got`` (not ``expected``): the constraints first (each with its own
    message), then -- only as an addition -- that ``got`` is ``expected`` reversed."""
    if got is None:
        return ExerciseFailed(text("checks_2_4.layout_none_but_fits", expected=expected))
    why = _layout_why(got, *args)
    if expected is None:
        return ExerciseFailed(text("checks_2_4.layout_none_expected", got=got,
                                   why=why or text("checks_2_4.layout_not_best")))
    why = why or text("checks_2_4.layout_not_best")
    if got == tuple(reversed(expected)):
        why = text("checks_2_4.layout_reversed", why=why, expected=expected, got=got)
    return ExerciseFailed(text("checks_2_4.layout_wrong", expected=expected, got=got, why=why))


@graded("ex2_4_layout")
def check_choose_layout(student_fn):
    """student_fn(n_params, n_layers, n_heads, n_gpus, gpus_per_node, budget_bytes) ->
    (dp, pp, tp) or None, by the rule of :func:`choose_layout`."""
    def compare(*args):
        expected, got = choose_layout(*args), student_fn(*args)
        if got is not None:
            got = _as_ints(got, 3, text("checks_2_4.what_layout"))
        if got != expected:
            raise _layout_failure(expected, got, args)
    each_case([(175e9, 96, 96, 1024, 8, 60e9), (1.3e9, 24, 32, 16, 8, 60e9)], _layout_cases(),
              lambda n, layers, heads, gpus, per, budget: text("checks.case_call", call=text(
                  "checks_2_4.layout_case", n=n, layers=layers, heads=heads, gpus=gpus,
                  per_node=per, budget_gb=budget / 1e9)), compare)
