"""The planner's estimate of one layout: memory of the fullest stage, bytes and seconds of each
dimension's communication, step time, throughput, MFU. Composes :mod:`labs.memory` and
:mod:`labs.cost`; the model of time is described in :mod:`labs.planner`.

Owns: :func:`estimate` of one layout. Must not: search layouts (labs.planner.search), hold memory or
traffic formulas (labs.memory, labs.cost), import the widget or the grader, or print."""
from __future__ import annotations

import math

from dataclasses import replace

from labs import cost, memory
from labs.pipeline.schedules import in_flight_bound  # ZB-H1's bound, one source with 2.3
from labs.messages import text
from labs.planner.types import (GiB, Cluster, Config, Efficiency, Estimate,
                                       MemoryBreakdown, Model, Training, check_layout)

__all__ = ["estimate", "evaluate", "step_seconds", "pipeline_seconds", "bubble", "zb_times",
           "stage_params", "stage_memory",
           "layers_per_stage", "attention_traffic_bytes"]


def layers_per_stage(model: Model, pp: int) -> int:
    """Layers on the fullest stage: ceil(L / pp) (uneven splits load the slowest stage)."""
    return math.ceil(model.n_layers / pp)


def stage_params(model: Model, tp: int, pp: int, stage: int) -> float:
    """Parameters one GPU of pipeline ``stage`` holds: its layers and, on the first stage, the
    input embedding (and learned positions), on the last the output layer (a copy of the word
    embeddings when tied and pp > 1, as Megatron-LM keeps), all split over TP."""
    words = model.vocab * model.hidden
    params = layers_per_stage(model, pp) * model.layer_params
    if stage == 0:
        params += words + (model.seq_len * model.hidden if model.learned_positions else 0)
    if stage == pp - 1 and (pp > 1 or not model.tied_embeddings):
        params += words
    return params / tp


def _layer_activations(model: Model, cluster: Cluster, train: Training, config: Config,
                       recompute: str) -> float:
    """Bytes one layer keeps per micro-batch (:func:`labs.memory.layer_activation_bytes`), for
    the run's element size and FlashAttention on this GPU. Under full recomputation with
    sequence parallelism the saved layer input (2sbh) is the rank's sequence shard, 2sbh/t, as
    Megatron-Core checkpoints it (its transformer block keeps the SP-split hidden states)."""
    scale = train.element_bytes / 2  # the paper's bytes are for 2-byte activations
    kept = memory.layer_activation_bytes(
        seq_len=model.seq_len, micro_batch=config.micro_batch, hidden=model.hidden,
        n_heads=model.n_heads, ffn_hidden=model.ffn_hidden, n_kv_heads=model.n_kv_heads,
        gated_mlp=model.gated, tp=config.tp, sequence_parallel=train.sequence_parallel,
        recompute=recompute, flash_attention=train.uses_flash(cluster.gpu),
        dropout=model.dropout)
    if recompute == "full" and train.sequence_parallel:
        kept /= config.tp
    return scale * kept


def attention_traffic_bytes(model: Model, cluster: Cluster, train: Training,
                            config: Config) -> float:
    """HBM bytes the attention core moves per micro-batch on the slowest stage without
    FlashAttention (0 with it): memory-bound work the GEMM time does not cover.

    The s² tensors a layer keeps, 5·a·s²·b bytes on 2-byte activations with dropout (scores
    after softmax, dropout mask and output; 2·a·s²·b without dropout; Korthikanti et al. 2022,
    arXiv:2205.05198, §4), over the a/t heads of this TP rank, each written and read once by
    the forward (2×), again by a recomputed forward (full or selective recomputation: 2×), and
    in the backward read once with a gradient of the same size written and read (3×). Timed at
    the card's HBM peak (:attr:`labs.hardware.GPU.hbm_bw`), a lower bound."""
    if train.uses_flash(cluster.gpu):
        return 0.0
    s, b, heads = model.seq_len, config.micro_batch, model.n_heads / config.tp
    kept = (5 if model.dropout else 2) * heads * s * s * b * train.element_bytes / 2
    passes = 2 + (2 if train.recompute != "none" else 0) + 3
    return layers_per_stage(model, config.pp) * passes * kept


