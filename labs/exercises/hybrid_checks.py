"""Checks of the graded exercises of notebook 2.4 (hybrid parallelism).

The student's functions are compared with the lab's reference (:mod:`labs.hybrid.mesh`,
:mod:`labs.memory`) on shown and hidden cases (with the instructor's secret set, the hidden
cases' seeds and numbers are drawn from it: :mod:`labs.exercises.secret`)::

    check_coords(coords)                  # ex2_4_coords, 1 point
    check_groups(groups)                  # ex2_4_groups, 2 points
    check_states_per_gpu(states_per_gpu)  # ex2_4_memory, 2 points
    check_choose_layout(choose_layout)    # ex2_4_layout, 3 points
    check_hybrid_step(hybrid_step)        # ex2_4_hybrid_step, 4 points (real ranks)

:func:`choose_layout` is the reference of the last exercise: the rule of PTD-P's first
takeaway (Narayanan et al. 2021, arXiv:2104.04473, §3.3) on model states alone. The last
check runs the student's DP × TP step (groups with ``dist.new_group``, a Megatron-split MLP,
the DP average) on real ranks and compares every gradient shard with one process.

Owns: 2.4's checks and their hidden cases. Must not: import the grader or the planner widget, print
(the verdict is labs.exercises.checks'), or keep process groups in globals.
"""

from __future__ import annotations

import random

from labs import memory
from labs.exercises.checks import ExerciseFailed, assert_close, assert_equal, case, graded
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.hybrid.mesh import DIMS, MeshShape
from labs.messages import text

__all__ = ["check_coords", "check_groups", "check_states_per_gpu", "check_choose_layout",
           "check_hybrid_step", "choose_layout", "states_per_gpu", "HYBRID_TIMEOUT"]


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
    return True


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
    return True


def states_per_gpu(n_params: float, tp: int, pp: int, dp: int, zero_stage: int) -> float:
    """Reference: bytes of model states per GPU, mixed precision with Adam (16 B/param)."""
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, dp=dp, zero_stage=zero_stage,
                                            optimizer="adam", precision="mixed").total


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
            assert_close(states_per_gpu(*args), student_fn(*args),
                         what=text("checks_2_4.what_state_bytes"), dtype="float64")
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
    return True


# --- exercise 5: one DP × TP step on real ranks ----------------------------------------------

HYBRID_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s once started

#: Ready-made pieces that would do the exercise's work: they raise inside the check's ranks.
_READY_MADE_FUNCTIONS = (("labs.hybrid.mesh", "new_groups"), ("labs.hybrid.mesh", "device_mesh"),
                         ("torch.distributed.device_mesh", "init_device_mesh"))
_READY_MADE_CLASSES = (("labs.tensor_parallel.layers", "ColumnParallelLinear"),
                       ("labs.tensor_parallel.layers", "RowParallelLinear"),
                       ("labs.tensor_parallel.layers", "ParallelMLP"),
                       ("torch.distributed.device_mesh", "DeviceMesh"))


class _guarded:
    """Inside a rank: the ready-made groups and layers raise; every ``dist.new_group`` call is
    recorded (the ranks it was given) and passed on."""

    def __init__(self, calls: list):
        self.calls = calls

    def __enter__(self):
        import importlib

        import torch.distributed as dist

        self.saved = []

        def refusal(shown):
            return ExerciseFailed(text("checks_2_4.no_ready_made", shown=shown))

        for module_name, name in _READY_MADE_FUNCTIONS:
            module = importlib.import_module(module_name)

            def refuse(*args, _shown=f"{module_name}.{name}", **kwargs):
                raise refusal(_shown)
            self.saved.append((module, name, getattr(module, name)))
            setattr(module, name, refuse)
        for module_name, name in _READY_MADE_CLASSES:
            cls = getattr(importlib.import_module(module_name), name)

            def refuse_init(self_, *args, _shown=f"{module_name}.{name}", **kwargs):
                raise refusal(_shown)
            self.saved.append((cls, "__init__", cls.__init__))
            cls.__init__ = refuse_init
        new_group, calls = dist.new_group, self.calls

        def recording_new_group(ranks=None, *args, **kwargs):
            mine = None if ranks is None else sorted(int(r) for r in ranks)
            calls.append(mine)
            # torch wants every rank to create every group, in the same order: compare the
            # ranks every rank gives this call (over the default group) before creating it
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, mine)
            other = next((r for r, g in enumerate(everyone) if g != everyone[0]), None)
            if other is not None:
                raise ExerciseFailed(text("checks_2_4.new_group_differs", call=len(calls),
                                          first=everyone[0], other=other, theirs=everyone[other]))
            return new_group(ranks, *args, **kwargs)
        self.saved.append((dist, "new_group", new_group))
        dist.new_group = recording_new_group
        return self

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        return False


