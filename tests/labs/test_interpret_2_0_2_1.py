"""The interpretation functions of notebooks 2.0 and 2.1 follow the numbers they are given.

Each notebook prints its machine-dependent conclusions (where latency turns into bandwidth,
which all-reduce wins at 1 KiB, how much data parallelism speeds up a small model) from the
measured numbers. Here they get synthetic measurements of a "fast" machine that shows the
usual picture, a "slow" one (a few cores shared by the ranks, loopback), and one that
disagrees with the usual picture; the printed conclusion must follow each.
"""
from __future__ import annotations

import math

import pytest

from labs import collectives
from labs.data_parallel import experiments as dpx
from labs.hardware import GPUS
from labs.messages import sentences, text as message
from tests.support.messages import said

KiB, MiB = 2**10, 2**20
SIZES = [KiB * 4**k for k in range(9)]  # 1 KiB .. 64 MiB, as notebook 2.0 sweeps
WINDOWS = ((0, 3), (5, 8))  # 1 KiB -> 64 KiB, 1 MiB -> 64 MiB


def orders(decade: int) -> str:
    """How the readings say "``decade`` to ``decade + 1`` orders of magnitude" (0: under one)."""
    numerals = message("collectives.numerals").split()
    if decade == 0:
        return message("collectives.under_one_order")
    return message("collectives.orders_between", low=numerals[decade - 1], high=numerals[decade])


def alpha_beta_times(alpha_s, bus_bytes_per_s, world_size=4):
    """Times of an ideal alpha-beta all-reduce whose bus bandwidth is ``bus_bytes_per_s``."""
    beta = bus_bytes_per_s / (2 * (world_size - 1) / world_size)  # algorithm bandwidth S/t
    return [alpha_s + s / beta for s in SIZES]


# --- 2.0: the alpha-beta reading of a sweep -------------------------------------------------

def test_fit_recovers_alpha_beta_and_the_crossover():
    times = alpha_beta_times(3e-3, 0.75e9)
    fit = collectives.latency_bandwidth_fit(SIZES, times)
    assert fit["latency_s"] == pytest.approx(3e-3, rel=1e-2)  # plus 1 KiB / beta
    beta = 0.75e9 / 1.5
    assert fit["bandwidth"] == pytest.approx(beta, rel=1e-3)
    assert fit["crossover_bytes"] == pytest.approx(3e-3 * beta, rel=1e-3)
    # noise only adds time: a disturbed smallest message does not inflate alpha
    noisy = [times[0] * 3] + times[1:]
    assert collectives.latency_bandwidth_fit(SIZES, noisy)["latency_s"] == pytest.approx(times[1])
    flat = collectives.latency_bandwidth_fit(SIZES, [1e-3] * len(SIZES))
    assert math.isinf(flat["bandwidth"]) and math.isinf(flat["crossover_bytes"])
    with pytest.raises(ValueError):
        collectives.latency_bandwidth_fit([1024], [1e-3])


def test_fast_machine_is_bandwidth_bound_from_1_mib():
    """Small alpha, big beta (GPU-like): the crossover is below 1 MiB, 1 MiB -> 64 MiB ~ x64."""
    times = alpha_beta_times(5e-6, 100e9)
    text = collectives.interpret_sweep(SIZES, {"nccl": times}, 4, windows=WINDOWS, cores=16)
    fit, small, large, conclusion, why = text.splitlines()
    said(fit, "collectives.sweep_line", name="nccl", alpha="5 µs")  # alpha in the unit that fits it
    said(small.strip(), "collectives.window_latency_bound", start="1 KiB", end="64 KiB", k=64,
         r=times[3] / times[0])
    said(large.strip(), "collectives.window_bandwidth_bound", start="1 MiB", end="64 MiB", k=64,
         r=times[8] / times[5])
    crossover = collectives.latency_bandwidth_fit(SIZES, times)["crossover_bytes"]
    assert crossover < MiB
    said(conclusion, "collectives.conclusion_crossover", size="327 KiB")
    assert why == message("collectives.why_elsewhere")  # 4 ranks on 16 cores: no crowding to blame


