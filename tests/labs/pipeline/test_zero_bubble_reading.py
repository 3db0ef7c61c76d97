"""2.3 section 7's real-compute reading (issue 39): when ZB-V (or ZB-H1) idles more than 1F1B on
real compute, the reading says so and why (every action's and message's fixed overhead, and the
split schedules have more of both); in the formulas' order it says only that all are far above
them. Asserted by message key and fields."""
from __future__ import annotations

from labs.pipeline import experiments as px
from tests.support.messages import recorded_keys

FORMULAS = {"1f1b": 3 / 11, "zb-h1": 3 / 27, "zb-v": 3 / 51}


def test_zb_v_above_1f1b_is_explained(monkeypatch):
    keys = recorded_keys(monkeypatch, px)
    px.interpret_zero_bubble_real({"1f1b": [0.646] * 4, "zb-h1": [0.70] * 4, "zb-v": [0.738] * 4},
                                  FORMULAS, ranks=4, cores=2)
    fields = dict(keys)["pipeline_readings.zb_real_inverted"]
    assert (fields["more"], fields["less"]) == ("zb-v", "1f1b")  # the largest inversion
    assert fields["more_share"] > fields["less_share"]
    assert fields["overheads"] == "<pipeline_readings.zb_real_overheads_crowded>"
    assert dict(keys)["pipeline_readings.zb_real_overheads_crowded"] == {"ranks": 4, "cores": 2}


def test_the_formulas_order_gets_the_plain_reading(monkeypatch):
    keys = recorded_keys(monkeypatch, px)
    px.interpret_zero_bubble_real({"1f1b": [0.76] * 4, "zb-h1": [0.74] * 4, "zb-v": [0.72] * 4},
                                  FORMULAS, ranks=4, cores=64)
    assert "pipeline_readings.zb_real_in_order" in dict(keys)
    assert "pipeline_readings.zb_real_inverted" not in dict(keys)


def test_an_impossible_measurement_is_refused(monkeypatch):
    keys = recorded_keys(monkeypatch, px)
    px.interpret_zero_bubble_real({"1f1b": [1.3], "zb-h1": [0.5], "zb-v": [0.5]}, FORMULAS)
    assert "pipeline_readings.idle_out_of_bounds" in dict(keys)


def test_both_languages_read(monkeypatch):
    idle = {"1f1b": [0.646], "zb-h1": [0.70], "zb-v": [0.738]}
    for lang in ("zh", "en"):
        monkeypatch.setenv("LABS_LANG", lang)
        reading = px.interpret_zero_bubble_real(idle, FORMULAS, ranks=4, cores=2)
        assert "73.8%" in reading and "64.6%" in reading and "2(p−1)" in reading
