"""The figures of notebooks 2.2 (labs.tensor_parallel.plots) and 2.3 (labs.pipeline.plots) are
readable in both languages: drawn without a missing glyph, at the course's dpi, no legend over
data, titles or labels (figure_checks.assert_readable); their own texts are Chinese in the
Chinese edition and carry no Chinese in the English one.

Inputs are small and of the kind the notebooks pass (the measured numbers of a 2-core machine);
titles, labels and modes that a notebook passes are drawn as given, so the language test uses
the functions' defaults or looks at the texts the functions write themselves.
"""
from __future__ import annotations

import re

import pytest


from tests.support import figure_checks  # noqa: E402
from labs import pipeline as pp  # noqa: E402
from labs.pipeline import plots as pplots  # noqa: E402
from labs.tensor_parallel import plots as tplots  # noqa: E402

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

LANGS = ["zh", "en"]


def _texts(fig) -> list[str]:
    """Titles, axis labels and legend entries of every axes of ``fig``."""
    out = []
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return [t for t in out if t.strip()]


def _check_language(fig, lang: str, own: list[str]) -> None:
    """``own``: the texts the function wrote itself (not passed in by the caller)."""
    texts = _texts(fig)
    for piece in own:
        assert piece in texts or any(piece in t for t in texts), (piece, texts)
    if lang == "zh":
        assert all(CJK.search(t) for t in own), own
    else:
        assert not any(CJK.search(t) for t in texts), texts


@pytest.fixture(params=LANGS)
def lang(request, monkeypatch):
    monkeypatch.setenv("LABS_LANG", request.param)
    return request.param


# --- 2.2 -----------------------------------------------------------------------------------------

def test_compute_vs_comm(lang):
    from labs.notebook.plots import label

    # notebook 2.2, section 6: one TP block at t = 1, 2, 4 on 2 cores (seconds)
    fig = tplots.plot_compute_vs_comm((1, 2, 4), [0.039, 0.026, 0.0175], [0.0, 0.0144, 0.0463],
                                      title="one TP block, forward + backward")
    figure_checks.assert_readable(fig)
    own = [label("plots.kind_compute"), label("tensor_parallel.fig_communication"),
           label("tensor_parallel.fig_step_time"), label("tensor_parallel.fig_efficiency"),
           label("tensor_parallel.fig_efficiency_legend")]
    texts = _texts(fig) + [fig.axes[1].get_ylabel()]
    assert all(piece in texts for piece in own), (own, texts)
    if lang == "zh":
        assert CJK.search(fig.axes[0].get_ylabel()) and CJK.search(fig.axes[1].get_ylabel())
    else:
        assert not any(CJK.search(t) for t in texts), texts


def test_compute_vs_comm_gpu_like_efficiency_stays_clear_of_the_legend(lang):
    fig = tplots.plot_compute_vs_comm((1, 2, 4, 8), [0.08, 0.04, 0.02, 0.01],
                                      [0.0, 0.002, 0.003, 0.004], title="TP on GPUs")
    figure_checks.assert_readable(fig)


# --- 2.3 -----------------------------------------------------------------------------------------

def _sweep(offset: float = 0.0) -> dict:
    ms = [1, 2, 4, 8, 16]
    return {p: {m: [min(1.0, pp.bubble_fraction(p, m) + offset + 0.01 * r) for r in range(p)]
                for m in ms} for p in (2, 4)}


@pytest.mark.parametrize("offset, v", [(0.0, 1), (0.3, 1), (0.0, 2)])
def test_bubble(lang, offset, v):
    from labs.notebook.plots import label

    mode = pp.mode_label(pp.FixedTime(0.020, 0.040)) if offset == 0 else pp.REAL_COMPUTE
    fig = pplots.plot_bubble(_sweep(offset), mode=mode, v=v)
    figure_checks.assert_readable(fig)
    own = [label("pipeline.fig_bubble_title"), label("pipeline.fig_microbatches"),
           label("pipeline.fig_idle_share"), label("pipeline.fig_measured_p", p=2)]
    _check_language(fig, lang, own)


def test_fixed_time_mode_label_follows_the_language(lang):
    mode = pp.mode_label(pp.FixedTime(0.020, 0.040))
    assert "F=20 ms" in mode and "B=40 ms" in mode
    assert bool(CJK.search(mode)) == (lang == "zh")
    per_stage = pp.FixedTime([0.004, 0.006], [0.008, 0.012]).label
    assert "F=4/6 ms" in per_stage and "B=8/12 ms" in per_stage


def test_memory_defaults(lang):
    from labs.notebook.plots import label

    # notebook 2.3, section 2: peak in-flight micro-batches per rank, p=4, m=8
    fig = pplots.plot_memory({"GPipe": [8, 8, 8, 8], "1F1B": [4, 3, 2, 1]})
    figure_checks.assert_readable(fig)
    own = [label("pipeline.fig_peak_in_flight"), label("pipeline.fig_memory_title"),
           label("pipeline.fig_measured")]
    _check_language(fig, lang, own)


def test_memory_as_the_notebook_calls_it(lang):
    kib = {"GPipe": [96.0, 96.0, 96.0, 112.5], "1F1B": [48.0, 36.0, 24.0, 14.1]}
    fig = pplots.plot_memory(kib, ylabel="peak saved activations (KiB)",
                             title="activation memory per rank, p=4, m=8", mode="measured")
    figure_checks.assert_readable(fig)
    assert fig.axes[0].get_ylabel() == "peak saved activations (KiB)"  # as the caller gave it


def test_bars(lang):
    fig = pplots.plot_bars({"even by layers": 824.0, "balanced by cost": 656.3},
                           ylabel="step time (ms)", title="GPT-2-small-like costs, p=4, m=8, 1F1B",
                           mode=pp.mode_label(pp.FixedTime([0.004, 0.006], [0.008, 0.012])))
    figure_checks.assert_readable(fig)
    assert bool(CJK.search(fig.axes[0].get_title())) == (lang == "zh")  # the mode's words


def test_xy_own_figure(lang):
    by_p = {2: 0.2, 4: 0.38, 8: 0.636}
    fig = pplots.plot_xy(list(by_p), {"measured": list(by_p.values()),
                                      "formula": [pp.bubble_fraction(p, 4) for p in by_p]},
                         xlabel="stages p", ylabel="idle share of the step",
                         title="bubble vs stages at m=4", mode=pp.mode_label(pp.FixedTime(0.005, 0.010)))
    figure_checks.assert_readable(fig)
    assert bool(CJK.search(fig.axes[0].get_title())) == (lang == "zh")


def test_xy_into_two_axes(lang):
    from labs.notebook.plots import subplots

    sizes = [32, 16, 8, 4, 2, 1]
    fig, (ax1, ax2) = subplots(1, 2, figsize=(7, 2.8))
    assert pplots.plot_xy(sizes, {"1F1B, p=2": [13973, 17179, 15880, 11633, 6528, 4374]},
                          xlabel="micro-batch size (sequences)", ylabel="tokens / s",
                          title="throughput", mode=pp.REAL_COMPUTE, ax=ax1) is None
    pplots.plot_xy(sizes, {"1F1B, p=2": [1200.0, 1200.0, 600.0, 300.0, 150.0, 75.0]},
                   xlabel="micro-batch size (sequences)", ylabel="peak activations (KiB)",
                   title="memory", mode="measured", ax=ax2)
    fig.tight_layout()
    figure_checks.assert_readable(fig)
