"""labs.planner.widgets: the planner widget shows exactly what the planner computes for the same
inputs (every preset, fixed and auto layouts), says what is wrong with bad inputs instead of
raising, recomputes on one control change, and renders non-empty HTML and figures.

Expected values come from calling labs.planner directly with objects built here, not
through the widget's own input conversion."""
from __future__ import annotations

import ipywidgets
import pytest

from labs import planner as pl
from labs.planner.search import CHUNKS
from labs.planner import widgets as wd
from labs.planner.search import Step
from labs.planner.types import Config
from labs.messages import text
from tests.support.messages import found_in

# the session's background work starts beside this module (tests/support/early.py)
pytestmark = pytest.mark.leaves_a_core

PNG = b"\x89PNG"

# (preset, the model built by hand, cluster size, global batch)
CASES = [
    ("BERT-Base", pl.Model(12, 768, 12, 512, 30522), 8, 256),
    ("1.5B (GPT-2 XL shape)", pl.Model(48, 1600, 25, 1024, 50257), 64, 512),
    ("GPT-3 175B", pl.Model(96, 12288, 96, 2048, 51200), 1024, 1536),
    ("MT-NLG 530B", pl.Model(105, 20480, 128, 2048, 51200), 2240, 1920),
    ("LLaMA-65B", pl.Model(80, 8192, 64, 2048, 32000, ffn_hidden=22016, mlp="swiglu",
                           tied_embeddings=False, learned_positions=False), 2048, 1024),
]
GPT3 = CASES[2][1]
FIXED = {"BERT-Base": (1, 2), "1.5B (GPT-2 XL shape)": (1, 2), "GPT-3 175B": (8, 2),
         "MT-NLG 530B": (8, 35), "LLaMA-65B": (8, 2)}  # (tp, pp): dp = n_gpus / (tp·pp)
TRAIN = dict(micro_batch=1, precision="bf16", zero_stage=0, recompute="full")


def _inputs(model, n_gpus, batch, gpu="A100-80GB"):
    return model, pl.Cluster(pl.GPUS[gpu], n_gpus, 8), pl.Training(batch, **TRAIN)


@pytest.fixture
def english(monkeypatch):
    """The planner's and the widget's messages in English (the words these tests match)."""
    monkeypatch.setenv("LABS_LANG", "en")


@pytest.fixture
def widget():
    return wd.planner_widget(preset="GPT-3 175B", gpu="A100-80GB", n_gpus=1024,
                             global_batch=1536, **TRAIN)


@pytest.mark.parametrize("preset,model,n_gpus,batch", CASES, ids=[c[0] for c in CASES])
def test_auto_layout_is_plans_best_and_steps_are_decides(widget, preset, model, n_gpus, batch):
    r = widget.set(preset=preset, n_gpus=n_gpus, global_batch=batch)
    inputs = _inputs(model, n_gpus, batch)
    plans = pl.plan(*inputs, top=5)
    assert r["error"] is None and r["mode"] == "auto"
    assert r["plans"] == [e.config for e in plans] and r["plans"]
    assert r["estimate"] == plans[0] and r["config"] == plans[0].config
    assert r["steps"] == pl.decide(*inputs)
    assert r["fits"] is True and r["step_time_s"] == plans[0].step_time_s
    m = plans[0].memory
    assert r["memory"] == dict(weights=m.weights, grads=m.grads, optimizer=m.optimizer,
                               activations=m.activations, total=m.total, usable=m.usable,
                               capacity=pl.GPUS["A100-80GB"].memory_bytes)
    assert r["decided_step"] == wd.decided_step(r["steps"])
    # the preset filled its fields, read-only
    assert [widget.state()[k] for k in wd.MODEL_FIELDS] == [
        model.n_layers, model.hidden, model.n_heads, model.seq_len, model.vocab]
    assert all(widget.controls[k].disabled for k in wd.MODEL_FIELDS)


