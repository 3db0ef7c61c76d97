"""Partition: cut a model's layers into pipeline stages, and build the stages of a GPT.

- ``partition_evenly``: stages of consecutive layers, equal by count;
- ``balanced_partition``: equal by cost (the slowest stage sets the pipeline's pace), with the
  cost of a layer estimated from FLOPs (``gpt_layer_costs``) or measured (``measure_layer_costs``);
- ``GPTStage`` / ``build_gpt_stages``: the embedding (first stage only), blocks [start, stop)
  and the head (last stage only) of a TinyGPT, as the modules one rank runs;
- ``split_microbatches``: a batch into the micro-batches that flow through the stages.

GPipe: arXiv:1811.06965. Stage balancing and the FLOPs per layer: PTD-P, arXiv:2104.04473.

Owns: stage bounds, layer costs and GPT stages. Must not: communicate, print, or import the
executor, the checks or the grader.
"""
from __future__ import annotations

import statistics
import time
from typing import Sequence

from torch import Tensor, nn

from labs.formulas.memory import transformer_layer_params
from labs.messages import text
from labs.models import TinyGPTConfig
from labs.pipeline.schedules import LOOP, stage_rank

__all__ = ["Bounds", "partition_evenly", "stage_costs", "balanced_partition", "gpt_layer_costs",
           "measure_layer_costs", "layer_grads_to_none", "GPTStage", "build_gpt_stages",
           "check_microbatches", "split_microbatches"]

Bounds = list[tuple[int, int]]  # per stage: layers [start, stop)


# --- 1. partition ----------------------------------------------------------------------------

def _check_stages(n_layers: int, n_stages: int) -> None:
    if not isinstance(n_stages, int) or n_stages < 1:
        raise ValueError(text("memory.not_positive_integer", name="n_stages", value=n_stages))
    if n_stages > n_layers:
        raise ValueError(text("pipeline.too_many_stages", n_layers=n_layers, n_stages=n_stages))


