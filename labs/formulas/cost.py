"""The course's numbers of traffic and time: formulas only (the "does it fit?" decision is
:mod:`labs.formulas.fit`'s, offered here too).

The only home of these formulas (memory is :mod:`labs.formulas.memory`'s); every notebook, plot and
planner calls them. Vocabulary: ``n_params``, ``batch`` (sequences per micro-batch), ``seq_len``,
``hidden``, ``tp`` / ``pp`` / ``dp`` degrees, ``n_microbatches``; a name ending in ``_bytes`` is
bytes, ``_s`` seconds, ``_bytes_per_s`` bytes per second.

- Bytes on the wire. A ring all-reduce of S bytes sends 2(N-1)/N·S per rank (Patarasuk & Yuan,
  JPDC 2009); gathering to a root makes the root send (N-1)·S. A tensor-parallel layer
  all-reduces its activation b·s·h twice forward and twice backward (Megatron-LM,
  arXiv:1909.08053 §3; with sequence parallelism all-gathers and reduce-scatters of the same
  bytes, arXiv:2205.05198 §4.2): many small messages, every layer. Layer-wise and pipeline
  parallelism send one activation forward and its gradient backward per stage boundary and
  micro-batch: few, large messages (PTD-P, arXiv:2104.04473 §3.2).
- The bubble of a pipeline step: (p-1)/(v·m+p-1) (PTD-P §2.2).
  ZB-H1's, backward split into B and W: (p-1)(t_F+t_B-t_W) idle per rank (Qi et al. 2024);
  ZB-V's, two chunks per rank in a V: (p-1)·t, t a chunk's F, B or W.
- Context parallelism passes K/V blocks around a ring; expert parallelism all-to-alls tokens.
- Time: seconds on a link (latency + bytes / bandwidth), training FLOPs (6·N per token).
- The decision, one type (:class:`FitDecision`) for three questions: does a model fit one card
  (2.1), how much tensor parallelism does it need (2.2), how many pipeline stages (2.3); it
  lives in :mod:`labs.formulas.fit` and is offered here too, where the notebooks call it::

    tp_layer_comm(batch=8, seq_len=1024, hidden=1600, tp=8)["sent_bytes_per_rank"]
    tp_decision(1.5e9, 32e9, hidden=1600, heads=16).verdict

Owns: the traffic and time formulas. Must not: measure, communicate or print; hold a memory formula
(labs.formulas.memory) or the fit decision (labs.formulas.fit, re-exported only); import a parallelism package, the
planner or the grader.
"""
from __future__ import annotations

from typing import Sequence

from labs.formulas.fit import FitDecision, fits_on_one_card, pp_decision, tp_decision
from labs.messages import text

__all__ = [
    "ring_all_reduce_bytes_per_rank", "naive_all_reduce_bytes_busiest_rank", "bus_bandwidth",
    "activation_message_bytes", "tp_layer_comm", "layerwise_comm", "pp_bytes_per_step",
    "tp_bytes_per_step", "schedule_bytes", "bubble_fraction", "min_microbatches",
    "zb_h1_bubble_seconds", "zb_h1_bubble_fraction", "zb_h1_step_seconds", "zb_v_bubble_seconds",
    "zb_v_bubble_fraction",
    "seconds_on_link", "training_flops", "FitDecision", "fits_on_one_card", "tp_decision",
    "pp_decision", "pipeline_bubble_ratio", "pipeline_step_seconds", "matmul_flops",
    "compute_seconds", "dp_bytes_per_step", "exposed_seconds", "flops_utilization",
    "ring_attention_traffic", "expert_parallel_traffic",
]


# --- bytes on the wire: collectives -------------------------------------------------------------

def ring_all_reduce_bytes_per_rank(size_bytes: float, world_size: int) -> float:
    """Bytes each rank sends (and receives) in a ring all-reduce of ``size_bytes``: 2(N-1)/N·S.

    Reduce-scatter and all-gather each send N-1 chunks of S/N bytes. Exact when the element
    count is divisible by N; otherwise the chunks differ by one element and so does the count.
    """
    n = world_size
    return 2 * (n - 1) / n * size_bytes


