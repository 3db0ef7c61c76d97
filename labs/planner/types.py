"""The planner's inputs and outputs: model, cluster, training recipe, efficiency constants,
layout, and the estimate of one layout (:mod:`labs.planner` is the entry point).

Owns: the dataclasses and their input checks. Must not: compute an estimate, import the widget or
the grader, or print."""
from __future__ import annotations

from dataclasses import dataclass, field

from labs.formulas import memory
from labs.messages import joined, text
from labs.hardware import GPU, GPUS
from labs.parallel_dims import ParallelDims, is_degree

__all__ = ["GiB", "PRECISIONS", "SCHEDULES", "Efficiency", "Model", "Cluster", "Training", "Config",
           "MemoryBreakdown", "Estimate", "check_layout", "check_hardware", "pipeline_chunks"]

GiB = 2**30
#: Bytes of an activation and of a communicated gradient, per precision. "fp8": Transformer
#: Engine's fp8 GEMMs with bf16 activations and gradients kept between them (counted as bf16
#: here); "tf32": fp32 tensors, TF32 tensor-core matmuls; "fp32": fp32 CUDA-core matmuls.
PRECISIONS = {"fp8": 2, "bf16": 2, "fp16": 2, "tf32": 4, "fp32": 4}
#: Pipeline schedules the planner models: 1F1B (interleaved when v > 1; PTD-P §2.2) and ZB-H1
#: (backward split into B and W, W filling the bubble; Qi et al., ICLR 2024, §3.1; v = 1 only).
SCHEDULES = ("1f1b", "zb-h1")


@dataclass(frozen=True)
class Efficiency:
    """The few constants of the time and memory model, each with its source.

    - ``gemm``: achieved share of the dense peak on a transformer's large bf16 GEMMs. cuBLAS
      reaches 230-250 of 312 TFLOP/s on A100 for the large, well-shaped GEMMs of these models
      (NVIDIA Deep Learning Performance Guide, "Matrix Multiplication Background"; PTD-P §5.9
      discusses the same ceiling): 0.75.
    - ``other_kernels``: time of memory-bound kernels (norms, softmax, activation functions,
      dropout, residual adds) relative to GEMM time. Unfused BERT spends 39 % of its time
      outside tensor contractions (Ivanov et al., "Data Movement Is All You Need", MLSys 2021,
      arXiv:2007.00072), i.e. 0.64 of GEMM time; Megatron fuses most of them (PTD-P §4.2) and
      flash attention the softmax: assumed 0.15 (an assumption, not a measurement).
    - ``nvlink_bus``, ``ib_bus``: nccl-tests all-reduce bus bandwidth / link peak on DGX A100,
      the figures quoted in :mod:`labs.hardware`: 230 of 300 GB/s inside a node (0.77),
      23 of 25 GB/s per GPU across nodes (0.92).
    - ``overlap_slowdown``: how much slower compute runs while a collective runs beside it
      (the collective's kernels take SMs and memory bandwidth): 18.9 % on average, 40 % at
      most, measured on A100, H100, MI250 and MI210 with GPT and LLaMA layers
      ("Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep
      Learning", arXiv:2507.03114): each second of hidden communication costs 0.189 s.
    - ``reserved_bytes``, ``fragmentation``: memory the training tensors cannot use: CUDA
      context, cuBLAS workspaces and NCCL buffers (about 2 GiB, PyTorch CUDA semantics notes),
      and the caching allocator's fragmentation (assumed 10 % of the card).
    """

    gemm: float = 0.75
    other_kernels: float = 0.15
    nvlink_bus: float = 230 / 300
    ib_bus: float = 23 / 25
    overlap_slowdown: float = 0.189
    reserved_bytes: float = 2 * GiB
    fragmentation: float = 0.10

    def usable_bytes(self, gpu: GPU) -> float:
        return gpu.memory_bytes * (1 - self.fragmentation) - self.reserved_bytes


def _positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(text("memory.not_positive_integer", name=name, value=value))


