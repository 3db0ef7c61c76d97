"""The planner's estimate of one layout: memory of the fullest stage, bytes and seconds of each
dimension's communication, step time, throughput, MFU. Composes :mod:`labs.formulas.memory` and
:mod:`labs.formulas.cost`; the model of time is described in :mod:`labs.planner`.

Owns: :func:`estimate` of one layout. Must not: search layouts (labs.planner.search), hold memory or
traffic formulas (labs.formulas.memory, labs.formulas.cost), import the widget or the grader, or print."""
from __future__ import annotations

import math

from dataclasses import replace

from labs.formulas import cost, memory
from labs.pipeline.schedules import in_flight_bound  # ZB-H1's bound, one source with 2.3
from labs.messages import joined, text
from labs.planner.traffic import dp_exposed_s, dp_traffic, link
from labs.planner.types import (GiB, Cluster, Config, Efficiency, Estimate,
                                       MemoryBreakdown, Model, Training, check_layout,
                                       pipeline_chunks)

__all__ = ["estimate", "evaluate", "step_seconds", "pipeline_seconds", "bubble", "zb_times",
           "stage_params", "stage_memory", "stage_layers", "stages",
           "layers_per_stage", "attention_traffic_bytes"]


def layers_per_stage(model: Model, pp: int) -> int:
    """Layers on the fullest stage: ceil(L / pp) (uneven splits load the slowest stage)."""
    return math.ceil(model.n_layers / pp)


def stage_layers(model: Model, pp: int, stage: int, train: Training | None = None) -> int:
    """Layers on pipeline ``stage``: :func:`layers_per_stage` on every stage, or, when the
    embedding and the output layer take a layer's place (``train.embedding_in_split``),
    ceil((L + 2) / pp) on the middle stages and one fewer on the first and the last."""
    if pp == 1 or train is None or not train.embedding_in_split:
        return layers_per_stage(model, pp)
    per_stage = math.ceil(pipeline_chunks(model, train) / pp)
    return per_stage - 1 if stage in (0, pp - 1) else per_stage


def stages(pp: int, train: Training) -> list:
    """The stages that can be the fullest or the slowest: the first (input embedding, most
    micro-batches in flight), the last (output layer) and, with ``embedding_in_split``, a
    middle one (one layer more than either)."""
    middle = {1} if train.embedding_in_split and pp > 2 else set()
    return sorted({0, pp - 1} | middle)


def stage_params(model: Model, tp: int, pp: int, stage: int,
                 train: Training | None = None) -> float:
    """Parameters one GPU of pipeline ``stage`` holds: its layers (:func:`stage_layers`) and,
    on the first stage, the input embedding (and learned positions), on the last the output
    layer (a copy of the word embeddings when tied and pp > 1, as Megatron-LM keeps), all
    split over TP."""
    words = model.vocab * model.hidden
    params = stage_layers(model, pp, stage, train) * model.layer_params
    if stage == 0:
        params += words + (model.seq_len * model.hidden if model.learned_positions else 0)
    if stage == pp - 1 and (pp > 1 or not model.tied_embeddings):
        params += words
    return params / tp


def _layer_activations(model: Model, cluster: Cluster, train: Training, config: Config,
                       recompute: str) -> float:
    """Bytes one layer keeps per micro-batch (:func:`labs.formulas.memory.layer_activation_bytes`), for
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
                            config: Config, layers: int | None = None) -> float:
    """HBM bytes the attention core moves per micro-batch on the slowest stage without
    FlashAttention (0 with it): memory-bound work the GEMM time does not cover.

    The s² tensors a layer keeps, 5·a·s²·b bytes on 2-byte activations with dropout (scores
    after softmax, dropout mask and output; 2·a·s²·b without dropout; Korthikanti et al. 2022,
    arXiv:2205.05198, §4), over the a/t heads of this TP rank, each written and read once by
    the forward (2×), again by a recomputed forward (full or selective recomputation: 2×), and
    in the backward read once with a gradient of the same size written and read (3×). Timed at
    the card's HBM peak (:attr:`labs.hardware.GPU.hbm_bw`), a lower bound. ``layers``: the
    stage's (default :func:`layers_per_stage`)."""
    if train.uses_flash(cluster.gpu):
        return 0.0
    s, b, heads = model.seq_len, config.micro_batch, model.n_heads / config.tp
    kept = (5 if model.dropout else 2) * heads * s * s * b * train.element_bytes / 2
    passes = 2 + (2 if train.recompute != "none" else 0) + 3
    layers = layers_per_stage(model, config.pp) if layers is None else layers
    return layers * passes * kept


