"""How much memory training needs: model states (parameters, gradients, optimizer states) and
activations, estimated from sizes alone and measured on real tensors.

Model states, bytes per parameter (ZeRO, Rajbhandari et al., arXiv:1910.02054, §3.1):

============================  ======  =====  ============  ===============  =====
recipe                        weight  grad   fp32 master   optimizer        total
============================  ======  =====  ============  ===============  =====
fp32, SGD (no momentum)       4       4      -             -                8
fp32, SGD with momentum       4       4      -             4                12
fp32, Adam                    4       4      -             8 (m, v)         16
mixed (fp16/bf16), Adam       2       2      4             8 (m, v)         16
============================  ======  =====  ============  ===============  =====

Activations of a GPT-style transformer block (Korthikanti et al., "Reducing Activation
Recomputation in Large Transformer Models", arXiv:2205.05198, §4.1): with s = sequence length,
b = batch, h = hidden, a = heads, the tensors kept for backward are 16·sbh + a·s²·b elements
per layer without dropout; with dropout (masks of 1 byte and the dropped attention) and 2-byte
activations the paper's 34·sbh + 5·a·s²·b bytes. :func:`measured_activation_bytes` counts what
autograd really saves, so the two can be compared::

    model_state_bytes(110e6, "adam", "fp32").total / 1e9     # BERT-Base: 1.76 GB
    model_state_bytes_per_gpu(175e9, tp=8, pp=8, precision="mixed").total / 1e9   # 43.75 GB

This module is the only home of these formulas: model-state bytes (also split over TP × PP and
sharded by ZeRO over DP), the parameters of a transformer layer (12·h²), activation bytes. What
they mean for a card -- does it fit, how must the model be split -- is :mod:`labs.formulas.cost`'s.

Owns: every memory formula and the measurement of tensors' bytes. Must not: hold a traffic or time
formula (labs.formulas.cost), communicate, print, or import a parallelism package, the planner or the grader.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from labs.messages import text

__all__ = ["ModelStateBytes", "bytes_per_param", "model_state_bytes", "model_state_bytes_per_gpu",
           "ZERO_STAGES", "measured_model_state_bytes", "TransformerShape",
           "transformer_layer_params", "transformer_params", "layer_weight_bytes",
           "ActivationBytes", "activation_bytes", "measured_activation_bytes", "GB", "GiB",
           "RECOMPUTE", "general_layer_params", "layer_activation_bytes",
           "output_activation_bytes", "microbatches_in_flight"]

GB = 1e9  # the chapter's GB are decimal (440 MB = 110e6 x 4 B)
GiB = 2**30  # the course prints memory sizes in GiB (bandwidth in GB/s)
OPTIMIZER_STATES = {"sgd": 0, "sgd_momentum": 1, "adam": 2}  # fp32 tensors per parameter
PRECISIONS = ("fp32", "mixed")


@dataclass(frozen=True)
class ModelStateBytes:
    """Bytes of the model states, by kind."""

    params: float
    grads: float
    master_params: float  # fp32 copy of the weights kept by mixed-precision training
    optimizer_states: float

    @property
    def total(self) -> float:
        return self.params + self.grads + self.master_params + self.optimizer_states

    def as_dict(self) -> dict:
        return {"params": self.params, "grads": self.grads, "master_params": self.master_params,
                "optimizer_states": self.optimizer_states, "total": self.total}


def _check_recipe(optimizer: str, precision: str) -> None:
    if optimizer not in OPTIMIZER_STATES:
        raise ValueError(text("memory.unknown_optimizer", optimizer=optimizer,
                              choices=sorted(OPTIMIZER_STATES)))
    if precision not in PRECISIONS:
        raise ValueError(text("memory.unknown_precision", precision=precision))


def bytes_per_param(optimizer: str = "adam", precision: str = "fp32") -> ModelStateBytes:
    """Bytes each parameter costs, by kind (the table of the module docstring)."""
    _check_recipe(optimizer, precision)
    low = 4 if precision == "fp32" else 2  # the bytes of the weights the model computes with
    return ModelStateBytes(params=low, grads=low, master_params=0 if precision == "fp32" else 4,
                           optimizer_states=4 * OPTIMIZER_STATES[optimizer])


def model_state_bytes(n_params: float, optimizer: str = "adam",
                      precision: str = "fp32") -> ModelStateBytes:
    """Bytes of parameters, gradients, master weights and optimizer states of a model."""
    if n_params < 0:
        raise ValueError(text("memory.n_params_negative", n_params=n_params))
    per = bytes_per_param(optimizer, precision)
    return ModelStateBytes(*(n_params * v for v in (per.params, per.grads, per.master_params,
                                                    per.optimizer_states)))


ZERO_STAGES = (0, 1, 2, 3)  # 0: plain DP; 1: optimizer states; 2: + gradients; 3: + parameters


def model_state_bytes_per_gpu(n_params: float, *, tp: int = 1, pp: int = 1, dp: int = 1,
                              zero_stage: int = 0, optimizer: str = "adam",
                              precision: str = "fp32") -> ModelStateBytes:
    """Model states one GPU holds: the model split over ``tp`` × ``pp`` GPUs (each holds 1/(tp·pp)
    of every kind), then, with ZeRO (Rajbhandari et al., arXiv:1910.02054 §5), sharded over the
    ``dp`` replicas: stage 1 the optimizer states (with the fp32 master weights, which the paper
    counts among them), stage 2 also the gradients, stage 3 also the parameters.

    fp32 Adam, ZeRO-1 on N ranks: 4 + 4 + 8/N bytes per parameter; ZeRO-3: 16/N.
    """
    for name, value in (("tp", tp), ("pp", pp), ("dp", dp)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(text("memory.not_positive_integer", name=name, value=value))
    if zero_stage not in ZERO_STAGES:
        raise ValueError(text("memory.unknown_zero_stage", zero_stage=zero_stage,
                              stages=ZERO_STAGES))
    full = model_state_bytes(n_params / (tp * pp), optimizer, precision)
    shard = [1, 1, 1, 1]  # divisors of params, grads, master params, optimizer states
    if zero_stage >= 1:
        shard[2] = shard[3] = dp
    if zero_stage >= 2:
        shard[1] = dp
    if zero_stage >= 3:
        shard[0] = dp
    return ModelStateBytes(*(v / d for v, d in zip(
        (full.params, full.grads, full.master_params, full.optimizer_states), shard)))


def _tensor_bytes(tensors) -> int:
    """Bytes of distinct tensors (each counted once; a DTensor counts its local shard)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        if hasattr(t, "to_local"):  # DTensor (FSDP2): only this rank's shard lives here
            t = t.to_local()
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), t.numel(), t.dtype)
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


