"""The printed conclusions of notebooks 2.2 and 2.3 follow the measurement they interpret.

Each ``interpret_*`` function (labs.tensor_parallel.experiments, labs.pipeline.experiments) is
run on synthetic measurements: one where the machine shows the expected picture ("fast", as on
GPUs), one where it is slow or noisy, and one where it disagrees with the expectation. The
conclusion must say which case it is, and why, from the numbers alone.
"""
from __future__ import annotations

import pytest

from labs import pipeline as pp
from labs.pipeline import experiments as px
from labs.tensor_parallel import experiments as tpx


def conclusion(text: str) -> str:
    assert "结论：" in text, text
    return text[text.index("结论："):]


# --- 2.2 ------------------------------------------------------------------------------------------

def test_layerwise_one_rank_at_a_time_and_clock_errors():
    ok = tpx.interpret_layerwise([0.24, 0.22, 0.23, 0.23])
    assert "至多一个 rank" in conclusion(ok) and "23%" in ok and "1/4 = 25%" in ok
    slow = tpx.interpret_layerwise([0.10, 0.10, 0.10, 0.10])  # 60 % of the span nobody computes
    assert "其余 60%" in slow and "send/recv" in slow
    overlapping = tpx.interpret_layerwise([0.5, 0.5, 0.5, 0.5])  # impossible: a clock error
    assert "超过 100%" in conclusion(overlapping) and "至多一个 rank" not in overlapping


@pytest.mark.parametrize("no, yes, expect, absent", [
    (0.100, 0.070, "重叠有效", "原因："),          # GPU-like: a third saved
    (0.100, 0.099, "不到 5%", "重叠有效"),          # within noise
    (0.074, 0.080, "反而慢了 8%", "重叠有效"),       # this CPU machine
])
def test_overlap_conclusion_follows_the_speedup(no, yes, expect, absent):
    text = tpx.interpret_overlap(no, yes, ranks=2, cores=2, comm_s=0.03, weight_grad_s=0.05)
    assert f"{no / yes:.2f}×" in text and expect in conclusion(text) and absent not in text
    assert f"最多 {no / (no - 0.03):.2f}×" in text  # the bound: min(30, 50) ms can be hidden
    if no / yes < 1.05:
        assert "回环网络" in text and "CUDA 流" in text


def test_overlap_names_shared_cores():
    text = tpx.interpret_overlap(0.1, 0.1, ranks=4, cores=2)
    assert "4 个 rank 挤在 2 个 CPU 核上" in text
    assert "2 个 rank 挤在" not in tpx.interpret_overlap(0.1, 0.1, ranks=2, cores=16)


def test_tp_scaling_expected_slow_and_disagreeing():
    gpu_like = tpx.interpret_tp_scaling([1, 2, 4], [0.040, 0.020, 0.010], [0.0, 0.002, 0.004], cores=16)
    assert "与预期一致" in gpu_like and "按 1/t 缩短了" in gpu_like
    assert "比单进程" not in gpu_like and "TP 不能无限扩展，这台机器上测到的正是这个趋势" in gpu_like
    crowded = tpx.interpret_tp_scaling([1, 2, 4], [0.039, 0.026, 0.0175], [0.0, 0.0144, 0.0463], cores=2)
    assert "4 个 rank 只有 2 个核" in crowded and "TP=4 的一步甚至比单进程" in crowded
    assert "TP=2、4" not in crowded  # TP=2 (40.3 ms vs 39 ms) is within the noise
    loaded = tpx.interpret_tp_scaling([1, 2, 4], [0.09, 0.125, 0.075], [0.0, 0.04, 0.11], cores=2)
    assert "TP=2 的计算反而是 TP=1 的 139%" in loaded and "机器负载" in loaded
    flat = tpx.interpret_tp_scaling([1, 2, 4], [0.04, 0.02, 0.01], [0.0, 0.02, 0.001], cores=16)
    assert "没有随 TP 单调上升" in flat and "没有显示出预期的趋势" in conclusion(flat.split("\n")[-1])


def test_activations_time_conclusions():
    mib = 2**20
    base = {"TP=1": (19.7 * mib, 0.050), "TP=2 + SP": (11.1 * mib, 0.10)}
    slow_tp = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.072),
                                         "TP=1 + checkpointing": (1.8 * mib, 0.0665)}, cores=2)
    assert "62%" in slow_tp and "1.44×，反而更慢" in slow_tp and "与预期相符" in slow_tp
    fast_tp = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.030),
                                         "TP=1 + checkpointing": (1.8 * mib, 0.090)}, cores=16)
    assert "比单进程快" in fast_tp and "这次比预期贵" in fast_tp
    noisy = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.051),
                                       "TP=1 + checkpointing": (1.8 * mib, 0.051)}, cores=2)
    assert "计时噪声之内" in noisy and "这次比预期便宜" in noisy


# --- 2.3 ------------------------------------------------------------------------------------------

def test_bubble_fixed_time_agrees_overruns_and_noise():
    f = pp.bubble_fraction(8, 32)
    agree = px.interpret_bubble([f] * 8, f, fixed_time=True)
    assert "一致" in conclusion(agree) and "超时" not in agree
    agree_overrun = px.interpret_bubble(f + 0.001, f, fixed_time=True, overruns=1)
    assert "一致" in agree_overrun and "1 个动作超时" in agree_overrun
    overrun = px.interpret_bubble(f + 0.05, f, fixed_time=True, overruns=3)
    assert "高了 5.0 个百分点" in overrun and "3 个动作" in overrun and "一致" not in overrun
    unexplained = px.interpret_bubble(f - 0.04, f, fixed_time=True)
    assert "低了 4.0 个百分点" in unexplained and "没有动作超时" in unexplained


