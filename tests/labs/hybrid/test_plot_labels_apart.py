"""The all-to-all figure's arrow labels do not cover each other (issue 31, 2.4: the labels of the arrows
across the middle all landed on the centre), in either language, for the dispatch 2.4 draws
and for a full one."""
from __future__ import annotations

import itertools

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg

from labs.hybrid.plots_cp_ep import plot_all_to_all
from labs.messages import LANG_ENV


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("matrix", [
    [[4, 3, 2, 3], [3, 3, 6, 5], [6, 6, 4, 3], [3, 8, 3, 3]],
    [[9, 9, 9, 9], [9, 9, 9, 9], [9, 9, 9, 9], [9, 9, 9, 9]],
])
def test_all_to_all_labels_lie_apart(monkeypatch, lang, matrix):
    monkeypatch.setenv(LANG_ENV, lang)
    fig = plot_all_to_all(torch.tensor(matrix), row_bytes=64, n_experts=8)
    ax = fig.axes[0]
    FigureCanvasAgg(fig)  # the figure comes back closed: give it a canvas to measure text on
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_bbox_patch() is not None]
    assert len(boxes) >= 12  # one per arrow between 4 ranks (the notes have no box)
    # corners of a side pair's two labels may touch (a few square pixels); text on text may not
    shared = [(min(a.x1, b.x1) - max(a.x0, b.x0)) * (min(a.y1, b.y1) - max(a.y0, b.y0))
              for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]
    assert max(shared, default=0) < 10, shared
