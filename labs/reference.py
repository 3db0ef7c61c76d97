"""The single-process reference training loop that every parallel implementation is checked against.

Same model seed + same batches + same optimizer => a parallel run must reproduce ``losses``,
``grads_of_last_step`` and ``state_dict`` (``labs.numerics.assert_close``: float32 tolerances,
the losses too, although they are Python floats)::

    result = tinygpt_reference(config, steps=20, batch_size=8, lr=1e-3)
    result.losses[-1], result.state_dict["lm_head.weight"]

Models follow the course's convention ``model(x, targets) -> (output, loss)`` (TinyGPT, MLP).
Keep dropout at 0.0 here: dropout draws from the global RNG and would make runs differ.

Owns: the single-process training loop. Must not: communicate, print, or import a parallelism
package, the checks or the grader.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor, nn

from labs.data import CharTokenizer, get_batch
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig

__all__ = ["Batches", "TrainResult", "make_optimizer", "train_reference", "tinygpt_reference"]

Batches = Callable[[int], tuple[Tensor, Tensor]]  # step -> (x, y)


@dataclass
class TrainResult:
    """What a training run leaves behind, for comparison with a parallel run."""

    losses: list[float]  # loss of every step, before that step's update
    state_dict: dict[str, Tensor]  # weights after the last update
    grads_of_last_step: dict[str, Tensor]  # gradients of the last step (before clipping and update)


def make_optimizer(params, name: str, *, lr: float, weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """``"adamw"`` (AdamW, default betas) or ``"sgd"`` (plain SGD, no momentum)."""
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    raise ValueError(text("models.unknown_optimizer", name=name))


def train_reference(model: nn.Module, batches: Batches, *, steps: int, lr: float,
                    optimizer: str = "adamw", weight_decay: float = 0.0,
                    grad_clip: float | None = None) -> TrainResult:
    """Train ``model`` in place for ``steps`` steps on ``batches(step)`` and record the run.

    One step: forward, backward, optionally clip the global gradient norm to ``grad_clip``,
    optimizer update. Batches are moved to the model's device.
    """
    if steps < 1:
        raise ValueError(text("models.steps_too_small", steps=steps))
    device = next(model.parameters()).device
    opt = make_optimizer(model.parameters(), optimizer, lr=lr, weight_decay=weight_decay)
    model.train()
    losses: list[float] = []
    for step in range(steps):
        x, y = (t.to(device) for t in batches(step))
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        losses.append(loss.item())
        if step == steps - 1:  # keep the raw gradients of the last step for comparison
            grads = {name: p.grad.detach().clone() for name, p in model.named_parameters()
                     if p.grad is not None}
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
    state = {name: t.detach().clone() for name, t in model.state_dict().items()}
    return TrainResult(losses=losses, state_dict=state, grads_of_last_step=grads)


def tinygpt_reference(config: TinyGPTConfig, *, steps: int, batch_size: int, lr: float,
                      seed: int = 0) -> TrainResult:
    """Train ``TinyGPT(config, seed)`` with AdamW on ``get_batch(step, batch_size, block_size, seed=seed)``."""
    corpus_vocab = CharTokenizer().vocab_size
    if config.vocab_size < corpus_vocab:
        raise ValueError(text("models.vocab_too_small", vocab_size=config.vocab_size,
                              corpus_vocab=corpus_vocab))
    model = TinyGPT(config, seed=seed)
    return train_reference(
        model, lambda step: get_batch(step, batch_size, config.block_size, seed=seed),
        steps=steps, lr=lr)
