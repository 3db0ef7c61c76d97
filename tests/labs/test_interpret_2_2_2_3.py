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
from labs.messages import text as message
from labs.tensor_parallel import experiments as tpx
from tests.support.messages import said


def lines(text: str, n: int) -> list[str]:
    """The ``n`` lines of a reading (each one message)."""
    out = text.splitlines()
    assert len(out) == n, text
    return out


def pts(value: float) -> str:
    """A difference in percentage points, as the 2.3 readings print it."""
    return message("pipeline.points", value=abs(value) * 100)


def why_fixed(overruns: int) -> str:
    """Why a fixed-time run is off the formula: the overrunning actions, or none."""
    return (message("pipeline_readings.why_fixed_overruns", overruns=overruns) if overruns
            else message("pipeline_readings.why_fixed_no_overruns"))


# --- 2.2 ------------------------------------------------------------------------------------------

def test_layerwise_one_rank_at_a_time_and_clock_errors():
    head, ok = lines(tpx.interpret_layerwise([0.24, 0.22, 0.23, 0.23]), 2)
    said(head, "tensor_parallel_readings.layerwise_head", n=4, total=0.92, ideal=1 / 4)
    assert ok == message("tensor_parallel_readings.layerwise_serial", mean=0.23)  # one at a time
    _, slow = lines(tpx.interpret_layerwise([0.10, 0.10, 0.10, 0.10]), 2)  # 60 % nobody computes
    assert slow == message("tensor_parallel_readings.layerwise_idle", rest=0.60, conclusion=message(
        "tensor_parallel_readings.layerwise_serial", mean=0.10))
    head, overlapping = lines(tpx.interpret_layerwise([0.5, 0.5, 0.5, 0.5]), 2)  # a clock error
    said(head, "tensor_parallel_readings.layerwise_head", n=4, total=2.0, ideal=1 / 4)
    assert overlapping == message("tensor_parallel_readings.layerwise_overlapping")


@pytest.mark.parametrize("no, yes, verdict", [
    (0.100, 0.070, "gain"),    # GPU-like: a third saved
    (0.100, 0.099, "noise"),   # within noise
    (0.074, 0.080, "slower"),  # this CPU machine
])
def test_overlap_conclusion_follows_the_speedup(no, yes, verdict):
    text = tpx.interpret_overlap(no, yes, ranks=2, cores=2, comm_s=0.03, weight_grad_s=0.05)
    head, conclusion = lines(text, 2)
    said(head, "tensor_parallel_readings.overlap_times_bound", no_ms=no * 1e3, yes_ms=yes * 1e3,
         speedup=no / yes, comm_ms=30, wgrad_ms=50,
         best=no / (no - 0.03))  # the bound: min(30, 50) ms can be hidden
    loopback = message("tensor_parallel_readings.crowded")  # gloo over loopback, not CUDA streams
    expected = {
        "gain": message("tensor_parallel_readings.overlap_gain", saved=1 - yes / no),
        "noise": message("tensor_parallel_readings.overlap_why", crowded=loopback,
                         conclusion=message("tensor_parallel_readings.overlap_noise")),
        "slower": message("tensor_parallel_readings.overlap_why", crowded=loopback,
                          conclusion=message("tensor_parallel_readings.overlap_slower", slower=0.08)),
    }
    assert conclusion == expected[verdict]


def test_overlap_names_shared_cores():
    for ranks, cores, crowded in (
            (4, 2, message("tensor_parallel_readings.crowded_cores", ranks=4, cores=2)),
            (2, 16, message("tensor_parallel_readings.crowded"))):
        head, why = lines(tpx.interpret_overlap(0.1, 0.1, ranks=ranks, cores=cores), 2)
        said(head, "tensor_parallel_readings.overlap_times", speedup=1.0)
        assert why == message("tensor_parallel_readings.overlap_why", crowded=crowded,
                              conclusion=message("tensor_parallel_readings.overlap_noise"))