def test_slow_machine_is_still_latency_bound_at_1_mib_and_says_why():
    """Notebook 2.0 on 2 cores: alpha of ms, 0.75 GB/s; 1 MiB is below the crossover."""
    sweep = {"ring": alpha_beta_times(3e-3, 0.75e9), "gloo": alpha_beta_times(2.6e-3, 0.75e9)}
    text = collectives.interpret_sweep(SIZES, sweep, 4, windows=WINDOWS, cores=2)
    lines = text.splitlines()
    assert len(lines) == 8  # each implementation's fit and two windows; the conclusion; why here
    for at, name, alpha in ((0, "ring", "3.00 ms"), (3, "gloo", "2.60 ms")):
        times = sweep[name]
        said(lines[at], "collectives.sweep_line", name=name, alpha=alpha)
        said(lines[at + 2].strip(), "collectives.window_transition", start="1 MiB", end="64 MiB",
             k=64, r=times[8] / times[5], where=message("collectives.still_below_crossover"))
        assert times[8] / times[5] < 0.7 * 64  # not the x64 of the bandwidth-bound case
    fits = [collectives.latency_bandwidth_fit(SIZES, t)["crossover_bytes"] for t in sweep.values()]
    assert all(MiB < f < 64 * MiB for f in fits)
    assert lines[6] == message("collectives.conclusion_crossover_range", low="1.24 MiB",
                               high="1.43 MiB")
    assert lines[7] == message("collectives.why_here_crowded", world_size=4, cores=2)


def test_a_disturbed_window_is_flagged_as_such():
    times = alpha_beta_times(3e-3, 0.75e9)
    times[5] *= 4  # 1 MiB hit by other programs: 1 MiB -> 64 MiB grows far less than the model
    text = collectives.interpret_sweep(SIZES, {"gloo": times}, 4, windows=WINDOWS, cores=2)
    small, large = (line.strip() for line in text.splitlines()[1:3])
    said(small, "collectives.window_latency_bound", start="1 KiB", end="64 KiB", k=64)
    fit = collectives.latency_bandwidth_fit(SIZES, times)
    model = [fit["latency_s"] + s / fit["bandwidth"] for s in (SIZES[5], SIZES[8])]
    note = message("collectives.window_disturbed", predicted=model[1] / model[0])
    assert large.endswith(note)
    said(large[:-len(note)], "collectives.window_transition", start="1 MiB", end="64 MiB", k=64,
         r=times[8] / times[5])


def test_machine_that_disagrees_measures_no_bandwidth_region():
    text = collectives.interpret_sweep(SIZES, {"gloo": [3e-3] * len(SIZES)}, 4, windows=WINDOWS,
                                       cores=2)
    fit, _, _, conclusion, why = text.splitlines()
    said(fit, "collectives.sweep_line_no_bandwidth", name="gloo", alpha="3.00 ms")
    assert conclusion == message("collectives.conclusion_no_bandwidth_region", size="64 MiB")


def test_ring_slower_at_1_kib_is_the_expected_picture():
    ring = alpha_beta_times(4e-3, 0.75e9)
    lib = alpha_beta_times(2e-3, 0.75e9)
    large, small = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4, cores=2,
                                                         library="gloo").splitlines()
    assert small == message("collectives.ratio_line", size="1 KiB", words=message(
        "collectives.ratio_ring_slower", library="gloo", ratio=ring[0] / lib[0]),
        reading=message("collectives.small_expected", steps=6))  # 2(N-1) steps
    assert large == message("collectives.ratio_line", size="64 MiB", words=message(
        "collectives.ratio_tie", tolerance=0.15, library="gloo", ratio=ring[-1] / lib[-1]),
        reading=message("collectives.large_expected"))


def test_ring_faster_at_1_kib_says_the_machine_disagrees_and_why():
    ring = [2.5e-3] + alpha_beta_times(3e-3, 0.75e9)[1:]
    lib = alpha_beta_times(3.5e-3, 0.75e9)
    small = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4, cores=2,
                                                  library="gloo").splitlines()[1]
    assert small == message("collectives.ratio_line", size="1 KiB", words=message(
        "collectives.ratio_ring_faster", library="gloo", ratio=ring[0] / lib[0]),
        reading=message("collectives.small_disagrees_faster",  # gloo's worker thread
                        crowded=message("collectives.crowded_cores", world_size=4, cores=2)))


