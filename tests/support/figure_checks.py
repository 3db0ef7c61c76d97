"""What every course figure must pass: drawn without a missing glyph (no boxes instead of
characters), at the course's resolution, and with no legend or text on top of another.

``assert_readable(fig)`` draws the figure and fails with what overlaps what. Each package's
figure test (tests/test_figures_*.py) calls it on every figure function it owns, in Chinese and
in English.
"""

from __future__ import annotations

import itertools
import warnings

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402

from labs.notebook import plots  # noqa: E402

__all__ = ["assert_readable", "draw"]


def draw(fig):
    """Render ``fig``; a glyph missing from every font fails."""
    canvas = FigureCanvasAgg(fig)  # a figure closed in pyplot has lost its own canvas
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*[Gg]lyph .* missing from")
        canvas.draw()
    return canvas.get_renderer()


def assert_readable(fig, *, min_dpi: float = plots.DPI, cell_labels_ok: bool = True):
    """Fail if ``fig`` draws a missing glyph, is below ``min_dpi``, or has a legend overlapping
    a data point, a title, an axis label or another legend, or two titles/labels overlapping.

    Text inside the axes that labels a cell or a bar (``ax.text``) is allowed to sit on data
    (``cell_labels_ok``); it must still not overlap another text.
    """
    assert fig.dpi >= min_dpi, f"figure at {fig.dpi} dpi, the course draws at {min_dpi}"
    renderer = draw(fig)
    legends = [lg for lg in fig.findobj(Legend) if lg.get_visible()]
    boxes = {id(lg): lg.get_window_extent(renderer) for lg in legends}
    for a, b in itertools.combinations(legends, 2):
        assert not boxes[id(a)].overlaps(boxes[id(b)]), "two legends overlap"
    labels = []
    for ax in fig.axes:
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            if text.get_visible() and text.get_text().strip():
                labels.append(text)
    if fig._suptitle is not None and fig._suptitle.get_text().strip():
        labels.append(fig._suptitle)
    for lg in legends:
        for text in labels:
            assert not boxes[id(lg)].overlaps(text.get_window_extent(renderer)), \
                f"legend overlaps {text.get_text()!r}"
        ax = lg.axes
        if ax is None:
            continue
        for line in ax.get_lines():
            if not line.get_visible() or line.get_label().startswith("_") and not len(line.get_xdata()):
                continue
            points = line.get_transform().transform(line.get_xydata())
            inside = [p for p in points if boxes[id(lg)].contains(*p)]
            assert not inside, (f"legend of {ax.get_title()!r} covers {len(inside)} data "
                                f"point(s) of {line.get_label()!r}")
        for collection in ax.collections:
            offsets = collection.get_offsets()
            if len(offsets) and collection.get_visible():
                points = collection.get_offset_transform().transform(offsets)
                inside = [p for p in points if boxes[id(lg)].contains(*p)]
                assert not inside, f"legend of {ax.get_title()!r} covers {len(inside)} marker(s)"
    for a, b in itertools.combinations(labels, 2):
        if a.get_text() and b.get_text():
            ea, eb = a.get_window_extent(renderer), b.get_window_extent(renderer)
            assert not ea.overlaps(eb), f"{a.get_text()!r} overlaps {b.get_text()!r}"
    return fig