@dataclass(frozen=True)
class Model:
    """A GPT-style decoder. ``mlp``: "gelu" (2 matrices of ffn_hidden, default 4·hidden) or
    "swiglu" (3); ``n_kv_heads`` < ``n_heads``: grouped-query attention; ``n_params`` is derived
    (:func:`labs.formulas.memory.general_layer_params` per layer, embeddings, learned positions) unless
    given; memory, time and MFU count the layers and the output layer from the shape, not
    ``n_params``."""

    n_layers: int
    hidden: int
    n_heads: int
    seq_len: int
    vocab: int
    ffn_hidden: int | None = None
    n_kv_heads: int | None = None
    mlp: str = "gelu"
    tied_embeddings: bool = True
    learned_positions: bool = True
    dropout: bool = True
    n_params: float | None = None

    def __post_init__(self):
        for name in ("n_layers", "hidden", "n_heads", "seq_len", "vocab"):
            _positive_int(name, getattr(self, name))
        if self.mlp not in ("gelu", "swiglu"):
            raise ValueError(text("planner.mlp_unknown", mlp=self.mlp))
        if self.hidden % self.n_heads:
            raise ValueError(text("planner.hidden_heads", hidden=self.hidden,
                                  n_heads=self.n_heads))
        object.__setattr__(self, "ffn_hidden", self.ffn_hidden or 4 * self.hidden)
        object.__setattr__(self, "n_kv_heads", self.n_kv_heads or self.n_heads)
        _positive_int("ffn_hidden", self.ffn_hidden)
        _positive_int("n_kv_heads", self.n_kv_heads)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(text("planner.heads_kv", n_heads=self.n_heads,
                                  n_kv_heads=self.n_kv_heads))
        if self.n_params is None:
            object.__setattr__(self, "n_params", self.n_layers * self.layer_params
                               + self.embedding_params)
        elif self.n_params <= 0:
            raise ValueError(text("planner.n_params_positive", n_params=self.n_params))

    @property
    def gated(self) -> bool:
        return self.mlp == "swiglu"

    @property
    def layer_params(self) -> float:
        return memory.general_layer_params(self.hidden, ffn_hidden=self.ffn_hidden,
                                           n_heads=self.n_heads, n_kv_heads=self.n_kv_heads,
                                           gated_mlp=self.gated)

    @property
    def embedding_params(self) -> float:
        copies = 1 if self.tied_embeddings else 2
        positions = self.seq_len if self.learned_positions else 0
        return (copies * self.vocab + positions) * self.hidden


@dataclass(frozen=True)
class Cluster:
    """``n_gpus`` of one kind (a :class:`~labs.hardware.GPU` or its name in ``GPUS``),
    ``gpus_per_node`` joined by NVLink, nodes by InfiniBand."""

    gpu: GPU | str
    n_gpus: int
    gpus_per_node: int = 8

    def __post_init__(self):
        if isinstance(self.gpu, str):
            if self.gpu not in GPUS:
                raise ValueError(text("planner.unknown_gpu", gpu=self.gpu, choices=sorted(GPUS)))
            object.__setattr__(self, "gpu", GPUS[self.gpu])
        _positive_int("n_gpus", self.n_gpus)
        _positive_int("gpus_per_node", self.gpus_per_node)


