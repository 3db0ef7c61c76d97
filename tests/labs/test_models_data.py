"""Tests of the shared models (labs.models), data (labs.data) and reference loop (labs.reference)."""
from __future__ import annotations

import hashlib
import math
import subprocess
import sys

import pytest
import torch

from labs.data import (CharTokenizer, get_batch, load_corpus, regression_batch, shard_batch,
                       train_val_split)
from labs.models import MLP, TinyGPT, TinyGPTConfig
from labs.numerics import assert_close
from labs.reference import tinygpt_reference, train_reference
from labs.messages import LANG_ENV, text
from tests.support.messages import pattern, said

pytestmark = pytest.mark.numerics

VOCAB = 96
TINY = TinyGPTConfig(vocab_size=VOCAB, block_size=32, n_layer=2, n_head=2, n_embd=32)


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """The errors for bad input are checked in English; test_errors_in_chinese checks zh."""
    monkeypatch.setenv(LANG_ENV, "en")


def weights_digest(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def assert_same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for name in sa:
        assert torch.equal(sa[name], sb[name]), name


# ---------------------------------------------------------------- models: determinism


def test_same_seed_gives_identical_weights():
    assert_same_weights(TinyGPT(TINY, seed=3), TinyGPT(TINY, seed=3))
    assert_same_weights(MLP([8, 16, 4], seed=3), MLP([8, 16, 4], seed=3))


def test_same_seed_gives_identical_weights_in_another_process():
    # another thread count and another global seed must not matter
    code = (
        "import hashlib, torch; torch.set_num_threads(1); torch.manual_seed(123)\n"
        "from labs.models import TinyGPT, TinyGPTConfig\n"
        f"m = TinyGPT(TinyGPTConfig(vocab_size={VOCAB}, block_size=32, n_layer=2, n_head=2, n_embd=32), seed=7)\n"
        "d = hashlib.sha256()\n"
        "for k, t in m.state_dict().items(): d.update(k.encode()); d.update(t.numpy().tobytes())\n"
        "print(d.hexdigest())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == weights_digest(TinyGPT(TINY, seed=7))


def test_different_seeds_give_different_weights():
    a, b = TinyGPT(TINY, seed=0), TinyGPT(TINY, seed=1)
    assert not torch.equal(a.lm_head.weight, b.lm_head.weight)
    assert not torch.equal(MLP([8, 4], seed=0).layers[0].weight, MLP([8, 4], seed=1).layers[0].weight)


def test_global_rng_is_untouched():
    before = torch.random.get_rng_state()
    TinyGPT(TINY, seed=0)
    MLP([8, 16, 4], seed=0)
    get_batch(0, 4, 16)
    regression_batch(0, 4, 8, 4)
    assert torch.equal(before, torch.random.get_rng_state())


def test_init_follows_nanogpt():
    model = TinyGPT(TINY, seed=0)
    block = model.transformer.h[0]
    assert torch.equal(block.ln_1.weight, torch.ones(32)) and torch.equal(block.ln_1.bias, torch.zeros(32))
    assert torch.equal(block.attn.c_attn.bias, torch.zeros(3 * 32))
    assert model.lm_head.bias is None
    assert model.transformer.wte.weight.std().item() == pytest.approx(0.02, rel=0.1)
    residual_std = 0.02 / math.sqrt(2 * TINY.n_layer)
    assert block.mlp.c_proj.weight.std().item() == pytest.approx(residual_std, rel=0.1)


# ---------------------------------------------------------------- models: forward


def test_tinygpt_shapes_and_module_names():
    model = TinyGPT(TINY)
    idx = torch.zeros(3, 20, dtype=torch.long)
    logits, loss = model(idx)
    assert logits.shape == (3, 20, VOCAB) and loss is None
    names = set(model.state_dict())
    for name in ("transformer.wte.weight", "transformer.wpe.weight", "transformer.h.1.ln_1.weight",
                 "transformer.h.1.attn.c_attn.weight", "transformer.h.1.attn.c_proj.weight",
                 "transformer.h.1.ln_2.weight", "transformer.h.1.mlp.c_fc.weight",
                 "transformer.h.1.mlp.c_proj.weight", "transformer.ln_f.weight", "lm_head.weight"):
        assert name in names
    assert model.transformer.h[0].attn.c_attn.weight.shape == (3 * 32, 32)
    assert model.transformer.h[0].mlp.c_fc.weight.shape == (4 * 32, 32)
    assert model.num_params() == sum(p.numel() for p in model.parameters())
    assert model.num_params(exclude_embeddings=True) == model.num_params() - (VOCAB + 32) * 32


def test_loss_at_init_is_about_log_vocab():
    x, y = get_batch(0, 8, 32)
    _, loss = TinyGPT(TINY)(x, y)
    assert loss.item() == pytest.approx(math.log(VOCAB), abs=0.15)


def test_embed_blocks_head_compose_to_forward_exactly():
    model = TinyGPT(TINY, seed=1)
    x, _ = get_batch(0, 4, 32)
    logits, _ = model(x)
    staged = model.head(model.run_blocks(model.run_blocks(model.embed(x), 0, 1), 1, 2))
    assert torch.equal(staged, logits)
    h = model.embed(x)
    for block in model.blocks:
        h = block(h)
    assert torch.equal(model.head(h), logits)


def test_attention_is_causal():
    model = TinyGPT(TINY, seed=0)
    x, _ = get_batch(0, 2, 32)
    changed = x.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % VOCAB  # change the future only
    assert_close(model(x)[0][:, :10], model(changed)[0][:, :10])


def test_sequence_longer_than_block_size_is_refused():
    with pytest.raises(ValueError, match="block_size=32"):
        TinyGPT(TINY)(torch.zeros(1, 33, dtype=torch.long))


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_embd=30, n_head=4), r"n_embd=30 is not divisible by n_head=4"),
    (dict(n_layer=0), r"n_layer must be a positive integer, got 0"),
    (dict(vocab_size=-5), r"vocab_size must be a positive integer"),
    (dict(dropout=1.0), r"dropout=1.0 must lie in \[0, 1\)"),
])
def test_config_validation(kwargs, message):
    fields = dict(vocab_size=VOCAB, block_size=32, n_layer=2, n_head=2, n_embd=32) | kwargs
    with pytest.raises(ValueError, match=message):
        TinyGPTConfig(**fields)


