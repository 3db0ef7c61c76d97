"""Notebook 2.0's sweep readings hold on a busy machine (issue 31, 2.0 c35-c37).

α comes from the smallest messages only, β is the slope between two printed points (so the
reader can recompute it), a latency region that falls as messages grow is called noise, and the
ring-vs-library verdict is withheld while the ratio lies within the rerun-to-rerun noise.
Asserted on numbers and message keys (the catalog's text is tested with the messages).
"""
from __future__ import annotations

import pytest

from labs import bandwidth
from tests.support.messages import recorded_keys

KiB, MiB = 2**10, 2**20
SIZES = [KiB * 4**k for k in range(9)]


def ideal(alpha, beta):
    return [alpha + s / beta for s in SIZES]


@pytest.fixture
def keys(monkeypatch):
    """Replace the catalog lookup: every message becomes '<key>' (its fields recorded)."""
    return recorded_keys(monkeypatch, bandwidth)


def test_alpha_comes_from_the_smallest_messages_and_beta_from_two_printed_points(keys):
    times = ideal(10e-3, 0.5e9)
    times[5] = 5.5e-3  # 1 MiB faster than 1 KiB: the sweep's global minimum, not α
    fit = bandwidth.latency_bandwidth_fit(SIZES, times)
    assert fit["latency_s"] == pytest.approx(times[0])
    assert fit["latency_points"] == bandwidth.LATENCY_POINTS == 3
    assert fit["bandwidth"] == pytest.approx((SIZES[-1] - SIZES[0]) / (times[-1] - times[0]))
    assert fit["falling_at"] == 5
    bandwidth.interpret_sweep(SIZES, {"gloo": times}, 4, windows=((0, 3),), cores=2)
    line = dict(keys)["collectives.sweep_line"]
    assert line["first"] == "1 KiB" and line["last_small"] == "16 KiB"
    assert line["alpha"] == "10.00 ms" and line["size"] == "64 MiB"
    assert line["t_max"] == f"{times[-1] * 1e3:.2f} ms"
    assert line["beta"] == pytest.approx(fit["bandwidth"] / 1e9)
    falling = dict(keys)["collectives.latency_falling"]
    assert falling["at"] == "1 MiB" and falling["t_at"] == "5.50 ms"


def test_a_steady_latency_region_is_not_called_noise(keys):
    times = ideal(3e-3, 0.5e9)
    times[1] *= 0.9  # 10 % below: inside SAME_WITHIN
    assert bandwidth.latency_bandwidth_fit(SIZES, times)["falling_at"] is None
    bandwidth.interpret_sweep(SIZES, {"gloo": times}, 4, windows=((0, 3),), cores=2)
    assert "collectives.latency_falling" not in dict(keys)


@pytest.mark.parametrize("small, large, small_key, large_key", [
    (1.18, 1.01, "collectives.within_noise_rerun", "collectives.large_expected"),
    (1.30, 1.20, "collectives.within_noise_rerun", "collectives.within_noise_rerun"),
    (1.60, 1.80, "collectives.small_expected", "collectives.large_implementation"),
    (0.80, 0.78, "collectives.within_noise_rerun", "collectives.within_noise_rerun"),
    (0.60, 1.00, "collectives.small_disagrees_faster", "collectives.large_expected"),
    (1.05, 1.10, "collectives.small_disagrees_tie", "collectives.large_expected"),
])
def test_ring_verdict_only_outside_the_noise(keys, small, large, small_key, large_key):
    lib = [4e-3] * (len(SIZES) - 1) + [0.2]
    ring = [lib[0] * small] + lib[1:-1] + [lib[-1] * large]
    bandwidth.interpret_ring_vs_library(SIZES, ring, lib, world_size=4, cores=2)
    used = [k for k, _ in keys]
    readings = [k for k in used if k.split(".")[1].startswith(("small_", "large_", "within_"))]
    assert readings == [large_key, small_key]
    words = [k for k in used if k.split(".")[1].startswith("ratio_") and k != "collectives.ratio_line"]
    for ratio, word in zip((large, small), words):
        noisy = 1 + bandwidth.SAME_WITHIN < ratio <= 1 + bandwidth.NOISE_WITHIN or \
            1 / (1 + bandwidth.NOISE_WITHIN) <= ratio < 1 - bandwidth.SAME_WITHIN
        assert (word == "collectives.ratio_within_noise") == noisy


# --- 2.1 c37: the small model's speedup is read only when its numbers are consistent ----------

def _sp(t1, tn, load):
    s = 2 * t1 / tn
    return dict(t1=t1, tn=tn, world_size=2, speedup=s, efficiency=s / 2, load_average=load,
                cores=2)


def _cc(compute, comm, params, batch):
    return dict(compute=compute, comm=comm, params=params, bytes=4 * params,
                batch_per_rank=batch, world_size=2)


@pytest.mark.parametrize("tn_ms, load", [(1.0, 0.75), (1.48, 1.6)])  # 1.30x and 0.89x
def test_a_step_shorter_than_its_own_all_reduce_is_noise(monkeypatch, tn_ms, load):
    from labs.data_parallel import experiments as dpx

    seen = []
    monkeypatch.setattr(dpx, "text", lambda key, **f: seen.append((key, f)) or f"<{key}>")
    small, heavy = _sp(0.66e-3, tn_ms * 1e-3, load), _sp(0.144, 0.172, load)
    out = dpx.interpret_model_size(small, heavy, _cc(0.43e-3, 1.77e-3, 4_192, 32),
                                   _cc(0.126, 0.0234, 6_296_064, 512), names=("small", "heavy"))
    last = out.splitlines()[-1]
    assert last == "<data_parallel.conclusion_bound_broken>"
    fields = dict(seen)["data_parallel.conclusion_bound_broken"]
    assert fields["tn"] == f"{tn_ms:.2f} ms" and fields["comm"] == "1.77 ms"
    assert fields["load"] == load and fields["speedup"] == pytest.approx(2 * 0.66 / tn_ms)


def test_consistent_numbers_still_get_a_conclusion(monkeypatch):
    from labs.data_parallel import experiments as dpx

    monkeypatch.setattr(dpx, "text", lambda key, **f: f"<{key}>")
    small, heavy = _sp(1.0e-3, 1.9e-3, 0.5), _sp(0.242, 0.262, 0.5)
    out = dpx.interpret_model_size(small, heavy, _cc(0.5e-3, 1.0e-3, 4_192, 32),
                                   _cc(0.244, 0.0335, 6_296_064, 512), names=("small", "heavy"))
    assert out.splitlines()[-1] == "<data_parallel.conclusion_expected_flat>"