def test_a_tie_at_1_kib_is_a_tie():
    ring = alpha_beta_times(3.1e-3, 0.75e9)
    lib = alpha_beta_times(3e-3, 0.75e9)
    small = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4,
                                                  cores=16).splitlines()[1]
    assert small == message("collectives.ratio_line", size="1 KiB", words=message(
        "collectives.ratio_tie", tolerance=0.15, library="dist.all_reduce", ratio=ring[0] / lib[0]),
        reading=message("collectives.small_disagrees_tie", crowded=""))  # 16 cores: not crowded


def test_a_gap_at_64_mib_is_put_on_the_implementation():
    ring = alpha_beta_times(3e-3, 0.75e9)
    lib = alpha_beta_times(3e-3, 1.5e9)
    large = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4,
                                                  cores=2).splitlines()[0]
    assert large == message("collectives.ratio_line", size="64 MiB", words=message(
        "collectives.ratio_ring_slower", library="dist.all_reduce", ratio=ring[-1] / lib[-1]),
        reading=message("collectives.large_implementation"))


@pytest.mark.parametrize("ratio, decade", [(3, 0), (12, 1), (390, 2), (3936, 3)])
def test_orders_of_magnitude(ratio, decade):
    assert collectives.orders_of_magnitude(ratio) == orders(decade)


def test_orders_of_magnitude_refuses_nonsense():
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError):
            collectives.orders_of_magnitude(bad)


def test_link_gap_is_computed_from_the_measurement():
    text = collectives.describe_link_gap(0.77e9, GPUS["A100-80GB"].intra_node_bw)
    assert text == message("collectives.link_gap", link="NVLink", link_gbps=300, measured_gbps=0.77,
                           ratio=390, orders=orders(2))
    said(collectives.describe_link_gap(10e9, 300e9), "collectives.link_gap", ratio=30,
         orders=orders(1))


# --- 2.1: speedup, compute vs communication, model size, the GPU gap ------------------------

def speedup_result(t1, tn, *, n=2, load=1.0, cores=2):
    s = n * t1 / tn
    return dict(t1=t1, tn=tn, world_size=n, speedup=s, efficiency=s / n, load_average=load,
                cores=cores)


def comm_result(compute, comm, params, batch, *, n=2):
    return dict(compute=compute, comm=comm, params=params, bytes=4 * params,
                batch_per_rank=batch, world_size=n)


HEAVY_CC = comm_result(0.244, 0.0335, 6_296_064, 512)
SMALL_CC = comm_result(0.52e-3, 0.41e-3, 4_192, 32)


SMALL, HEAVY = "small model", "compute-heavy model"  # the names the notebook gives its models
NAMES = (SMALL, HEAVY)


def head(speedup, efficiency, n=2):
    return message("data_parallel.speedup_head", n=n, speedup=speedup, efficiency=efficiency)


def test_speedup_close_to_linear():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.262))
    assert text == message("data_parallel.speedup_near_linear", head=head(1.85, 0.92),
                           t1="242 ms")  # no load average: the machine was not busy


def test_speedup_held_back_on_a_busy_machine_says_so():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.37, load=3.5))
    assert text == sentences(message("data_parallel.speedup_some_gain", head=head(1.31, 0.65)),
                             message("data_parallel.speedup_few_cores", cores=2, n=2),
                             message("data_parallel.busy", load=3.5, cores=2))


def test_slowdown_is_called_a_slowdown():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.5))
    assert text == sentences(message("data_parallel.speedup_slower", head=head(0.97, 0.48)),
                             message("data_parallel.speedup_eaten"))


def test_compute_vs_comm_follows_the_rule_or_says_it_does_not():
    small, heavy, rule = dpx.interpret_compute_vs_comm({SMALL: SMALL_CC, HEAVY: HEAVY_CC}).splitlines()
    said(small, "data_parallel.compute_vs_comm_line", name=SMALL, size="16.4 KiB", ratio=0.79)
    said(heavy, "data_parallel.compute_vs_comm_line", name=HEAVY, size="24 MiB", ratio=0.14)
    assert rule == message("data_parallel.compute_vs_comm_rule", light=SMALL, heavy=HEAVY,
                           light_ratio=0.79, heavy_ratio=0.14)
    odd = comm_result(0.52e-3, 0.02e-3, 4_192, 32)  # a tiny all-reduce: the rule does not show
    rule = dpx.interpret_compute_vs_comm({SMALL: odd, HEAVY: HEAVY_CC}).splitlines()[-1]
    assert rule == message("data_parallel.compute_vs_comm_against_rule", light=SMALL,
                           heavy=HEAVY, light_ratio=0.04, heavy_ratio=0.14)