def test_tp_scaling_expected_slow_and_disagreeing():
    gpu_like = tpx.interpret_tp_scaling([1, 2, 4], [0.040, 0.020, 0.010], [0.0, 0.002, 0.004], cores=16)
    assert lines(gpu_like, 5) == [
        message("tensor_parallel_readings.tp_share_rising", trend="0% → 9% → 29%"),
        message("tensor_parallel_readings.tp_compute_scaled", t=2, ratio=0.5, ideal=1 / 2),
        message("tensor_parallel_readings.tp_compute_scaled", t=4, ratio=0.25, ideal=1 / 4),
        message("tensor_parallel_readings.tp_efficiency_falling", effs="100% → 91% → 71%"),
        message("tensor_parallel_readings.tp_conclusion_expected")]
    crowded = tpx.interpret_tp_scaling([1, 2, 4], [0.039, 0.026, 0.0175], [0.0, 0.0144, 0.0463], cores=2)
    assert lines(crowded, 5)[1:4] == [
        message("tensor_parallel_readings.tp_compute_small_matrices", t=2, ratio=0.67, ideal=1 / 2),
        message("tensor_parallel_readings.tp_compute_few_cores", t=4, ratio=0.45, ideal=1 / 4,
                cores=2),  # 4 ranks, 2 cores
        message("tensor_parallel_readings.tp_slower_than_one", degrees="4", efficiency=message(
            "tensor_parallel_readings.tp_efficiency_falling", effs="100% → 48% → 15%"),
            crowded=message("tensor_parallel_readings.crowded_cores", ranks=4, cores=2))]
    # (TP=2, 40.3 ms against 39 ms, is within the noise: only TP=4 is slower than one process)
    loaded = tpx.interpret_tp_scaling([1, 2, 4], [0.09, 0.125, 0.075], [0.0, 0.04, 0.11], cores=2)
    assert lines(loaded, 5)[1] == message("tensor_parallel_readings.tp_compute_slower", t=2,
                                          ratio=1.39, cores=2)  # the machine's load
    flat = tpx.interpret_tp_scaling([1, 2, 4], [0.04, 0.02, 0.01], [0.0, 0.02, 0.001], cores=16)
    flat = lines(flat, 5)
    assert flat[0] == message("tensor_parallel_readings.tp_share_not_rising", trend="0% → 50% → 9%")
    assert flat[3] == message("tensor_parallel_readings.tp_efficiency_noisy", effs="100% → 50% → 91%")
    assert flat[4] == message("tensor_parallel_readings.tp_conclusion_unexpected")


def test_activations_time_conclusions():
    mib = 2**20
    base = {"TP=1": (19.7 * mib, 0.050), "TP=2 + SP": (11.1 * mib, 0.10)}
    memory = message("tensor_parallel_readings.act_tp2_sp", ratio=11.1 / 19.7, memory=message(
        "tensor_parallel_readings.act_tp2", ratio=0.62))

    def checkpointing(cost_ratio):
        return message("tensor_parallel_readings.act_ckpt_head", bytes_ratio=1.8 / 19.7,
                       cost_ratio=cost_ratio)

    slow_tp = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.072),
                                         "TP=1 + checkpointing": (1.8 * mib, 0.0665)}, cores=2)
    assert lines(slow_tp, 4) == [
        memory,
        message("tensor_parallel_readings.act_time_slower", ratio=1.44,
                crowded=message("tensor_parallel_readings.crowded")),
        message("tensor_parallel_readings.act_ckpt_expected", head=checkpointing(1.33)),
        message("tensor_parallel_readings.act_conclusion")]
    fast_tp = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.030),
                                         "TP=1 + checkpointing": (1.8 * mib, 0.090)}, cores=16)
    assert lines(fast_tp, 4)[1:3] == [
        message("tensor_parallel_readings.act_time_faster", ratio=0.6),
        message("tensor_parallel_readings.act_ckpt_expensive", head=checkpointing(1.8))]
    noisy = tpx.interpret_activations({**base, "TP=2": (12.3 * mib, 0.051),
                                       "TP=1 + checkpointing": (1.8 * mib, 0.051)}, cores=2)
    assert lines(noisy, 4)[1:3] == [
        message("tensor_parallel_readings.act_time_noise", ratio=1.02),
        message("tensor_parallel_readings.act_ckpt_cheap", head=checkpointing(1.02))]


# --- 2.3 ------------------------------------------------------------------------------------------

