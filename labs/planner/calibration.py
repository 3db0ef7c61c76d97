"""The planner against published training runs: each row one run, its layout, what its paper
reports (and on which accounting), and where the figure comes from; :func:`compare` puts the
planner's estimate beside it. Data and comparison only: the planner's constants
(:class:`~labs.planner.types.Efficiency`, :mod:`labs.hardware`) are not fitted to these rows.

Accounting (issue 29, item 2; PaLM, arXiv:2204.02311, App. B):

- ``"hfu"``: executed FLOPs including the recomputed forward -- Megatron-LM's reported
  TFLOP/s (PTD-P, arXiv:2104.04473, eq. 3), used by PTD-P, MT-NLG and BLOOM: compared with
  :attr:`Estimate.flops_per_gpu`;
- ``"mfu"``: model FLOPs without recomputation (Llama 3's TFLOPs/GPU and BF16 MFU):
  compared with MFU × peak;
- ``"tokens"``: tokens/s per GPU (LLaMA-65B).

Rows whose layout the paper does not give are left out, except LLaMA-65B, whose row compares
the planner's best plan (``searched``). Left out: Megatron-Core's H100 table (published only as
an image); FP8 runs (NeMo's and Megatron-Bridge's H100 tables), where only the GEMMs run in
FP8; runs with context parallelism (Llama 3 405B's third row of Table 4), which the planner
does not model.

The last three rows of ``RUNS`` (issue 39) check the terms written for them: ZeRO-3 over a
sharding group smaller than DP (BloombergGPT: MiCS, 128 GPUs × 4 replicas, on AWS p4d, whose
network the paper states) and the balanced, interleaved pipeline of Llama 3 405B (its §3.3.2
gives what Table 4 leaves out: no activation checkpointing at 8K, the input embedding and the
output layer each in a layer's place, one layer per chunk, FSDP sharding gradients and
optimizer states without resharding the parameters after the forward: ZeRO-2 here).

``RUNS`` is the table the targets apply to (median |error| <= 15 %, every row within 30 %):
the A100 runs below and six H100 runs of NVIDIA's DGX Cloud benchmarking recipes (Megatron
through NeMo, BF16, measured step times): the smallest and the largest scale of each recipe
whose layout the planner models (the step times of all of a recipe's scales are within 4 % of
each other). Their recomputation and optimizer come from each recipe's own config.

``FSDP_RUNS`` is shown beside it and is not within those targets: MosaicML's llm-foundry
benchmark (H100 80GB, BF16, FSDP FULL_SHARD = ZeRO-3 over every GPU, no TP or PP), every row
at sequence length 2048 for the 7B-70B models, on the measured tokens/s per GPU. The cluster's
network is not stated there; the planner assumes DGX H100's (8 x NDR 400 Gb/s per node).

Owns: the table of published runs and :func:`compare`. Must not: fit or change the planner's
constants, import the widget, torch's distributed code or the grader, or print.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from labs.hardware import GPU, GPUS
from labs.planner.model import estimate
from labs.planner.search import plan
from labs.planner.types import Cluster, Efficiency, Estimate, Model, Training

__all__ = ["Run", "Row", "RUNS", "FSDP_RUNS", "P4D_A100", "compare", "table", "summary"]

PTDP = "PTD-P, Narayanan et al. 2021, arXiv:2104.04473"


def gpt(layers: int, hidden: int, heads: int) -> Model:
    """PTD-P's and MT-NLG's GPT models: seq 2048, vocab 51,200, learned positions."""
    return Model(n_layers=layers, hidden=hidden, n_heads=heads, seq_len=2048, vocab=51200)


BLOOM = Model(n_layers=70, hidden=14336, n_heads=112, seq_len=2048, vocab=250880,
              learned_positions=False)
LLAMA_65B = Model(n_layers=80, hidden=8192, n_heads=64, seq_len=2048, vocab=32000,
                  ffn_hidden=22016, mlp="swiglu", tied_embeddings=False,
                  learned_positions=False, dropout=False)


@dataclass(frozen=True)
class Run:
    """One published run. ``reported``: TFLOP/s per GPU (``hfu``/``mfu``) or tokens/s per GPU
    (``tokens``); ``flash_attention``: what the run used (None: the GPU's default); ``gpu``: a
    name of ``GPUS`` or a :class:`~labs.hardware.GPU` (a server other than NVIDIA's DGX)."""

    name: str
    source: str
    model: Model
    gpu: str | GPU
    tp: int
    pp: int
    dp: int
    global_batch: int
    reported: float
    accounting: str = "hfu"
    micro_batch: int = 1
    v: int = 1
    zero_stage: int = 0
    recompute: str = "full"
    flash_attention: bool | None = False
    searched: bool = False
    shard_group: int | None = None
    embedding_in_split: bool = False

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def training(self) -> Training:
        return Training(global_batch=self.global_batch, micro_batch=self.micro_batch,
                        zero_stage=self.zero_stage, recompute=self.recompute,
                        flash_attention=self.flash_attention, shard_group=self.shard_group,
                        embedding_in_split=self.embedding_in_split)


_T1 = PTDP + (", Table 1 (A100-80GB; the interleaved schedule's chunks and the micro-batch "
              "are not given: v = 1, micro-batch 1 here)")
_T2 = PTDP + ", Table 2 (175B, ZeRO-3 without model parallelism, DeepSpeed)"
_MT = ("MT-NLG, Smith et al. 2022, arXiv:2201.11990, §2.4: TP 8, PP 35, batch 1920, "
       "280/350/420 DGX A100 nodes")
_DGXC = ("NVIDIA/dgxc-benchmarking, {readme} (commit {commit}): H100 BF16, {layout}; "
         "{scale}; recomputation and optimizer from the recipe's {conf}")
NEMOTRON_340B = Model(n_layers=96, hidden=18432, n_heads=96, n_kv_heads=8, seq_len=4096,
                      vocab=256000, tied_embeddings=False, learned_positions=False,
                      dropout=False)  # squared ReLU: 2 matrices of 4 x hidden, like GELU
NEMOTRON_15B = Model(n_layers=32, hidden=6144, n_heads=48, n_kv_heads=8, seq_len=4096,
                     vocab=256000, tied_embeddings=False, learned_positions=False,
                     dropout=False)


def _dgxc(name, model, readme, commit, conf, tp, pp, gpus, global_batch, step_s, **kw):
    """One column of a DGX Cloud recipe's table: tokens/s per GPU from its step time."""
    layout = f"TP {tp}, PP {pp}" + (f", VP {kw['v']}" if kw.get("v", 1) > 1 else "")
    source = _DGXC.format(readme=readme, commit=commit, layout=layout, conf=conf,
                          scale=f"{gpus} GPUs, global batch {global_batch}, {step_s} s/step")
    tokens = model.seq_len * global_batch / step_s / gpus
    return Run(f"{name}, {gpus} H100", source, model, "H100-80GB", tp, pp,
               gpus // (tp * pp), global_batch, tokens, accounting="tokens", zero_stage=1,
               flash_attention=True, **kw)


_G3 = ("nemo_megatron/README_175b.md", "0b71cfd", "gpt3_175b_hydra.yaml (35a9aec: none, "
       "distributed_fused_adam)")
_N340 = ("nemotron/README_340b.md", "143b90d", "nemotron4-340b-synth.yaml (8f5cbb3: "
         "selective, distributed_fused_adam)")
_N15 = ("nemotron/README_15b.md", "0b71cfd", "nemotron4-15b-synth.yaml (8f5cbb3: none, "
        "mcore_distributed_optim)")
_NVIDIA_H100 = (
    _dgxc("GPT-3 175B", gpt(96, 12288, 96), *_G3, 4, 8, 128, 256, 8.309, v=12,
          recompute="none"),
    _dgxc("GPT-3 175B", gpt(96, 12288, 96), *_G3, 4, 8, 2048, 4096, 8.49, v=12,
          recompute="none"),
    # 128 GPUs (DP 2) fits only with the recipe's bf16 optimizer states, which the planner
    # does not model (it holds fp32 states: 79 GiB of 69.7 usable): its smallest scale here is 256
    _dgxc("Nemotron-4 340B", NEMOTRON_340B, *_N340, 8, 8, 256, 64, 4.67, v=12,
          recompute="selective"),
    _dgxc("Nemotron-4 340B", NEMOTRON_340B, *_N340, 8, 8, 2048, 512, 4.84, v=12,
          recompute="selective"),
    _dgxc("Nemotron-4 15B", NEMOTRON_15B, *_N15, 4, 1, 16, 64, 2.812, micro_batch=4,
          recompute="none"),
    _dgxc("Nemotron-4 15B", NEMOTRON_15B, *_N15, 4, 1, 2048, 8192, 2.887, micro_batch=4,
          recompute="none"),
)

#: A100-40GB in AWS p4d.24xlarge: NVSwitch as in DGX A100, but 400 Gb/s of EFA per 8 GPUs
#: (BloombergGPT §3.2 states both), a quarter of DGX A100's 8 x 200 Gb/s.
P4D_A100 = replace(GPUS["A100-40GB"], name="A100-40GB (AWS p4d)", inter_node_bw=400e9 / 8 / 8,
                   sources={**GPUS["A100-40GB"].sources, "inter_node_bw": (
                       "Wu et al. 2023, arXiv:2303.17564, §3.2: 64 p4d.24xlarge, EFA "
                       "400 Gb/s per instance (8 GPUs)")})
BLOOMBERG_GPT = Model(n_layers=70, hidden=7680, n_heads=40, seq_len=2048, vocab=131072,
                      learned_positions=False)  # ALiBi; tied embeddings: 50.6B
LLAMA3_405B = Model(n_layers=126, hidden=16384, n_heads=128, n_kv_heads=8, seq_len=8192,
                    vocab=128000, ffn_hidden=53248, mlp="swiglu", tied_embeddings=False,
                    learned_positions=False, dropout=False)  # arXiv:2407.21783, Table 3
_BBG = ("BloombergGPT, Wu et al. 2023, arXiv:2303.17564, §3.2-3.3: 512 A100-40GB (64 AWS "
        "p4d), ZeRO-3 sharded over 128 GPUs with 4 copies (MiCS, hierarchical communication), "
        "activation checkpointing of every layer, batch 2048 x 2048 tokens, 102 TFLOP/s on "
        "average (32.5 s/step: 106 with recomputation counted, 80 without: hfu); micro-batch "
        "not given: 1 here; fused kernels, no FlashAttention")
_L3 = ("Llama 3, Llama Team 2024, arXiv:2407.21783, Table 4: {gpus} H100, TP 8, CP 1, PP 16, "
       "DP {dp}, 16M tokens of 8K per batch, {tflops} TFLOP/s per GPU (BF16 MFU); §3.3.2: "
       "interleaved schedule, one layer fewer on the first and last stages (a chunk holds "
       "only the embedding, another only the output layer: one layer per chunk, v = 8), no "
       "activation checkpointing at 8K, FSDP sharding gradients and optimizer states without "
       "resharding parameters after the forward (ZeRO-2 here)")
_ISSUE_39 = (
    Run("BloombergGPT 50B, MiCS", _BBG, BLOOMBERG_GPT, P4D_A100, 1, 1, 512, 2048, 102,
        zero_stage=3, shard_group=128),
    *(Run(f"Llama 3 405B, {gpus} H100", _L3.format(gpus=gpus, dp=dp, tflops=tflops),
          LLAMA3_405B, "H100-80GB", 8, 16, dp, 2048, tflops, accounting="mfu", v=8,
          zero_stage=2, recompute="none", flash_attention=True, embedding_in_split=True)
      for gpus, dp, tflops in ((8192, 64, 430), (16384, 128, 400))),
)

RUNS = (
    Run("PTD-P 1.7B", _T1, gpt(24, 2304, 24), "A100-80GB", 1, 1, 32, 512, 137),
    Run("PTD-P 3.6B", _T1, gpt(30, 3072, 32), "A100-80GB", 2, 1, 32, 512, 138),
    Run("PTD-P 7.5B", _T1, gpt(36, 4096, 32), "A100-80GB", 4, 1, 32, 512, 142),
    Run("PTD-P 18.4B", _T1, gpt(40, 6144, 48), "A100-80GB", 8, 1, 32, 1024, 135),
    Run("PTD-P 39.1B", _T1, gpt(48, 8192, 64), "A100-80GB", 8, 2, 32, 1536, 138),
    Run("PTD-P 76.1B", _T1, gpt(60, 10240, 80), "A100-80GB", 8, 4, 32, 1792, 140),
    Run("PTD-P 145.6B", _T1, gpt(80, 12288, 96), "A100-80GB", 8, 8, 24, 2304, 148),
    Run("PTD-P 310.1B", _T1, gpt(96, 16384, 128), "A100-80GB", 8, 16, 15, 2160, 155),
    Run("PTD-P 529.6B", _T1, gpt(105, 20480, 128), "A100-80GB", 8, 35, 9, 2520, 163),
    Run("PTD-P 1008B", _T1, gpt(128, 25600, 160), "A100-80GB", 8, 64, 6, 3072, 163),
    Run("ZeRO-3 175B, 384 GPUs", _T2, gpt(96, 12288, 96), "A100-80GB", 1, 1, 384, 1536, 144,
        micro_batch=4, zero_stage=3),
    Run("ZeRO-3 175B, 768 GPUs", _T2, gpt(96, 12288, 96), "A100-80GB", 1, 1, 768, 1536, 88,
        micro_batch=2, zero_stage=3),
    Run("ZeRO-3 175B, 1536 GPUs", _T2, gpt(96, 12288, 96), "A100-80GB", 1, 1, 1536, 1536, 44,
        zero_stage=3),
    Run("MT-NLG 530B, 2240 GPUs", _MT, gpt(105, 20480, 128), "A100-80GB", 8, 35, 8, 1920, 126,
        zero_stage=1),
    Run("MT-NLG 530B, 2800 GPUs", _MT, gpt(105, 20480, 128), "A100-80GB", 8, 35, 10, 1920, 121,
        zero_stage=1),
    Run("MT-NLG 530B, 3360 GPUs", _MT, gpt(105, 20480, 128), "A100-80GB", 8, 35, 12, 1920, 113,
        zero_stage=1),
    Run("BLOOM 176B", "BigScience 2022, arXiv:2211.05100, §3.4: TP 4, PP 12, DP 8, ZeRO-1, "
        "micro-batch 2, batch 2048, about 150 TFLOP/s", BLOOM, "A100-80GB", 4, 12, 8, 2048, 150,
        micro_batch=2, zero_stage=1),
    Run("LLaMA-65B (searched)", "Touvron et al. 2023, arXiv:2302.13971, §2.4: about 380 "
        "tokens/s/GPU on 2048 A100-80GB, batch 4M tokens, selective recomputation, efficient "
        "attention", LLAMA_65B, "A100-80GB", 1, 1, 2048, 2048, 380, accounting="tokens",
        recompute="selective", flash_attention=True, searched=True),
) + _NVIDIA_H100 + _ISSUE_39


# MosaicML llm-foundry, scripts/train/benchmarking/README.md, table "H100 80GB BF16" (commit
# 061f2c7): MPT models -- GELU MLP of 4 x hidden, vocabulary 50,368, learned positions, tied
# embeddings, no dropout, FlashAttention; amp_bf16, FSDP FULL_SHARD, "Activation
# Checkpointing" True -> full recomputation, False -> none. Throughput (T/s/GPU) is measured.
_MPT = ("MosaicML llm-foundry, scripts/train/benchmarking/README.md, H100 80GB BF16 table "
        "(commit 061f2c7): FSDP FULL_SHARD, amp_bf16, seq 2048, measured tokens/s per GPU")
_MPT_SIZES = {"7B": (32, 4096, 32), "13B": (40, 5120, 40), "30B": (48, 7168, 56),
              "70B": (80, 8192, 64)}


def mpt(size: str, seq_len: int = 2048) -> Model:
    """An MPT model of llm-foundry's yamls (mpt-7b ... mpt-70b: layers, d_model, heads)."""
    layers, hidden, heads = _MPT_SIZES[size]
    return Model(n_layers=layers, hidden=hidden, n_heads=heads, seq_len=seq_len, vocab=50368,
                 dropout=False)


def _mpt_run(size, gpus, micro_batch, global_batch, tokens, checkpointing):
    return Run(f"MPT-{size}, {gpus} H100", _MPT, mpt(size), "H100-80GB", 1, 1, gpus,
               global_batch, tokens, accounting="tokens", micro_batch=micro_batch,
               zero_stage=3, recompute="full" if checkpointing else "none",
               flash_attention=True)


FSDP_RUNS = (
    _mpt_run("70B", 64, 8, 2048, 1039, True),
    _mpt_run("70B", 32, 2, 1024, 882, True),
    _mpt_run("30B", 32, 14, 1344, 2308, True),
    _mpt_run("30B", 16, 10, 480, 2263, True),
    _mpt_run("30B", 8, 3, 504, 2002, True),
    _mpt_run("13B", 64, 2, 128, 4800, False),
    _mpt_run("13B", 32, 2, 64, 4811, False),
    _mpt_run("13B", 16, 2, 32, 4767, False),
    _mpt_run("13B", 8, 2, 16, 4792, False),
    _mpt_run("7B", 8, 6, 48, 10643, False),
)


@dataclass(frozen=True)
class Row:
    run: Run
    estimate: Estimate

    @property
    def estimated(self) -> float:
        """The planner's figure on the run's accounting."""
        e, acc = self.estimate, self.run.accounting
        if acc == "tokens":
            return e.tokens_per_s_per_gpu
        peak = e.hardware_flops / e.hfu / e.step_time_s / e.n_gpus  # the precision's peak
        return (e.hfu if acc == "hfu" else e.mfu) * peak / 1e12

    @property
    def error(self) -> float:
        """(estimate - reported) / reported."""
        return self.estimated / self.run.reported - 1


def compare(run: Run, efficiency: Efficiency = Efficiency()) -> Row:
    cluster, train = Cluster(run.gpu, run.n_gpus), run.training
    if run.searched:  # the paper's recomputation
        return Row(run, plan(run.model, cluster, train, top=1, recompute=None,
                             efficiency=efficiency)[0])
    return Row(run, estimate(run.model, cluster, train, tp=run.tp, pp=run.pp, dp=run.dp,
                             v=run.v, efficiency=efficiency))


def table(runs=RUNS, efficiency: Efficiency = Efficiency()) -> list:
    return [compare(r, efficiency) for r in runs]


def summary(rows) -> dict:
    errors = [abs(r.error) for r in rows]
    return {"median_abs_error": statistics.median(errors), "max_abs_error": max(errors)}