def predicted(sp, cc):
    """N·t1 / (t1 + t_comm): the speedup with no overlap of the all-reduce."""
    return sp["world_size"] * sp["t1"] / (sp["t1"] + cc["comm"])


def test_small_model_that_barely_speeds_up_is_the_expected_picture():
    small = speedup_result(1.0e-3, 1.9e-3)  # 1.05x
    heavy = speedup_result(0.242, 0.262)
    text = dpx.interpret_model_size(small, heavy, comm_result(0.5e-3, 1.0e-3, 4_192, 32), HEAVY_CC,
                                    names=NAMES)
    assert text.splitlines()[-1] == message(
        "data_parallel.conclusion_expected_flat", small=SMALL, heavy=HEAVY, n=2,
        small_speedup=1.05, heavy_says=message("data_parallel.heavy_near_limit", heavy=HEAVY,
                                               n=2, measured=1.85))


def test_small_model_that_speeds_up_is_expected_in_direction_only_and_says_why():
    small = speedup_result(1.3e-3, 2.0e-3)  # 1.30x, the heavy one 1.85x
    heavy = speedup_result(0.242, 0.262)
    lines = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC,
                                     names=NAMES).splitlines()
    why = message("data_parallel.why_small_fixed", small=SMALL, t1="1.30 ms", comm="0.41 ms",
                  share=0.41 / 1.3, predicted=predicted(small, SMALL_CC),
                  fixed="0.78 ms")  # step minus forward+backward
    assert lines[-1] == message("data_parallel.conclusion_direction_only", small=SMALL,
                                heavy=HEAVY, small_speedup=1.30, heavy_speedup=1.85, why_small=why)
    said(lines[0], "data_parallel.model_size_small_line", small=SMALL,
         predicted=predicted(small, SMALL_CC), measured=1.30)


def test_the_fixed_cost_is_named_only_when_it_is_a_large_part_of_the_step():
    small = speedup_result(1.0e-3, 1.74e-3)  # 1.15x; forward+backward is 0.87 of the 1.00 ms
    heavy = speedup_result(0.417, 0.632)  # 1.32x
    cc = comm_result(0.87e-3, 0.64e-3, 4_192, 32)
    conclusion = dpx.interpret_model_size(small, heavy, cc, HEAVY_CC,
                                          names=NAMES).splitlines()[-1]
    why = message("data_parallel.why_small", small=SMALL, t1="1.00 ms", comm="0.64 ms", share=0.64,
                  predicted=1.22)
    assert conclusion == message("data_parallel.conclusion_direction_only", small=SMALL,
                                 heavy=HEAVY, small_speedup=1.15, heavy_speedup=1.32, why_small=why)


def test_small_model_faster_than_the_heavy_one_says_the_machine_disagrees():
    small = speedup_result(1.3e-3, 1.4e-3)  # 1.86x
    heavy = speedup_result(0.242, 0.30)  # 1.61x, its all-reduce predicts 1.76x
    conclusion = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC,
                                          names=NAMES).splitlines()[-1]
    why_small = message("data_parallel.why_small_fixed", small=SMALL, t1="1.30 ms",
                        comm="0.41 ms", share=0.41 / 1.3, predicted=predicted(small, SMALL_CC),
                        fixed="0.78 ms")
    why_heavy = message("data_parallel.why_heavy", heavy=HEAVY, predicted=1.76, measured=1.61,
                        crowded=message("data_parallel.heavy_crowded", n=2, cores=2))
    assert conclusion == message(
        "data_parallel.conclusion_disagrees", small=SMALL, heavy=HEAVY, small_speedup=1.86,
        heavy_speedup=1.61, verdict=message("data_parallel.small_gains_more", small=SMALL),
        reasons=sentences(why_small, why_heavy))


