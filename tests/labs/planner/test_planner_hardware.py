"""The planner knows the hardware a run asks for (issue 29, item 1): the peak of the run's
precision on its GPU, FlashAttention only where it runs (V100: no, so attention keeps its s²
terms), and sequence parallelism splitting the saved layer inputs under full recomputation."""
from __future__ import annotations

import pytest

from labs import planner as pl
from labs.hardware import DTYPES, GPUS
from tests.support.messages import pattern, said

GiB = 2**30


@pytest.fixture
def english(monkeypatch):
    """The planner's messages in English (the words these tests match)."""
    monkeypatch.setenv("LABS_LANG", "en")


BERT = pl.Model(n_layers=12, hidden=768, n_heads=12, seq_len=512, vocab=30522)
GPT2_XL = pl.Model(n_layers=48, hidden=1600, n_heads=25, seq_len=1024, vocab=50257)  # 1.5B


@pytest.mark.parametrize("gpu, dtype, tflops", [
    ("V100-32GB", "fp32", 15.7), ("V100-32GB", "fp16", 125),
    ("A100-80GB", "fp32", 19.5), ("A100-80GB", "tf32", 156), ("A100-80GB", "bf16", 312),
    ("A100-40GB", "fp16", 312),
    ("H100-80GB", "fp32", 67), ("H100-80GB", "tf32", 494.5), ("H100-80GB", "bf16", 989.5),
    ("H100-80GB", "fp8", 1979), ("H200", "fp8", 1979),
])
def test_dense_peak_per_dtype_from_the_datasheets(gpu, dtype, tflops):
    assert GPUS[gpu].peak(dtype) == pytest.approx(tflops * 1e12)
    assert GPUS[gpu].sources["peaks"]  # each figure names its datasheet


@pytest.mark.parametrize("gpu, missing", [("V100-32GB", "bf16"), ("V100-32GB", "tf32"),
                                          ("V100-32GB", "fp8"), ("A100-80GB", "fp8")])
def test_a_dtype_the_card_lacks_is_absent_and_the_planner_refuses_it(gpu, missing):
    assert missing in DTYPES and missing not in GPUS[gpu].peaks
    with pytest.raises(KeyError):
        GPUS[gpu].peak(missing)
    with pytest.raises(ValueError, match=missing):
        pl.estimate(BERT, pl.Cluster(gpu, 8), pl.Training(global_batch=8, precision=missing),
                    tp=1, pp=1, dp=8)
    with pytest.raises(ValueError, match=missing):
        pl.plan(BERT, pl.Cluster(gpu, 8), pl.Training(global_batch=8, precision=missing))


def _bert(precision):
    return pl.estimate(BERT, pl.Cluster("A100-40GB", 4, gpus_per_node=4),
                       pl.Training(global_batch=64, micro_batch=16, precision=precision,
                                   recompute="none"), tp=1, pp=1, dp=4)


def test_bert_base_fp32_on_four_a100_is_timed_on_the_fp32_peak():
    """2.5's BERT-Base case: fp32 matmuls run on CUDA cores at 19.5 TFLOP/s, not at the
    312 of bf16 (the old planner printed "step 0.0285 s, MFU 65%", 16 times too fast)."""
    fp32, tf32, bf16 = _bert("fp32"), _bert("tf32"), _bert("bf16")
    assert fp32.step_time_s / bf16.step_time_s == pytest.approx(312 / 19.5, rel=0.02)
    assert tf32.step_time_s / bf16.step_time_s == pytest.approx(312 / 156, rel=0.02)
    assert fp32.step_time_s > 0.3
    # MFU against the run's own peak: the achieved FLOP/s stay below 19.5 TFLOP/s
    assert fp32.model_flops / fp32.step_time_s / 4 < 19.5e12
    assert fp32.mfu == pytest.approx(fp32.model_flops / fp32.step_time_s / 4 / 19.5e12)


def _gpt2_xl_ddp(flash):
    return pl.estimate(GPT2_XL, pl.Cluster("V100-32GB", 8),
                       pl.Training(global_batch=64, micro_batch=1, precision="fp16",
                                   recompute="none", flash_attention=flash), tp=1, pp=1, dp=8)


