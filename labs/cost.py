"""Numbers for deciding on tensor parallelism: weight bytes per layer, communication per layer,
and "is TP needed?" -- formulas only, no processes (the measurements are in the notebook).

Communication (Megatron-LM, arXiv:1909.08053 §3; Korthikanti et al., arXiv:2205.05198 §4.2):
a tensor-parallel transformer layer all-reduces its activation ``b·s·h`` twice forward (after
attention and after the MLP) and twice backward (the input gradients of the two f operators).
A ring all-reduce of S bytes makes each rank send ``2(t-1)/t · S`` in ``2(t-1)`` messages of
``S/t``: many small messages, every layer. Layer-wise model parallelism sends each stage's
activation once forward and its gradient once backward: few, large messages::

    tp_layer_comm(batch=8, seq=1024, hidden=1600, tp=8)["sent_per_rank"]   # bytes per layer
    tp_decision(params_of(shape), card_bytes=32e9, shape=shape)            # needed? which size?
"""
from __future__ import annotations

from dataclasses import dataclass

from labs import memory
from labs.collectives import ring_all_reduce_bytes_per_rank

__all__ = ["layer_weight_bytes", "tp_layer_comm", "layerwise_comm", "TPDecision", "tp_decision"]


def layer_weight_bytes(hidden: int, *, bytes_per_param: int = 2) -> dict:
    """Weight bytes of one GPT layer's matrices (biases left out): q/k/v fused 3h², output h²,
    MLP 4h² + 4h², whole layer 12h² (fp16 by default)."""
    h, e = hidden, bytes_per_param
    return {"one h x h matrix": h * h * e, "qkv (3h x h)": 3 * h * h * e,
            "mlp c_fc (4h x h)": 4 * h * h * e, "layer (12 h^2)": 12 * h * h * e}


def tp_layer_comm(*, batch: int, seq: int, hidden: int, tp: int, bytes_per_element: int = 4,
                  sequence_parallel: bool = False) -> dict:
    """Collectives of one TP transformer layer in one forward + backward, per rank.

    Without sequence parallelism: 4 all-reduces of S = b·s·h·bytes (2 forward, 2 backward).
    With it: 4 all-gathers and 4 reduce-scatters of S, the same bytes on the wire (an
    all-reduce is a reduce-scatter plus an all-gather). ``sent_per_rank``: ring bytes.
    """
    S = batch * seq * hidden * bytes_per_element
    ring = ring_all_reduce_bytes_per_rank(S, tp)
    if tp == 1:
        return {"collectives": 0, "message_bytes": S, "sent_per_rank": 0.0,
                "wire_messages": 0, "wire_message_bytes": 0.0}
    return {"collectives": 8 if sequence_parallel else 4, "message_bytes": S,
            "sent_per_rank": 4 * ring, "wire_messages": 4 * 2 * (tp - 1),
            "wire_message_bytes": S / tp}


def layerwise_comm(*, batch: int, seq: int, hidden: int, stages: int,
                   bytes_per_element: int = 4) -> dict:
    """Point-to-point traffic of layer-wise model parallelism in one forward + backward:
    each of the ``stages - 1`` boundaries carries the activation forward and its gradient back."""
    S = batch * seq * hidden * bytes_per_element
    return {"messages": 2 * (stages - 1), "message_bytes": S,
            "sent_by_a_middle_rank": 2 * S if stages > 2 else S}


@dataclass(frozen=True)
class TPDecision:
    """The judgement "is tensor parallelism needed, and how much?" with its numbers (bytes)."""

    model_states: float
    layer_states: float  # model states of the largest layer (PP cannot split below this)
    card: float
    budget: float
    tp: int  # smallest TP size (power of two, dividing the heads) whose shard fits the budget
    gpus_per_node: int

    @property
    def needed(self) -> bool:
        return self.tp > 1

    @property
    def fits(self) -> bool:
        return self.model_states / self.tp <= self.budget * self.card

    @property
    def verdict(self) -> str:
        share = self.model_states / self.card
        text = (f"model states {self.model_states / 1e9:.1f} GB = {share:.0%} of the "
                f"{self.card / 1e9:.0f} GB card (budget {self.budget:.0%}); one layer "
                f"{self.layer_states / 1e9:.2f} GB")
        if self.tp == 1:
            return text + " -> TP not needed: one card holds it (DDP, 2.1)"
        if self.tp > self.gpus_per_node or not self.fits:
            return text + (f" -> TP={self.tp} would leave the node ({self.gpus_per_node} GPUs): "
                           "use TP inside the node plus pipeline stages (2.3) or ZeRO")
        return text + (f" -> smallest TP that fits: {self.tp} (states/TP = "
                       f"{self.model_states / self.tp / 1e9:.1f} GB); more only costs communication")


def tp_decision(num_params: float, card_bytes: float, *, hidden: int, heads: int,
                optimizer: str = "adam", precision: str = "mixed", budget: float = 0.7,
                gpus_per_node: int = 8) -> TPDecision:
    """Smallest TP size t (1, 2, 4, ... dividing ``heads``) with model states / t within
    ``budget`` of the card, using labs.memory's bytes per parameter. Activations come on top
    (see the notebook); TP also splits most of them, sequence parallelism the rest."""
    states = memory.model_state_bytes(num_params, optimizer, precision).total
    per_param = memory.bytes_per_param(optimizer, precision).total
    layer = (12 * hidden * hidden + 13 * hidden) * per_param
    tp = 1
    while states / tp > budget * card_bytes and tp * 2 <= heads and heads % (tp * 2) == 0:
        tp *= 2
    return TPDecision(model_states=states, layer_states=layer, card=card_bytes, budget=budget,
                      tp=tp, gpus_per_node=gpus_per_node)