def stage_memory(model: Model, cluster: Cluster, train: Training, config: Config, stage: int,
                 efficiency: Efficiency) -> MemoryBreakdown:
    """Bytes one GPU of ``stage`` holds at its peak: model states (ZeRO-sharded over DP) and
    the activations of the micro-batches the schedule keeps in flight there (1F1B: min(pp -
    stage, m); ZB-H1: min(pp, m) on every stage, since W keeps a micro-batch's activations
    after its B: :func:`labs.pipeline.schedules.in_flight_bound`), plus, with full
    recomputation, one layer's activations rebuilt during its backward pass."""
    tp, pp, dp = config.tp, config.pp, config.dp
    m = train.global_batch // (dp * config.micro_batch)
    states = memory.model_state_bytes_per_gpu(
        stage_params(model, tp, pp, stage), dp=dp, zero_stage=config.zero_stage,
        optimizer="adam", precision=train.state_precision)
    if config.schedule == "zb-h1":
        in_flight = float(in_flight_bound("zb-h1", pp, m, stage))
    else:
        in_flight = memory.microbatches_in_flight(pp, m, v=config.v, stage=stage)
    acts = layers_per_stage(model, pp) * in_flight * _layer_activations(
        model, cluster, train, config, train.recompute)
    if train.recompute == "full":  # working set of one layer
        acts += _layer_activations(model, cluster, train, config, "none")
    if stage == pp - 1:  # the output layer's last micro-batch (1 in flight on the last stage)
        acts += train.element_bytes / 2 * memory.output_activation_bytes(
            seq_len=model.seq_len, micro_batch=config.micro_batch, hidden=model.hidden,
            vocab=model.vocab, tp=tp)
    return MemoryBreakdown(weights=states.params, grads=states.grads,
                           optimizer=states.master_params + states.optimizer_states,
                           activations=acts, stage=stage,
                           usable=efficiency.usable_bytes(cluster.gpu), in_flight=in_flight)


def _reasons(mem: MemoryBreakdown, config: Config, train: Training) -> list:
    """What overflows and what to change, largest lever first."""
    if mem.total <= mem.usable:
        return []
    overflow = text("planner.overflow", stage=mem.stage, total=mem.total / GiB,
                    usable=mem.usable / GiB, states=mem.states / GiB,
                    activations=mem.activations / GiB)
    hints = []
    if mem.states > mem.usable / 2:
        hints.append(text("planner.hint_split", tp=config.tp, pp=config.pp,
                          zero_stage=config.zero_stage))
    if mem.activations > mem.usable / 4 or not hints:
        if train.recompute != "full":
            hints.append(text("planner.hint_recompute", now=train.recompute))
        if config.micro_batch > 1:
            hints.append(text("planner.hint_micro_batch", now=config.micro_batch))
        hints.append(text("planner.hint_tp"))
    return [overflow, text("planner.to_fit", hints=text("planner.hint_sep").join(hints))]


def _link(cluster: Cluster, group_span: int, efficiency: Efficiency) -> tuple[float, str]:
    """Bus bandwidth for a group whose ranks span ``group_span`` consecutive GPUs."""
    gpu = cluster.gpu
    if group_span <= cluster.gpus_per_node:
        return gpu.intra_node_bw * efficiency.nvlink_bus, "NVLink"
    return gpu.inter_node_bw * efficiency.ib_bus, "InfiniBand"


