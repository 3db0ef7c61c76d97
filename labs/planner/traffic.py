"""The planner's data-parallel traffic: which link a group uses, ZeRO-3's passes over the
parameters, MiCS / HSDP sharding groups, and how much of it the step hides under compute
(:mod:`labs.planner.model` composes them into a step; the model of time is described in
:mod:`labs.planner`).

Owns: the bytes and seconds of the DP dimension and their exposed part. Must not: hold a
formula of labs.formulas.cost or labs.formulas.memory, estimate a layout (labs.planner.model), import the widget
or the grader, or print."""
from __future__ import annotations

import math

from labs.formulas import cost
from labs.planner.types import Cluster, Config, Efficiency, Training

__all__ = ["link", "zero3_passes", "hidden_s", "zero3_exposed_s", "dp_exposed_s",
           "group_members_per_node", "dp_traffic"]


def link(cluster: Cluster, group_span: int, efficiency: Efficiency) -> tuple[float, str]:
    """Bus bandwidth for a group whose ranks span ``group_span`` consecutive GPUs."""
    gpu = cluster.gpu
    if group_span <= cluster.gpus_per_node:
        return gpu.intra_node_bw * efficiency.nvlink_bus, "NVLink"
    return gpu.inter_node_bw * efficiency.ib_bus, "InfiniBand"


def zero3_passes(recompute: str) -> int:
    """ZeRO-3's ring passes over the parameters per micro-batch: an all-gather before the
    forward, one before the backward and a reduce-scatter of the gradients (ZeRO,
    arXiv:1910.02054, §7.2.2: 3Ψ), plus, under full recomputation, the all-gather of the
    recomputed forward, which runs the layers again after their parameters were released
    (the same repetition as TP's 6 all-reduces instead of 4)."""
    return 4 if recompute == "full" else 3


def hidden_s(comm_s: float, window_s: float, efficiency: Efficiency) -> float:
    """What ``comm_s`` of communication under ``window_s`` of compute adds to the step: the
    part that sticks out (:func:`labs.formulas.cost.exposed_seconds`) plus the slowdown of the compute
    it runs beside (``Efficiency.overlap_slowdown`` × the overlapped time)."""
    return (cost.exposed_seconds(comm_s, window_s)
            + efficiency.overlap_slowdown * min(comm_s, window_s))


def zero3_exposed_s(dp_s: float, compute_mb: float, m: int, recompute: str,
                    efficiency: Efficiency) -> float:
    """ZeRO-3's exposed DP time: each micro-batch's gathers hide only under the compute of
    their own pass (a layer's parameters are prefetched while the previous layer computes, and
    the next pass cannot start before this one ends). Forward: one all-gather under the
    forward's share of the compute (1/4 with full recomputation: forward, recomputed forward,
    backward = 1 + 1 + 2; 1/3 otherwise); backward: the other passes (recompute and backward
    gathers, the gradients' reduce-scatter) under the rest. Per pass: max(0, traffic -
    compute) plus the compute's slowdown while they overlap (:func:`hidden_s`). No fitted
    constant: the bytes of :func:`zero3_passes` on the link's bus bandwidth and the overlap
    slowdown of :class:`Efficiency`."""
    passes = zero3_passes(recompute)
    one = dp_s / (m * passes)  # one pass over the parameters, one micro-batch
    forward = compute_mb / 3 if recompute != "full" else compute_mb / 4
    return m * (hidden_s(one, forward, efficiency)
                + hidden_s((passes - 1) * one, compute_mb - forward, efficiency))


def dp_exposed_s(dp_s: float, zero_stage: int, compute_mb: float, m: int,
                 overlap: bool, recompute: str, efficiency: Efficiency) -> float:
    """The part of the DP traffic on the critical path. Gradients are reduced bucket by bucket
    while backward still runs (Li et al., arXiv:2006.15704, §3.2.3): ZeRO 0 all-reduces and
    ZeRO 1 reduce-scatters under the last micro-batch's backward (2/3 of its compute), ZeRO 2
    reduce-scatters under every micro-batch's backward; the all-gather of updated parameters of
    ZeRO 1 and 2 follows the optimizer step and is exposed. ZeRO 3 (:func:`zero3_exposed_s`)
    prefetches each pass's gathers under that pass's compute only. Overlapped traffic also
    slows the compute beside it (:func:`hidden_s`). ``overlap=False``: all exposed."""
    if not overlap:
        return dp_s
    backward_s = compute_mb * 2 / 3
    if zero_stage == 3:
        return zero3_exposed_s(dp_s, compute_mb, m, recompute, efficiency)
    gather_s = {0: 0.0, 1: dp_s / 2, 2: dp_s / (m + 1)}[zero_stage]  # shares of dp_bytes_per_step
    window = m * backward_s if zero_stage == 2 else backward_s
    return gather_s + hidden_s(dp_s - gather_s, window, efficiency)


