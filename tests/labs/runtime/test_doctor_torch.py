"""labs doctor checks torch as a range: the pinned version is tested, others in TORCH_RANGE get a
note, others outside it a warning, and only an API the notebooks need and torch lacks is a problem."""

from __future__ import annotations

import importlib
import io

import pytest
import torch

from labs import messages
from labs.runtime import doctor as doctor_module
from labs.runtime import launcher
from labs.torch_versions import PINNED_TORCH, TORCH_RANGE, missing_torch_apis, torch_support
from tests.support.messages import found_in, pattern


@pytest.mark.parametrize("version, expected", [
    (PINNED_TORCH, "tested"), (PINNED_TORCH + "+cpu", "tested"), (PINNED_TORCH + "+cu128", "tested"),
    ("2.6.0", "in_range"), ("2.12.1", "in_range"), ("2.14.0a0+git1234", "in_range"),
    ("2.9.1+cu126", "in_range"), ("2.5.1", "too_old"), ("2.4.0", "too_old"), ("1.13.1", "too_old"),
    ("3.0.0", "too_new"), ("nightly", "too_new"),
])
def test_torch_support(version, expected):
    assert torch_support(version) == expected


def test_the_range_starts_where_the_apis_exist():
    assert TORCH_RANGE[0] <= tuple(int(p) for p in PINNED_TORCH.split(".")[:2]) < TORCH_RANGE[1]
    assert missing_torch_apis() == []  # the installed torch has every API the notebooks use


def test_a_missing_api_is_named_with_its_notebooks(monkeypatch):
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name == "torch.distributed.pipelining":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", fake)
    assert missing_torch_apis() == [("torch.distributed.pipelining.PipelineStage", "2.3, 2.4")]


def _doctor(monkeypatch, lang, version, missing=()):
    monkeypatch.setenv(messages.LANG_ENV, lang)
    monkeypatch.setattr(torch, "__version__", version)
    monkeypatch.setattr(doctor_module, "missing_torch_apis", lambda: list(missing))
    # the all-reduces are real in test_launcher.py; here only the torch lines matter
    monkeypatch.setattr(launcher, "launch",
                        lambda fn, n, **kw: [float(n * (n + 1) // 2)] * n)
    out = io.StringIO()
    ok = doctor_module.doctor(out=out)
    return ok, out.getvalue()


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_another_torch_in_the_range_is_a_note_not_a_problem(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, "2.12.0+cpu")
    assert ok, out
    assert "2.12.0+cpu" in out and PINNED_TORCH in out
    found_in(out, "doctor.torch_in_range", lang=lang, version="2.12.0+cpu", pinned=PINNED_TORCH)


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_a_torch_past_the_range_is_a_warning_not_a_problem(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, "3.1.0")
    assert ok, out
    found_in(out, "doctor.torch_too_new", lang=lang, version="3.1.0", pinned=PINNED_TORCH)


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_a_missing_api_is_a_problem(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, "2.5.1",
                      missing=[("torch.distributed.fsdp.fully_shard", "2.4")])
    assert not ok
    assert "torch.distributed.fsdp.fully_shard" in out
    found_in(out, "doctor.torch_too_old", lang=lang, version="2.5.1", low="2.6",
             pinned=PINNED_TORCH)


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_the_pinned_torch_says_nothing_more(monkeypatch, lang):
    ok, out = _doctor(monkeypatch, lang, PINNED_TORCH + "+cpu")
    assert ok
    for key in ("doctor.torch_in_range", "doctor.torch_too_new", "doctor.torch_too_old"):
        assert not pattern(key, lang=lang).search(out), (key, out)