@pytest.mark.parametrize("preset,model,n_gpus,batch", CASES, ids=[c[0] for c in CASES])
def test_fixed_layout_is_estimate(widget, preset, model, n_gpus, batch):
    tp, pp = FIXED[preset]
    dp = n_gpus // (tp * pp)
    r = widget.set(preset=preset, n_gpus=n_gpus, global_batch=batch, tp=tp, pp=pp, dp=0, v=0)
    assert r["error"] is None and r["mode"] == "fixed"
    # v left free (0) on a fixed layout: the fastest valid v of CHUNKS, fitting ones first
    # (issue 29: "auto" used to give v = 1 without searching)
    options = []
    for v in CHUNKS:
        try:
            options.append(pl.estimate(*_inputs(model, n_gpus, batch), tp=tp, pp=pp, dp=dp, v=v))
        except ValueError:
            pass
    best = min(options, key=lambda e: (not e.fits, e.step_time_s))
    assert r["estimate"] == best
    assert r["config"] == Config(tp, pp, dp, 1, best.config.v, 0, "full")  # the recipe's recompute
    assert any(f"v = {best.config.v}" in n for n in r["notes"])


def test_fixed_layout_with_all_degrees_and_chunks(widget):
    r = widget.set(tp=8, pp=16, dp=8, v=2)
    assert r["estimate"] == pl.estimate(*_inputs(GPT3, 1024, 1536), tp=8, pp=16, dp=8, v=2)
    assert r["comm"]["tp"]["link"] == "NVLink" and r["comm"]["dp"]["link"] == "InfiniBand"
    assert r["comm"]["pp"] == dict(bytes=r["estimate"].comm_bytes["pp"],
                                   seconds=r["estimate"].comm_s["pp"],
                                   exposed=r["estimate"].exposed_s["pp"], link="InfiniBand")


def test_one_fixed_degree_filters_plans(widget):
    r = widget.set(pp=8, tp="auto")
    every = pl.plan(*_inputs(GPT3, 1024, 1536), top=10**9)
    expected = [e for e in every if e.config.pp == 8][:5]
    assert r["mode"] == "auto" and r["plans"] == [e.config for e in expected]
    assert r["estimate"] == expected[0]


@pytest.mark.parametrize("values,words", [
    (dict(tp=64), "n_heads"),                      # 64 divides 1024 GPUs, not 96 heads
    (dict(tp=64, pp=16), "n_heads"),
    (dict(tp=8, pp=16, dp=16), "must equal n_gpus"),
    (dict(tp=8, pp=3), "does not divide"),
    (dict(n_gpus=0), "n_gpus=0"),
    (dict(global_batch=0), "global_batch=0"),
    (dict(micro_batch=0), "micro_batch=0"),
    (dict(n_layers=0), "n_layers=0"),
    (dict(global_batch=1001, tp=8, pp=16), "divisible"),
    (dict(tp=-1), "tp=-1"),
    (dict(v=3), "v=3"),
])
def test_impossible_inputs_give_a_message_not_an_exception(english, widget, values, words):
    r = widget.set(**values)
    assert words in r["error"]
    assert r["estimate"] is None and r["config"] is None
    assert words in widget.outputs["message"].value
    assert bytes(widget.outputs["memory"].value) == b"" and widget.outputs["summary"].value == ""
    r = widget.set(**{k: wd.DEFAULTS[k] for k in values}, preset="GPT-3 175B")
    assert r["error"] is None  # and it recovers


def test_nothing_fits_says_so(english, widget):
    r = widget.set(n_gpus=8, global_batch=8)  # GPT-3 on one node
    assert r["estimate"] is None
    found_in(r["error"], "widgets.no_layout_fits_any", n_gpus=8, gpu="A100-80GB")
    assert text("widgets.search_tried") in r["error"]
    assert r["steps"] == pl.decide(*_inputs(GPT3, 8, 8))
    assert r["decided_step"] == r["steps"][-1].number and r["steps"][-1].config is None