@dataclass(frozen=True)
class Training:
    """The recipe: global batch and micro-batch in sequences, precision ("bf16", "fp16", "fp8":
    mixed precision with fp32 master weights and Adam, 16 bytes per parameter; "fp32", "tf32":
    fp32 throughout, matmuls on CUDA cores or TF32 tensor cores), ZeRO stage (0-3), activation
    recomputation ("none", "selective", "full"). The peak FLOP/s is the GPU's for that
    precision (:meth:`labs.hardware.GPU.peak`). ``flash_attention``: None follows the GPU
    (V100: none, so attention keeps its s² terms); True on a GPU without it is an error.
    ``sequence_parallel``: activations outside the attention core, and under full
    recomputation the saved layer inputs, are split over TP (Megatron-Core).
    ``shard_group``: ZeRO-3's sharding group when it is smaller than DP (MiCS, arXiv:2205.00119;
    PyTorch's HSDP): the states are sharded over ``shard_group`` ranks and replicated over
    dp / shard_group copies (None: over all of DP); it needs ``zero_stage=3`` and must divide
    dp; a layout the search runs at ZeRO 0-2 ignores it. ``embedding_in_split``: the input
    embedding and the output layer each take one layer's place in the pipeline split, so the
    first and last stages hold one layer fewer (Llama 3, arXiv:2407.21783, §3.3.2;
    Megatron-Core's account_for_embedding/loss_in_pipeline_split): n_layers + 2 chunks."""

    global_batch: int
    micro_batch: int = 1
    precision: str = "bf16"
    zero_stage: int = 0
    recompute: str = "full"
    flash_attention: bool | None = None
    sequence_parallel: bool = True
    overlap_grad_reduce: bool = True
    shard_group: int | None = None
    embedding_in_split: bool = False

    def __post_init__(self):
        _positive_int("global_batch", self.global_batch)
        _positive_int("micro_batch", self.micro_batch)
        if self.precision not in PRECISIONS:
            raise ValueError(text("planner.precision_unknown", precision=self.precision,
                                  choices=sorted(PRECISIONS)))
        if self.zero_stage not in memory.ZERO_STAGES:
            raise ValueError(text("planner.zero_stage_unknown", zero_stage=self.zero_stage,
                                  choices=memory.ZERO_STAGES))
        if self.recompute not in memory.RECOMPUTE:
            raise ValueError(text("memory.unknown_recompute", recompute=self.recompute,
                                  choices=memory.RECOMPUTE))
        if self.shard_group is not None:
            _positive_int("shard_group", self.shard_group)
            if self.zero_stage != 3:
                raise ValueError(text("planner.shard_group_zero3", shard_group=self.shard_group,
                                      zero_stage=self.zero_stage))

    @property
    def element_bytes(self) -> int:
        return PRECISIONS[self.precision]

    @property
    def state_precision(self) -> str:
        return "fp32" if self.precision in ("fp32", "tf32") else "mixed"

    def uses_flash(self, gpu: GPU) -> bool:
        """FlashAttention for this run on ``gpu``: as asked, or the GPU's when None."""
        return gpu.flash_attention if self.flash_attention is None else self.flash_attention


@dataclass(frozen=True)
class Config:
    """One layout: degrees, micro-batch, interleaving chunks, ZeRO stage, and the activation
    recomputation it runs with (None: the recipe's, ``Training.recompute``; an estimate's
    config always names it, since :func:`~labs.planner.plan` searches it), and the pipeline
    ``schedule`` (:data:`SCHEDULES`; "zb-h1" needs v = 1). The degrees are :attr:`dims`'s: the
    mesh's declaration (:class:`~labs.parallel_dims.ParallelDims`) and its rules."""

    tp: int
    pp: int
    dp: int
    micro_batch: int = 1
    v: int = 1
    zero_stage: int = 0
    recompute: str | None = None
    schedule: str = "1f1b"

    @property
    def dims(self) -> ParallelDims:
        """The degrees as the mesh and the 3D step take them (a ValueError, in the mesh's
        words, for a degree that is not a whole number >= 1; :func:`check_layout` says it in
        the planner's)."""
        return ParallelDims(dp=self.dp, pp=self.pp, tp=self.tp)

    def __str__(self) -> str:
        layout = text("planner.config", tp=self.tp, pp=self.pp, dp=self.dp,
                      micro_batch=self.micro_batch, v=self.v, zero_stage=self.zero_stage)
        if self.recompute is not None:
            layout = text("planner.config_recompute", layout=layout, recompute=self.recompute)
        if self.schedule != "1f1b":  # 1F1B, the default, is not named (earlier outputs unchanged)
            layout = text("planner.config_schedule", layout=layout, schedule=self.schedule)
        return layout