def test_a_tie_between_the_models_is_within_the_noise():
    small = speedup_result(1.3e-3, 1.56e-3)  # 1.67x
    heavy = speedup_result(0.242, 0.277)  # 1.75x
    conclusion = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC,
                                          names=NAMES).splitlines()[-1]
    said(conclusion, "data_parallel.conclusion_disagrees", small=SMALL, heavy=HEAVY,
         small_speedup=1.67, heavy_speedup=1.75,
         verdict=message("data_parallel.models_tie", tie=dpx.TIE))


def test_a_busy_machine_is_mentioned_once_when_both_runs_saw_the_same_load():
    small = speedup_result(1.3e-3, 1.56e-3, load=6.0)
    heavy = speedup_result(0.242, 0.277, load=6.0)
    conclusion = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC,
                                          names=NAMES).splitlines()[-1]
    assert conclusion.count(message("data_parallel.busy", load=6.0, cores=2)) == 1, conclusion


def test_gpu_gap_is_computed_from_the_measurement():
    here, gpu = dpx.interpret_gpu_gap(HEAVY_CC, gpu="A100-80GB").splitlines()
    busbw = HEAVY_CC["bytes"] / HEAVY_CC["comm"]  # 2 ranks: 2(N-1)/N = 1
    flops = 6 * HEAVY_CC["params"] * HEAVY_CC["batch_per_rank"] / HEAVY_CC["compute"]
    assert here == message("data_parallel.gpu_gap_here", busbw_gbps=busbw / 1e9,
                           gflops=flops / 1e9)
    link = collectives.describe_link_gap(busbw, 300e9)
    said(link, "collectives.link_gap", ratio=300e9 / busbw, orders=orders(2))
    assert gpu == message("data_parallel.gpu_gap_gpu", gpu="A100-80GB", link_gap=link,
                          peak_tflops=312, ratio=312e12 / flops, orders=orders(3))


# --- the English edition --------------------------------------------------------------------

def test_the_readings_speak_english_in_the_english_edition(monkeypatch):
    import re

    cjk = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
    monkeypatch.setenv("LABS_LANG", "en")
    assert collectives.orders_of_magnitude(390) == message(
        "collectives.orders_between", lang="en", low="two", high="three")
    assert collectives.orders_of_magnitude(3) == message("collectives.under_one_order", lang="en")
    gap = collectives.describe_link_gap(0.77e9, GPUS["A100-80GB"].intra_node_bw)
    said(gap, "collectives.link_gap", lang="en", link_gbps=300, ratio=390)
    sweep = {"ring": alpha_beta_times(3e-3, 0.75e9), "gloo": alpha_beta_times(2.6e-3, 0.75e9)}
    texts = [collectives.interpret_sweep(SIZES, sweep, 4, windows=WINDOWS, cores=2),
             collectives.interpret_ring_vs_library(SIZES, *sweep.values(), world_size=4, cores=2),
             dpx.interpret_speedup(speedup_result(0.242, 0.37, load=3.5)),
             dpx.interpret_compute_vs_comm({"small": SMALL_CC, "heavy": HEAVY_CC}),
             dpx.interpret_model_size(speedup_result(1.3e-3, 1.4e-3), speedup_result(0.242, 0.30),
                                      SMALL_CC, HEAVY_CC, names=NAMES),
             dpx.interpret_gpu_gap(HEAVY_CC)]
    for text in texts:
        assert not cjk.search(text), text
    assert texts[0].splitlines()[-2:] == [
        message("collectives.conclusion_crossover_range", lang="en", low="1.24 MiB",
                high="1.43 MiB"),
        message("collectives.why_here_crowded", lang="en", world_size=4, cores=2)]
    assert texts[2].startswith(head(1.31, 0.65)) and texts[2].endswith(
        message("data_parallel.busy", lang="en", load=3.5, cores=2))
    said(texts[4].splitlines()[-1], "data_parallel.conclusion_disagrees", lang="en",
         small=SMALL, heavy=HEAVY)
    with pytest.raises(ValueError) as info:
        collectives.orders_of_magnitude(0)
    assert str(info.value) == message("collectives.ratio_not_positive", lang="en", ratio=0)