def test_one_control_change_recomputes_once(widget):
    before = widget.updates
    widget.controls["n_gpus"].value = 512  # as a browser would: the observer fires
    assert widget.updates == before + 1
    r = widget.results()
    assert r["n_gpus"] == 512
    assert r["estimate"] == pl.plan(*_inputs(GPT3, 512, 1536), top=1)[0]
    widget.set(tp=8, pp=8, v=2)
    assert widget.updates == before + 2


def test_custom_model_uses_the_fields(widget):
    r = widget.set(n_layers=24, hidden=1024, n_heads=16, seq_len=1024, vocab=50000, n_gpus=16,
                   global_batch=64)
    assert widget.state()["preset"] == wd.CUSTOM
    assert not any(widget.controls[k].disabled for k in wd.MODEL_FIELDS)
    model = pl.Model(24, 1024, 16, 1024, 50000)
    assert r["estimate"] == pl.plan(*_inputs(model, 16, 64), top=1)[0]


def test_outputs_are_rendered(widget):
    widget.set(tp=8, pp=16)
    out = widget.outputs
    assert bytes(out["memory"].value)[:4] == PNG and bytes(out["timeline"].value)[:4] == PNG
    assert "labs-planner-comm-table" in out["comm"].value
    assert out["plans"].value.count("<tr>") == 1 + 5
    assert out["steps"].value.count("labs-planner-decided") == 1
    assert out["steps"].value.count("labs-planner-step") == len(widget.results()["steps"])
    assert "MFU" in out["summary"].value and out["message"].value == ""