@dataclass(frozen=True)
class MemoryBreakdown:
    """Bytes on the fullest GPU (``stage``: 0 = first pipeline stage, pp-1 = last)."""

    weights: float
    grads: float
    optimizer: float  # fp32 master weights + Adam moments
    activations: float
    stage: int
    usable: float  # what the card leaves for these (Efficiency.usable_bytes)
    in_flight: float = 1.0  # micro-batches whose activations the stage keeps at its peak

    @property
    def total(self) -> float:
        return self.weights + self.grads + self.optimizer + self.activations

    @property
    def states(self) -> float:
        return self.weights + self.grads + self.optimizer


@dataclass(frozen=True)
class Estimate:
    """Memory, traffic and time of one layout (SI units; :meth:`summary` for people).

    ``bubble``: the idle share of the step, (p-1)/(v·m+p-1) (:func:`labs.formulas.cost.bubble_fraction`),
    under ZB-H1 :func:`labs.formulas.cost.zb_h1_bubble_fraction`;
    ``bubble_ratio``: PTD-P's bubble time / compute time, (p-1)/(v·m). ``comm_bytes`` and
    ``comm_s``: per GPU per step, by dimension; ``exposed_s``: the part on the critical path.
    ``compute_s``: the slowest stage's kernels for all its micro-batches, without bubble or
    communication; ``step_time_s`` = (m + (p-1)/v) × (per-micro-batch compute + TP + PP time)
    + exposed DP time.
    ``mfu``: model FLOPs (6 per weight that multiplies + attention, no recomputation);
    ``hfu`` and ``flops_per_gpu``: the same count with recomputation, as Megatron-LM reports
    them (:func:`labs.formulas.cost.matmul_flops`), so ``mfu <= hfu``.
    """

    config: Config
    memory: MemoryBreakdown
    fits: bool
    reasons: list
    n_microbatches: int
    bubble: float
    bubble_ratio: float
    comm_bytes: dict
    comm_s: dict
    exposed_s: dict
    compute_s: float
    step_time_s: float
    tokens_per_s: float
    model_flops: float
    hardware_flops: float
    mfu: float
    hfu: float
    n_gpus: int = field(repr=False, default=1)

    @property
    def flops_per_gpu(self) -> float:
        """Executed FLOP/s per GPU (recomputation counted): what Megatron-LM reports."""
        return self.hardware_flops / self.step_time_s / self.n_gpus

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.tokens_per_s / self.n_gpus

    def summary(self) -> str:
        m = self.memory
        verdict = text("planner.fits" if self.fits else "planner.does_not_fit")
        lines = [text("planner.summary_layout", config=self.config, m=self.n_microbatches),
                 text("planner.summary_memory", stage=m.stage, weights=m.weights / GiB,
                      grads=m.grads / GiB, optimizer=m.optimizer / GiB,
                      activations=m.activations / GiB, total=m.total / GiB,
                      usable=m.usable / GiB, verdict=verdict)]
        lines += [f"  - {r}" for r in self.reasons]
        comm = joined((text("planner.summary_comm_dim", dim=k.upper(), gib=self.comm_bytes[k] / GiB,
                             exposed=self.exposed_s[k], seconds=self.comm_s[k])
                        for k in self.comm_bytes), "comma")
        lines += [text("planner.summary_comm", comm=comm),
                  text("planner.summary_step", step=self.step_time_s, compute=self.compute_s,
                       bubble=self.bubble, exposed=sum(self.exposed_s.values())),
                  text("planner.summary_throughput", tokens=self.tokens_per_s,
                       per_gpu=self.tokens_per_s_per_gpu, tflops=self.flops_per_gpu / 1e12,
                       mfu=self.mfu, hfu=self.hfu)]
        return "\n".join(lines)

    __str__ = summary


