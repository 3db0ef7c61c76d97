"""2.1's stacked bars (issue 31, c20/c35/c48): a model-state part keeps its colour in every
figure, long bar labels do not overlap, and a log axis shows a bar 100x smaller than its
neighbour."""
from __future__ import annotations

import itertools

import matplotlib
import pytest

matplotlib.use("Agg")

from matplotlib.colors import to_hex  # noqa: E402

from labs.formulas import memory  # noqa: E402
from labs.data_parallel import plots as dp_plots  # noqa: E402
from tests.support import figure_checks  # noqa: E402


def colours(fig) -> dict:
    """legend label -> the colour of its bars"""
    ax = fig.axes[0]
    handles, names = ax.get_legend_handles_labels()
    return {name: to_hex(h.patches[0].get_facecolor()) for h, name in zip(handles, names)}


def test_a_part_keeps_its_colour_when_another_part_is_missing():
    mixed = {"adam, mixed": memory.bytes_per_param("adam", "mixed").as_dict()}
    fp32 = {"adam, fp32": memory.bytes_per_param("adam", "fp32").as_dict()}
    with_master, without = colours(dp_plots.plot_stacked_bars(mixed, ylabel="B")), \
        colours(dp_plots.plot_stacked_bars(fp32, ylabel="B"))
    assert len(with_master) == 4 and len(without) == 3
    for name, colour in without.items():
        assert with_master[name] == colour, name


def test_long_labels_of_six_bars_do_not_overlap():
    recipes = {f"{opt}, {prec}": memory.bytes_per_param(opt, prec).as_dict()
               for prec in ("fp32", "mixed") for opt in ("sgd", "sgd_momentum", "adam")}
    fig = dp_plots.plot_stacked_bars(recipes, ylabel="bytes per parameter")
    renderer = figure_checks.draw(fig)
    ticks = [t.get_window_extent(renderer) for t in fig.axes[0].get_xticklabels()]
    assert len(ticks) == 6
    for a, b in itertools.combinations(ticks, 2):
        assert not a.overlaps(b)


def test_log_axis_shows_the_small_bar():
    bars = {"small\nbatch 32": {"compute": 0.43, "comm": 1.77},
            "heavy\nbatch 512": {"compute": 126.0, "comm": 23.4}}
    fig = dp_plots.plot_stacked_bars(bars, ylabel="ms", logy=True)
    figure_checks.assert_readable(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    renderer = figure_checks.draw(fig)
    small = [p for p in ax.patches if p.get_x() < 0.5]  # the first bar's two segments
    assert len(small) == 2
    height = sum(p.get_window_extent(renderer).height for p in small)
    assert height > 0.2 * ax.get_window_extent(renderer).height
    low, high = ax.get_ylim()
    assert low < 0.43 and high > 126 + 23.4
    linear = dp_plots.plot_stacked_bars(bars, ylabel="ms")
    assert linear.axes[0].get_yscale() == "linear"


@pytest.mark.parametrize("logy", [False, True])
def test_totals_are_written_above_the_bars(logy):
    bars = {"a": {"x": 1.0, "y": 2.0}, "b": {"x": 100.0, "y": 50.0}}
    fig = dp_plots.plot_stacked_bars(bars, ylabel="ms", logy=logy)
    texts = [t for t in fig.axes[0].texts]
    assert [t.get_text() for t in texts] == ["3", "150"]
    assert texts[1].get_position()[1] >= 150