def naive_all_reduce_bytes_busiest_rank(size_bytes: float, world_size: int) -> float:
    """Bytes the root sends in the gather-to-root-then-broadcast all-reduce: (N-1)·S.

    It receives the same amount again; the other ranks send and receive S each.
    """
    return (world_size - 1) * size_bytes


def bus_bandwidth(size_bytes: float, seconds: float, world_size: int) -> float:
    """All-reduce "bus bandwidth" in bytes/s, as nccl-tests reports it: S/t · 2(N-1)/N.

    S/t (the "algorithm bandwidth") falls as N grows even on perfect links; scaling by the
    ring's 2(N-1)/N gives the rate each rank's link actually carried, comparable across N
    and with the hardware's link speed (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md).
    """
    return size_bytes / seconds * 2 * (world_size - 1) / world_size


# --- bytes on the wire: model parallelism --------------------------------------------------------

def activation_message_bytes(*, batch: int, seq_len: int, hidden: int,
                             bytes_per_element: int = 4) -> int:
    """Bytes of one activation b·s·h (or of its gradient): what a TP collective reduces and what
    crosses a pipeline stage boundary per micro-batch."""
    return batch * seq_len * hidden * bytes_per_element


def tp_layer_comm(*, batch: int, seq_len: int, hidden: int, tp: int, bytes_per_element: int = 4,
                  sequence_parallel: bool = False) -> dict:
    """Collectives of one TP transformer layer in one forward + backward, per rank.

    Without sequence parallelism: 4 all-reduces of S = b·s·h·bytes (2 forward, 2 backward).
    With it: 4 all-gathers and 4 reduce-scatters of S, the same bytes on the wire (an
    all-reduce is a reduce-scatter plus an all-gather). ``sent_bytes_per_rank``: ring bytes.
    """
    S = activation_message_bytes(batch=batch, seq_len=seq_len, hidden=hidden,
                                 bytes_per_element=bytes_per_element)
    ring = ring_all_reduce_bytes_per_rank(S, tp)
    if tp == 1:
        return {"collectives": 0, "message_bytes": S, "sent_bytes_per_rank": 0.0,
                "wire_messages": 0, "wire_message_bytes": 0.0}
    return {"collectives": 8 if sequence_parallel else 4, "message_bytes": S,
            "sent_bytes_per_rank": 4 * ring, "wire_messages": 4 * 2 * (tp - 1),
            "wire_message_bytes": S / tp}


def layerwise_comm(*, batch: int, seq_len: int, hidden: int, stages: int,
                   bytes_per_element: int = 4) -> dict:
    """Point-to-point traffic of layer-wise model parallelism in one forward + backward:
    each of the ``stages - 1`` boundaries carries the activation forward and its gradient back."""
    S = activation_message_bytes(batch=batch, seq_len=seq_len, hidden=hidden,
                                 bytes_per_element=bytes_per_element)
    return {"messages": 2 * (stages - 1), "message_bytes": S,
            "sent_bytes_by_a_middle_rank": 2 * S if stages > 2 else S}


def pp_bytes_per_step(micro_batch: int, seq_len: int, hidden: int, n_microbatches: int,
                      bytes_per_element: int = 2) -> float:
    """Bytes an interior pipeline rank sends per step: one activation forward and one gradient
    backward per micro-batch, each micro_batch·seq_len·hidden elements."""
    return 2 * n_microbatches * activation_message_bytes(
        batch=micro_batch, seq_len=seq_len, hidden=hidden, bytes_per_element=bytes_per_element)


def tp_bytes_per_step(micro_batch: int, seq_len: int, hidden: int, n_microbatches: int,
                      n_layers: int, tp: int, bytes_per_element: int = 2) -> float:
    """Bytes a tensor-parallel rank sends per step: :func:`tp_layer_comm` for every layer and
    micro-batch (4 ring all-reduces of micro_batch·seq_len·hidden each)."""
    per_layer = tp_layer_comm(batch=micro_batch, seq_len=seq_len, hidden=hidden, tp=tp,
                              bytes_per_element=bytes_per_element)["sent_bytes_per_rank"]
    return n_layers * n_microbatches * per_layer