def _mlp_case(sizes, batch, seed):
    """Full weights w1 (H, D_in), w2 (D_out, H) and the global batch x (B, D_in), y (B, D_out)."""
    import torch

    d_in, hidden, d_out = sizes
    gen = torch.Generator().manual_seed(seed)
    w1 = torch.randn(hidden, d_in, generator=gen) / d_in ** 0.5
    w2 = torch.randn(d_out, hidden, generator=gen) / hidden ** 0.5
    x = torch.randn(batch, d_in, generator=gen)
    y = torch.randn(batch, d_out, generator=gen)
    return w1, w2, x, y


def _mlp_grads(w1, w2, x, y):
    """One process: the full gradients of mean((relu(x w1^T) w2^T - y)^2) on rows x, y."""
    import torch

    w1, w2 = w1.clone().requires_grad_(), w2.clone().requires_grad_()
    loss = ((torch.relu(x @ w1.T) @ w2.T - y) ** 2).mean()
    loss.backward()
    return w1.grad, w2.grad


def _partial_grads(w1, w2, x, y, tp):
    """The gradient shards of a step without the TP all-reduce of the second layer (each TP
    rank's loss on its partial sum), DP-averaged: what forgetting g gives."""
    return [_mlp_grads(a, b, x, y) for a, b in zip(w1.chunk(tp, dim=0), w2.chunk(tp, dim=1))]


def _hybrid_on_rank(student_fn, dp, tp, sizes, batch, seed):
    """Inside a rank: the student's step on the full weights and the global batch."""
    w1, w2, x, y = _mlp_case(sizes, batch, seed)
    calls: list = []
    with _guarded(calls):
        got = student_fn(dp, tp, w1.clone(), w2.clone(), x.clone(), y.clone())
    if isinstance(got, (list, tuple)):
        got = [g.detach().clone() if hasattr(g, "detach") else g for g in got]
    return dict(grads=got, calls=calls)


def _shard_of(tensor, tp, dim, grads, rank):
    """Which TP shard of ``tensor`` (chunked along ``dim``) ``grads`` equals, or None."""
    import torch

    for t, chunk in enumerate(tensor.chunk(tp, dim=dim)):
        if chunk.shape == grads.shape and torch.allclose(chunk, grads, rtol=1e-4, atol=1e-6):
            return t
    return None


def _check_hybrid_case(student_fn, dp, tp, sizes, batch, seed):
    import torch

    shape = MeshShape(dp=dp, pp=1, tp=tp)
    results = run_on_ranks(_hybrid_on_rank, shape.world_size,
                           (student_fn, dp, tp, sizes, batch, seed), timeout=HYBRID_TIMEOUT)
    w1, w2, x, y = _mlp_case(sizes, batch, seed)
    full = _mlp_grads(w1, w2, x, y)
    local = [_mlp_grads(w1, w2, xs, ys) for xs, ys in zip(x.chunk(dp), y.chunk(dp))]
    partial = _partial_grads(w1, w2, x, y, tp) if tp > 1 else None
    needed = [g for dim in ("tp", "dp") for g in shape.group_ranks(dim) if len(g) > 1]
    first = results[0]["calls"]
    for rank, result in enumerate(results):
        calls = result["calls"]
        missing = [g for g in needed if g not in calls]
        if missing:
            raise ExerciseFailed(text("checks_2_4.new_group_missing", rank=rank, group=missing[0]))
        if calls != first:
            raise ExerciseFailed(text("checks_2_4.new_group_order", rank=rank, first=first,
                                      calls=calls))
    names = [text("checks_2_4.what_shard", weight=weight) for weight in ("w1", "w2")]
    for rank, result in enumerate(results):
        got = result["grads"]
        if not isinstance(got, (list, tuple)) or len(got) != 2 or \
                not all(torch.is_tensor(g) for g in got):
            raise ExerciseFailed(text("checks_2_4.not_two_tensors", rank=rank, got=got))
        d, _, t = shape.coords(rank)
        for k, (what, dim) in enumerate(zip(names, (0, 1))):
            expected = full[k].chunk(tp, dim=dim)[t]
            g = got[k].to(expected.dtype)
            if g.shape != expected.shape:
                raise ExerciseFailed(text("checks_2_4.shard_shape", rank=rank, what=what,
                                          expected=tuple(expected.shape), got=tuple(g.shape)))
            if torch.allclose(g, expected, rtol=1e-4, atol=1e-6):
                continue
            other = _shard_of(full[k], tp, dim, g, rank)
            if other is not None:
                raise ExerciseFailed(text("checks_2_4.shard_other_rank", rank=rank, other=other,
                                          what=what, t=t, tp=tp))
            if dp > 1 and torch.allclose(g, dp * expected, rtol=1e-4, atol=1e-6):
                raise ExerciseFailed(text("checks_2_4.shard_times_dp", rank=rank, what=what, dp=dp))
            mine = local[d][k].chunk(tp, dim=dim)[t]
            if dp > 1 and any(torch.allclose(g, m, rtol=1e-4, atol=1e-6) for m in (mine, mine / dp)):
                raise ExerciseFailed(text("checks_2_4.shard_local_batch", rank=rank, what=what,
                                          dp=dp))
            if partial is not None and torch.allclose(g, partial[t][k], rtol=1e-4, atol=1e-6):
                raise ExerciseFailed(text("checks_2_4.shard_partial_sum", rank=rank, what=what))
            assert_close(expected, g, what=what, rank=rank)
    return True