def group_members_per_node(cluster: Cluster, config: Config, group: int) -> int:
    """Ranks of one DP sub-group of ``group`` ranks on one node: DP ranks are tp·pp GPUs apart
    (DP outermost), so a node holds gpus_per_node / (tp·pp) of them (at least 1)."""
    return max(1, min(group, cluster.gpus_per_node // (config.tp * config.pp)))


def _sharded_pass(param_bytes: float, cluster: Cluster, config: Config, group: int,
                  efficiency: Efficiency) -> tuple[float, float]:
    """Bytes and seconds per GPU of one all-gather (or reduce-scatter) of ``param_bytes``
    over a sharding group of ``group`` ranks, as MiCS runs it (Zhang et al., VLDB 2022,
    arXiv:2205.00119, §3.3, "hierarchical communication"): g ranks of the group on each of
    k nodes first gather across the nodes among the ranks of the same local index,
    (k-1)/k · S/g per GPU on InfiniBand, then inside each node, (g-1)/g · S on NVLink. With
    one rank per node (g = 1) or one node (k = 1) it is the plain ring of
    :func:`labs.formulas.cost.ring_all_reduce_bytes_per_rank`'s half."""
    g = group_members_per_node(cluster, config, group)
    k = math.ceil(group / g)
    inter = (k - 1) / k * param_bytes / g
    intra = (g - 1) / g * param_bytes
    seconds = (cost.seconds_on_link(inter, cluster.gpu.inter_node_bw * efficiency.ib_bus)
               + cost.seconds_on_link(intra, cluster.gpu.intra_node_bw * efficiency.nvlink_bus))
    return inter + intra, seconds


def dp_traffic(cluster: Cluster, train: Training, config: Config, grad_bytes: float, m: int,
               efficiency: Efficiency) -> tuple[float, float, float]:
    """(bytes, seconds, seconds never overlapped) per GPU per step of the DP dimension.

    Without a sharding group: :func:`labs.formulas.cost.dp_bytes_per_step` over all dp ranks (ZeRO-3:
    :func:`zero3_passes` per micro-batch), on the link the group spans. ZeRO-3 with
    ``train.shard_group`` = s < dp (MiCS; HSDP): the states are sharded over s ranks, so
    every pass of :func:`zero3_passes` gathers or reduce-scatters over the s ranks only
    (:func:`_sharded_pass`: NVLink when the group is inside a node), and once per step the
    dp / s replicas all-reduce their 1/s shard of the gradients (MiCS's 2-hop gradient
    synchronization, at the gradient-accumulation boundary): 2(r-1)/r · S/s on the link
    spanning all of DP, after the last backward, not overlapped.

    ZeRO-3 without a group keeps the flat ring, every GPU's bytes on its own NIC: what PTD-P
    Table 2 measured for DeepSpeed's ZeRO-3 (priced hierarchically, those rows would read
    1.3-4x high), and why the planner under-reads PyTorch FSDP across nodes
    (:data:`labs.planner.calibration.FSDP_RUNS`). ``shard_group=dp`` asks for MiCS's
    hierarchical collectives over all of DP."""
    tp, pp, dp, s = config.tp, config.pp, config.dp, train.shard_group
    if dp == 1:
        return 0.0, 0.0, 0.0
    if config.zero_stage != 3 or s is None:
        zero3_extra = zero3_passes(train.recompute) / 3 if config.zero_stage == 3 else 1.0
        n_bytes = zero3_extra * cost.dp_bytes_per_step(grad_bytes, dp,
                                                       zero_stage=config.zero_stage,
                                                       n_microbatches=m)
        return n_bytes, cost.seconds_on_link(n_bytes, link(cluster, tp * pp * dp,
                                                            efficiency)[0]), 0.0
    passes = m * zero3_passes(train.recompute)
    one_bytes, one_s = _sharded_pass(grad_bytes, cluster, config, s, efficiency) \
        if s > 1 else (0.0, 0.0)
    replicas = dp // s
    sync_bytes = cost.ring_all_reduce_bytes_per_rank(grad_bytes / s, replicas)
    sync_s = cost.seconds_on_link(sync_bytes, link(cluster, tp * pp * dp, efficiency)[0])
    return passes * one_bytes + sync_bytes, passes * one_s + sync_s, sync_s
