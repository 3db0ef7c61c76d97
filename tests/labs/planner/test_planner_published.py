"""The planner against runs that teams published: what they ran must fit, what they could not
run must not, and the estimated throughput must land near what they reported.

Every row names its primary source. Reported TFLOP/s of Megatron-LM (PTD-P), MT-NLG and BLOOM
count executed FLOPs with full activation recomputation (PTD-P eq. 3: 96·B·s·l·h²·(...));
they are compared with ``Estimate.flops_per_gpu``, which counts the same way. Nothing in the
planner is fitted to these rows (its constants: ``labs.planner.Efficiency``).

Run with ``-s`` to see the table.
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from labs import planner as pl

BAND = 0.30  # relative tolerance on per-GPU TFLOP/s or tokens/s


def gpt(layers, hidden, heads):
    """The GPT-3-style models of PTD-P and MT-NLG: seq 2048, vocab 51,200, learned positions."""
    return pl.Model(n_layers=layers, hidden=hidden, n_heads=heads, seq_len=2048, vocab=51200)


@dataclass(frozen=True)
class Run:
    name: str
    model: pl.Model
    gpu: str
    tp: int
    pp: int
    dp: int
    global_batch: int
    reported_tflops: float
    micro_batch: int = 1
    zero_stage: int = 0
    band: float = BAND


BLOOM = pl.Model(n_layers=70, hidden=14336, n_heads=112, seq_len=2048, vocab=250880,
                 learned_positions=False)  # ALiBi, tied embeddings
RUNS = [
    # PTD-P: Narayanan et al. 2021, arXiv:2104.04473, Table 1 (A100-80GB, Selene; seq 2048,
    # vocab 51,200; activation recomputation). The micro-batch size of each row is not in the
    # table: 1 assumed; non-interleaved schedule assumed.
    Run("PTD-P 39.1B", gpt(48, 8192, 64), "A100-80GB", 8, 2, 32, 1536, 138),
    Run("PTD-P 76.1B", gpt(60, 10240, 80), "A100-80GB", 8, 4, 32, 1792, 140),
    Run("PTD-P 145.6B", gpt(80, 12288, 96), "A100-80GB", 8, 8, 24, 2304, 148),
    Run("PTD-P 310.1B", gpt(96, 16384, 128), "A100-80GB", 8, 16, 15, 2160, 155),
    Run("PTD-P 529.6B", gpt(105, 20480, 128), "A100-80GB", 8, 35, 9, 2520, 163),
    Run("PTD-P 1008B", gpt(128, 25600, 160), "A100-80GB", 8, 64, 6, 3072, 163),
    # MT-NLG 530B: Smith et al. 2022, arXiv:2201.11990, §3 (Table "system performance"):
    # TP 8, PP 35, global batch 1920, 280/350/420 DGX A100-80GB nodes. The same model and
    # layout ran at 163 TFLOP/s in PTD-P with almost the same bubble (34/280 vs 34/240 of the
    # ideal time): the 25-30 % between the two are the software, not the layout, so a
    # layout-only model cannot be within 30 % of both; these rows get 35 %.
    Run("MT-NLG 530B, 2240 GPUs", gpt(105, 20480, 128), "A100-80GB", 8, 35, 8, 1920, 126,
        band=0.35),
    Run("MT-NLG 530B, 2800 GPUs", gpt(105, 20480, 128), "A100-80GB", 8, 35, 10, 1920, 121,
        band=0.35),
    Run("MT-NLG 530B, 3360 GPUs", gpt(105, 20480, 128), "A100-80GB", 8, 35, 12, 1920, 113,
        band=0.35),
    # BLOOM-176B: BigScience 2022, arXiv:2211.05100, §3.4: TP 4, PP 12, DP 8 on 384
    # A100-80GB, ZeRO-1, micro-batch 2, global batch 2048, about 150 TFLOP/s per GPU.
    Run("BLOOM 176B", BLOOM, "A100-80GB", 4, 12, 8, 2048, 150, micro_batch=2, zero_stage=1),
]


def estimate(run: Run) -> pl.Estimate:
    train = pl.Training(global_batch=run.global_batch, micro_batch=run.micro_batch,
                        zero_stage=run.zero_stage, recompute="full")
    return pl.estimate(run.model, pl.Cluster(run.gpu, run.tp * run.pp * run.dp), train,
                       tp=run.tp, pp=run.pp, dp=run.dp)


def test_print_the_table():
    print(f"\n{'run':26s} {'layout':>14s} fits {'GiB':>5s}  est. TFLOP/s  reported  ratio")
    for run in RUNS:
        est = estimate(run)
        print(f"{run.name:26s} {f'{run.tp}x{run.pp}x{run.dp}':>14s} {str(est.fits):5s}"
              f"{est.memory.total / 2**30:5.1f}  {est.flops_per_gpu / 1e12:11.0f}  "
              f"{run.reported_tflops:8.0f}  {est.flops_per_gpu / 1e12 / run.reported_tflops:5.2f}")


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_published_runs_fit_and_throughput_is_near(run):
    est = estimate(run)
    assert est.fits, est.summary()
    assert est.flops_per_gpu / 1e12 == pytest.approx(run.reported_tflops, rel=run.band)


def test_mt_nlg_throughput_falls_as_dp_grows():
    """Fewer micro-batches per pipeline, a larger bubble: 126 > 121 > 113 TFLOP/s."""
    mt = [estimate(r).flops_per_gpu for r in RUNS if r.name.startswith("MT-NLG")]
    assert mt[0] > mt[1] > mt[2]


LLAMA_65B = pl.Model(n_layers=80, hidden=8192, n_heads=64, seq_len=2048, vocab=32000,
                     ffn_hidden=22016, mlp="swiglu", tied_embeddings=False,
                     learned_positions=False, dropout=False)


def test_llama_65b_best_plan_is_near_380_tokens_per_gpu():
    """LLaMA-65B: Touvron et al. 2023, arXiv:2302.13971, §2.4: about 380 tokens/s/GPU on 2048
    A100-80GB, batch 4M tokens (2048 sequences of 2048), model and sequence parallelism,
    saving the expensive activations (selective recomputation), efficient attention. The
    layout is not published: the planner's best plan is compared."""
    train = pl.Training(global_batch=2048, micro_batch=1, recompute="selective")
    plans = pl.plan(LLAMA_65B, pl.Cluster("A100-80GB", 2048), train, top=3)
    assert plans and plans[0].fits
    best = plans[0]
    print(f"\nLLaMA-65B best plan: {best.config}: {best.tokens_per_s_per_gpu:.0f} tokens/s/GPU "
          f"(reported 380), MFU {best.mfu:.1%}")
    assert best.tokens_per_s_per_gpu == pytest.approx(380, rel=BAND)


GPT3 = gpt(96, 12288, 96)


@pytest.mark.parametrize("gpu", sorted(pl.GPUS))
def test_gpt3_without_model_parallelism_fits_no_gpu(gpu):
    precision = "bf16" if "bf16" in pl.GPUS[gpu].peaks else "fp16"  # V100: no bf16
    est = pl.estimate(GPT3, pl.Cluster(gpu, 8), pl.Training(global_batch=8, precision=precision),
                      tp=1, pp=1, dp=8)
    assert not est.fits and est.memory.states > pl.GPUS[gpu].memory_bytes


def test_layouts_no_one_could_run_do_not_fit():
    a100 = pl.Cluster("A100-80GB", 1024)
    tp_only = pl.estimate(GPT3, a100, pl.Training(global_batch=1536), tp=8, pp=1, dp=128)
    assert not tp_only.fits  # 175e9 x 16 B / 8 = 350 GB per GPU without ZeRO
    trillion = pl.estimate(gpt(128, 25600, 160), pl.Cluster("A100-80GB", 3072),
                           pl.Training(global_batch=3072), tp=8, pp=8, dp=48)
    assert not trillion.fits  # 1T x 16 B / 64 = 250 GB per GPU