def schedule_bytes(actions: Sequence, message_bytes: float) -> float:
    """Bytes one rank sends, counted from its pipeline schedule (:mod:`labs.pipeline.schedules`):
    each send (an action of kind ``SEND_F`` or ``SEND_B``) moves one activation or gradient of
    ``message_bytes``."""
    return sum(message_bytes for a in actions if a.kind.startswith("SEND_"))


# --- the bubble -----------------------------------------------------------------------------------

def bubble_fraction(p: int, m: int, v: int = 1) -> float:
    """Idle share of a pipeline step with p stages, m micro-batches, v chunks per rank:
    (p - 1) / (v·m + p - 1). The same for GPipe and 1F1B; interleaving divides the idle time
    (p - 1)·(t_f + t_b) by v (PTD-P §2.2: bubble time / ideal time = (p - 1) / (v·m)).
    """
    return (p - 1) / (v * m + p - 1)


def pipeline_bubble_ratio(p: int, m: int, v: int = 1) -> float:
    """PTD-P's bubble: bubble time / ideal compute time = (p - 1) / (v·m) (Narayanan et al.
    2021, arXiv:2104.04473, §2.2.1 and §2.2.2). The idle share of the step,
    :func:`bubble_fraction`, is r / (1 + r) of this ratio r."""
    return (p - 1) / (v * m)


def pipeline_step_seconds(microbatch_s: float, m: int, p: int, v: int = 1) -> float:
    """Time of one pipeline step whose slowest stage needs ``microbatch_s`` per micro-batch
    (forward + backward): m·t·(1 + (p-1)/(v·m)) = (m + (p-1)/v)·t (PTD-P §2.2)."""
    return m * microbatch_s * (1 + pipeline_bubble_ratio(p, m, v))


def zb_h1_bubble_seconds(p: int, m: int, t_f: float = 1.0, t_b: float = 1.0,
                         t_w: float = 1.0) -> float:
    """Idle time per rank of a ZB-H1 step, backward split into B (input gradient, ``t_b``) and W
    (weight gradient, ``t_w``): (p-1)(t_F + t_B - t_W) once m >= p (Qi et al., "Zero Bubble
    Pipeline Parallelism", ICLR 2024, arXiv:2401.10241 §2.1; 1F1B's is (p-1)(t_F + t_B + t_W)).
    With m < p only m - 1 W can fill it: (p-1)(t_F + t_B) - (m-1)·t_W. For t_W <= t_F
    and t_W <= t_B (the paper's regime, t_F ≈ t_B ≈ t_W); outside it, simulate the schedule."""
    return (p - 1) * (t_f + t_b) - (min(m, p) - 1) * t_w


def zb_h1_bubble_fraction(p: int, m: int, t_f: float = 1.0, t_b: float = 1.0,
                          t_w: float = 1.0) -> float:
    """Idle share of a ZB-H1 step: :func:`zb_h1_bubble_seconds` over itself plus the m·(t_F +
    t_B + t_W) of compute; with t_F = t_B = t_W and m >= p, (p-1)/(3m + p-1): about a third of
    1F1B's (p-1)/(m + p-1) when m >> p."""
    idle = zb_h1_bubble_seconds(p, m, t_f, t_b, t_w)
    return idle / (idle + m * (t_f + t_b + t_w))


def zb_h1_step_seconds(microbatch_s: float, m: int, p: int,
                       weight_share: float = 1 / 3) -> float:
    """Time of one ZB-H1 step whose slowest stage needs ``microbatch_s`` per micro-batch (F + B +
    W), W being ``weight_share`` of it and F, B the rest in halves (1/3: t_F = t_B = t_W, the
    paper's assumption): m·t plus :func:`zb_h1_bubble_seconds`, so (m + (p-1)/3)·t for m >= p
    where 1F1B's :func:`pipeline_step_seconds` gives (m + p - 1)·t. ``weight_share`` <= 1/3 (W
    no longer than F or B: that formula's regime)."""
    t_w = weight_share * microbatch_s
    t_f = t_b = (microbatch_s - t_w) / 2
    return m * microbatch_s + zb_h1_bubble_seconds(p, m, t_f, t_b, t_w)


