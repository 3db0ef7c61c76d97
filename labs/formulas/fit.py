"""Does it fit? The chapter's "does the model fit, and how must it be split" decision: one type
(:class:`FitDecision`) for three questions -- the whole model on one card (2.1,
:func:`fits_on_one_card`), the smallest tensor-parallel degree (2.2, :func:`tp_decision`), the
pipeline stages (2.3, :func:`pp_decision`). Bytes from :mod:`labs.formulas.memory`; verdicts in words
(the one-card verdict in decimal GB, the chapter's unit; TP and PP in GiB).

Formulas and a verdict only: no traffic or time (:mod:`labs.formulas.cost`, which offers these names
too, as the notebooks call them: ``cost.tp_decision(...)``).

Must not: measure, communicate or print; hold a traffic or time formula (labs.formulas.cost); or import
labs.formulas.cost, the planner or the grader (labs.formulas.cost imports it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from labs.formulas import memory
from labs.formulas.memory import GiB
from labs.messages import text

__all__ = ["QUESTIONS", "FitDecision", "fits_on_one_card", "tp_decision", "pp_decision"]

QUESTIONS = ("one card", "tensor parallel", "pipeline")


@dataclass(frozen=True)
class FitDecision:
    """Does a model fit, and how must it be split? Bytes throughout; ``verdict`` says it in words.

    One type for three questions (``question``): the whole model on one card (2.1,
    :func:`fits_on_one_card`), the smallest tensor-parallel degree (2.2, :func:`tp_decision`),
    the pipeline stages (2.3, :func:`pp_decision`).
    """

    question: str
    model_state_bytes: float  # the whole model's states (labs.formulas.memory)
    card_bytes: float
    budget: float  # share of the card the model states may take (the chapter's ~70 %)
    activation_bytes: float = 0.0
    layer_state_bytes: float = 0.0  # one layer's states: a pipeline stage cannot hold less
    tp: int = 1
    pp: int | None = 1  # pipeline stages; None: no number of stages fits at this tp
    tp_needed: int = 1  # the smallest TP with which one layer's states fit the budget
    layers_per_gpu: int | None = None
    gpus_per_node: int = 8

    @property
    def states_per_gpu_bytes(self) -> float:
        return self.model_state_bytes / (self.tp * (self.pp or 1))

    @property
    def fits(self) -> bool:
        """States per GPU within the budget, and states + activations within the card."""
        if self.pp is None:
            return False
        per_gpu = self.states_per_gpu_bytes
        return per_gpu <= self.budget * self.card_bytes and \
            per_gpu + self.activation_bytes <= self.card_bytes

    @property
    def needed(self) -> bool:
        """Must the model be split (TP or PP) at all?"""
        return self.tp > 1 or (self.pp or 1) > 1

    @property
    def verdict(self) -> str:
        return {"one card": self._one_card, "tensor parallel": self._tensor_parallel,
                "pipeline": self._pipeline}[self.question]()

    def _one_card(self) -> str:
        states, total = self.model_state_bytes / memory.GB, \
            (self.model_state_bytes + self.activation_bytes) / memory.GB
        numbers = dict(states=states, share=self.model_state_bytes / self.card_bytes,
                       card=self.card_bytes / memory.GB, budget=self.budget)
        head = (text("cost.one_card_head_activations", total=total, **numbers)
                if self.activation_bytes else text("cost.one_card_head", **numbers))
        return text("cost.one_card_fits" if self.fits else "cost.one_card_does_not_fit",
                    head=head)

    @property
    def min_shards(self) -> int:
        """The fewest ways (TP x PP x ZeRO-DP together) the model states must be split for each
        GPU's share to fit the budget: ceil(states / (budget x card))."""
        return max(1, math.ceil(self.model_state_bytes / (self.budget * self.card_bytes)))

    def _tensor_parallel(self) -> str:
        head = text("cost.tp_head", states=self.model_state_bytes / GiB,
                    share=self.model_state_bytes / self.card_bytes, card=self.card_bytes / GiB,
                    budget=self.budget, layer=self.layer_state_bytes / GiB)
        if self.tp == 1 and self.fits:
            return text("cost.tp_not_needed", head=head)
        per_gpu = self.states_per_gpu_bytes / GiB
        if not self.fits:
            return text("cost.tp_not_enough", head=head, tp=self.tp, per_gpu=per_gpu,
                        min_shards=self.min_shards, gpus_per_node=self.gpus_per_node)
        if self.tp > self.gpus_per_node:
            return text("cost.tp_leaves_node", head=head, tp=self.tp, per_gpu=per_gpu,
                        gpus_per_node=self.gpus_per_node)
        return text("cost.tp_smallest", head=head, tp=self.tp, per_gpu=per_gpu)

    def _pipeline(self) -> str:
        head = text("cost.pp_head", layer=self.layer_state_bytes / GiB, budget=self.budget,
                    card=self.card_bytes / GiB, tp_needed=self.tp_needed)
        if self.pp is None:
            return text("cost.pp_no_layer_fits", head=head, tp=self.tp)
        return text("cost.pp_stages", head=head, tp=self.tp, layers_per_gpu=self.layers_per_gpu,
                    pp=self.pp)