def check_layout(model: Model, cluster: Cluster, train: Training, config: Config) -> None:
    """Raise ValueError, saying what to change, if ``config`` cannot be laid out at all (the
    degrees' rules are :class:`~labs.parallel_dims.ParallelDims`'s, said in the planner's words)."""
    for name in ("tp", "pp", "dp"):
        if not is_degree(getattr(config, name)):
            raise ValueError(text("memory.not_positive_integer", name=name, value=getattr(config, name)))
    for name in ("micro_batch", "v"):
        _positive_int(name, getattr(config, name))
    dims, v = config.dims, config.v
    tp, pp, dp = dims.tp, dims.pp, dims.dp
    tp_pp = dims.non_data_parallel_size
    if not dims.fills(cluster.n_gpus) and cluster.n_gpus % tp_pp:
        raise ValueError(text("planner.layout_product_no_dp", tp=tp, pp=pp, dp=dp,
                              product=dims.world_size, n_gpus=cluster.n_gpus, tp_pp=tp_pp))
    if not dims.fills(cluster.n_gpus):
        raise ValueError(text("planner.layout_product", tp=tp, pp=pp, dp=dp,
                              product=dims.world_size, n_gpus=cluster.n_gpus,
                              dp_needed=cluster.n_gpus / tp_pp))
    if not dims.splits_heads(model.n_heads, model.n_kv_heads):
        raise ValueError(text("planner.tp_heads", tp=tp, n_heads=model.n_heads,
                              n_kv_heads=model.n_kv_heads))
    if not dims.fits_layers(model.n_layers):
        raise ValueError(text("planner.pp_layers", pp=pp, n_layers=model.n_layers))
    if v > 1 and (pp == 1 or pipeline_chunks(model, train) % (pp * v)):
        raise ValueError(text("planner.v_chunks_slots" if train.embedding_in_split else
                              "planner.v_chunks", v=v, n_layers=model.n_layers, ppv=pp * v))
    if train.global_batch % (dp * config.micro_batch):
        raise ValueError(text("planner.batch_split", global_batch=train.global_batch,
                              n=dp * config.micro_batch))
    m = train.global_batch // (dp * config.micro_batch)
    if v > 1 and m % pp:
        raise ValueError(text("planner.interleave_m", m=m, pp=pp))
    if config.schedule not in SCHEDULES:
        raise ValueError(text("planner.schedule_unknown", schedule=config.schedule,
                              choices=SCHEDULES))
    if config.schedule == "zb-h1" and v != 1:
        raise ValueError(text("planner.schedule_zb_v", v=v))
    if config.zero_stage not in memory.ZERO_STAGES:
        raise ValueError(text("planner.zero_stage_unknown", zero_stage=config.zero_stage,
                              choices=memory.ZERO_STAGES))
    if config.recompute is not None and config.recompute not in memory.RECOMPUTE:
        raise ValueError(text("memory.unknown_recompute", recompute=config.recompute,
                              choices=memory.RECOMPUTE))
    if config.zero_stage == 3 and train.shard_group is not None and dp % train.shard_group:
        raise ValueError(text("planner.shard_group_dp", shard_group=train.shard_group, dp=dp))
    check_hardware(cluster, train)


def pipeline_chunks(model: Model, train: Training) -> int:
    """What the pipeline split divides: the layers, plus the input embedding and the output
    layer when each takes a layer's place (``Training.embedding_in_split``)."""
    return model.n_layers + (2 if train.embedding_in_split else 0)


def check_hardware(cluster: Cluster, train: Training) -> None:
    """Raise ValueError if ``cluster``'s GPU lacks the run's arithmetic or FlashAttention."""
    gpu = cluster.gpu
    if train.precision not in gpu.peaks:
        raise ValueError(text("planner.precision_not_on_gpu", gpu=gpu.name,
                              precision=train.precision, choices=", ".join(gpu.peaks)))
    if train.flash_attention and not gpu.flash_attention:
        raise ValueError(text("planner.flash_not_on_gpu", gpu=gpu.name))