def partition_evenly(n_layers: int, n_stages: int) -> Bounds:
    """Stages of consecutive layers whose sizes differ by at most one (earlier stages get the
    extra layers). Even by count is not even by time when layers differ: see balanced_partition."""
    _check_stages(n_layers, n_stages)
    size, extra = divmod(n_layers, n_stages)
    bounds, start = [], 0
    for s in range(n_stages):
        stop = start + size + (s < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


def stage_costs(costs: Sequence[float], bounds: Bounds) -> list[float]:
    """Total cost of each stage."""
    return [float(sum(costs[a:b])) for a, b in bounds]


def balanced_partition(costs: Sequence[float], n_stages: int) -> Bounds:
    """Consecutive stages minimising the largest stage cost: the slowest stage sets the pace
    of the whole pipeline. Dynamic programming over (layers used, stages used), O(n²·p)."""
    n = len(costs)
    _check_stages(n, n_stages)
    prefix = [0.0]
    for c in costs:
        prefix.append(prefix[-1] + float(c))
    inf = float("inf")
    # best[k][i]: the smallest max-stage-cost splitting layers [0, i) into k stages
    best = [[inf] * (n + 1) for _ in range(n_stages + 1)]
    cut = [[0] * (n + 1) for _ in range(n_stages + 1)]
    best[0][0] = 0.0
    for k in range(1, n_stages + 1):
        for i in range(k, n - (n_stages - k) + 1):
            for j in range(k - 1, i):  # the last of the k stages is layers [j, i)
                worst = max(best[k - 1][j], prefix[i] - prefix[j])
                if worst < best[k][i]:
                    best[k][i], cut[k][i] = worst, j
    bounds, i = [], n
    for k in range(n_stages, 0, -1):
        bounds.append((cut[k][i], i))
        i = cut[k][i]
    return bounds[::-1]


def gpt_layer_costs(config: TinyGPTConfig, seq_len: int | None = None) -> list[float]:
    """Estimated forward FLOPs per sequence of each transformer block, with the embedding folded
    into the first block and the LM head into the last (they always sit on the first / last
    stage). Per block 24·T·h² + 4·T²·h (PTD-P §5.1), head 2·T·h·V; backward is about twice the
    forward for every layer, so the ratios hold for a whole step."""
    T, h, V = seq_len or config.block_size, config.n_embd, config.vocab_size
    # 2 FLOPs per weight and token (24·T·h²), plus the attention scores and their use (4·T²·h)
    block = 2.0 * T * transformer_layer_params(h, biases=False) + 4.0 * T * T * h
    costs = [block for _ in range(config.n_layer)]
    costs[-1] += 2.0 * T * h * V  # lm_head: (T, h) x (h, V)
    return costs


def measure_layer_costs(layers: Sequence[nn.Module], x: Tensor, *, repeats: int = 5) -> list[float]:
    """Measured seconds of forward + backward of each layer on input x (median of ``repeats``),
    layer after layer (each takes the previous one's output)."""
    costs = []
    for layer in layers:
        times = []
        for _ in range(repeats):
            inp = x.detach().requires_grad_(x.is_floating_point())
            start = time.perf_counter()
            out = layer(inp)
            out.float().pow(2).mean().backward()
            times.append(time.perf_counter() - start)
        costs.append(statistics.median(times))
        x = out.detach()
    layer_grads_to_none(layers)
    return costs


def layer_grads_to_none(layers: Sequence[nn.Module]) -> None:
    for layer in layers:
        for q in layer.parameters():
            q.grad = None


# --- stages of a GPT --------------------------------------------------------------------------

class GPTStage(nn.Module):
    """Blocks [start, stop) of a GPT as one pipeline stage; the first stage also embeds the
    tokens, the last also applies ln_f and lm_head.

    ``model`` is anything with the ``embed`` / ``blocks`` / ``head`` interface and the
    ``EMBED_MODULES`` / ``HEAD_MODULES`` they use: ``labs.models.TinyGPT``, or the tensor-parallel
    ``labs.tensor_parallel.model.ParallelTinyGPT`` (a stage of tensor-parallel blocks). The
    stage's parameters are the model's own (shared, not copied); ``global_names`` maps each
    local name to the name in the whole model.
    """

    def __init__(self, model: nn.Module, start: int, stop: int, *, first: bool,
                 last: bool) -> None:
        super().__init__()
        self.first, self.last, self.span = first, last, (start, stop)
        for path in model.EMBED_MODULES if first else ():  # wte, wpe (, drop)
            self.add_module(path.rsplit(".", 1)[-1], model.get_submodule(path))
        self.blocks = nn.ModuleList(model.blocks[start:stop])
        for path in model.HEAD_MODULES if last else ():  # ln_f, lm_head
            self.add_module(path.rsplit(".", 1)[-1], model.get_submodule(path))
        # the model's own embed / head run the modules registered above
        self._embed, self._head = model.embed, model.head
        names = {id(q): n for n, q in model.named_parameters()}
        self.global_names = {n: names[id(q)] for n, q in self.named_parameters()}

    def forward(self, x: Tensor) -> Tensor:
        if self.first:
            x = self._embed(x)  # token ids (b, T) -> embeddings (b, T, C)
        for block in self.blocks:
            x = block(x)  # (b, T, C)
        if self.last:
            x = self._head(x)  # (b, T, C) -> logits (b, T, V)
        return x


def build_gpt_stages(model: nn.Module, bounds: Bounds, rank: int, n_ranks: int,
                     placement: str = LOOP) -> dict[int, GPTStage]:
    """{stage index: GPTStage} of the stages ``rank`` holds (stage s lives on rank s % p; in
    the V of ZB-V, rank r holds r and 2p - 1 - r)."""
    n = len(bounds)
    return {s: GPTStage(model, *bounds[s], first=s == 0, last=s == n - 1)
            for s in range(n) if stage_rank(s, n_ranks, placement) == rank}


def check_microbatches(batch_size: int, n_microbatches: int) -> None:
    """Raise ValueError, naming the numbers that would work, unless ``n_microbatches`` equal
    micro-batches can be cut from a batch of ``batch_size`` rows."""
    if not isinstance(n_microbatches, int) or n_microbatches < 1:
        raise ValueError(text("memory.not_positive_integer", name="n_microbatches",
                              value=n_microbatches))
    if batch_size % n_microbatches:
        divisors = [d for d in range(1, batch_size + 1) if batch_size % d == 0]
        raise ValueError(text("pipeline.microbatches_split", batch_size=batch_size,
                              m=n_microbatches, divisors=divisors))


def split_microbatches(batch: Tensor, n_microbatches: int) -> list[Tensor]:
    """Split a batch along dim 0 into ``n_microbatches`` equal micro-batches."""
    check_microbatches(batch.size(0), n_microbatches)
    return list(batch.chunk(n_microbatches))