#: The hidden cases of the hybrid step: (dp, tp) among the meshes listed (at most 4 ranks; the
#: first is the notebook tests' one), then the ranges of D_in, of the rows of w1 per TP rank, of
#: D_out and of the rows of the batch per DP rank, each with the tests' value.
_STEP_HIDDEN = (
    # DP strides and TP strides differ: a mesh built with dp and tp swapped fails
    (((4, 1), (3, 1)), (3, 7, 5), (4, 10, 6), (2, 5, 3), (2, 3, 2)),
    (((1, 4), (1, 3), (1, 2)), (2, 5, 3), (2, 4, 3), (2, 4, 2), (3, 6, 4)),
    (((2, 1), (3, 1)), (3, 6, 4), (6, 12, 10), (3, 6, 5), (2, 4, 3)),
    # an uneven hidden size that tp divides: an odd number of rows (3 in the tests) per TP rank
    (((2, 2),), (3, 7, 5), None, (2, 5, 4), (4, 8, 6)),
)


def _step_cases() -> list[tuple]:
    """(dp, tp, (D_in, H, D_out), B) of every case of :func:`check_hybrid_step`: the shown
    one, then the hidden ones (drawn from the secret when one is set)."""
    cases = [(2, 2, (4, 8, 3), 8)]  # the shown case
    for k, (meshes, d_in, rows, d_out, per_dp) in enumerate(_STEP_HIDDEN):
        seed = 300 + 10 * k
        dp, tp = meshes[hidden_int(_TAG, seed, 0, len(meshes) - 1, 0)]
        if rows is None:  # 2·j + 1 rows per TP rank, j in 1..3 (1 without a secret)
            per_tp = 2 * hidden_int(_TAG, seed + 2, 1, 3, 1) + 1
        else:
            per_tp = hidden_int(_TAG, seed + 2, *rows)
        sizes = (hidden_int(_TAG, seed + 1, *d_in), tp * per_tp, hidden_int(_TAG, seed + 3, *d_out))
        cases.append((dp, tp, sizes, dp * hidden_int(_TAG, seed + 4, *per_dp)))
    return cases


@graded("ex2_4_hybrid_step")
def check_hybrid_step(student_fn):
    """student_fn(dp, tp, w1, w2, x, y) on every rank of a dp × tp mesh (pp = 1, TP innermost)
    -> (grad of this rank's rows of w1, grad of this rank's columns of w2), averaged over DP."""
    for k, (dp, tp, sizes, batch) in enumerate(_step_cases()):
        d_in, hidden, d_out = sizes
        label = (text("checks.case_hidden", n=k) if k > 0
                 else text("checks.case_numbered", n=k + 1, what=text(
                     "checks_2_4.step_case", dp=dp, tp=tp, d_in=d_in, hidden=hidden, d_out=d_out,
                     batch=batch)))
        with case(label, hidden=k > 0):
            _check_hybrid_case(student_fn, dp, tp, sizes, batch, seed=hidden_seed(_TAG, 90 + k))
    return True