def measured_model_state_bytes(model: nn.Module, optimizer: torch.optim.Optimizer | None = None,
                               master_params=()) -> ModelStateBytes:
    """Bytes of the real tensors on this rank: ``model``'s parameters and their ``.grad``, the
    ``master_params`` tensors, and ``optimizer``'s state.

    The optimizer's scalar ``step`` counters (one 4-byte tensor per parameter tensor) are left
    out, as the estimator leaves them out: a few hundred bytes next to megabytes.
    """
    params = list(model.parameters())
    states = []
    if optimizer is not None:
        for state in optimizer.state.values():
            states += [v for k, v in state.items() if torch.is_tensor(v) and k != "step"]
    return ModelStateBytes(params=_tensor_bytes(params),
                           grads=_tensor_bytes(p.grad for p in params),
                           master_params=_tensor_bytes(master_params),
                           optimizer_states=_tensor_bytes(states))


# --- transformer shape and activations ---------------------------------------------------

@dataclass(frozen=True)
class TransformerShape:
    """The sizes that decide a GPT-style transformer's memory (nanoGPT / labs.models.TinyGPT)."""

    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int

    @classmethod
    def from_config(cls, config, seq_len: int | None = None) -> "TransformerShape":
        """From a ``TinyGPTConfig`` (seq_len defaults to its block_size)."""
        return cls(config.n_layer, config.n_embd, config.n_head,
                   seq_len or config.block_size, config.vocab_size)


def transformer_layer_params(hidden: int, *, biases: bool = True) -> int:
    """Parameters of one GPT layer (a TinyGPT block): 12h² + 13h, exact.

    Weights 12h²: q/k/v 3h², attention output h², MLP 4h² and 4h². Biases and LayerNorms 13h:
    q/k/v 3h, output h, MLP 4h and h, two LayerNorms 4h. ``biases=False``: the weight matrices
    alone, the 12·h² the chapter and PTD-P count.
    """
    h = hidden
    return 12 * h * h + (13 * h if biases else 0)