def _zero3_passes(recompute: str) -> int:
    """ZeRO-3's ring passes over the parameters per micro-batch: an all-gather before the
    forward, one before the backward and a reduce-scatter of the gradients (ZeRO,
    arXiv:1910.02054, §7.2.2: 3Ψ), plus, under full recomputation, the all-gather of the
    recomputed forward, which runs the layers again after their parameters were released
    (the same repetition as TP's 6 all-reduces instead of 4)."""
    return 4 if recompute == "full" else 3


def _hidden_s(comm_s: float, window_s: float, efficiency: Efficiency) -> float:
    """What ``comm_s`` of communication under ``window_s`` of compute adds to the step: the
    part that sticks out (:func:`labs.cost.exposed_seconds`) plus the slowdown of the compute
    it runs beside (``Efficiency.overlap_slowdown`` × the overlapped time)."""
    return (cost.exposed_seconds(comm_s, window_s)
            + efficiency.overlap_slowdown * min(comm_s, window_s))


def _zero3_exposed_s(dp_s: float, compute_mb: float, m: int, recompute: str,
                     efficiency: Efficiency) -> float:
    """ZeRO-3's exposed DP time: each micro-batch's gathers hide only under the compute of
    their own pass (a layer's parameters are prefetched while the previous layer computes, and
    the next pass cannot start before this one ends). Forward: one all-gather under the
    forward's share of the compute (1/4 with full recomputation: forward, recomputed forward,
    backward = 1 + 1 + 2; 1/3 otherwise); backward: the other passes (recompute and backward
    gathers, the gradients' reduce-scatter) under the rest. Per pass: max(0, traffic -
    compute) plus the compute's slowdown while they overlap (:func:`_hidden_s`). No fitted
    constant: the bytes of :func:`_zero3_passes` on the inter-node bus bandwidth and the
    overlap slowdown of :class:`Efficiency`."""
    passes = _zero3_passes(recompute)
    one = dp_s / (m * passes)  # one pass over the parameters, one micro-batch
    forward = compute_mb / 3 if recompute != "full" else compute_mb / 4
    return m * (_hidden_s(one, forward, efficiency)
                + _hidden_s((passes - 1) * one, compute_mb - forward, efficiency))


def _dp_exposed_s(dp_s: float, zero_stage: int, compute_mb: float, m: int,
                  overlap: bool, recompute: str, efficiency: Efficiency) -> float:
    """The part of the DP traffic on the critical path. Gradients are reduced bucket by bucket
    while backward still runs (Li et al., arXiv:2006.15704, §3.2.3): ZeRO 0 all-reduces and
    ZeRO 1 reduce-scatters under the last micro-batch's backward (2/3 of its compute), ZeRO 2
    reduce-scatters under every micro-batch's backward; the all-gather of updated parameters of
    ZeRO 1 and 2 follows the optimizer step and is exposed. ZeRO 3 (:func:`_zero3_exposed_s`)
    prefetches each pass's gathers under that pass's compute only. Overlapped traffic also
    slows the compute beside it (:func:`_hidden_s`). ``overlap=False``: all exposed."""
    if not overlap:
        return dp_s
    backward_s = compute_mb * 2 / 3
    if zero_stage == 3:
        return _zero3_exposed_s(dp_s, compute_mb, m, recompute, efficiency)
    gather_s = {0: 0.0, 1: dp_s / 2, 2: dp_s / (m + 1)}[zero_stage]  # shares of dp_bytes_per_step
    window = m * backward_s if zero_stage == 2 else backward_s
    return gather_s + _hidden_s(dp_s - gather_s, window, efficiency)


def zb_times(recompute: str) -> tuple[float, float, float]:
    """Relative t_F, t_B, t_W of one micro-batch under ZB-H1, from the matmul FLOPs: forward
    2·N, input gradient 2·N, weight gradient 2·N (Qi et al. 2024 §2: t_F ≈ t_B ≈ t_W); full
    recomputation re-runs the forward inside B (2·N more), so W is 2 of 8 parts, not 2 of 6."""
    return (1.0, 2.0, 1.0) if recompute == "full" else (1.0, 1.0, 1.0)