def test_mlp_shapes_loss_and_validation():
    mlp = MLP([8, 16, 16, 4], seed=0, activation="relu", bias=False)
    out, loss = mlp(torch.ones(5, 8), torch.zeros(5, 4))
    assert out.shape == (5, 4)
    assert_close(loss.item(), out.pow(2).mean().item())  # float32 results as Python floats
    assert len(mlp.layers) == 3 and mlp.num_params() == 8 * 16 + 16 * 16 + 16 * 4
    with pytest.raises(ValueError, match=pattern("models.mlp_sizes", sizes=[8])):
        MLP([8])
    with pytest.raises(ValueError, match=pattern("models.unknown_activation", activation="swish")):
        MLP([8, 4], activation="swish")


# ---------------------------------------------------------------- data


def test_corpus_is_printable_ascii_of_the_right_size():
    text = load_corpus()
    assert 200_000 <= len(text) <= 400_000
    assert all(ch == "\n" or " " <= ch <= "~" for ch in set(text))


def test_tokenizer_round_trip_and_small_vocab():
    tokenizer = CharTokenizer()
    assert tokenizer.vocab_size < 100 and tokenizer.vocab_size == VOCAB
    text = load_corpus()[:2000]
    ids = tokenizer.encode(text)
    assert ids.dtype == torch.long and ids.shape == (2000,)
    assert tokenizer.decode(ids) == text and tokenizer.decode(ids.tolist()) == text
    with pytest.raises(ValueError) as info:
        tokenizer.encode("caf\u00e9")
    assert "\u00e9" in said(info.value, "models.unknown_characters")["chars"]


def test_train_val_split():
    train, val = train_val_split(torch.arange(100), val_fraction=0.1)
    assert torch.equal(torch.cat([train, val]), torch.arange(100)) and len(val) == 10


def test_get_batch_is_deterministic_and_varies_with_step_seed_split():
    x, y = get_batch(5, 8, 32, seed=1)
    assert x.shape == y.shape == (8, 32) and x.dtype == torch.long
    x2, y2 = get_batch(5, 8, 32, seed=1)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert torch.equal(x[:, 1:], y[:, :-1])  # targets are the inputs shifted by one
    assert not torch.equal(x, get_batch(6, 8, 32, seed=1)[0])
    assert not torch.equal(x, get_batch(5, 8, 32, seed=2)[0])
    assert not torch.equal(x, get_batch(5, 8, 32, seed=1, split="val")[0])


