"""The two tiny models every notebook shares: ``TinyGPT`` (a character-level GPT) and ``MLP``.

Both are deterministic: the weights come from a local ``torch.Generator`` seeded with ``seed``,
so the same seed gives bit-identical weights in every process (every rank can build the same
model without a broadcast) and the global RNG is never touched.

``TinyGPT`` follows nanoGPT (karpathy/nanoGPT ``model.py``) and keeps its module names
(``transformer.h[i].attn.c_attn`` ...), so tensor-parallel code can cut its shards out of these
weights and pipeline stages can run a slice of its blocks::

    model = TinyGPT(TinyGPTConfig(vocab_size=96, block_size=32, n_layer=2, n_head=2, n_embd=32))
    logits, loss = model(idx, targets)
    # the same thing, one stage at a time:
    logits = model.head(model.run_blocks(model.embed(idx), start=0, stop=2))

Both models follow one calling convention, ``model(x, targets) -> (output, loss)``, so one
training loop (``labs.reference.train_reference``) serves both. The tensor-parallel TinyGPT
(``labs.tensor_parallel.model.ParallelTinyGPT``) has the same ``embed`` / ``blocks`` / ``head``
interface, so pipeline stages (``labs.pipeline.GPTStage``) can be cut from either.

Owns: TinyGPT, MLP and the loss convention. Must not: communicate, touch the global RNG, print, or
import a parallelism package, the checks or the grader.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from labs.messages import text

__all__ = ["TinyGPTConfig", "TinyGPT", "MLP", "Block", "CausalSelfAttention", "GPTMLP",
           "causal_attention", "gpt_embedding", "language_model_loss", "init_from_seed",
           "ACTIVATIONS", "INIT_STD"]

INIT_STD = 0.02  # nanoGPT / GPT-2 initialisation of weights and embeddings


@dataclass(frozen=True)
class TinyGPTConfig:
    """Shape of a TinyGPT. ``n_embd`` must be a multiple of ``n_head`` (head size = n_embd / n_head)."""

    vocab_size: int
    block_size: int  # context length: the longest sequence the model accepts
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0  # keep 0.0 whenever results are compared: dropout draws from the global RNG
    bias: bool = True  # bias in the Linear and LayerNorm layers

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(text("models.config_not_positive", name=name, value=value))
        if self.n_embd % self.n_head:
            divisors = [h for h in range(1, self.n_embd + 1) if self.n_embd % h == 0]
            raise ValueError(text(
                "models.n_embd_not_divisible", n_embd=self.n_embd, n_head=self.n_head,
                example=self.n_head * max(1, round(self.n_embd / self.n_head)),
                divisors=divisors[:8]))
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(text("models.dropout_out_of_range", dropout=self.dropout))


def causal_attention(q: Tensor, k: Tensor, v: Tensor, dropout: nn.Module | None = None) -> Tensor:
    """Softmax attention where position t sees positions <= t. q, k, v: (B, nh, T, hs) -> (B, nh, T, hs).

    Written out (no fused kernel) so every step can be read and re-used by the tensor-parallel
    attention, where each rank runs it on its own heads.
    """
    T, head_size = q.size(-2), q.size(-1)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_size))  # (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
    future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(diagonal=1)  # (T, T), True above the diagonal
    att = att.masked_fill(future, float("-inf"))  # a token may not look at later tokens
    att = F.softmax(att, dim=-1)  # (B, nh, T, T), each row sums to 1
    if dropout is not None:
        att = dropout(att)
    return att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with one fused q/k/v projection (``c_attn``)."""

    def __init__(self, config: TinyGPTConfig) -> None:
        super().__init__()
        self.n_head, self.n_embd = config.n_head, config.n_embd
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)  # q, k, v side by side
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        B, T, C = x.size()  # batch size, sequence length, embedding width (n_embd)
        hs = C // self.n_head  # head size
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)  # (B, T, 3C) -> 3 x (B, T, C)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        y = causal_attention(q, k, v, self.attn_dropout)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C): the heads side by side again
        return self.resid_dropout(self.c_proj(y))  # (B, T, C)


