"""The data every notebook shares: a character-level text corpus and synthetic regression batches.

Batches are a pure function of ``(seed, step, split)``: every rank computes the same global
batch without any communication and keeps its own slice of it (``shard_batch``). That is what
lets a parallel run be compared, step by step, with the single-process reference::

    x, y = get_batch(step, batch_size=8, block_size=32, seed=0)    # (8, 32) each, same on all ranks
    x, y = shard_batch(x, y, rank, world_size)                      # (8 // world_size, 32) each

The corpus (``labs/assets/corpus.txt``) is the docstrings of CPython standard-library modules,
built by ``tools/make_corpus.py``.

Owns: the corpus, its tokenizer and the seeded batches. Must not: communicate, touch the global RNG,
print, or import a parallelism package, the checks or the grader.
"""
from __future__ import annotations

import hashlib
from importlib import resources

import torch
from torch import Tensor

from labs.messages import text as _t

__all__ = ["SPLITS", "load_corpus", "CharTokenizer", "train_val_split", "corpus_tokens",
           "seeded_generator", "get_batch", "shard_batch", "regression_batch"]

SPLITS = ("train", "val")


def load_corpus() -> str:
    """The course's English text corpus (about 300 KB of printable ASCII and newlines)."""
    return resources.files("labs").joinpath("assets/corpus.txt").read_text(encoding="ascii")


class CharTokenizer:
    """One token per character; the vocabulary is the sorted set of characters in ``text``
    (the course corpus by default, under 100 symbols)."""

    def __init__(self, text: str | None = None) -> None:
        self.chars = sorted(set(load_corpus() if text is None else text))
        if any(ord(ch) > 255 for ch in self.chars):
            raise ValueError(_t("models.tokenizer_codes"))
        # ids[byte] = token id of that character, -1 for characters outside the vocabulary
        self._ids = torch.full((256,), -1, dtype=torch.long)
        self._ids[torch.tensor([ord(ch) for ch in self.chars], dtype=torch.long)] = torch.arange(len(self.chars))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> Tensor:
        """str -> LongTensor of token ids, shape (len(text),)."""
        unknown = set(text) - set(self.chars)
        if unknown:
            raise ValueError(_t("models.unknown_characters", chars=sorted(unknown)[:10],
                                vocab_size=self.vocab_size))
        codes = torch.frombuffer(bytearray(text.encode("latin-1")), dtype=torch.uint8)  # one byte per character
        return self._ids[codes.long()]

    def decode(self, ids: Tensor | list[int]) -> str:
        """Token ids (a 1-D tensor or a list of ints) -> str."""
        if isinstance(ids, Tensor):
            ids = ids.tolist()
        return "".join(self.chars[i] for i in ids)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"


def train_val_split(data: Tensor, val_fraction: float = 0.1) -> tuple[Tensor, Tensor]:
    """Split a 1-D token tensor into its first (1 - val_fraction) and its last val_fraction."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(_t("models.val_fraction_out_of_range", val_fraction=val_fraction))
    n_train = int(len(data) * (1.0 - val_fraction))
    return data[:n_train], data[n_train:]


def corpus_tokens(split: str = "train") -> Tensor:
    """The encoded corpus, train (first 90 %) or val (last 10 %) part, as a 1-D LongTensor."""
    if split not in SPLITS:
        raise ValueError(_t("models.unknown_split", split=split, splits=SPLITS))
    text = load_corpus()
    train, val = train_val_split(CharTokenizer(text).encode(text))
    return train if split == "train" else val


def seeded_generator(*keys: object) -> torch.Generator:
    """A CPU generator whose seed is a stable hash of ``keys`` (the same in every process,
    unlike Python's ``hash``), so that distinct (seed, step, split) give independent streams."""
    digest = hashlib.blake2b(repr(keys).encode(), digest_size=8).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest, "little") & (2**63 - 1))


def get_batch(step: int, batch_size: int, block_size: int, *, seed: int = 0,
              split: str = "train") -> tuple[Tensor, Tensor]:
    """The global batch of ``step``: inputs x and next-character targets y, LongTensors (B, T).

    Row b is a random window ``data[i : i + T]`` of the corpus and its target is the same window
    shifted by one character. Deterministic in (seed, step, split).
    """
    data = corpus_tokens(split)
    if not 1 <= block_size < len(data):
        raise ValueError(_t("models.block_size_out_of_range", block_size=block_size,
                            most=len(data) - 1, split=split))
    if batch_size < 1:
        raise ValueError(_t("models.batch_size_too_small", batch_size=batch_size))
    generator = seeded_generator("get_batch", seed, split, step)
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=generator)  # (B,)
    offsets = starts[:, None] + torch.arange(block_size)  # (B, 1) + (T,) -> (B, T)
    return data[offsets], data[offsets + 1]  # (B, T), (B, T)


def shard_batch(x: Tensor, y: Tensor, rank: int, world_size: int) -> tuple[Tensor, Tensor]:
    """Rank ``rank``'s contiguous slice of a global batch along dim 0 (batch_size / world_size rows)."""
    batch_size = x.size(0)
    if y.size(0) != batch_size:
        raise ValueError(_t("models.rows_differ", x_rows=batch_size, y_rows=y.size(0)))
    if not 0 <= rank < world_size:
        raise ValueError(_t("models.rank_out_of_range", rank=rank, last=world_size - 1,
                            world_size=world_size))
    if batch_size % world_size:
        raise ValueError(_t("models.batch_not_divisible", batch_size=batch_size,
                            world_size=world_size,
                            example=world_size * max(1, batch_size // world_size)))
    rows = batch_size // world_size
    return x[rank * rows:(rank + 1) * rows], y[rank * rows:(rank + 1) * rows]


def regression_batch(step: int, batch_size: int, in_features: int, out_features: int, *,
                     seed: int = 0, noise: float = 0.01) -> tuple[Tensor, Tensor]:
    """A synthetic regression batch: x ~ N(0, 1) of shape (B, in_features) and
    y = x @ W.T + noise * N(0, 1) of shape (B, out_features).

    The "teacher" W depends only on (seed, in_features, out_features), so it is the same at every
    step; x and the noise are deterministic in (seed, step).
    """
    teacher = torch.randn(out_features, in_features,
                          generator=seeded_generator("teacher", seed, in_features, out_features))
    teacher /= in_features ** 0.5  # keeps y at unit scale, whatever the width
    generator = seeded_generator("regression_batch", seed, step)
    x = torch.randn(batch_size, in_features, generator=generator)  # (B, in)
    y = x @ teacher.T  # (B, in) x (in, out) -> (B, out)
    return x, y + noise * torch.randn(batch_size, out_features, generator=generator)
