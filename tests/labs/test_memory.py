"""labs.formulas.memory: the estimator's model-state bytes equal the bytes of real tensors, exactly;
its activation figure matches what autograd saves up to the small tensors it leaves out."""
from __future__ import annotations

import pytest
import torch

from labs.formulas import cost, memory
from labs.data import get_batch, regression_batch
from labs.models import MLP, TinyGPT, TinyGPTConfig
from labs.messages import text
from labs.numerics import assert_close
from tests.support.messages import said

pytestmark = pytest.mark.numerics

CONFIG = TinyGPTConfig(vocab_size=96, block_size=32, n_layer=2, n_head=4, n_embd=32)


def _one_step(model, x, y, optimizer):
    _, loss = model(x, y)
    loss.backward()
    optimizer.step()


@pytest.mark.parametrize("name, make_opt", [
    ("sgd", lambda p: torch.optim.SGD(p, lr=0.1)),
    ("sgd_momentum", lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
    ("adam", lambda p: torch.optim.Adam(p, lr=1e-3)),
    ("adam", lambda p: torch.optim.AdamW(p, lr=1e-3)),
])
def test_fp32_model_states_equal_real_tensor_bytes(name, make_opt):
    model = TinyGPT(CONFIG)
    opt = make_opt(model.parameters())
    _one_step(model, *get_batch(0, 4, CONFIG.block_size), opt)
    measured = memory.measured_model_state_bytes(model, opt)
    assert measured == memory.model_state_bytes(model.num_params(), name, "fp32")


def test_mixed_precision_with_fp32_master_weights_equals_real_tensor_bytes():
    model = MLP([16, 64, 64, 4]).to(torch.bfloat16)  # the weights the model computes with
    master = [p.detach().float().requires_grad_() for p in model.parameters()]  # fp32 copy
    opt = torch.optim.Adam(master, lr=1e-3)
    x, y = regression_batch(0, 8, 16, 4)
    _, loss = model(x.bfloat16(), y.bfloat16())
    loss.backward()
    for m, p in zip(master, model.parameters()):
        m.grad = p.grad.float()
    opt.step()
    for m in master:
        m.grad = None  # fp32 grads are a transient copy, not a state kept between steps
    measured = memory.measured_model_state_bytes(model, opt, master_params=master)
    expected = memory.model_state_bytes(model.num_params(), "adam", "mixed")
    assert measured == expected
    assert expected.total == 16 * model.num_params()


def test_chapter_numbers(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")  # the verdict's English text
    assert_close(memory.model_state_bytes(110e6, "adam").params, 0.44e9, dtype="float64")
    assert_close(memory.model_state_bytes(110e6, "adam").total, 1.76e9, dtype="float64")  # not 3.5 GB
    assert_close(memory.model_state_bytes(1.5e9, "adam", "mixed").total, 24e9, dtype="float64")
    report = cost.fits_on_one_card(110e6, 40e9)
    assert report.fits and "fits" in report.verdict
    assert not cost.fits_on_one_card(1.5e9, 32e9, precision="mixed").fits  # 24 GB > 70 %


def test_transformer_params_exact():
    for config in (CONFIG, TinyGPTConfig(vocab_size=50, block_size=16, n_layer=3, n_head=2,
                                         n_embd=24)):
        shape = memory.TransformerShape.from_config(config)
        assert memory.transformer_params(shape) == TinyGPT(config).num_params()


def test_activation_estimate_against_autograd_saved_tensors():
    """Per layer the measurement exceeds the formula by exactly the small tensors the formula
    leaves out: the LayerNorm mean and rstd (2 x 2 x s·b fp32) and the causal mask (s² bool)."""
    batch, s = 4, CONFIG.block_size
    x, y = get_batch(0, batch, s)
    shape = memory.TransformerShape.from_config(CONFIG)
    deeper = TinyGPTConfig(**{**CONFIG.__dict__, "n_layer": CONFIG.n_layer + 1})
    per_layer = (memory.measured_activation_bytes(TinyGPT(deeper), x, y)
                 - memory.measured_activation_bytes(TinyGPT(CONFIG), x, y))
    estimate = memory.activation_bytes(shape, batch)
    assert per_layer - estimate.per_layer == 2 * 2 * s * batch * 4 + s * s
    total = memory.measured_activation_bytes(TinyGPT(CONFIG), x, y)
    assert 0 <= total - estimate.total < 0.05 * estimate.total


def test_dropout_formula_is_the_papers():
    shape = memory.TransformerShape(layers=1, hidden=1024, heads=16, seq_len=2048, vocab=1)
    s, b, h, a = 2048, 1, 1024, 16
    got = memory.activation_bytes(shape, b, bytes_per_element=2, dropout=True).per_layer
    assert got == 34 * s * b * h + 5 * a * s * s * b  # Korthikanti et al. 2022, eq. (1)


def test_bad_input():
    with pytest.raises(ValueError, match="optimizer"):
        memory.model_state_bytes(10, "lion")
    with pytest.raises(ValueError, match="precision"):
        memory.model_state_bytes(10, "adam", "fp8")
    with pytest.raises(ValueError, match="card_bytes"):
        cost.fits_on_one_card(10, 0)


def test_bad_input_in_both_languages(monkeypatch):
    for lang in ("zh", "en"):
        monkeypatch.setenv("LABS_LANG", lang)
        with pytest.raises(ValueError) as info:
            memory.model_state_bytes(10, "lion")
        said(info.value, "memory.unknown_optimizer", lang=lang, optimizer="lion")
        with pytest.raises(ValueError) as info:
            cost.fits_on_one_card(10, 0)
        assert str(info.value) == text("cost.card_bytes_not_positive", lang=lang, card_bytes=0)