def test_shard_batch_slices_concatenate_to_the_full_batch():
    x, y = get_batch(0, 8, 16)
    shards = [shard_batch(x, y, rank, 4) for rank in range(4)]
    assert all(sx.shape == (2, 16) for sx, _ in shards)
    assert torch.equal(torch.cat([sx for sx, _ in shards]), x)
    assert torch.equal(torch.cat([sy for _, sy in shards]), y)
    with pytest.raises(ValueError) as info:
        shard_batch(x, y, 0, 3)
    said(info.value, "models.batch_not_divisible", batch_size=8, world_size=3)
    with pytest.raises(ValueError, match="rank=4"):
        shard_batch(x, y, 4, 4)


def test_regression_batch_has_a_fixed_teacher():
    x, y = regression_batch(0, 64, 8, 3, seed=0)
    assert x.shape == (64, 8) and y.shape == (64, 3)
    x2, y2 = regression_batch(0, 64, 8, 3, seed=0)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    x3, y3 = regression_batch(1, 64, 8, 3, seed=0)
    assert not torch.equal(x, x3)
    w0 = torch.linalg.lstsq(x, y).solution
    w1 = torch.linalg.lstsq(x3, y3).solution
    assert_close(w0, w1, atol=0.02, rtol=0)  # same map at every step, up to the noise


# ---------------------------------------------------------------- reference training


def test_reference_training_loss_decreases_and_is_reproducible():
    result = tinygpt_reference(TINY, steps=30, batch_size=8, lr=3e-3, seed=0)
    assert len(result.losses) == 30
    assert result.losses[0] == pytest.approx(math.log(VOCAB), abs=0.15)
    assert sum(result.losses[-5:]) / 5 < result.losses[0] - 0.8
    assert set(result.grads_of_last_step) == set(dict(TinyGPT(TINY).named_parameters()))
    again = tinygpt_reference(TINY, steps=3, batch_size=8, lr=3e-3, seed=0)
    assert again.losses == result.losses[:3]


def test_reference_loop_with_mlp_sgd_and_clipping():
    model = MLP([8, 32, 3], seed=0)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    result = train_reference(model, lambda step: regression_batch(step, 32, 8, 3),
                             steps=40, lr=0.1, optimizer="sgd", grad_clip=1.0)
    assert result.losses[-1] < 0.5 * result.losses[0]
    assert not torch.equal(result.state_dict["layers.0.weight"], initial["layers.0.weight"])
    assert torch.equal(result.state_dict["layers.0.weight"], model.layers[0].weight)
    with pytest.raises(ValueError, match="optimizer='adam' is unknown"):
        train_reference(model, lambda step: regression_batch(step, 4, 8, 3), steps=1, lr=0.1,
                        optimizer="adam")


def test_errors_in_chinese(monkeypatch):
    monkeypatch.setenv(LANG_ENV, "zh")
    fields = dict(vocab_size=VOCAB, block_size=32, n_layer=2, n_head=2, n_embd=32)
    zh = dict(lang="zh")
    with pytest.raises(ValueError) as info:
        TinyGPTConfig(**fields | dict(n_embd=30, n_head=4))
    said(info.value, "models.n_embd_not_divisible", **zh, n_embd=30, n_head=4, example=32)
    with pytest.raises(ValueError) as info:
        MLP([8, 4], activation="swish")
    said(info.value, "models.unknown_activation", **zh, activation="swish")
    x, y = get_batch(0, 8, 16)
    with pytest.raises(ValueError) as info:
        shard_batch(x, y, 0, 3)
    said(info.value, "models.batch_not_divisible", **zh, batch_size=8, world_size=3)
    with pytest.raises(ValueError) as info:
        CharTokenizer().encode("caf\u00e9")
    assert "\u00e9" in said(info.value, "models.unknown_characters", **zh)["chars"]
    with pytest.raises(ValueError) as info:
        train_reference(MLP([8, 3]), lambda step: regression_batch(step, 4, 8, 3), steps=1,
                        lr=0.1, optimizer="adam")
    assert str(info.value) == text("models.unknown_optimizer", **zh, name="adam")