class GPTMLP(nn.Module):
    """The transformer's feed-forward layer: widen 4x, GELU, project back."""

    def __init__(self, config: TinyGPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        x = self.gelu(self.c_fc(x))  # (B, T, C) -> (B, T, 4C)
        return self.dropout(self.c_proj(x))  # (B, T, 4C) -> (B, T, C)


class Block(nn.Module):
    """One pre-LayerNorm transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, config: TinyGPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = GPTMLP(config)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))  # (B, T, C)
        return x + self.mlp(self.ln_2(x))  # (B, T, C)


class TinyGPT(nn.Module):
    """A nanoGPT-style language model: ``forward = head(run_blocks(embed(idx)))``.

    ``lm_head`` is a separate Linear (not tied to ``wte``), so every weight belongs to exactly
    one pipeline stage.
    """

    # The modules embed() and head() use, by path: a pipeline stage holds them (labs.pipeline).
    EMBED_MODULES = ("transformer.wte", "transformer.wpe", "transformer.drop")
    HEAD_MODULES = ("transformer.ln_f", "lm_head")

    def __init__(self, config: TinyGPTConfig, seed: int = 0) -> None:
        super().__init__()
        self.config = config
        # Build on the meta device (no memory, no random numbers), then allocate and fill every
        # tensor from a local generator: see init_from_seed.
        with torch.device("meta"):
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),  # token embedding
                wpe=nn.Embedding(config.block_size, config.n_embd),  # position embedding
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList(Block(config) for _ in range(config.n_layer)),
                ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
            ))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # GPT-2 scales the residual projections by 1/sqrt(2 * n_layer): each block adds two of
        # them to the residual stream, whose variance would otherwise grow with depth.
        init_from_seed(self, seed, residual_std=INIT_STD / math.sqrt(2 * config.n_layer))

    @property
    def blocks(self) -> nn.ModuleList:
        """The transformer blocks in order (``transformer.h``); ``blocks[i](x)`` runs block i."""
        return self.transformer.h

    def embed(self, idx: Tensor) -> Tensor:
        """Token ids (B, T) -> token + position embeddings (B, T, C)."""
        return gpt_embedding(self.transformer.wte, self.transformer.wpe, idx,
                             drop=self.transformer.drop)

    def run_blocks(self, x: Tensor, start: int = 0, stop: int | None = None) -> Tensor:
        """Run blocks ``start .. stop-1`` (all by default) on x (B, T, C): one pipeline stage's share."""
        for block in self.blocks[start:stop]:
            x = block(x)  # (B, T, C)
        return x

    def head(self, x: Tensor) -> Tensor:
        """Final LayerNorm and the language-model head: (B, T, C) -> logits (B, T, vocab_size)."""
        return self.lm_head(self.transformer.ln_f(x))  # (B, T, C) x (C, V) -> (B, T, V)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """idx (B, T) -> (logits (B, T, V), mean cross-entropy against targets (B, T), or None)."""
        logits = self.head(self.run_blocks(self.embed(idx)))
        loss = None if targets is None else language_model_loss(logits, targets)
        return logits, loss

    def num_params(self, exclude_embeddings: bool = False) -> int:
        """Number of parameters; optionally without the embeddings (as in nanoGPT's counts)."""
        n = sum(p.numel() for p in self.parameters())
        if exclude_embeddings:
            n -= self.transformer.wte.weight.numel() + self.transformer.wpe.weight.numel()
        return n

    @torch.no_grad()
    def generate(self, idx: Tensor, max_new_tokens: int, *, temperature: float = 1.0,
                 seed: int = 0) -> Tensor:
        """Sample ``max_new_tokens`` tokens after idx (B, T) -> (B, T + max_new_tokens), seeded."""
        generator = torch.Generator(device=idx.device).manual_seed(seed)
        for _ in range(max_new_tokens):
            context = idx[:, -self.config.block_size:]  # (B, <= block_size)
            logits, _ = self(context)  # (B, T, V)
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)  # (B, V): next-token distribution
            next_id = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat((idx, next_id), dim=1)  # (B, T + 1)
        return idx


