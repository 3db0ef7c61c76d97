"""Deciding on pipeline parallelism with numbers (notebook 2.3, 判断方法 and 案例拆解).

- model states per GPU under TP × PP: 16 bytes per parameter with mixed-precision Adam
  (2 fp16 weight + 2 fp16 grad + 4 fp32 master + 4 + 4 Adam moments; ZeRO, arXiv:1910.02054 §3.1);
- does one layer fit a card (if not, tensor parallelism first), how many stages are needed;
- bytes a rank sends per training step under PP (activations at stage boundaries) and under TP
  (Megatron: 2 all-reduces forward and 2 backward per transformer layer, PTD-P arXiv:2104.04473
  §3.2), and the PP bytes counted from a schedule's own SEND actions.
"""
from __future__ import annotations

import math
from typing import Sequence

from labs.collectives import ring_all_reduce_bytes_per_rank
from labs.pipeline.schedules import SEND_B, SEND_F, Action

ADAM_MIXED_BYTES_PER_PARAM = 16


def transformer_layer_params(hidden: int) -> int:
    """Weights of one GPT layer, 12·h² (attention 4h², MLP 8h²; biases and norms ignored)."""
    return 12 * hidden * hidden


def model_state_bytes(n_params: float, bytes_per_param: float = ADAM_MIXED_BYTES_PER_PARAM) -> float:
    """Weights + gradients + optimizer states (activations come on top)."""
    return n_params * bytes_per_param


def states_per_gpu(n_params: float, tp: int, pp: int,
                   bytes_per_param: float = ADAM_MIXED_BYTES_PER_PARAM) -> float:
    """Model states per GPU when TP × PP GPUs share one replica (DP replicates it)."""
    return model_state_bytes(n_params, bytes_per_param) / (tp * pp)


def judge_pipeline(n_layers: int, hidden: int, gpu_bytes: float, *, tp: int | None = None,
                   bytes_per_param: float = ADAM_MIXED_BYTES_PER_PARAM, usable: float = 0.7) -> dict:
    """Apply the chapter's criteria to numbers: does one layer's state fit ``usable`` of a card
    (the 70% is a rule of thumb, FACTCHECK #16, leaving room for activations)? If not, TP must
    split the layer first (at least tp_needed ways). Then, with ``tp`` (default: tp_needed),
    how many layers one GPU holds and how many pipeline stages all layers need."""
    layer = transformer_layer_params(hidden) * bytes_per_param
    budget = usable * gpu_bytes
    tp_needed = max(1, math.ceil(layer / budget))
    tp = tp or tp_needed
    layers_per_gpu = int(budget // (layer / tp))
    stages = math.ceil(n_layers / layers_per_gpu) if layers_per_gpu else None
    return dict(layer_state_bytes=layer, fits_one_card=tp_needed == 1, tp_needed=tp_needed, tp=tp,
                layers_per_gpu=layers_per_gpu, min_stages=stages)


def pp_bytes_per_step(micro_batch: int, seq_len: int, hidden: int, n_microbatches: int,
                      dtype_bytes: int = 2) -> float:
    """Bytes an interior pipeline rank sends per step: one activation forward and one gradient
    backward per micro-batch, each micro_batch·seq·hidden elements."""
    return 2 * n_microbatches * micro_batch * seq_len * hidden * dtype_bytes


def tp_bytes_per_step(micro_batch: int, seq_len: int, hidden: int, n_microbatches: int,
                      n_layers: int, tp: int, dtype_bytes: int = 2) -> float:
    """Bytes a tensor-parallel rank sends per step: 4 ring all-reduces of micro_batch·seq·hidden
    per layer and micro-batch, each sending 2(t-1)/t of the message."""
    message = micro_batch * seq_len * hidden * dtype_bytes
    return 4 * n_layers * n_microbatches * ring_all_reduce_bytes_per_rank(message, tp)


def schedule_bytes(actions: Sequence[Action], activation_bytes: float) -> float:
    """Bytes one rank sends, counted from its schedule: each SEND moves one activation or
    gradient of ``activation_bytes``."""
    return sum(activation_bytes for a in actions if a.kind in (SEND_F, SEND_B))
