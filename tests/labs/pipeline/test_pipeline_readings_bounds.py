"""2.3's readings refuse impossible measurements (issue 31): an idle share below 0 or above
100 %, a step shorter than its own compute. Each says the measurement is noise and what to
rerun, and concludes nothing. The interleaving reading prints the bubble time, which is what
shrinks to 1/v, beside the mean idle shares."""
from __future__ import annotations

import pytest

from labs.pipeline import experiments as px


def refused(said: str) -> bool:
    return "噪声" in said and "重新运行" in said


@pytest.mark.parametrize("plain, inter", [([0.27, -0.05, 0.27, 0.27], [0.16] * 4),
                                          ([0.27] * 4, [0.16, 0.16, 1.3, 0.16])])
def test_interleaving_refuses_idle_outside_bounds(plain, inter):
    said = px.interpret_interleaving(plain, inter, 0.66, 0.58, p=4, m=8, v=2, stage_s=0.06)
    assert refused(said) and "交错把空闲" not in said


def test_interleaving_refuses_a_step_shorter_than_its_compute():
    # m = 8 micro-batches of 60 ms each on every stage: no step can be shorter than 480 ms
    said = px.interpret_interleaving([0.27] * 4, [0.16] * 4, 0.66, 0.40, p=4, m=8, v=2,
                                     stage_s=0.06)
    assert refused(said) and "400 ms" in said and "480 ms" in said


def test_interleaving_prints_the_bubble_time(monkeypatch):
    said = px.interpret_interleaving([0.274] * 4, [0.164] * 4, 0.662, 0.577, p=4, m=8, v=2,
                                     stage_s=0.06)
    assert "181 ms → 95 ms" in said and "180 ms" in said and "90 ms" in said
    assert "平均空闲" in said and "交错把空闲从 27.4% 降到 16.4%" in said
    monkeypatch.setenv("LABS_LANG", "en")
    said = px.interpret_interleaving([0.274] * 4, [0.164] * 4, 0.662, 0.577, p=4, m=8, v=2,
                                     stage_s=0.06)
    assert "bubble time that shrinks to 1/v" in said and "Mean idle share" in said


def test_bubble_sweep_schedules_and_bubble_refuse_negative_idle():
    assert refused(px.interpret_bubble([0.3, -0.2, 0.3, 0.3], 3 / 11, fixed_time=True))
    assert refused(px.interpret_bubble_sweep({2: {2: [0.3, 1.4], 4: [0.2, 0.2]}},
                                             fixed_time=True))
    assert refused(px.interpret_schedules({"gpipe": 0.6, "1f1b": 0.6},
                                          {"gpipe": [0.27] * 4, "1f1b": [0.27, -0.1, 0.27, 0.27]},
                                          3 / 11))
    assert refused(px.interpret_schedules({"gpipe": 0.6, "1f1b": 0.0},
                                          {"gpipe": [0.27] * 4, "1f1b": [0.27] * 4}, 3 / 11))