def test_bubble_fixed_time_agrees_overruns_and_noise():
    f = pp.bubble_fraction(8, 32)

    def head(mean):
        return message("pipeline_readings.bubble_head", mean=mean, formula=f)

    assert px.interpret_bubble([f] * 8, f, fixed_time=True) == message(
        "pipeline_readings.bubble_fixed_agree", head=head(f), diff=pts(0))
    assert px.interpret_bubble(f + 0.001, f, fixed_time=True, overruns=1) == message(
        "pipeline_readings.bubble_fixed_agree_overruns", head=head(f + 0.001), diff=pts(0.001),
        overruns=1, tolerance=px.TOLERANCE)  # one overrun, within the tolerance
    assert px.interpret_bubble(f + 0.05, f, fixed_time=True, overruns=3) == message(
        "pipeline_readings.bubble_fixed_high", head=head(f + 0.05), diff=pts(0.05),
        why=why_fixed(3))
    assert px.interpret_bubble(f - 0.04, f, fixed_time=True) == message(
        "pipeline_readings.bubble_fixed_low", head=head(f - 0.04), diff=pts(0.04),
        why=why_fixed(0))


def test_bubble_real_compute_far_or_close():
    f = pp.bubble_fraction(4, 8)
    cpu = px.interpret_bubble([0.671, 0.659, 0.642, 0.668], f, fixed_time=False, ranks=4, cores=2)
    said(cpu, "pipeline_readings.bubble_real_high", diff=message("pipeline.points", value=38.7),
         why=message("pipeline_readings.why_real_crowded", ranks=4, cores=2))  # 4 ranks, 2 cores
    gpu_like = px.interpret_bubble([f + 0.01] * 4, f, fixed_time=False, ranks=4, cores=64)
    said(gpu_like, "pipeline_readings.bubble_real_agree", diff=pts(0.01))
    below = px.interpret_bubble(f - 0.1, f, fixed_time=False)
    said(below, "pipeline_readings.bubble_real_low", diff=pts(0.1))


def test_schedules_same_or_machine_differs():
    f = pp.bubble_fraction(4, 8)
    same = px.interpret_schedules({"GPipe": 0.66, "1F1B": 0.66}, {"GPipe": [f] * 4, "1F1B": [f] * 4}, f)
    head, conclusion = lines(same, 2)
    said(head, "pipeline_readings.schedules_head", formula=f)
    assert conclusion == message("pipeline_readings.schedules_same")  # 1F1B does not shrink it
    differ = px.interpret_schedules({"GPipe": 0.66, "1F1B": 0.75}, {"GPipe": [f] * 4, "1F1B": [0.35] * 4}, f,
                                    overruns=5)
    assert lines(differ, 2)[1] == message("pipeline_readings.schedules_differ", why=why_fixed(5))


def test_bubble_sweep_fixed_and_real():
    ms = [1, 2, 4, 8, 16]
    on_curve = {p: {m: [pp.bubble_fraction(p, m)] * p for m in ms} for p in (2, 4)}
    head, fixed = lines(px.interpret_bubble_sweep(on_curve, fixed_time=True), 2)
    said(head, "pipeline_readings.sweep_head_higher", n=7, avg=pts(0), worst=0)  # 7 points m >= p
    assert fixed == message("pipeline_readings.sweep_on_curve_fixed")
    off = {p: {m: [pp.bubble_fraction(p, m) + 0.3] * p for m in ms} for p in (2, 4)}
    head, real = lines(px.interpret_bubble_sweep(off, fixed_time=False, cores=2), 2)
    said(head, "pipeline_readings.sweep_head_higher", n=7, avg=pts(0.3))
    assert real == message("pipeline_readings.sweep_real_off", why=message(
        "pipeline_readings.why_real_crowded", ranks=4, cores=2))
    broken = lines(px.interpret_bubble_sweep(off, fixed_time=True, overruns=0), 2)[1]
    assert broken == message("pipeline_readings.sweep_fixed_off", why=why_fixed(0))
    real_close = lines(px.interpret_bubble_sweep(on_curve, fixed_time=False, cores=2), 2)[1]
    assert real_close == message("pipeline_readings.sweep_on_curve_real")