def _check_card(card_bytes: float, budget: float) -> None:
    if card_bytes <= 0:
        raise ValueError(text("cost.card_bytes_not_positive", card_bytes=card_bytes))
    if not 0 < budget <= 1:
        raise ValueError(text("cost.budget_out_of_range", budget=budget))


def fits_on_one_card(n_params: float, card_bytes: float, *, optimizer: str = "adam",
                     precision: str = "fp32", activation_bytes: float = 0.0,
                     budget: float = 0.7) -> FitDecision:
    """Apply the chapter's rule of thumb: model states <= ``budget`` (70 %) of the card, and
    states plus the activations (when given) within the card. A rule of thumb, not a law:
    activations can exceed the model states (ZeRO §3.2)."""
    _check_card(card_bytes, budget)
    states = memory.model_state_bytes(n_params, optimizer, precision).total
    return FitDecision("one card", model_state_bytes=states, card_bytes=float(card_bytes),
                       budget=budget, activation_bytes=float(activation_bytes))


def tp_decision(n_params: float, card_bytes: float, *, hidden: int, heads: int,
                optimizer: str = "adam", precision: str = "mixed", budget: float = 0.7,
                gpus_per_node: int = 8) -> FitDecision:
    """Smallest TP size t (1, 2, 4, ... dividing ``heads``) with model states / t within
    ``budget`` of the card. Activations come on top (see notebook 2.2); TP also splits most of
    them, sequence parallelism the rest."""
    _check_card(card_bytes, budget)
    states = memory.model_state_bytes(n_params, optimizer, precision).total
    per_param = memory.bytes_per_param(optimizer, precision).total
    layer = memory.transformer_layer_params(hidden) * per_param
    tp = 1
    while states / tp > budget * card_bytes and tp * 2 <= heads and heads % (tp * 2) == 0:
        tp *= 2
    return FitDecision("tensor parallel", model_state_bytes=states, card_bytes=card_bytes,
                       budget=budget, layer_state_bytes=layer, tp=tp, gpus_per_node=gpus_per_node)


def pp_decision(n_layers: int, hidden: int, card_bytes: float, *, tp: int | None = None,
                optimizer: str = "adam", precision: str = "mixed",
                budget: float = 0.7) -> FitDecision:
    """The chapter's pipeline criteria in numbers: does one layer's state (12·h² parameters)
    fit ``budget`` of a card (the 70 % leaves room for activations)? If not, TP must split the
    layer first (``tp_needed`` ways). Then, with ``tp`` (default: tp_needed), how many layers
    one GPU holds and how many pipeline stages all layers need (``pp``)."""
    _check_card(card_bytes, budget)
    per_param = memory.bytes_per_param(optimizer, precision).total
    layer = memory.transformer_layer_params(hidden, biases=False) * per_param
    room = budget * card_bytes
    tp_needed = max(1, math.ceil(layer / room))
    tp = tp or tp_needed
    layers_per_gpu = int(room // (layer / tp))
    stages = math.ceil(n_layers / layers_per_gpu) if layers_per_gpu else None
    return FitDecision("pipeline", model_state_bytes=n_layers * layer, card_bytes=card_bytes,
                       budget=budget, layer_state_bytes=layer, tp=tp, pp=stages,
                       tp_needed=tp_needed, layers_per_gpu=layers_per_gpu)
