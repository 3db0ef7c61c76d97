"""Every figure of notebooks 2.0 and 2.1, and the shared ones of labs.notebook.plots, is readable in both
languages: no missing glyph, the course's dpi, no legend on data or on a label
(figure_checks.assert_readable). Built from inputs of the kind the notebooks pass; the texts the
figure functions write themselves are Chinese in zh and have no Chinese at all in en (titles and
axis labels a notebook passes stay as it gives them).
"""
from __future__ import annotations

import re

import pytest
import torch

from tests.support import figure_checks
from labs.formulas import memory
from labs.notebook import fonts, plots
from labs.messages import text
from tests.support.messages import said
from labs.data_parallel import plots as dp_plots
from labs.notebook.timeline import REAL_COMPUTE, SIMULATED, Event, Timeline

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
KiB = 2**10
SIZES = [KiB * 4**k for k in range(9)]  # 1 KiB .. 64 MiB, as notebook 2.0 sweeps


def _sweep(alpha_s, bus_bytes_per_s, world_size=4):
    beta = bus_bytes_per_s / (2 * (world_size - 1) / world_size)
    return [alpha_s + s / beta for s in SIZES]


def _texts(fig) -> dict[str, list[str]]:
    """The figure's texts: its own (titles, axis labels, legends, tick labels, in-axes text)."""
    out = {"labels": [], "legend": [], "ticks": []}
    if fig._suptitle is not None:
        out["labels"].append(fig._suptitle.get_text())
    for ax in fig.axes:
        out["labels"] += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        if legend is not None:
            out["legend"] += [t.get_text() for t in legend.get_texts()]
        out["ticks"] += [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels()]
        out["ticks"] += [t.get_text() for t in ax.texts]
    return out


# --- the figures, built as the notebooks build them ------------------------------------------

def collective_before_after():
    results = [(torch.arange(8.0) + 10 * r, torch.full((8,), 6.0 + 40 * r)) for r in range(4)]
    return plots.plot_collective(results, title="all_reduce(op=SUM)")


def collective_ring_stages():
    n = 4
    results = []
    for rank in range(n):
        before = torch.arange(8.0) + 10 * rank
        owned = torch.full((8,), float("nan"))
        owned[2 * rank: 2 * rank + 2] = before[2 * rank: 2 * rank + 2] * n + 60
        results.append((before, owned, torch.arange(8.0) * n + 60))
    return plots.plot_collective(results, title="ring all-reduce = reduce-scatter + all-gather",
                                 stages=("before", "after reduce-scatter (own chunk)",
                                         "after all-gather"))


def bandwidth_bus():
    sweep = {"ring (hand, isend/irecv)": _sweep(3e-3, 0.75e9),
             "dist.all_reduce (gloo)": _sweep(2.6e-3, 0.9e9)}
    return plots.plot_bandwidth(SIZES, sweep, title="all-reduce on 4 ranks (gloo)", world_size=4)


def bandwidth_algorithm():
    sweep = {"ring": _sweep(5e-6, 100e9), "nccl": _sweep(4e-6, 150e9)}
    return plots.plot_bandwidth(SIZES, sweep)


def _pipeline(mode=SIMULATED, p=4, m=8, t_f=1.0):
    """A GPipe-like timeline: every stage forwards m micro-batches, then backwards them."""
    events = []
    for stage in range(p):
        row, clock = [], stage * t_f
        for mb in range(m):
            row.append(Event("F", mb, stage, clock, clock + t_f))
            clock += t_f
        clock += 2 * (p - 1 - stage) * t_f
        for mb in reversed(range(m)):
            row.append(Event("B", mb, stage, clock, clock + 2 * t_f))
            clock += 2 * t_f
        events.append(row)
    return Timeline(events, mode=mode, info={"forward_s": t_f, "n_stages": p})


