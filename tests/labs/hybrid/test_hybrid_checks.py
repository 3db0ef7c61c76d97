"""Notebook 2.4's exercises 1-4: under every secret the hidden cases separate the plausible wrong
answers from the right one (issue 37: a score must not depend on the secret drawn), compared
here without running the checks (tests/catalog/answers_2_4.py grades answers through them)."""
from __future__ import annotations

import random

import pytest

from labs.exercises import hybrid_checks as hc
from labs.exercises.secret import SECRET_ENV
from labs.hybrid.mesh import MeshShape

SECRETS = [None] + [f"{random.Random(k).getrandbits(64):016x}" for k in range(60)]


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


def layout(key=lambda tp, pp: (tp * pp, -tp), *, heads=True, node=True, layers=True, gpus=True,
           strict=False, tps=None, pp_end=1, none=None):
    """A layout rule like the reference's, with one of its parts changed (a plausible mistake)."""
    def choose(n, n_layers, n_heads, n_gpus, per_node, budget):
        found = []
        for tp in tps or range(1, (min(per_node, n_heads) if node else n_heads) + 1):
            for pp in range(1, n_layers + pp_end):
                if (heads and n_heads % tp) or (layers and n_layers % pp) or \
                        (gpus and n_gpus % (tp * pp)) or n_gpus < tp * pp:
                    continue
                states = hc.states_per_gpu(n, tp, pp, n_gpus // (tp * pp), 0)
                if states < budget or (states == budget and not strict):
                    found.append((key(tp, pp), (n_gpus // (tp * pp), pp, tp)))
        return min(found)[1] if found else none
    return choose


WRONG = {
    "coords TP outermost": ("coords", coords_tp_outermost),
    "coords (dp, pp) swapped": ("coords", lambda r, dp, pp, tp: coords(r, pp, dp, tp)[::-1]),
    "groups by block": ("groups", groups_by_block),
    "DP groups tp apart": ("groups", lambda dp, pp, tp, dim: groups(dp * pp, 1, tp, dim)
                           if dim == "dp" else groups(dp, pp, tp, dim)),
    "states without master weights": (hc._states_cases, states_without_master),
    "ZeRO stages with ==": (hc._states_cases, lambda n, tp, pp, dp, z: hc.states_per_gpu(
        n, tp, pp, dp, 0) - (z >= 1) * 12 * n / (tp * pp) * (1 - 1 / dp) * (z == 1)
        - 2 * n / (tp * pp) * (1 - 1 / dp) * (z == 2) - 2 * n / (tp * pp) * (1 - 1 / dp) * (z == 3)),
    "states divided by tp only": (hc._states_cases, lambda n, tp, pp, dp, z: hc.states_per_gpu(
        n * pp, tp, pp, dp, z)),
    "layout: ties to the smaller tp": (hc._layout_cases, layout(lambda tp, pp: (tp * pp, tp))),
    "layout: the smallest tp first": (hc._layout_cases, layout(lambda tp, pp: (tp, pp))),
    "layout: the largest tp first": (hc._layout_cases, layout(lambda tp, pp: (-tp, pp))),
    "layout: the least pipeline first": (hc._layout_cases, layout(lambda tp, pp: (pp, -tp))),
    "layout: heads ignored": (hc._layout_cases, layout(heads=False)),
    "layout: node size ignored": (hc._layout_cases, layout(node=False)),
    "layout: layers ignored": (hc._layout_cases, layout(layers=False)),
    "layout: GPU count ignored": (hc._layout_cases, layout(gpus=False)),
    "layout: budget strict": (hc._layout_cases, layout(strict=True)),
    "layout: tp a power of 2": (hc._layout_cases, layout(tps=(1, 2, 4, 8))),
    "layout: pp < n_layers": (hc._layout_cases, layout(pp_end=0)),
    "layout: tp < per node": (hc._layout_cases, lambda *a: layout(tps=range(1, a[4]))(*a)),
    "layout: never None": (hc._layout_cases, layout(none=(1, 1, 1))),
    "layout: reversed": (hc._layout_cases, lambda *a: hc.choose_layout(*a)[::-1]
                         if hc.choose_layout(*a) else None),
}
RIGHT = {hc._states_cases: hc.states_per_gpu, hc._layout_cases: hc.choose_layout}


def _separated(cases, wrong) -> bool:
    """Whether ``wrong`` differs from the reference on one of the hidden cases."""
    meshes = hc._meshes(41, 5) + hc._meshes(43, 3)
    if cases == "coords":
        return any(wrong(r, m.dp, m.pp, m.tp) != coords(r, m.dp, m.pp, m.tp)
                   for m in meshes for r in range(m.world_size))
    if cases == "groups":
        return any(sorted(map(sorted, wrong(m.dp, m.pp, m.tp, d))) != sorted(groups(
            m.dp, m.pp, m.tp, d)) for m in meshes for d in ("dp", "pp", "tp"))
    right = RIGHT[cases]
    return any(abs(wrong(*a) - right(*a)) > 1e-6 * right(*a) if cases is hc._states_cases
               else wrong(*a) != right(*a) for a in cases())


@pytest.mark.parametrize("name", list(WRONG))
def test_every_secret_separates(name, monkeypatch):
    cases, wrong = WRONG[name]
    for secret in SECRETS:
        if secret is None:
            monkeypatch.delenv(SECRET_ENV, raising=False)
        else:
            monkeypatch.setenv(SECRET_ENV, secret)
        assert _separated(cases, wrong), f"{name} passes the hidden cases of secret {secret}"


def test_layout_reference_on_known_cases():
    # GPT-3 175B on 1,024 GPUs, 60 GB for model states: 175e9 · 16 B / 60e9 = 46.7 -> tp·pp >= 64
    # with pp | 96 and tp | 96, tp <= 8: tp=8, pp=8 (64 GPUs per replica), dp = 1024 / 64 = 16.
    assert hc.choose_layout(175e9, 96, 96, 1024, 8, 60e9) == (16, 8, 8)
    # A 1.3B model fits one GPU (20.8 GB): pure data parallelism.
    assert hc.choose_layout(1.3e9, 24, 32, 16, 8, 60e9) == (16, 1, 1)
    # 2T parameters on 512 GPUs need 32 TB / 75 GB = 427 GPUs of states: 512 = 8 · 64, but 64
    # stages do not divide 120 layers and 8 · 40 = 320 is too few: nothing fits.
    assert hc.choose_layout(2e12, 120, 128, 512, 8, 75e9) is None
    # the hidden cases answer what their rows say, without a secret
    assert [hc.choose_layout(*a) for a in hc._layout_cases()] == [
        (6, 1, 4), (12, 1, 6), (3, 2, 4), (15, 2, 4), (6, 3, 8), (3, 3, 8), None, (3, 4, 2),
        (12, 3, 2), (3, 1, 8)]