def test_displays_its_box(widget, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    widget._ipython_display_()
    assert shown == [widget.box]


def test_every_control_and_output_has_a_class_and_a_description(widget):
    for name, control in widget.controls.items():
        assert f"labs-planner-{name.replace('_', '-')}" in control._dom_classes
        assert control.description
    for name, output in widget.outputs.items():
        assert f"labs-planner-{name}" in output._dom_classes
        # an Image with a tooltip does not render in JupyterLab (tests/notebooks/test_browser.py shows it)
        assert output.tooltip if isinstance(output, ipywidgets.HTML) else not output.tooltip
    assert "labs-planner-root" in widget.box._dom_classes


def test_decided_step_is_the_first_with_the_final_shape():
    def step(n, config):
        return Step(n, "q", "a", {}, config)
    a, b = Config(8, 1, 128), Config(8, 8, 16)
    assert wd.decided_step([step(1, None), step(2, a), step(3, b), step(4, b),
                            step(5, Config(8, 8, 16, v=4))]) == 3
    assert wd.decided_step([step(1, None), step(2, a), step(3, None)]) == 3
    assert wd.decided_step([step(1, Config(1, 1, 8))] * 1) == 1
    assert wd.decided_step([]) is None


def test_unknown_controls_are_refused(english, widget):
    with pytest.raises(ValueError, match="unknown controls"):
        widget.set(tensor_parallel=2)
    with pytest.raises(ValueError, match="unknown controls"):
        wd.planner_widget(layers=2)
    with pytest.raises(ValueError, match="gpu='B200'"):
        widget.set(gpu="B200")
    with pytest.raises(ValueError, match="n_gpus=.many."):
        widget.set(n_gpus="many")
    assert widget.results()["error"] is None  # the widget is still usable


def test_bench_quick_prints_the_three_lines(capsys):
    from labs.bench import BENCHMARKS
    from labs.bench import planner as bench

    assert BENCHMARKS["planner"] == "labs.bench.planner"
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for line in ("estimate:", "plan:", "widget update:"):
        assert sum(row.startswith(line) for row in out.splitlines()) == 1, out


def test_the_widget_speaks_the_notebooks_language(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "zh")
    zh = wd.planner_widget()
    assert zh.controls["n_layers"].description == "层数"
    assert zh.outputs["plans"].tooltip == "最佳方案"
    assert "步时" in zh.outputs["summary"].value and "MFU" in zh.outputs["summary"].value
    r = zh.set(n_gpus=8, global_batch=8)
    assert "没有放得下的布局" in r["error"] and "无法规划" in zh.outputs["message"].value
    with pytest.raises(ValueError, match="未知的控件"):
        zh.set(tensor_parallel=2)
    monkeypatch.setenv("LABS_LANG", "en")
    en = wd.planner_widget()
    assert en.controls["n_layers"].description == "Layers"
    assert en.outputs["plans"].tooltip == "Top plans"
    r = en.set(n_gpus=8, global_batch=8)
    assert "No layout fits" in r["error"] and "Cannot plan this:" in en.outputs["message"].value


def test_the_notes_say_what_the_screen_would_leave_unsaid(widget, english):
    """Issue 29: auto mode's searched micro-batch/ZeRO, TP across nodes, the five steps'
    layout beside another one, ZeRO-3's known overestimate, the recompute the search chose."""
    r = widget.set(preset="GPT-3 175B", n_gpus=1024, global_batch=1536)
    assert r["mode"] == "auto"
    text_ = " | ".join(r["notes"])
    assert "the search chooses the micro-batch" in text_
    assert "the five-steps panel highlights" in text_
    assert f"recomputation: {r['config'].recompute}. The search tries none" in text_
    r = widget.set(preset="GPT-3 175B", n_gpus=1024, global_batch=1536, tp=8, pp=1, dp=128,
                   zero_stage=3, micro_batch=4, v=1)
    assert r["config"].zero_stage == 3 and text("widgets.note_zero3") in r["notes"]
    r = widget.set(tp=16, pp=8, dp=8, v=1)
    assert r["mode"] == "fixed" and any("exceeds the 8 GPUs of a node" in n for n in r["notes"])
    assert not any("the search chooses" in n for n in r["notes"])
    assert "exceeds the 8 GPUs of a node" in widget.outputs["summary"].value


def test_custom_model_can_be_gqa_and_swiglu(widget):
    """Issue 29: "custom" could not express GQA or SwiGLU (n_kv_heads, ffn_hidden)."""
    r = widget.set(preset=wd.CUSTOM, n_layers=48, hidden=8192, n_heads=64, n_kv_heads=8,
                   ffn_hidden=22016, mlp="swiglu", seq_len=4096, vocab=32000, gpu="H100-80GB",
                   n_gpus=128, global_batch=1024)
    model = pl.Model(n_layers=48, hidden=8192, n_heads=64, n_kv_heads=8, ffn_hidden=22016,
                     mlp="swiglu", seq_len=4096, vocab=32000)
    cluster, train = pl.Cluster("H100-80GB", 128), pl.Training(global_batch=1024)
    assert r["error"] is None and r["estimate"] == pl.plan(model, cluster, train, top=1)[0]
    assert r["steps"] == pl.decide(model, cluster, train)
    assert not any(widget.controls[k].disabled for k in wd.SHAPE_FIELDS)
    widget.set(preset="LLaMA-65B")  # a preset shows its own shape, read-only
    assert widget.state()["ffn_hidden"] == 22016 and widget.state()["mlp"] == "swiglu"
    assert widget.state()["n_kv_heads"] == 64
    assert all(widget.controls[k].disabled for k in wd.SHAPE_FIELDS)
    r = widget.set(preset=wd.CUSTOM, n_layers=24, hidden=1024, n_heads=16, seq_len=1024,
                   vocab=50000, gpu="A100-80GB", n_gpus=16, global_batch=64)
    assert r["error"] is None and widget.state()["n_kv_heads"] == 0  # not LLaMA's


def test_the_timeline_stays_inside_its_frame_and_its_legend_off_the_bars():
    """Issue 29: the interleaved chart ran past its edge and its legend sat on the bars. The
    x axis ends where the last event ends; the legend lies outside the axes."""
    from matplotlib.legend import Legend

    from labs.planner import view
    from tests.support.figure_checks import draw

    fig = view.timeline_figure(pl.Config(8, 16, 8, v=4), 24, 0.05)
    (ax,) = fig.axes
    right = max(p.vertices[:, 0].max() for coll in ax.collections for p in coll.get_paths())
    assert right == pytest.approx(ax.get_xlim()[1])
    renderer = draw(fig)
    (legend,) = fig.findobj(Legend)
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