def transformer_params(shape: TransformerShape, *, max_positions: int | None = None) -> int:
    """Parameters of a TinyGPT of this shape (biases on, untied lm_head): exact.

    Per layer :func:`transformer_layer_params` (12h² + 13h). Plus embeddings (V + positions)·h,
    the final LayerNorm 2h, lm_head V·h.
    """
    h, positions = shape.hidden, max_positions or shape.seq_len
    return (shape.layers * transformer_layer_params(h) + (shape.vocab + positions) * h + 2 * h
            + shape.vocab * h)


def layer_weight_bytes(hidden: int, *, bytes_per_param: int = 2) -> dict:
    """Weight bytes of one GPT layer's matrices (biases left out): q/k/v fused 3h², output h²,
    MLP 4h² + 4h², whole layer 12h² (fp16 by default)."""
    h, e = hidden, bytes_per_param
    return {"one h x h matrix": h * h * e, "qkv (3h x h)": 3 * h * h * e,
            "mlp c_fc (4h x h)": 4 * h * h * e,
            "layer (12 h^2)": transformer_layer_params(h, biases=False) * e}


@dataclass(frozen=True)
class ActivationBytes:
    """Activation bytes kept for backward: per transformer layer, in the head, in total."""

    per_layer: float
    head: float
    layers: int

    @property
    def total(self) -> float:
        return self.layers * self.per_layer + self.head


def activation_bytes(shape: TransformerShape, batch: int, *, bytes_per_element: int = 4,
                     dropout: bool = False) -> ActivationBytes:
    """Activations of one forward pass, from the shape (Korthikanti et al. 2022, §4.1).

    Per layer, in elements: attention input, q, k, v, softmax output (a·s² per sample),
    projection input: 5·sbh + a·s²·b; MLP input, GELU input (4h), GELU output (4h): 9·sbh; the
    two LayerNorm inputs: 2·sbh. With dropout add a 1-byte mask for the attention (a·s²·b),
    the two residual dropouts (2·sbh) and the dropped attention (a·s²·b elements).
    Head: final LayerNorm input and lm_head input (2·sbh) and the log-softmax of the loss (sbV).
    Small tensors (LayerNorm statistics, token ids, the causal mask) are not counted.
    """
    s, b, h, a, e = shape.seq_len, batch, shape.hidden, shape.heads, bytes_per_element
    per_layer = e * (16 * s * b * h + a * s * s * b)
    if dropout:
        per_layer += 2 * s * b * h + a * s * s * b + e * a * s * s * b
    head = e * (2 * s * b * h + s * b * shape.vocab)
    return ActivationBytes(per_layer=per_layer, head=head, layers=shape.layers)


def measured_activation_bytes(model: nn.Module, *inputs) -> int:
    """Bytes autograd saves for backward in ``model(*inputs)``: distinct storages of the saved
    tensors, parameters excluded (they are model states, counted above)."""
    param_storages = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t):
        ptr = t.untyped_storage().data_ptr()
        if ptr not in param_storages:
            saved[ptr] = max(saved.get(ptr, 0), t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*inputs)
    del out
    return sum(saved.values())


# --- the planner's memory: GQA, SwiGLU, tensor/sequence parallelism, recomputation, pipelines --

RECOMPUTE = ("none", "selective", "full")


def general_layer_params(hidden: int, *, ffn_hidden: int | None = None, n_heads: int = 1,
                         n_kv_heads: int | None = None, gated_mlp: bool = False) -> float:
    """Weight-matrix parameters of one transformer layer, biases and norms left out.

    Attention: q and output projections h² each; k and v h·(h·kv/a) each (grouped-query
    attention, Ainslie et al., arXiv:2305.13245): 2h² + 2h²·kv/a. MLP: 2·h·f with a GELU
    (f = 4h: the 12·h² of :func:`transformer_layer_params`), 3·h·f with SwiGLU (gate, up,
    down; Shazeer, arXiv:2002.05202; LLaMA, arXiv:2302.13971 §2.2).
    """
    h, a = hidden, n_heads
    f = 4 * h if ffn_hidden is None else ffn_hidden
    kv = a if n_kv_heads is None else n_kv_heads
    return 2 * h * h + 2 * h * h * kv / a + (3 if gated_mlp else 2) * h * f