def test_1_5b_on_v100_without_flash_attention_does_not_fit_with_ddp():
    """FlashAttention does not run on V100: attention keeps its s² terms (5·a·s²·b bytes per
    layer), 31.7 GiB against 26.8 usable."""
    assert GPUS["V100-32GB"].flash_attention is False
    auto = _gpt2_xl_ddp(None)
    assert auto.memory.total / GiB == pytest.approx(31.7, abs=0.1)
    assert auto.memory.usable / GiB == pytest.approx(26.8, abs=0.1)
    assert not auto.fits and auto.reasons
    assert _gpt2_xl_ddp(False).memory.total == auto.memory.total
    with pytest.raises(ValueError, match=pattern("planner.flash_not_on_gpu")):
        _gpt2_xl_ddp(True)


def test_flash_attention_follows_the_gpu_or_the_request():
    a100 = pl.Cluster("A100-80GB", 8)
    kw = dict(tp=1, pp=1, dp=8)
    auto = pl.estimate(GPT2_XL, a100, pl.Training(global_batch=8, recompute="none"), **kw)
    off = pl.estimate(GPT2_XL, a100, pl.Training(global_batch=8, recompute="none",
                                                 flash_attention=False), **kw)
    s, a = 1024, 25
    extra = 48 * (5 * a * s * s - 4 * a * s)  # s² terms instead of the log-sum-exp, 48 layers
    assert off.memory.activations - auto.memory.activations == pytest.approx(extra, rel=1e-6)


def _long(seq, sp):
    model = pl.Model(n_layers=32, hidden=4096, n_heads=32, seq_len=seq, vocab=32000)
    return pl.estimate(model, pl.Cluster("H100-80GB", 64),
                       pl.Training(global_batch=64, micro_batch=1, zero_stage=1,
                                   recompute="full", sequence_parallel=sp), tp=8, pp=1, dp=8)


def test_sequence_parallelism_splits_the_saved_layer_inputs_under_full_recompute():
    """2.5's 7B at 512K tokens on 64 H100, TP 8: Megatron-Core keeps each layer's input as the
    rank's sequence shard, 2sbh/8, so it fits (about 38.9 GiB); without SP it does not."""
    with_sp, without = _long(524288, True), _long(524288, False)
    assert with_sp.fits and with_sp.memory.total / GiB == pytest.approx(38.9, abs=0.2)
    assert not without.fits
    sbh = 524288 * 4096
    saved = 32 * 2 * sbh  # 2sbh per layer: whole without SP, an eighth with it
    rebuilt_whole = 10 * sbh  # the rebuilt layer's LN/QKV/MLP inputs and masks (no SP: whole)
    assert without.memory.activations - with_sp.memory.activations == pytest.approx(
        (saved + rebuilt_whole) * 7 / 8)


def test_a_layout_no_whole_dp_completes_says_so_instead_of_a_fraction(english):
    """2.5: tp=7 on 1,024 GPUs suggested "change dp to 9.14286"."""
    gpt3 = pl.Model(n_layers=96, hidden=12288, n_heads=96, seq_len=2048, vocab=51200)
    with pytest.raises(ValueError) as err:
        pl.estimate(gpt3, pl.Cluster("A100-80GB", 1024), pl.Training(global_batch=1536),
                    tp=7, pp=16, dp=8)
    message = str(err.value)
    said(message, "planner.layout_product_no_dp", tp=7, pp=16, dp=8, n_gpus=1024)
    assert "9.14" not in message
    with pytest.raises(ValueError, match=pattern("planner.layout_product", tp=8, pp=16, dp=4,
                                                    n_gpus=1024, dp_needed=8)):
        pl.estimate(gpt3, pl.Cluster("A100-80GB", 1024), pl.Training(global_batch=1536),
                    tp=8, pp=16, dp=4)


def test_step_2_says_no_tp_divides_25_heads(english):
    """2.5's 1.5B on 8 V100: no TP in {2, 4, 8} divides 25 heads; step 2 used to say 'fill the
    node: tp=1, over NVLink'."""
    steps = pl.decide(GPT2_XL, pl.Cluster("V100-32GB", 8),
                      pl.Training(global_batch=64, precision="fp16", recompute="none"))
    assert steps[1].config.tp == 1
    assert "no TP above 1" in steps[1].answer and "NVLink" not in steps[1].answer