def stage_memory(model: Model, cluster: Cluster, train: Training, config: Config, stage: int,
                 efficiency: Efficiency) -> MemoryBreakdown:
    """Bytes one GPU of ``stage`` holds at its peak: model states (ZeRO-sharded over DP) and
    the activations of the micro-batches the schedule keeps in flight there (1F1B: min(pp -
    stage, m); ZB-H1: min(pp, m) on every stage, since W keeps a micro-batch's activations
    after its B: :func:`labs.pipeline.schedules.in_flight_bound`), plus, with full
    recomputation, one layer's activations rebuilt during its backward pass. ZeRO-3 shards
    the states over ``train.shard_group`` ranks when it is set (MiCS / HSDP), else over DP."""
    tp, pp, dp = config.tp, config.pp, config.dp
    m = train.global_batch // (dp * config.micro_batch)
    shards = train.shard_group if config.zero_stage == 3 and train.shard_group else dp
    states = memory.model_state_bytes_per_gpu(
        stage_params(model, tp, pp, stage, train), dp=shards, zero_stage=config.zero_stage,
        optimizer="adam", precision=train.state_precision)
    if config.schedule == "zb-h1":
        in_flight = float(in_flight_bound("zb-h1", pp, m, stage))
    else:
        in_flight = memory.microbatches_in_flight(pp, m, v=config.v, stage=stage)
    acts = stage_layers(model, pp, stage, train) * in_flight * _layer_activations(
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
    return [overflow, text("planner.to_fit", hints=joined(hints, "clauses"))]


def zb_times(recompute: str) -> tuple[float, float, float]:
    """Relative t_F, t_B, t_W of one micro-batch under ZB-H1, from the matmul FLOPs: forward
    2·N, input gradient 2·N, weight gradient 2·N (Qi et al. 2024 §2: t_F ≈ t_B ≈ t_W); full
    recomputation re-runs the forward inside B (2·N more), so W is 2 of 8 parts, not 2 of 6."""
    return (1.0, 2.0, 1.0) if recompute == "full" else (1.0, 1.0, 1.0)


def pipeline_seconds(microbatch_s: float, m: int, config: Config, recompute: str) -> float:
    """The pipeline's part of a step: 1F1B's (m + (p-1)/v)·t
    (:func:`labs.formulas.cost.pipeline_step_seconds`), or ZB-H1's m·t + (p-1)(t_F + t_B - t_W)
    (:func:`labs.formulas.cost.zb_h1_step_seconds`) with W's share of t from :func:`zb_times`."""
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


def _stage_microbatch(model: Model, cluster: Cluster, train: Training, config: Config,
                      stage: int, m: int, efficiency: Efficiency) -> tuple[float, float, float]:
    """(compute + TP seconds, compute seconds, TP bytes per step) of one micro-batch on
    ``stage``: the matmul FLOPs of its layers and, on the last stage, of the output layer at
    the run's peak × GEMM efficiency, plus memory-bound kernels, and its layers' TP traffic."""
    tp, mb, e = config.tp, config.micro_batch, train.element_bytes
    s, h = model.seq_len, model.hidden
    layers = stage_layers(model, config.pp, stage, train)
    flops_mb = cost.matmul_flops(mb * s, n_layers=layers, layer_params=model.layer_params,
                                 seq_len=s, hidden=h,
                                 vocab=model.vocab if stage == config.pp - 1 else 0,
                                 recompute=train.recompute) / tp
    peak = cluster.gpu.peak(train.precision)  # the run's arithmetic (check_hardware)
    compute_mb = cost.compute_seconds(flops_mb, peak, efficiency.gemm) \
        * (1 + efficiency.other_kernels) \
        + attention_traffic_bytes(model, cluster, train, config, layers) / cluster.gpu.hbm_bw
    tp_passes = 1.5 if train.recompute == "full" else 1.0  # the recomputed forward's 2 of 6
    tp_bytes = tp_passes * cost.tp_bytes_per_step(mb, s, h, m, layers, tp, bytes_per_element=e)
    tp_s = cost.seconds_on_link(tp_bytes, link(cluster, tp, efficiency)[0])
    return compute_mb + tp_s / m, compute_mb, tp_bytes


def step_seconds(model: Model, cluster: Cluster, train: Training, config: Config,
                 efficiency: Efficiency) -> dict:
    """One step's time for a checked layout: the slowest stage's compute per micro-batch, the
    bytes and seconds of each dimension's traffic on its link, the pipeline schedule (bubble
    included) and the part of the DP traffic left exposed."""
    tp, pp, dp, v, mb = config.tp, config.pp, config.dp, config.v, config.micro_batch
    m = train.global_batch // (dp * mb)
    s, h, e = model.seq_len, model.hidden, train.element_bytes

    # compute and TP of the slowest stage per micro-batch (default split: the last one)
    _, compute_mb, tp_bytes = max(_stage_microbatch(model, cluster, train, config, st, m,
                                                    efficiency) for st in stages(pp, train))

    # bytes per GPU per step, by dimension; DP: labs.planner.traffic (ZeRO, sharding groups)
    grad_bytes = max(stage_params(model, tp, pp, st, train) for st in stages(pp, train)) * e
    dp_bytes, dp_s, dp_sync_s = dp_traffic(cluster, train, config, grad_bytes, m, efficiency)
    comm_bytes = {
        "tp": tp_bytes,
        "pp": (v * cost.pp_bytes_per_step(mb, s, h, m, bytes_per_element=e) / tp
               if pp > 1 else 0.0),
        "dp": dp_bytes,
    }
    spans = {"tp": tp, "pp": tp * pp}
    comm_s = {k: cost.seconds_on_link(comm_bytes[k], link(cluster, spans[k], efficiency)[0])
              for k in spans}
    comm_s["dp"] = dp_s

    microbatch_s = compute_mb + (comm_s["tp"] + comm_s["pp"]) / m
    pipeline_s = pipeline_seconds(microbatch_s, m, config, train.recompute)
    dp_exposed = dp_sync_s + dp_exposed_s(dp_s - dp_sync_s, config.zero_stage, compute_mb, m,
                                          train.overlap_grad_reduce, train.recompute,
                                          efficiency)
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
               for st in stages(pp, train)), key=lambda x: x.total)
    t = step_seconds(model, cluster, train, config, efficiency)
    step_s, comm_s = t["step_s"], t["comm_s"]

    tokens, s, h = train.global_batch * model.seq_len, model.seq_len, model.hidden
    # model and executed FLOPs: one count of the matmuls, the executed adding recomputation
    # only, so MFU <= HFU always (the input embedding is a lookup, positions an add: in
    # n_params, in neither count)
    model_flops, hardware_flops = (
        cost.matmul_flops(tokens, n_layers=model.n_layers, layer_params=model.layer_params,
                          seq_len=s, hidden=h, vocab=model.vocab, recompute=again)
        for again in ("none", train.recompute))
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
