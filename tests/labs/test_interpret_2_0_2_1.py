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

KiB, MiB = 2**10, 2**20
SIZES = [KiB * 4**k for k in range(9)]  # 1 KiB .. 64 MiB, as notebook 2.0 sweeps
WINDOWS = ((0, 3), (5, 8))  # 1 KiB -> 64 KiB, 1 MiB -> 64 MiB


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
    text = collectives.interpret_sweep(SIZES, {"nccl": alpha_beta_times(5e-6, 100e9)}, 4,
                                       windows=WINDOWS, cores=16)
    lines = text.splitlines()
    small, large = (line for line in lines if "→" in line)
    assert "1 KiB → 64 KiB" in small and "延迟受限" in small
    assert "1 MiB → 64 MiB" in large and "已是带宽受限" in large
    ratio = alpha_beta_times(5e-6, 100e9)[8] / alpha_beta_times(5e-6, 100e9)[5]
    assert f"用时 ×{ratio:.1f}" in large
    assert "5 µs" in text  # alpha printed in the unit that fits it
    crossover = collectives.latency_bandwidth_fit(SIZES, alpha_beta_times(5e-6, 100e9))
    assert crossover["crossover_bytes"] < MiB
    assert "以下是延迟受限，以上才是带宽受限" in text
    assert "共用" not in text  # 4 ranks on 16 cores: no crowding to blame


def test_slow_machine_is_still_latency_bound_at_1_mib_and_says_why():
    """Notebook 2.0 on 2 cores: alpha of ms, 0.75 GB/s; 1 MiB is below the crossover."""
    sweep = {"ring": alpha_beta_times(3e-3, 0.75e9), "gloo": alpha_beta_times(2.6e-3, 0.75e9)}
    text = collectives.interpret_sweep(SIZES, sweep, 4, windows=WINDOWS, cores=2)
    large = [line for line in text.splitlines() if "1 MiB → 64 MiB" in line]
    assert len(large) == 2
    for line in large:
        assert "起点 1 MiB 还在转折点以下" in line and "已是带宽受限" not in line
        ratio = float(line.split("用时 ×")[1].split("，")[0])
        assert ratio < 0.7 * 64  # the measurement is not the x64 of the bandwidth-bound case
    assert "3.00 ms" in text and "2.60 ms" in text
    assert "4 个 rank 共用 2 个 CPU 核" in text and "回环网络" in text
    fits = [collectives.latency_bandwidth_fit(SIZES, t)["crossover_bytes"] for t in sweep.values()]
    assert all(MiB < f < 64 * MiB for f in fits)
    assert "1.24 MiB 到 1.43 MiB 以下是延迟受限" in text


def test_a_disturbed_window_is_flagged_as_such():
    times = alpha_beta_times(3e-3, 0.75e9)
    times[5] *= 4  # 1 MiB hit by other programs: 1 MiB -> 64 MiB grows far less than the model
    text = collectives.interpret_sweep(SIZES, {"gloo": times}, 4, windows=WINDOWS, cores=2)
    small, large = (line for line in text.splitlines() if "→" in line)
    assert "测量受到了干扰" in large and "测量受到了干扰" not in small


def test_machine_that_disagrees_measures_no_bandwidth_region():
    text = collectives.interpret_sweep(SIZES, {"gloo": [3e-3] * len(SIZES)}, 4, windows=WINDOWS,
                                       cores=2)
    assert "测不出带宽" in text
    assert "没有测到带宽受限的一段，与通常的图景不符" in text
    assert "以上才是带宽受限" not in text


def test_ring_slower_at_1_kib_is_the_expected_picture():
    ring = alpha_beta_times(4e-3, 0.75e9)
    lib = alpha_beta_times(2e-3, 0.75e9)
    text = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4, cores=2,
                                                 library="gloo")
    small = text.splitlines()[1]
    assert small.startswith("1 KiB：手写 ring 更慢") and f"{ring[0] / lib[0]:.2f} 倍" in small
    assert "符合预期" in small and "2(N−1) = 6 步" in small
    large = text.splitlines()[0]
    assert large.startswith("64 MiB：两者相差不到 15%") and "符合预期" in large


def test_ring_faster_at_1_kib_says_the_machine_disagrees_and_why():
    ring = [2.5e-3] + alpha_beta_times(3e-3, 0.75e9)[1:]
    lib = alpha_beta_times(3.5e-3, 0.75e9)
    text = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4, cores=2,
                                                 library="gloo")
    small = text.splitlines()[1]
    assert "手写 ring 反而更快" in small and f"{ring[0] / lib[0]:.2f}" in small
    assert "不符" in small and "4 个 rank 共用 2 个 CPU 核" in small
    assert "工作线程（worker thread）" in small and "不是算法的优劣" in small
    assert "符合预期" not in small


