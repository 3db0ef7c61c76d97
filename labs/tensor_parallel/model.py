"""A tensor-parallel TinyGPT built from the full one, its layout checks and its groups.

The blocks use :mod:`labs.tensor_parallel.layers`' ParallelSelfAttention and ParallelMLP (Megatron-LM,
arXiv:1909.08053, Fig. 3: one all-reduce forward and one backward per attention and per MLP);
embeddings and LayerNorms are replicated; ``lm_head`` is column-parallel over the vocabulary with
its logits gathered. Parameter names equal the full model's, so a full gradient or state dict is
cut into this rank's expected pieces by :func:`local_shards`.

``sequence_parallel=True`` (Korthikanti et al., arXiv:2205.05198) also splits the LayerNorm /
residual / dropout regions along the sequence: f and g become all-gather and reduce-scatter (same
bytes, activations 1/t), the bridge to 2.4. Replicated parameters used there see only a slice
of the sequence, so their gradients are summed over the group (:func:`sync_sequence_parallel_grads`)::

    group = tensor_parallel_group(tp=2)
    model = ParallelTinyGPT(TinyGPT(config, seed=0), group=group)
    logits, loss = model(idx, targets)        # == the full model's

Owns: ParallelTinyGPT, its layout checks, its group and ``local_shards``. Must not: print, keep
process groups in globals, or import the checks, the pipeline or the grader.
"""
from __future__ import annotations

import copy

import torch
import torch.distributed as dist
import torch.utils.checkpoint
from torch import Tensor, nn

import labs
from labs.messages import sentences, text
from labs.models import TinyGPT, TinyGPTConfig, gpt_embedding, language_model_loss
from labs.tensor_parallel.comm import _size, all_reduce, scatter_to_sequence_parallel_region
from labs.tensor_parallel.layers import (ColumnParallelLinear, ParallelMLP, ParallelSelfAttention,
                                         shard)

__all__ = ["validate_tp_layout", "tensor_parallel_group", "ParallelBlock", "ParallelTinyGPT",
           "local_shards", "sync_sequence_parallel_grads"]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def validate_tp_layout(config: TinyGPTConfig, tp: int, *, world_size: int | None = None,
                       seq_len: int | None = None) -> None:
    """Raise ValueError, naming the numbers, unless ``tp`` can split this model (and world)."""
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise ValueError(text("tensor_parallel.tp_positive", tp=tp))
    problems = [text("tensor_parallel.layout_problem", tp=tp, name=name, value=value,
                     why=text(why), divisors=_divisors(value)[:8])
                for name, value, why in (
                    ("n_head", config.n_head, "tensor_parallel.why_heads"),
                    ("n_embd", config.n_embd, "tensor_parallel.why_channels"),
                    ("vocab_size", config.vocab_size, "tensor_parallel.why_vocab"))
                if value % tp]
    if problems:
        raise ValueError(sentences(*problems, text("tensor_parallel.layout_divide_each")))
    if seq_len is not None and seq_len % tp:
        raise ValueError(text("tensor_parallel.sequence_not_divisible", tp=tp, seq_len=seq_len))
    if world_size is not None and world_size % tp:
        raise ValueError(text("tensor_parallel.world_not_divisible", world_size=world_size, tp=tp,
                              divisors=_divisors(world_size)))


def tensor_parallel_group(tp: int):
    """This rank's TP group: consecutive ranks ``[k·tp, (k+1)·tp)``. Call on every rank.

    Returns None (the default group) when ``tp`` is the world size.
    """
    world = dist.get_world_size()
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1 or world % tp:
        raise ValueError(text("tensor_parallel.world_groups", world=world, tp=tp,
                              divisors=_divisors(world)))
    if tp == world:
        return None
    mine = None
    for start in range(0, world, tp):  # every rank creates every group, in the same order
        group = dist.new_group(list(range(start, start + tp)))
        if start <= dist.get_rank() < start + tp:
            mine = group
    return mine


def _replica(module: nn.Module, sequence_parallel: bool) -> nn.Module:
    """A copy of a replicated module (embedding, LayerNorm) on this rank's device."""
    out = copy.deepcopy(module).to(labs.device())
    if sequence_parallel:
        for p in out.parameters():
            p.sequence_parallel = True
    return out


class ParallelBlock(nn.Module):
    """One pre-LayerNorm block: x + attn(ln_1(x)), x + mlp(ln_2(x)), attention and MLP split."""

    def __init__(self, block: nn.Module, *, group=None, counter=None,
                 sequence_parallel: bool = False, label: str = "h") -> None:
        super().__init__()
        kw = dict(group=group, counter=counter, sequence_parallel=sequence_parallel)
        self.ln_1 = _replica(block.ln_1, sequence_parallel)
        self.attn = ParallelSelfAttention(block.attn, label=f"{label}.attn", **kw)
        self.ln_2 = _replica(block.ln_2, sequence_parallel)
        self.mlp = ParallelMLP(block.mlp, label=f"{label}.mlp", **kw)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C), or (B, T/t, C) with sequence parallelism
        return x + self.mlp(self.ln_2(x))