def _layerwise():
    """Layer-wise model parallelism on 2 ranks, real compute: forward, send, recv, backward."""
    ms = 1e-3
    rank0 = [("forward", None, 0, 0, 4 * ms), ("send", None, 0, 4 * ms, 5 * ms),
             ("recv", None, 0, 13 * ms, 14 * ms), ("backward", None, 0, 14 * ms, 22 * ms)]
    rank1 = [("recv", None, 1, 4 * ms, 5 * ms), ("forward", None, 1, 5 * ms, 9 * ms),
             ("backward", None, 1, 9 * ms, 13 * ms), ("send", None, 1, 13 * ms, 14 * ms)]
    return Timeline.from_ranks([rank0, rank1], mode=REAL_COMPUTE)


def _overlap():
    """The lanes of tensor-parallel backward overlap (2.2): compute and communication."""
    ms = 1e-3
    rows = {"mode 0 comm": [Event("all-reduce", None, None, 3 * ms, 6 * ms)],
            "mode 0 compute": [Event("grad input", None, None, 0, 3 * ms),
                               Event("grad weight", None, None, 6 * ms, 9 * ms)],
            "mode 1 comm": [Event("all-reduce", None, None, 3 * ms, 6 * ms)],
            "mode 1 compute": [Event("grad input", None, None, 0, 3 * ms),
                               Event("grad weight", None, None, 3 * ms, 6 * ms)]}
    return Timeline(list(rows.values()), mode=REAL_COMPUTE, rows=list(rows))


def timeline_pipeline():
    return plots.plot_timeline(_pipeline(), title="GPipe, p=4, m=8")


def timeline_layerwise():
    return plots.plot_timeline(_layerwise(), title="layer-wise model parallel, 2 ranks")


def timeline_overlap():
    return plots.plot_timeline(_overlap(), title="column-parallel backward on rank 0")


def timelines_stacked():
    # as notebook 2.3: simulated and measured in fixed-time mode, one time axis (ms)
    return plots.plot_timelines([_pipeline(t_f=0.02), _pipeline(REAL_COMPUTE, t_f=0.02)],
                                ["GPipe", "GPipe"])


def curves_lr_schedules():
    steps = 50
    curves = {"batch 32, lr 0.1": [1.0 / (1 + 0.1 * s) for s in range(steps * 8)],
              "batch 256, lr 0.1 (not scaled)": [1.0 / (1 + 0.05 * s) for s in range(steps)],
              "batch 256, lr 0.8, no warmup": [1.0, 3.0, 40.0, float("inf"), float("nan")],
              "batch 256, lr 0.8, 25-step warmup": [1.0 / (1 + 0.3 * s) for s in range(steps)]}
    xs = {name: [(32 if name.startswith("batch 32,") else 256) * (s + 1) for s in range(len(v))]
          for name, v in curves.items()}
    return dp_plots.plot_curves(curves, x=xs, xlabel="samples seen", ylabel="training loss (MSE)",
                                logy=True, title="large batch: linear scaling needs warmup")


def curves_ddp_vs_single():
    losses = [4.6 - 0.1 * s for s in range(20)]
    return dp_plots.plot_curves({"single process, batch 16": losses,
                                 "DDP, 4 ranks x 4 samples": [v + 1e-6 for v in losses]},
                                xlabel="step", ylabel="training loss (cross-entropy)",
                                styles={"DDP, 4 ranks x 4 samples": dict(linestyle="--")},
                                title="DDP reproduces single-process training")


def busiest_rank():
    ns, size = (2, 4, 8), 526_336
    measured = {"gather to rank 0": [2 * (n - 1) * size for n in ns],
                "ring all-reduce": [4 * (n - 1) / n * size for n in ns]}
    return dp_plots.plot_busiest_rank_bytes(ns, measured, dict(measured),
                                            title="bytes through the busiest rank, S = 0.50 MiB")