def test_a_tie_at_1_kib_is_a_tie():
    ring = alpha_beta_times(3.1e-3, 0.75e9)
    lib = alpha_beta_times(3e-3, 0.75e9)
    small = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4,
                                                  cores=16).splitlines()[1]
    assert "两者相差不到 15%" in small and "淹没" in small
    assert "共用" not in small and "worker thread" not in small


def test_a_gap_at_64_mib_is_put_on_the_implementation():
    ring = alpha_beta_times(3e-3, 0.75e9)
    lib = alpha_beta_times(3e-3, 1.5e9)
    large = collectives.interpret_ring_vs_library(SIZES, ring, lib, world_size=4,
                                                  cores=2).splitlines()[0]
    assert "手写 ring 更慢" in large and "实现的细节" in large and "符合预期" not in large


@pytest.mark.parametrize("ratio, words", [(3, "不到一个数量级"), (12, "一到两个数量级"),
                                          (390, "两到三个数量级"), (3936, "三到四个数量级")])
def test_orders_of_magnitude(ratio, words):
    assert collectives.orders_of_magnitude(ratio) == words


def test_orders_of_magnitude_refuses_nonsense():
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError):
            collectives.orders_of_magnitude(bad)


def test_link_gap_is_computed_from_the_measurement():
    text = collectives.describe_link_gap(0.77e9, GPUS["A100-80GB"].intra_node_bw)
    assert "300 GB/s" in text and "0.77 GB/s" in text and "约 390 倍" in text
    assert "两到三个数量级" in text
    assert "一到两个数量级" in collectives.describe_link_gap(10e9, 300e9)


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


def test_speedup_close_to_linear():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.262))
    assert "加速 1.85 倍" in text and "扩展效率 92%" in text and "接近线性" in text
    assert "load average" not in text


def test_speedup_held_back_on_a_busy_machine_says_so():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.37, load=3.5))
    assert "加速 1.31 倍" in text and "离线性还有距离" in text
    assert "只有 2 个 CPU 核" in text and "load average 3.5 高于核数 2" in text
    assert "接近线性" not in text


def test_slowdown_is_called_a_slowdown():
    text = dpx.interpret_speedup(speedup_result(0.242, 0.5))
    assert "加速 0.97 倍" in text and "比 1 个 rank 还慢" in text


def test_compute_vs_comm_follows_the_rule_or_says_it_does_not():
    text = dpx.interpret_compute_vs_comm({"小模型": SMALL_CC, "计算量大的模型": HEAVY_CC})
    assert "通信/计算 = 0.79" in text and "通信/计算 = 0.14" in text
    assert "符合规律" in text and "16.4 KiB" in text and "24 MiB" in text
    odd = comm_result(0.52e-3, 0.02e-3, 4_192, 32)  # a tiny all-reduce: the rule does not show
    text = dpx.interpret_compute_vs_comm({"小模型": odd, "计算量大的模型": HEAVY_CC})
    assert "与规律不符" in text and "符合规律" not in text


def test_small_model_that_barely_speeds_up_is_the_expected_picture():
    small = speedup_result(1.0e-3, 1.9e-3)  # 1.05x
    heavy = speedup_result(0.242, 0.262)
    text = dpx.interpret_model_size(small, heavy, comm_result(0.5e-3, 1.0e-3, 4_192, 32), HEAVY_CC)
    conclusion = text.splitlines()[-1]
    assert conclusion.startswith("结论：符合预期") and "1.05 倍" in conclusion
    assert "1.85 倍" in conclusion


def test_small_model_that_speeds_up_is_expected_in_direction_only_and_says_why():
    small = speedup_result(1.3e-3, 2.0e-3)  # 1.30x, the heavy one 1.85x
    heavy = speedup_result(0.242, 0.262)
    text = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC)
    conclusion = text.splitlines()[-1]
    assert conclusion.startswith("结论：方向符合预期") and "并非几乎不加速" in conclusion
    assert "1.30 ms" in conclusion and "0.78 ms" in conclusion  # step minus forward+backward
    predicted = 2 * 1.3e-3 / (1.3e-3 + SMALL_CC["comm"])
    assert f"按不重叠估算加速比约 {predicted:.2f} 倍" in text.splitlines()[0]