def pipeline_seconds(microbatch_s: float, m: int, config: Config, recompute: str) -> float:
    """The pipeline's part of a step: 1F1B's (m + (p-1)/v)·t
    (:func:`labs.cost.pipeline_step_seconds`), or ZB-H1's m·t + (p-1)(t_F + t_B - t_W)
    (:func:`labs.cost.zb_h1_step_seconds`) with W's share of t from :func:`zb_times`."""
    if config.schedule == "zb-h1":
        t_f, t_b, t_w = zb_times(recompute)
        return cost.zb_h1_step_seconds(microbatch_s, m, config.pp,
                                       weight_share=t_w / (t_f + t_b + t_w))
    return cost.pipeline_step_seconds(microbatch_s, m, config.pp, config.v)


def bubble(config: Config, m: int, recompute: str) -> float:
    """The idle share of the step under ``config``'s schedule (0 without a pipeline)."""
    if config.pp == 1:
        return 0.0
    if config.schedule == "zb-h1":
        return cost.zb_h1_bubble_fraction(config.pp, m, *zb_times(recompute))
    return cost.bubble_fraction(config.pp, m, config.v)


def step_seconds(model: Model, cluster: Cluster, train: Training, config: Config,
                 efficiency: Efficiency) -> dict:
    """One step's time for a checked layout: the slowest stage's compute per micro-batch, the
    bytes and seconds of each dimension's traffic on its link, the pipeline schedule (bubble
    included) and the part of the DP traffic left exposed."""
    tp, pp, dp, v, mb = config.tp, config.pp, config.dp, config.v, config.micro_batch
    m = train.global_batch // (dp * mb)
    s, h, e = model.seq_len, model.hidden, train.element_bytes

    # compute: the slowest stage (the last: full layers + output layer), per micro-batch
    flops_mb = cost.matmul_flops(mb * s, n_layers=layers_per_stage(model, pp),
                                 layer_params=model.layer_params, seq_len=s, hidden=h,
                                 vocab=model.vocab, recompute=train.recompute) / tp
    peak = cluster.gpu.peak(train.precision)  # the run's arithmetic (check_hardware)
    compute_mb = cost.compute_seconds(flops_mb, peak, efficiency.gemm) \
        * (1 + efficiency.other_kernels) \
        + attention_traffic_bytes(model, cluster, train, config) / cluster.gpu.hbm_bw

    # bytes per GPU per step, by dimension
    tp_passes = 1.5 if train.recompute == "full" else 1.0  # the recomputed forward's 2 of 6
    # ZeRO-3 under full recomputation gathers the parameters once more (_zero3_passes)
    zero3_extra = _zero3_passes(train.recompute) / 3 if config.zero_stage == 3 else 1.0
    grad_bytes = max(stage_params(model, tp, pp, st) for st in {0, pp - 1}) * e
    comm_bytes = {
        "tp": tp_passes * cost.tp_bytes_per_step(mb, s, h, m, layers_per_stage(model, pp), tp,
                                                 bytes_per_element=e),
        "pp": (v * cost.pp_bytes_per_step(mb, s, h, m, bytes_per_element=e) / tp
               if pp > 1 else 0.0),
        "dp": cost.dp_bytes_per_step(grad_bytes, dp, zero_stage=config.zero_stage,
                                     n_microbatches=m) * zero3_extra if dp > 1 else 0.0,
    }
    spans = {"tp": tp, "pp": tp * pp, "dp": tp * pp * dp}
    comm_s = {k: cost.seconds_on_link(b, _link(cluster, spans[k], efficiency)[0])
              for k, b in comm_bytes.items()}

    microbatch_s = compute_mb + (comm_s["tp"] + comm_s["pp"]) / m
    pipeline_s = pipeline_seconds(microbatch_s, m, config, train.recompute)
    dp_exposed = _dp_exposed_s(comm_s["dp"], config.zero_stage, compute_mb, m,
                               train.overlap_grad_reduce, train.recompute, efficiency)
    return dict(compute_s=m * compute_mb, comm_bytes=comm_bytes, comm_s=comm_s,
                dp_exposed_s=dp_exposed, step_s=pipeline_s + dp_exposed)


