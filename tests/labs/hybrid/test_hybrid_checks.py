"""The checks of notebook 2.4's exercises pass the references and catch typical mistakes."""
from __future__ import annotations

import pytest

from labs.exercises import hybrid_checks as hc
from labs.exercises.checks import ExerciseFailed
from labs.hybrid.mesh import MeshShape
from tests.support.messages import pattern


def coords(rank, dp, pp, tp):
    return tuple(MeshShape(dp, pp, tp).coords(rank))


def coords_tp_outermost(rank, dp, pp, tp):
    t, rest = divmod(rank, dp * pp)
    d, p = divmod(rest, pp)
    return d, p, t


def groups(dp, pp, tp, dim):
    return MeshShape(dp, pp, tp).group_ranks(dim)


def groups_by_block(dp, pp, tp, dim):  # consecutive blocks for every dimension: right for TP only
    size = {"dp": dp, "pp": pp, "tp": tp}[dim]
    return [list(range(s, s + size)) for s in range(0, dp * pp * tp, size)]


def states_without_master(n, tp, pp, dp, zero_stage):
    return hc.states_per_gpu(n, tp, pp, dp, zero_stage) - 4 * n / (tp * pp) / (dp if zero_stage else 1)


def layout_pipeline_first(n, layers, heads, gpus, per_node, budget):
    for tp in range(1, per_node + 1):
        for pp in range(1, layers + 1):
            if heads % tp or layers % pp or gpus % (tp * pp):
                continue
            if hc.states_per_gpu(n, tp, pp, gpus // (tp * pp), 0) <= budget:
                return gpus // (tp * pp), pp, tp
    return None


@pytest.mark.parametrize("check, right, wrong", [
    (hc.check_coords, coords, coords_tp_outermost),
    (hc.check_groups, groups, groups_by_block),
    (hc.check_states_per_gpu, hc.states_per_gpu, states_without_master),
    (hc.check_choose_layout, hc.choose_layout, layout_pipeline_first),
])
def test_check_passes_the_reference_and_fails_a_typical_mistake(check, right, wrong, capsys):
    assert check(right) is None  # a check cell echoes nothing under its verdict
    with pytest.raises(ExerciseFailed):
        check(wrong)
    out = capsys.readouterr().out
    assert pattern("checks.verdict_passed").search(out), out
    assert pattern("checks.verdict_failed").search(out), out


def test_layout_reference_on_known_cases():
    # GPT-3 175B on 1,024 GPUs, 60 GB for model states: 175e9 · 16 B / 60e9 = 46.7 -> tp·pp >= 64
    # with pp | 96 and tp | 96, tp <= 8: tp=8, pp=8 (64 GPUs per replica), dp = 1024 / 64 = 16.
    assert hc.choose_layout(175e9, 96, 96, 1024, 8, 60e9) == (16, 8, 8)
    # A 1.3B model fits one GPU (20.8 GB): pure data parallelism.
    assert hc.choose_layout(1.3e9, 24, 32, 16, 8, 60e9) == (16, 1, 1)
    # 2T parameters on 512 GPUs need 32 TB / 75 GB = 427 GPUs of states: 512 = 8 · 64, but 64
    # stages do not divide 120 layers and 8 · 40 = 320 is too few: nothing fits.
    assert hc.choose_layout(2e12, 120, 128, 512, 8, 75e9) is None