class ParallelTinyGPT(nn.Module):
    """TinyGPT with every block tensor-parallel; same calling convention, same names, and the
    same ``embed`` / ``blocks`` / ``head`` interface, so ``labs.pipeline.GPTStage`` cuts
    pipeline stages of tensor-parallel blocks out of it (TP inside a stage, PP across: 2.4).

    ``checkpoint=True``: activation checkpointing per block (torch.utils.checkpoint): backward
    re-runs each block's forward, its all-reduces included, as Megatron's full recompute does.
    """

    # The modules embed() and head() use, by path (as TinyGPT's): a pipeline stage holds them.
    EMBED_MODULES = ("transformer.wte", "transformer.wpe")
    HEAD_MODULES = ("transformer.ln_f", "lm_head")

    def __init__(self, model: TinyGPT, *, group=None, counter=None,
                 sequence_parallel: bool = False, checkpoint: bool = False) -> None:
        super().__init__()
        config, tp = model.config, _size(group)
        validate_tp_layout(config, tp)
        if config.dropout:
            raise ValueError(text("tensor_parallel.dropout", dropout=config.dropout))
        self.config, self.group, self.counter = config, group, counter
        self.sequence_parallel, self.checkpoint = sequence_parallel, checkpoint
        kw = dict(group=group, counter=counter, sequence_parallel=sequence_parallel)
        full = model.transformer
        self.transformer = nn.ModuleDict(dict(
            wte=_replica(full.wte, False), wpe=_replica(full.wpe, False),
            h=nn.ModuleList(ParallelBlock(b, label=f"h.{i}", **kw) for i, b in enumerate(full.h)),
            ln_f=_replica(full.ln_f, sequence_parallel)))
        self.lm_head = ColumnParallelLinear.from_linear(model.lm_head, gather_output=True, **kw)

    @property
    def blocks(self) -> nn.ModuleList:
        """The tensor-parallel blocks in order; ``blocks[i](x)`` runs block i."""
        return self.transformer.h

    def embed(self, idx: Tensor) -> Tensor:
        """Token ids (B, T) -> embeddings (B, T, C), replicated; with sequence parallelism this
        rank's T/t positions (B, T/t, C)."""
        if self.sequence_parallel:
            validate_tp_layout(self.config, _size(self.group), seq_len=idx.size(1))
        x = gpt_embedding(self.transformer.wte, self.transformer.wpe, idx)  # (B, T, C)
        if self.sequence_parallel:  # enter the sequence-parallel region: keep my T/t positions
            x = scatter_to_sequence_parallel_region(x, dim=1, group=self.group,
                                                    counter=self.counter)
        return x

    def run_blocks(self, x: Tensor, start: int = 0, stop: int | None = None) -> Tensor:
        """Run blocks ``start .. stop-1`` (all by default) on x: one pipeline stage's share."""
        for block in self.blocks[start:stop]:
            if self.checkpoint:  # keep only the block's input; recompute the rest in backward
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return x

    def head(self, x: Tensor) -> Tensor:
        """Final LayerNorm and lm_head: (B, T, C) -> logits (B, T, V), the vocabulary shards
        gathered, full on every rank."""
        return self.lm_head(self.transformer.ln_f(x))

    def forward(self, idx: Tensor, targets: Tensor | None = None):
        """idx (B, T) -> (logits (B, T, V), full on every rank; loss or None)."""
        logits = self.head(self.run_blocks(self.embed(idx)))
        return logits, None if targets is None else language_model_loss(logits, targets)


def local_shards(parallel: nn.Module, full: dict[str, Tensor], group=None) -> dict[str, Tensor]:
    """``{name: this rank's piece of full[name]}`` for every parameter of ``parallel``.

    Sharded parameters carry ``tp_dim`` / ``tp_stride``; the others are replicated (the whole
    tensor). ``full`` is a full model's gradients or weights, under the same names.
    """
    rank, tp = (dist.get_rank(group), _size(group)) if _size(group) > 1 else (0, 1)
    out = {}
    for name, p in parallel.named_parameters():
        dim = getattr(p, "tp_dim", None)
        out[name] = full[name] if dim is None else shard(full[name], dim, rank, tp,
                                                         stride=p.tp_stride)
    return out


def sync_sequence_parallel_grads(model: nn.Module, *, group=None, counter=None) -> None:
    """Sum over the group the gradients of replicated parameters used on sequence slices
    (LayerNorms, row-parallel biases): each rank saw only T/t positions. Call after backward."""
    for p in model.parameters():
        if getattr(p, "sequence_parallel", False) and p.grad is not None:
            p.grad = all_reduce(p.grad, group=group, counter=counter, phase="backward",
                                label="sequence-parallel grads")