def zb_v_bubble_seconds(p: int, m: int, t: float = 1.0) -> float:
    """Idle time per rank of a ZB-V step (not in the ICLR paper: the arXiv version of
    arXiv:2401.10241, and Qi et al., "Pipeline Parallelism with Controllable Memory",
    arXiv:2405.15362; torch's ScheduleZBVZeroBubble order), 2p chunks in a V, each chunk's F, B
    and W taking ``t``: (p-1)·t once m >= 2p - 1, the least a step alone can idle (rank p - 1
    waits p - 1 chunk forwards for its first input). The paper's zero bubble also needs its
    post-validation (the optimizer step without its global synchronization, so the next step's
    fill overlaps this one's tail), which this course does not do. Below that,
    4(p-1)·t - 2(m-1)·t.
    Built for t_F = t_B = t_W; other times: simulate the schedule."""
    return max(p - 1, 4 * (p - 1) - 2 * (m - 1)) * t


def zb_v_bubble_fraction(p: int, m: int) -> float:
    """Idle share of a ZB-V step with equal chunk times: its idle time over itself plus the
    6m·t of compute (two chunks, F + B + W each)."""
    idle = zb_v_bubble_seconds(p, m)
    return idle / (idle + 6 * m)


def min_microbatches(p: int, target: float, v: int = 1) -> int:
    """The smallest m whose bubble_fraction(p, m, v) is at most ``target``."""
    if not 0 < target < 1:
        raise ValueError(text("cost.target_out_of_range", target=target))
    m = 1
    while bubble_fraction(p, m, v) > target:
        m += 1
    return m


# --- time -----------------------------------------------------------------------------------------

def seconds_on_link(n_bytes: float, bandwidth_bytes_per_s: float, *,
                    latency_s: float = 0.0) -> float:
    """Time to move ``n_bytes`` over one link: latency + bytes / bandwidth (the α-β model)."""
    return latency_s + n_bytes / bandwidth_bytes_per_s


def training_flops(n_params: float, tokens: float, *, n_layers: int = 0, seq_len: int = 0,
                   hidden: int = 0) -> float:
    """FLOPs of forward + backward over ``tokens``: 6·N per token (Kaplan et al.,
    arXiv:2001.08361 §2.1), plus attention's 12·L·T·h per token when the shape is given
    (PaLM, arXiv:2204.02311 appendix B, the MFU convention). With N over every parameter this
    counts the input embedding (a lookup) and learned positions (an add) as matmuls; the
    planner's MFU counts only the weights that multiply (:func:`matmul_flops` without
    recomputation), so that it never exceeds HFU."""
    return tokens * (6 * n_params + 12 * n_layers * seq_len * hidden)


def matmul_flops(tokens: float, *, n_layers: int, layer_params: float, seq_len: int, hidden: int,
                 vocab: int, recompute: str = "none") -> float:
    """FLOPs the GPUs execute in forward + backward over ``tokens``: the matrix multiplies.

    Forward per token: 2 per weight of the layers (2·L·P_layer), attention scores and their
    use on the values 4·L·s·h, the output layer 2·V·h; backward twice the forward (PTD-P,
    arXiv:2104.04473, §5.1: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) for a GPT layer of
    12h²).
    With ``recompute="none"`` these are the model FLOPs of MFU; recomputation adds forward
    work that model FLOPs do not count (so executed >= model always): ``"full"`` one more
    forward of every layer (PTD-P eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))),
    ``"selective"`` the attention scores and values again (Korthikanti et al.,
    arXiv:2205.05198, §5). Causal masking is not subtracted (the same convention as PaLM).
    """
    layers_fwd = 2 * n_layers * layer_params + 4 * n_layers * seq_len * hidden
    extra = {"none": 0.0, "selective": 4 * n_layers * seq_len * hidden,
             "full": layers_fwd}[recompute]
    return tokens * (3 * (layers_fwd + 2 * vocab * hidden) + extra)


def compute_seconds(flops: float, peak_flops: float, efficiency: float) -> float:
    """Seconds to execute ``flops`` at ``efficiency`` × the card's peak rate."""
    return flops / (peak_flops * efficiency)