def test_bubble_real_compute_far_or_close():
    f = pp.bubble_fraction(4, 8)
    cpu = px.interpret_bubble([0.671, 0.659, 0.642, 0.668], f, fixed_time=False, ranks=4, cores=2)
    assert "高了 38.7 个百分点" in cpu and "4 个 rank 抢 2 个 CPU 核" in cpu and "GPU" in cpu
    gpu_like = px.interpret_bubble([f + 0.01] * 4, f, fixed_time=False, ranks=4, cores=64)
    assert "真实计算模式下也一致" in gpu_like and "抢" not in gpu_like
    below = px.interpret_bubble(f - 0.1, f, fixed_time=False)
    assert "低了" in below


def test_schedules_same_or_machine_differs():
    f = pp.bubble_fraction(4, 8)
    same = px.interpret_schedules({"GPipe": 0.66, "1F1B": 0.66}, {"GPipe": [f] * 4, "1F1B": [f] * 4}, f)
    assert "1F1B 没有缩小气泡" in conclusion(same)
    differ = px.interpret_schedules({"GPipe": 0.66, "1F1B": 0.75}, {"GPipe": [f] * 4, "1F1B": [0.35] * 4}, f,
                                    overruns=5)
    assert "这是这台机器的原因" in differ and "5 个动作" in differ and "没有缩小气泡" not in differ


def test_bubble_sweep_fixed_and_real():
    ms = [1, 2, 4, 8, 16]
    on_curve = {p: {m: [pp.bubble_fraction(p, m)] * p for m in ms} for p in (2, 4)}
    assert "落在公式曲线上" in px.interpret_bubble_sweep(on_curve, fixed_time=True)
    off = {p: {m: [pp.bubble_fraction(p, m) + 0.3] * p for m in ms} for p in (2, 4)}
    real = px.interpret_bubble_sweep(off, fixed_time=False, cores=2)
    assert "偏离公式曲线" in real and "抢 2 个 CPU 核" in real
    broken = px.interpret_bubble_sweep(off, fixed_time=True, overruns=0)
    assert "这次偏离了" in broken and "没有动作超时" in broken
    real_close = px.interpret_bubble_sweep(on_curve, fixed_time=False, cores=2)
    assert "真实计算模式下也实测点落在公式曲线上" in real_close


def test_interleaving_gain_or_none():
    f1, f2 = pp.bubble_fraction(4, 8), pp.bubble_fraction(4, 8, 2)
    gain = px.interpret_interleaving([f1] * 4, [f2] * 4, 0.66, 0.57, p=4, m=8, v=2)
    assert "降到 15.8%" in gain and "与公式一致" in gain
    biased = px.interpret_interleaving([f1] * 4, [f2 + 0.05] * 4, 0.66, 0.60, p=4, m=8, v=2, overruns=2)
    assert "有偏差" in biased and "2 个动作" in biased
    none = px.interpret_interleaving([f1] * 4, [f1] * 4, 0.66, 0.70, p=4, m=8, v=2)
    assert "没有测到交错的收益" in none


def test_stages_rising_or_not():
    formula = {p: pp.bubble_fraction(p, 4) for p in (2, 4, 8)}
    assert "与公式的趋势一致。" in px.interpret_stages(formula, 4)
    off = px.interpret_stages({2: 0.2, 4: 0.38, 8: 0.636}, 4, overruns=1)
    assert "趋势一致" in off and "偏离公式 4.9 个百分点" in off
    flat = px.interpret_stages({2: 0.2, 4: 0.15, 8: 0.6}, 4)
    assert "没有随 p 单调上升" in flat


def test_microbatch_best_size_follows_the_measurement():
    sizes = [32, 16, 8, 4, 2, 1]
    mem = [min(2, 32 // b) * b * 600 * 1024 for b in sizes]
    middle = px.interpret_microbatch(sizes, [13973, 17179, 15880, 11633, 6528, 4374], mem, p=2, batch=32)
    assert "micro-batch = 16" in middle and "最优值在中间" in middle and "成正比" in middle
    assert "b = 32 时 m = 1，气泡 50%" in middle and "取决于模型和机器" in middle
    largest = px.interpret_microbatch(sizes, [20000, 17000, 15000, 11000, 6000, 4000], mem, p=2, batch=32)
    assert "最大的 micro-batch 最快" in largest
    smallest = px.interpret_microbatch(sizes, [1000, 2000, 3000, 4000, 5000, 6000], mem, p=2, batch=32)
    assert "最小的 micro-batch 最快" in smallest
    odd_memory = px.interpret_microbatch(sizes, [1, 2, 3, 2, 1, 1], [1.0] * 6, p=2, batch=32)
    assert "没有与 min(p, m)·b 成正比" in odd_memory


def test_balance_measured_vs_simulated():
    agree = px.interpret_balance({"even": 0.824, "balanced": 0.656}, {"even": 0.82, "balanced": 0.65})
    assert "一步变快了" in agree and "与模拟一致" in agree
    off = px.interpret_balance({"even": 0.70, "balanced": 0.656}, {"even": 0.82, "balanced": 0.65}, overruns=4)
    assert "一步变快了" in off and "来自这台机器" in off and "4 个动作" in off
    none = px.interpret_balance({"even": 0.66, "balanced": 0.70}, {"even": 0.82, "balanced": 0.65})
    assert "没有测到平衡切分的收益" in none