def stacked_recipes():
    recipes = {f"{opt}, {prec}": memory.bytes_per_param(opt, prec).as_dict()
               for prec in ("fp32", "mixed") for opt in ("sgd", "sgd_momentum", "adam")}
    return dp_plots.plot_stacked_bars(recipes, ylabel="bytes per parameter",
                                      title="model states per parameter")


def stacked_compute_vs_comm():
    bars = {"small MLP\n0.0042 M params, batch 32": {"compute (fwd+bwd)": 0.52,
                                                     "all-reduce of the gradients": 0.41},
            "compute-heavy MLP\n6.3 M params, batch 512": {"compute (fwd+bwd)": 244.0,
                                                           "all-reduce of the gradients": 33.5}}
    return dp_plots.plot_stacked_bars(bars, ylabel="time per step (ms)",
                                      title="2 ranks, gloo, 1 thread per rank")


# the figures whose own texts (labels, legends, default stage names) are messages
OWN_TEXT = [collective_before_after, collective_ring_stages, bandwidth_bus, bandwidth_algorithm,
            timeline_pipeline, timeline_layerwise, timeline_overlap, timelines_stacked,
            busiest_rank]
# the figures that draw only what the notebook passes (titles, axis labels, legend names)
CALLER_TEXT = [curves_lr_schedules, curves_ddp_vs_single, stacked_recipes,
               stacked_compute_vs_comm]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("build", OWN_TEXT + CALLER_TEXT, ids=lambda f: f.__name__)
def test_every_figure_is_readable(build, lang, monkeypatch):
    monkeypatch.setenv("LABS_LANG", lang)
    fig = build()
    figure_checks.assert_readable(fig)
    texts = _texts(fig)
    if lang == "en":
        drawn = [t for group in texts.values() for t in group]
        assert not [t for t in drawn if CJK.search(t)], drawn
    elif build in OWN_TEXT:
        assert fonts.has_cjk_font(), "no CJK font: requirements.txt pins mplfonts"
        assert any(CJK.search(t) for t in texts["labels"] + texts["legend"]), texts


def test_the_shared_figures_say_their_labels_in_the_notebooks_language(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    fig = bandwidth_bus()
    zh = dict(lang="zh")
    assert fig.axes[0].get_xlabel() == text("plots.message_size", **zh)
    assert fig.axes[0].get_ylabel() == text("plots.time_per_all_reduce", **zh)
    assert fig.axes[1].get_ylabel() == text("plots.bus_bandwidth", **zh)
    fig = timeline_pipeline()
    assert fig.axes[0].get_title() == f"GPipe, p=4, m=8 [{text('plots.mode_simulated', **zh)}]"
    assert fig.axes[0].get_xlabel() == text("plots.time_units", **zh)
    said(fig.axes[0].get_yticklabels()[0].get_text(), "plots.row_idle", **zh)
    assert [t.get_text() for t in collective_before_after().axes[0].texts][:1] == ["0"]
    assert collective_before_after().axes[0].get_title() == text("plots.stage_before", **zh)
    monkeypatch.setenv("LABS_LANG", "en")
    assert bandwidth_algorithm().axes[1].get_ylabel() == text("plots.algorithm_bandwidth", lang="en")
    fig = timeline_layerwise()
    assert fig.axes[0].get_title() == (
        f"layer-wise model parallel, 2 ranks [{text('plots.mode_real_compute', lang='en')}]")
    assert fig.axes[0].get_xlabel() == text("plots.time_ms", lang="en")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == \
        ["forward", "send", "recv", "backward"]
    assert busiest_rank().axes[0].get_xlabel() == "number of ranks N"


def test_without_a_cjk_font_the_figures_fall_back_to_english(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    monkeypatch.setattr(fonts, "_state", {"done": True, "file": None, "noticed": True})
    for build in OWN_TEXT:
        fig = build()
        figure_checks.assert_readable(fig)
        drawn = [t for group in _texts(fig).values() for t in group]
        assert not [t for t in drawn if CJK.search(t)], (build.__name__, drawn)
