"""Every figure of labs.hybrid -- the mesh, the ring and the all-to-all, the profiled step's
breakdown, the planner widget's memory bar and pipeline timeline -- is readable (no missing
glyph, no legend over data or text, at the course's dpi) in Chinese and in English, and speaks
the notebook's language: Chinese titles and labels in zh, none in en."""

from __future__ import annotations

import re

import pytest
import torch


from tests.support import figure_checks  # noqa: E402

from labs import planner as pl  # noqa: E402
from labs.planner import view as widgets_view  # noqa: E402
from labs.hybrid.mesh import MeshShape  # noqa: E402
from labs.hybrid.plots_cp_ep import plot_all_to_all, plot_ring  # noqa: E402
from labs.hybrid.plots_mesh import draw_mesh  # noqa: E402
from labs.hybrid.profiling import CATEGORIES, plot_breakdown  # noqa: E402
from labs.planner.widgets import compute, DEFAULTS  # noqa: E402

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def _breakdowns(shape=MeshShape(2, 2, 2)):
    """What labs.launch(profile_hybrid_step, ...) returns, in the proportions 2.4 measures."""
    out = []
    for r in range(shape.world_size):
        seconds = dict(zip(CATEGORIES, (0.020 + 0.002 * r, 0.008, 0.004 + 0.001 * (r % 2), 0.003)))
        total = sum(seconds.values())
        out.append(dict(rank=r, coords=tuple(shape.coords(r)), seconds=seconds,
                        shares={c: s / total for c, s in seconds.items()}))
    return out


def _widget_results():
    return compute(dict(DEFAULTS))  # GPT-3 175B on 1024 A100-80GB, the widget's start


FIGURES = {
    "mesh 2x2x2, 4 per node": lambda: draw_mesh(MeshShape(2, 2, 2), gpus_per_node=4),
    "mesh 1x4x4": lambda: draw_mesh(MeshShape(1, 4, 4)),
    "mesh 4x1x2, 2 per node": lambda: draw_mesh(MeshShape(4, 1, 2), gpus_per_node=2),
    "ring cp=1": lambda: plot_ring(1, block_bytes=4096),
    "ring cp=4": lambda: plot_ring(4, block_bytes=4096),
    "all-to-all": lambda: plot_all_to_all(
        torch.tensor([[3, 2, 0, 0], [0, 1, 0, 4], [0, 2, 5, 0], [1, 0, 0, 0]]),
        row_bytes=32, n_experts=4),
    "all-to-all, rows only": lambda: plot_all_to_all(torch.tensor([[2, 1], [1, 2]])),
    "breakdown ms": lambda: plot_breakdown(_breakdowns()),
    "breakdown shares": lambda: plot_breakdown(_breakdowns(), shares=True),
    "widget memory": lambda: widgets_view.memory_figure(
        _widget_results()["memory"], title="stage 0, A100-80GB"),
    "widget memory, no title": lambda: widgets_view.memory_figure(_widget_results()["memory"]),
    "widget timeline": lambda: widgets_view.timeline_figure(
        pl.Config(tp=8, pp=16, dp=8), 192, 0.072),
    "widget timeline, interleaved": lambda: widgets_view.timeline_figure(
        pl.Config(tp=8, pp=8, dp=16, v=4), 96, 0.018),
}


def _titles_and_labels(fig) -> list[str]:
    texts = [fig._suptitle.get_text()] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    return [t for t in texts if t.strip()]


def _all_texts(fig) -> list[str]:
    texts = _titles_and_labels(fig)
    for ax in fig.axes:
        texts += [t.get_text() for t in ax.texts]
        texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        legend = ax.get_legend()
        if legend is not None:
            texts += [t.get_text() for t in legend.get_texts()]
    return [t for t in texts if t.strip()]


def _assert_inside(fig):
    """Titles, labels and legends are not cut off at the figure's edge (longer Chinese or
    English text must still fit the widget's small fixed-margin figures)."""
    renderer = figure_checks.draw(fig)
    box = fig.bbox
    items = [t for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)
             if t.get_text().strip()]
    items += [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for item in items:
        extent = item.get_window_extent(renderer)
        assert (extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1
                and extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1), \
            f"{getattr(item, 'get_text', lambda: 'legend')()!r} is cut off by the figure's edge"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("name", list(FIGURES))
def test_every_hybrid_figure_is_readable_in_both_languages(name, lang, monkeypatch):
    monkeypatch.setenv("LABS_LANG", lang)
    fig = FIGURES[name]()
    figure_checks.assert_readable(fig)
    _assert_inside(fig)
    labels = _titles_and_labels(fig)
    assert labels, f"{name}: no title or label"
    if lang == "zh":
        assert any(CJK.search(t) for t in labels), f"{name}: no Chinese in {labels}"
    else:
        chinese = [t for t in _all_texts(fig) if CJK.search(t)]
        assert not chinese, f"{name}: Chinese in the English figure: {chinese}"


def test_the_widget_pngs_are_the_figures_at_the_course_dpi(monkeypatch):
    from matplotlib.image import imread
    import io

    monkeypatch.setenv("LABS_LANG", "en")
    png = widgets_view.memory_png(_widget_results()["memory"], title="stage 0")
    height, width = imread(io.BytesIO(png)).shape[:2]
    assert (width, height) == (round(4.2 * 110), round(1.8 * 110))
    assert widgets_view.timeline_png(pl.Config(tp=8, pp=16, dp=8), 192, 0.072)[:4] == b"\x89PNG"