def test_the_fixed_cost_is_named_only_when_it_is_a_large_part_of_the_step():
    small = speedup_result(1.0e-3, 1.74e-3)  # 1.15x; forward+backward is 0.87 of the 1.00 ms
    heavy = speedup_result(0.417, 0.632)  # 1.32x
    text = dpx.interpret_model_size(small, heavy, comm_result(0.87e-3, 0.64e-3, 4_192, 32),
                                    HEAVY_CC)
    conclusion = text.splitlines()[-1]
    assert conclusion.startswith("结论：方向符合预期") and "t_comm/t₁ = 0.64" in conclusion
    assert "约 1.22 倍" in conclusion and "固定开销" not in conclusion


def test_small_model_faster_than_the_heavy_one_says_the_machine_disagrees():
    small = speedup_result(1.3e-3, 1.4e-3)  # 1.86x
    heavy = speedup_result(0.242, 0.30)  # 1.61x, its all-reduce predicts 1.76x
    text = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC)
    conclusion = text.splitlines()[-1]
    assert "这台机器不符合通常的图景" in conclusion and "小模型反而加速得更多" in conclusion
    assert "内存总线" in conclusion and "固定开销" in conclusion
    assert "符合预期" not in conclusion


def test_a_tie_between_the_models_is_within_the_noise():
    small = speedup_result(1.3e-3, 1.56e-3)  # 1.67x
    heavy = speedup_result(0.242, 0.277)  # 1.75x
    conclusion = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC).splitlines()[-1]
    assert "不符合通常的图景" in conclusion and "测量误差之内" in conclusion


def test_a_busy_machine_is_mentioned_once_when_both_runs_saw_the_same_load():
    small = speedup_result(1.3e-3, 1.56e-3, load=6.0)
    heavy = speedup_result(0.242, 0.277, load=6.0)
    conclusion = dpx.interpret_model_size(small, heavy, SMALL_CC, HEAVY_CC).splitlines()[-1]
    assert conclusion.count("load average 6.0 高于核数 2") == 1, conclusion


def test_gpu_gap_is_computed_from_the_measurement():
    text = dpx.interpret_gpu_gap(HEAVY_CC, gpu="A100-80GB")
    busbw = HEAVY_CC["bytes"] / HEAVY_CC["comm"]  # 2 ranks: 2(N-1)/N = 1
    flops = 6 * HEAVY_CC["params"] * HEAVY_CC["batch_per_rank"] / HEAVY_CC["compute"]
    assert f"{busbw / 1e9:.2f} GB/s" in text and f"{flops / 1e9:.0f} GFLOP/s" in text
    assert f"约 {300e9 / busbw:,.0f} 倍（两到三个数量级）" in text
    assert f"约 {312e12 / flops:,.0f} 倍（三到四个数量级）" in text


# --- the English edition --------------------------------------------------------------------

def test_the_readings_speak_english_in_the_english_edition(monkeypatch):
    import re

    cjk = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
    monkeypatch.setenv("LABS_LANG", "en")
    assert collectives.orders_of_magnitude(390) == "two to three orders of magnitude"
    assert collectives.orders_of_magnitude(3) == "less than one order of magnitude"
    gap = collectives.describe_link_gap(0.77e9, GPUS["A100-80GB"].intra_node_bw)
    assert "300 GB/s" in gap and "about 390 times" in gap and "measured here" in gap
    sweep = {"ring": alpha_beta_times(3e-3, 0.75e9), "gloo": alpha_beta_times(2.6e-3, 0.75e9)}
    texts = [collectives.interpret_sweep(SIZES, sweep, 4, windows=WINDOWS, cores=2),
             collectives.interpret_ring_vs_library(SIZES, *sweep.values(), world_size=4, cores=2),
             dpx.interpret_speedup(speedup_result(0.242, 0.37, load=3.5)),
             dpx.interpret_compute_vs_comm({"small": SMALL_CC, "heavy": HEAVY_CC}),
             dpx.interpret_model_size(speedup_result(1.3e-3, 1.4e-3), speedup_result(0.242, 0.30),
                                      SMALL_CC, HEAVY_CC),
             dpx.interpret_gpu_gap(HEAVY_CC)]
    for text in texts:
        assert not cjk.search(text), text
    assert "4 ranks share 2 CPU cores" in texts[0] and "1.24 MiB to 1.43 MiB" in texts[0]
    assert "scaling efficiency 65%" in texts[2] and "load average 3.5" in texts[2]
    assert texts[4].splitlines()[-1].startswith("Conclusion: this machine disagrees")
    assert "small model" in texts[4] and "compute-heavy model" in texts[4]
    with pytest.raises(ValueError, match="must be a positive finite number"):
        collectives.orders_of_magnitude(0)