def test_interleaving_gain_or_none():
    f1, f2 = pp.bubble_fraction(4, 8), pp.bubble_fraction(4, 8, 2)
    gain = px.interpret_interleaving([f1] * 4, [f2] * 4, 0.66, 0.57, p=4, m=8, v=2)
    head, conclusion = lines(gain, 2)
    assert head == message("pipeline_readings.inter_head", a=f1, f1=f1, v=2, b=f2, fv=f2,
                           plain_ms=660, inter_ms=570)
    assert conclusion == message("pipeline_readings.inter_gain", a=f1, b=0.158)  # 15.8 %
    biased = px.interpret_interleaving([f1] * 4, [f2 + 0.05] * 4, 0.66, 0.60, p=4, m=8, v=2, overruns=2)
    assert lines(biased, 2)[1] == message("pipeline_readings.inter_gain_biased", a=f1, b=f2 + 0.05,
                                          why=why_fixed(2))
    none = px.interpret_interleaving([f1] * 4, [f1] * 4, 0.66, 0.70, p=4, m=8, v=2)
    assert lines(none, 2)[1] == message("pipeline_readings.inter_none", f1=f1, fv=f2,
                                        why=why_fixed(0))


def test_stages_rising_or_not():
    formula = {p: pp.bubble_fraction(p, 4) for p in (2, 4, 8)}
    assert lines(px.interpret_stages(formula, 4), 2)[1] == message("pipeline_readings.stages_rising")
    head, off = lines(px.interpret_stages({2: 0.2, 4: 0.38, 8: 0.636}, 4, overruns=1), 2)
    said(head, "pipeline_readings.stages_head", m=4, measured="20.0% → 38.0% → 63.6%")
    assert off == message("pipeline_readings.stages_rising_off", off=message("pipeline.points", value=4.9),
                          why=why_fixed(1))
    flat = lines(px.interpret_stages({2: 0.2, 4: 0.15, 8: 0.6}, 4), 2)[1]
    assert flat == message("pipeline_readings.stages_flat", why=why_fixed(0))


def test_microbatch_best_size_follows_the_measurement():
    sizes = [32, 16, 8, 4, 2, 1]
    mem = [min(2, 32 // b) * b * 600 * 1024 for b in sizes]
    middle = px.interpret_microbatch(sizes, [13973, 17179, 15880, 11633, 6528, 4374], mem, p=2, batch=32)
    assert lines(middle, 4) == [
        message("pipeline_readings.mb_best", b=16, m=2, throughput=17179),
        message("pipeline_readings.mb_memory_linear", kib=600),  # proportional to min(p, m)·b
        message("pipeline_readings.mb_middle", batch=32, largest=32, m=1, bubble=0.5),
        message("pipeline_readings.mb_measure")]  # depends on the model and the machine
    largest = px.interpret_microbatch(sizes, [20000, 17000, 15000, 11000, 6000, 4000], mem, p=2, batch=32)
    assert lines(largest, 4)[2] == message("pipeline_readings.mb_largest", m=1, bubble=0.5)
    smallest = px.interpret_microbatch(sizes, [1000, 2000, 3000, 4000, 5000, 6000], mem, p=2, batch=32)
    assert lines(smallest, 4)[2] == message("pipeline_readings.mb_smallest")
    odd_memory = px.interpret_microbatch(sizes, [1, 2, 3, 2, 1, 1], [1.0] * 6, p=2, batch=32)
    assert lines(odd_memory, 4)[1] == message("pipeline_readings.mb_memory_not_linear")


def test_balance_measured_vs_simulated():
    simulated = {"even": 0.82, "balanced": 0.65}
    head, agree = lines(px.interpret_balance({"even": 0.824, "balanced": 0.656}, simulated), 2)
    assert head == message("pipeline_readings.balance_head", even="even", even_ms=824,
                           balanced="balanced", balanced_ms=656, got=0.824 / 0.656, want=0.82 / 0.65)
    assert agree == message("pipeline_readings.balance_agree")  # faster, as simulated
    off = px.interpret_balance({"even": 0.70, "balanced": 0.656}, simulated, overruns=4)
    assert lines(off, 2)[1] == message("pipeline_readings.balance_machine", why=why_fixed(4))
    none = px.interpret_balance({"even": 0.66, "balanced": 0.70}, simulated)
    assert lines(none, 2)[1] == message("pipeline_readings.balance_none", want=0.82 / 0.65,
                                        why=why_fixed(0))