def layer_activation_bytes(*, seq_len: int, micro_batch: int, hidden: int, n_heads: int,
                           ffn_hidden: int | None = None, n_kv_heads: int | None = None,
                           gated_mlp: bool = False, tp: int = 1, sequence_parallel: bool = True,
                           recompute: str = "none", flash_attention: bool = True,
                           dropout: bool = True) -> float:
    """Bytes of activations one transformer layer keeps for backward, per micro-batch, per GPU
    (2-byte activations, 1-byte dropout masks): Korthikanti et al. 2022, arXiv:2205.05198, §4.

    The paper's terms (s, b, h, a; f = 4h, kv = a): layer norms 4sbh; attention 11sbh + 5as²b
    (QKV input 2sbh, Q and K 4sbh, V 2sbh, softmax 2as²b, its dropout mask as²b and output
    2as²b, projection input 2sbh, dropout mask sbh); MLP 19sbh (input 2sbh, GELU input and
    output 2·8sbh, dropout mask sbh). Total 34sbh + 5as²b (eq. 1). Generalised here:

    - GQA: K and V are sbh·kv/a each, so attention is 7sbh + 4sbh·kv/a (+ the s² terms);
    - MLP with hidden f: 3sbh + 4sbf (GELU), 3sbh + 6sbf (SwiGLU: gate, up and their product);
    - no dropout: no masks (2sbh, as²b) and no dropped copy of the softmax (2as²b);
    - flash attention (Dao et al., arXiv:2205.14135): no s² terms, a 4-byte log-sum-exp per
      head and token (4asb) instead;
    - TP t with sequence parallelism (§4.2.2): everything / t; without it the LayerNorm inputs,
      the QKV and MLP inputs and the two dropout masks (10sbh) stay whole: 10sbh + 24sbh/t + ...;
    - selective recomputation (§5): the s² terms are recomputed, not kept (34sbh/t);
    - full recomputation: only the layer's input, 2sbh (Table 2).
    """
    if recompute not in RECOMPUTE:
        raise ValueError(text("memory.unknown_recompute", recompute=recompute, choices=RECOMPUTE))
    s, b, h, a, t = seq_len, micro_batch, hidden, n_heads, tp
    f = 4 * h if ffn_hidden is None else ffn_hidden
    kv = a if n_kv_heads is None else n_kv_heads
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh
    masks = 2 * sbh if dropout else 0  # attention-output and MLP-output dropout masks
    whole = 4 * sbh + 2 * sbh + 2 * sbh + masks  # LN inputs, QKV input, MLP input, masks
    split = (2 * sbh + 2 * sbh + 4 * sbh * kv / a  # Q, projection input, K and V
             + (6 if gated_mlp else 4) * s * b * f)
    if flash_attention:
        split += 4 * a * s * b  # fp32 log-sum-exp
    elif recompute == "none":
        split += (5 if dropout else 2) * a * s * s * b
    if sequence_parallel:
        return (whole + split) / t
    return whole + split / t


def output_activation_bytes(*, seq_len: int, micro_batch: int, hidden: int, vocab: int,
                            tp: int = 1) -> float:
    """Bytes the output layer and the loss keep per micro-batch on the last pipeline stage:
    4sbh/t·(1 + V/h) = final-norm and output-layer inputs (2sbh each) plus fp32 logits (4sbV),
    all split over TP (vocab-parallel cross entropy; Korthikanti et al. 2022, §4.3)."""
    s, b, h = seq_len, micro_batch, hidden
    return 4 * s * b * h / tp * (1 + vocab / h)


def microbatches_in_flight(p: int, m: int, *, v: int = 1, stage: int = 0) -> float:
    """Micro-batches whose activations a pipeline stage holds at its peak, in units of one
    micro-batch through the stage's layers (L/p).

    1F1B (PipeDream-Flush, PTD-P §2.2.1): stage i (0-based) runs p - i forward passes before its
    first backward, so it keeps min(p - i, m); stage 0 the most. GPipe keeps all m. Interleaved
    1F1B (v chunks per stage): stage 0 keeps L·(1 + (p-1)/(p·v)) layers' worth, i.e. p + (p-1)/v
    micro-batches of L/p layers (Korthikanti et al. 2022, §4.2.3), capped at m; the planner
    asks for stage 0, the peak (other stages get the 1F1B count here). With p = 1 (no
    pipeline) gradient accumulation keeps one micro-batch.
    """
    if not 0 <= stage < p:
        raise ValueError(text("memory.stage_out_of_range", stage=stage, p=p))
    if v == 1 or stage != 0:
        return float(min(p - stage, m))
    return min(p + (p - 1) / v, float(m))