def gpt_embedding(wte: nn.Embedding, wpe: nn.Embedding, idx: Tensor, *,
                  drop: nn.Module | None = None) -> Tensor:
    """Token ids (B, T) -> token + position embeddings (B, T, C): the GPT embedding, written once
    for TinyGPT, its tensor-parallel version and the first pipeline stage."""
    B, T = idx.size()
    if T > wpe.num_embeddings:
        raise ValueError(text("models.sequence_too_long", length=T,
                              block_size=wpe.num_embeddings))
    pos = torch.arange(T, dtype=torch.long, device=idx.device)  # (T,)
    x = wte(idx) + wpe(pos)  # (B, T, C) + (T, C) -> (B, T, C)
    return x if drop is None else drop(x)


def language_model_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy of logits (B, T, V) against target ids (B, T); ids of -1 are ignored."""
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)  # (B*T, V) vs (B*T,)


ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU, "tanh": nn.Tanh, "identity": nn.Identity}


class MLP(nn.Module):
    """A plain stack of Linear layers, ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``, for the
    data-parallel demos. The activation sits between layers, not after the last one.

    ``forward(x, targets=None) -> (output, loss)`` with the mean squared error as loss, the same
    convention as TinyGPT. Weights are drawn from N(0, 1/fan_in) (LeCun), so a deep or wide stack
    keeps unit-scale activations; biases start at zero.
    """

    def __init__(self, sizes: list[int], seed: int = 0, activation: str = "gelu",
                 bias: bool = True) -> None:
        super().__init__()
        sizes = list(sizes)
        if len(sizes) < 2 or any(not isinstance(s, int) or s < 1 for s in sizes):
            raise ValueError(text("models.mlp_sizes", sizes=sizes))
        if activation not in ACTIVATIONS:
            raise ValueError(text("models.unknown_activation", activation=activation,
                                  choices=sorted(ACTIVATIONS)))
        self.sizes = sizes
        with torch.device("meta"):
            self.layers = nn.ModuleList(nn.Linear(n_in, n_out, bias=bias)
                                        for n_in, n_out in zip(sizes[:-1], sizes[1:]))
        self.activation = ACTIVATIONS[activation]()
        init_from_seed(self, seed, weight_std=lambda weight: weight.size(1) ** -0.5)

    def forward(self, x: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        for i, layer in enumerate(self.layers):
            x = layer(x)  # (B, sizes[i]) x (sizes[i], sizes[i+1]) -> (B, sizes[i+1])
            if i < len(self.layers) - 1:
                x = self.activation(x)
        loss = None if targets is None else F.mse_loss(x, targets)
        return x, loss

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def init_from_seed(model: nn.Module, seed: int, *, weight_std=INIT_STD,
                   residual_std: float | None = None) -> nn.Module:
    """Allocate ``model``'s tensors on the CPU and fill them from ``torch.Generator().manual_seed(seed)``.

    Parameters are visited in registration order, so the same seed gives the same bits in any
    process; the global RNG is never used. LayerNorm weights start at 1, biases at 0; the other
    weights (Linear, Embedding) are normal with std ``weight_std`` (a number, or a function of
    the weight), except ``c_proj`` weights, which get ``residual_std`` when it is given.
    """
    model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    layer_norm_weights = {id(m.weight) for m in model.modules() if isinstance(m, nn.LayerNorm)}
    with torch.no_grad():
        for name, param in model.named_parameters():
            if id(param) in layer_norm_weights:
                param.fill_(1.0)
            elif name.endswith("bias"):
                param.zero_()
            else:
                std = weight_std(param) if callable(weight_std) else weight_std
                if residual_std is not None and name.endswith("c_proj.weight"):
                    std = residual_std
                param.normal_(0.0, std, generator=generator)
    return model