def evaluate(model: Model, cluster: Cluster, train: Training, config: Config,
             efficiency: Efficiency) -> Estimate:
    """The estimate of a checked layout (:func:`estimate` checks first): the fullest stage's
    memory, :func:`step_seconds`, then throughput and MFU. ``config.recompute`` (when set)
    overrides the recipe's."""
    if config.recompute is None:
        config = replace(config, recompute=train.recompute)
    elif config.recompute != train.recompute:
        train = replace(train, recompute=config.recompute)
    pp, m = config.pp, train.global_batch // (config.dp * config.micro_batch)
    mem = max((stage_memory(model, cluster, train, config, st, efficiency)
               for st in sorted({0, pp - 1})), key=lambda x: x.total)
    t = step_seconds(model, cluster, train, config, efficiency)
    step_s, comm_s = t["step_s"], t["comm_s"]

    tokens, s, h = train.global_batch * model.seq_len, model.seq_len, model.hidden
    model_flops = cost.training_flops(model.n_params, tokens, n_layers=model.n_layers,
                                      seq_len=s, hidden=h)
    hardware_flops = cost.matmul_flops(tokens, n_layers=model.n_layers,
                                       layer_params=model.layer_params, seq_len=s, hidden=h,
                                       vocab=model.vocab, recompute=train.recompute)
    peak = cluster.gpu.peak(train.precision)
    return Estimate(
        config=config, memory=mem, fits=mem.total <= mem.usable,
        reasons=_reasons(mem, config, train), n_microbatches=m,
        bubble=bubble(config, m, train.recompute),
        bubble_ratio=cost.pipeline_bubble_ratio(pp, m, config.v),
        comm_bytes=t["comm_bytes"], comm_s=comm_s,
        exposed_s={"tp": comm_s["tp"], "pp": comm_s["pp"], "dp": t["dp_exposed_s"]},
        compute_s=t["compute_s"], step_time_s=step_s, tokens_per_s=tokens / step_s,
        model_flops=model_flops, hardware_flops=hardware_flops,
        mfu=cost.flops_utilization(model_flops, step_s, cluster.n_gpus, peak),
        hfu=cost.flops_utilization(hardware_flops, step_s, cluster.n_gpus, peak),
        n_gpus=cluster.n_gpus)


def estimate(model: Model, cluster: Cluster, train: Training, *, tp: int, pp: int, dp: int,
             v: int = 1, micro_batch: int | None = None, zero_stage: int | None = None,
             recompute: str | None = None, schedule: str = "1f1b",
             efficiency: Efficiency = Efficiency()) -> Estimate:
    """Memory, communication and time of the layout tp × pp × dp (= n_gpus) on ``cluster``.

    ``micro_batch``, ``zero_stage`` and ``recompute`` default to ``train``'s; ``schedule``:
    "1f1b" (interleaved when v > 1) or "zb-h1" (v = 1). Raises ValueError for a layout
    that cannot exist (:func:`~labs.planner.types.check_layout`: tp·pp·dp ≠ n_gpus, tp
    not dividing the heads, pp > layers, batch not divisible, ...); one that exists but
    overflows memory comes back with ``fits=False`` and ``reasons`` saying what to change.
    """
    config = Config(tp, pp, dp, train.micro_batch if micro_batch is None else micro_batch, v,
                    train.zero_stage if zero_stage is None else zero_stage,
                    train.recompute if recompute is None else recompute, schedule)
    check_layout(model, cluster, train, config)
    return evaluate(model, cluster, train, config, efficiency)