def dp_bytes_per_step(grad_bytes: float, dp: int, *, zero_stage: int = 0,
                      n_microbatches: int = 1) -> float:
    """Bytes one data-parallel rank sends per step to keep the replicas in sync, ring
    collectives over the ``dp`` ranks holding ``grad_bytes`` of gradients (the full, unsharded
    size of this rank's model part, in the communicated dtype).

    - ZeRO 0 (all-reduce) and 1 (reduce-scatter of gradients + all-gather of updated
      parameters): 2(N-1)/N·S once per step (ZeRO, arXiv:1910.02054, §7.2);
    - ZeRO 2: the reduce-scatter after every micro-batch (each accumulates into a shard)
      plus one all-gather of parameters: (m + 1)·(N-1)/N·S;
    - ZeRO 3: parameters all-gathered for forward and again for backward, gradients
      reduce-scattered, for every micro-batch: 3m·(N-1)/N·S (the paper's 1.5× at m = 1).
    """
    half = ring_all_reduce_bytes_per_rank(grad_bytes, dp) / 2  # one reduce-scatter or all-gather
    return {0: 2 * half, 1: 2 * half, 2: (n_microbatches + 1) * half,
            3: 3 * n_microbatches * half}[zero_stage]


def exposed_seconds(comm_s: float, overlap_window_s: float) -> float:
    """Communication left on the critical path when it can run under ``overlap_window_s`` of
    computation: max(0, comm - window) (the bucketed overlap of PyTorch DDP, Li et al.,
    arXiv:2006.15704, §3.2.3)."""
    return max(0.0, comm_s - overlap_window_s)


def flops_utilization(flops: float, seconds: float, n_gpus: int, peak_flops: float) -> float:
    """Achieved share of the peak: flops / (seconds · n_gpus · peak). With model FLOPs
    (:func:`training_flops`) this is MFU, with executed ones (:func:`matmul_flops`, counting
    recomputation) HFU (PaLM, arXiv:2204.02311, App. B)."""
    return flops / (seconds * n_gpus * peak_flops)


# --- bytes on the wire: context and expert parallelism ------------------------------------------

def ring_attention_traffic(block_bytes: int, cp_size: int) -> dict:
    """Messages and bytes one rank sends in ring attention (:mod:`labs.hybrid.context_parallel`,
    Liu et al., arXiv:2310.01889): ``{(phase, kind): (count, bytes)}``.

    ``block_bytes`` is the size of one local K (or V) block, ``B*nh*T_local*hs*element_size``.
    Each message packs two blocks (K with V, or dK with dV). One rank: no messages.
    """
    c, kv = cp_size, 2 * block_bytes
    if c == 1:
        return {}
    return {("forward", "kv"): (c - 1, (c - 1) * kv),
            ("backward", "kv"): (c - 1, (c - 1) * kv),
            ("backward", "dkv"): (c, c * kv)}


def expert_parallel_traffic(matrix, rank: int, *, row_bytes: int, n_experts: int,
                            count_bytes: int = 8) -> dict:
    """Messages and bytes ``rank`` sends in an expert-parallel MoE layer
    (:mod:`labs.hybrid.expert_parallel`, GShard's all-to-all, arXiv:2006.16668):
    ``{(phase, kind): (all_to_all calls, bytes)}``.

    ``matrix`` is :func:`labs.hybrid.expert_parallel.dispatch_matrix` (a tensor or nested
    list); ``row_bytes`` the bytes of one token's activation (C * element size); counts are int64. Dispatch sends row i of the matrix (minus what stays
    home), combine sends column i back; backward sends the same amounts the other way round
    (the backward dispatch only runs when the layer's input needs a gradient, as in a model).
    """
    rows = matrix.tolist() if hasattr(matrix, "tolist") else [list(r) for r in matrix]
    n = len(rows)
    if n == 1:
        return {}
    out_rows = int(sum(rows[rank]) - rows[rank][rank])  # my tokens leaving
    in_rows = int(sum(r[rank] for r in rows) - rows[rank][rank])  # others' tokens for my experts
    return {("forward", "counts"): (1, (n - 1) * (n_experts // n) * count_bytes),
            ("forward", "dispatch"): (1, out_rows * row_bytes),
            ("forward", "combine"): (1, in_rows * row_bytes),
            ("backward", "combine"): (1, out_rows * row_bytes),
            ("backward", "dispatch"): (1, in_rows * row_bytes)}
