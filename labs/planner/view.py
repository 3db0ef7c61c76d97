"""The planner widget's display: its ipywidgets controls and outputs, HTML tables and small
figures drawn from :func:`labs.planner.widgets.compute`'s results (no logic of its own).

Every control and output carries a stable CSS class ``labs-planner-<name>`` and a description
(controls) or tooltip (HTML outputs; the figures have a title instead), for a browser test to
find. Figures are small, drawn on a :class:`matplotlib.figure.Figure` outside pyplot (nothing
to close, no global state) with fixed margins (no tight_layout) and shown as PNG in an
``Image`` widget.

Owns: the widget's controls, outputs, tables and figures. Must not: compute an estimate or a plan
(the planner does), hold the widget's state (labs.planner.widgets), or print.
"""
from __future__ import annotations

import html
import io

import ipywidgets as w
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from labs.notebook import plots
from labs.planner.types import PRECISIONS, SCHEDULES, GiB
from labs.messages import joined, text

__all__ = ["CLASS", "TIMELINE_RANKS", "TIMELINE_MICROBATCHES", "make_controls", "make_outputs",
           "layout", "render", "steps_html", "summary_html", "comm_html", "plans_html",
           "memory_figure", "memory_png", "timeline_figure", "timeline_png", "timeline_size"]

CLASS = "labs-planner"
TIMELINE_RANKS = 4  # at most this many pipeline stages drawn
TIMELINE_MICROBATCHES = 8  # and this many micro-batches
# Each control -> the message of its description, each output -> that of its tooltip (and
# title): looked up when the widget is built, in its language.
_CONTROLS = {"preset": "widgets.group_model", "n_layers": "widgets.control_n_layers",
             "hidden": "widgets.control_hidden", "n_heads": "widgets.control_n_heads",
             "seq_len": "widgets.control_seq_len", "vocab": "widgets.control_vocab",
             "n_kv_heads": "widgets.control_n_kv_heads",
             "ffn_hidden": "widgets.control_ffn_hidden", "mlp": "widgets.control_mlp",
             "gpu": "widgets.control_gpu", "n_gpus": "widgets.control_n_gpus",
             "gpus_per_node": "widgets.control_gpus_per_node",
             "global_batch": "widgets.control_global_batch",
             "micro_batch": "widgets.control_micro_batch",
             "precision": "widgets.control_precision", "zero_stage": "widgets.control_zero_stage",
             "recompute": "widgets.control_recompute",
             "schedule": "widgets.control_schedule", "tp": "widgets.control_tp",
             "pp": "widgets.control_pp", "dp": "widgets.control_dp", "v": "widgets.control_v"}
_OUTPUTS = {"message": "widgets.output_message", "summary": "widgets.output_summary",
            "steps": "widgets.output_steps", "memory": "widgets.output_memory",
            "timeline": "widgets.output_timeline", "comm": "widgets.output_comm",
            "plans": "widgets.output_plans"}
_GROUPS = {"model": "widgets.group_model", "cluster": "widgets.group_cluster",
           "training": "widgets.group_training", "layout": "widgets.group_layout"}
_MODES = {"auto": "widgets.mode_auto", "fixed": "widgets.mode_fixed"}
_COMM_HEADER = ("widgets.comm_dim", "widgets.comm_gib", "widgets.comm_time",
                "widgets.comm_exposed", "widgets.comm_link")
_PLANS_HEADER = ("widgets.plans_layout", "widgets.plans_step", "widgets.plans_tokens",
                 "widgets.plans_mfu", "widgets.plans_gib")
_MEMORY_PARTS = {"weights": "widgets.memory_weights", "grads": "widgets.memory_grads",
                 "optimizer": "widgets.memory_optimizer",
                 "activations": "widgets.memory_activations"}


def _description(name: str) -> str:
    return text(_CONTROLS[name])


def _output_title(name: str) -> str:
    return text(_OUTPUTS[name])

_STYLE = {"description_width": "90px"}
# ipywidgets 7 (Colab's 7.7.1) names a widget's tooltip description_tooltip; 8 renamed it tooltip.
_TOOLTIP = "tooltip" if int(w.__version__.split(".")[0]) >= 8 else "description_tooltip"


def _classed(widget, name: str):
    widget.add_class(f"{CLASS}-{name}")
    return widget


def make_controls(values: dict, presets: list, gpus: list) -> dict:
    """name -> control widget, set to ``values``."""
    choices = dict(preset=presets, gpu=gpus, precision=list(PRECISIONS),
                   zero_stage=[0, 1, 2, 3], recompute=["none", "selective", "full"],
                   mlp=["gelu", "swiglu"], schedule=list(SCHEDULES))
    controls = {}
    for name in _CONTROLS:
        if name in choices:
            widget = w.Dropdown(options=choices[name], value=values[name])
        else:
            widget = w.IntText(value=values[name])
        widget.description = _description(name)
        widget.style = _STYLE
        widget.layout = w.Layout(width="220px")
        controls[name] = _classed(widget, name.replace("_", "-"))
    return controls


def make_outputs() -> dict:
    """name -> output widget (HTML, or Image for the two figures)."""
    outputs = {}
    for name in _OUTPUTS:
        if name in ("memory", "timeline"):
            # No tooltip on an Image: with one, JupyterLab's widget manager (jupyterlab_widgets
            # 3.0) cannot create its view and the figure never shows. Its title says what it is.
            widget = w.Image(format="png")
        else:
            widget = w.HTML(description="", **{_TOOLTIP: _output_title(name)})
        outputs[name] = _classed(widget, name)
    return outputs


def _titled(title: str, widget):
    return w.VBox([w.HTML(f"<b>{html.escape(title)}</b>"), widget])


def layout(controls: dict, outputs: dict):
    """The whole widget: controls in four columns, then the outputs."""
    groups = (("model", ("preset", "n_layers", "hidden", "n_heads", "n_kv_heads", "ffn_hidden",
                         "mlp", "seq_len", "vocab")),
              ("cluster", ("gpu", "n_gpus", "gpus_per_node")),
              ("training", ("global_batch", "micro_batch", "precision", "zero_stage",
                            "recompute", "schedule")),
              ("layout", ("tp", "pp", "dp", "v")))
    columns = w.HBox([_titled(text(_GROUPS[group]),
                              w.VBox([controls[n] for n in names]))
                      for group, names in groups])
    figures = w.HBox([_titled(_output_title(n), outputs[n]) for n in ("memory", "timeline")])
    body = [outputs["message"], outputs["summary"], figures,
            *(_titled(_output_title(n), outputs[n]) for n in ("comm", "steps", "plans"))]
    return _classed(w.VBox([columns, *body]), "root")


# --- HTML ------------------------------------------------------------------------------------

def _table(header, rows, name: str) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{CLASS}-{name}-table"><tr>{head}</tr>{body}</table>'


def _numbers(numbers: dict) -> str:
    def fmt(x):
        return f"{x:.3g}" if isinstance(x, float) else str(x)
    return ", ".join(f"{html.escape(k)}={html.escape(fmt(x))}" for k, x in numbers.items())


def steps_html(r: dict) -> str:
    """The steps of decide, the deciding one highlighted (with its numbers)."""
    if not r["steps"]:
        return html.escape(r["decide_error"] or r["error"] or "")
    rows = []
    for s in r["steps"]:
        decided = s.number == r["decided_step"]
        mark = ' style="background:#fff3c4;font-weight:bold"' if decided else ""
        rows.append(f'<li class="{CLASS}-step{" " + CLASS + "-decided" if decided else ""}"'
                    f"{mark}>{html.escape(s.question)}<br>{html.escape(s.answer)}"
                    f"<br><small>{_numbers(s.numbers)}</small><br>&rarr; "
                    f"{html.escape(str(s.config) if s.config else text('widgets.no_layout'))}"
                    "</li>")
    note = f"<p>{html.escape(text('widgets.decided_at', step=r['decided_step']))}</p>"
    return note + "<ol>" + "".join(rows) + "</ol>"


def summary_html(r: dict) -> str:
    if r["estimate"] is None:
        return ""
    fits = (text("planner.fits") if r["fits"] else
            text("widgets.does_not_fit", reasons=joined(
                r["estimate"].reasons, "clauses")))
    mode = text(_MODES[r["mode"]])
    head = text("widgets.summary_head", config=r["config"], fits=fits)
    line = text("widgets.summary_line", step=r["step_time_s"], tokens=r["tokens_per_s"],
                per_gpu=r["tokens_per_s"] / r["n_gpus"], mfu=r["mfu"], bubble=r["bubble"])
    notes = "".join(f'<br><small class="{CLASS}-note">{html.escape(n)}</small>'
                    for n in r.get("notes") or [])
    return (f"<p><b>{html.escape(mode)}</b> {html.escape(head)}<br>{html.escape(line)}"
            f"{notes}</p>")


def comm_html(r: dict) -> str:
    if not r["comm"]:
        return ""
    rows = [(k.upper(), f"{c['bytes'] / GiB:.2f}", f"{c['seconds']:.3f}", f"{c['exposed']:.3f}",
             c["link"]) for k, c in r["comm"].items()]
    header = [text(key) for key in _COMM_HEADER]
    return _table(header, rows, "comm")


def plans_html(r: dict) -> str:
    estimates = r.get("plan_estimates") or []
    if not estimates:
        return html.escape(text("widgets.no_fitting_plan"))
    rows = [(i + 1, html.escape(str(e.config)), f"{e.step_time_s:.2f}",
             f"{e.tokens_per_s:,.0f}", f"{e.mfu:.1%}", f"{e.memory.total / GiB:.1f}")
            for i, e in enumerate(estimates)]
    header = ["#", *(text(key) for key in _PLANS_HEADER)]
    return _table(header, rows, "plans")


def _message_html(r: dict) -> str:
    if not r["error"]:
        return ""
    body = html.escape(r["error"]).replace("\n", "<br>")
    return (f'<div class="{CLASS}-error" style="color:#C44E52">'
            f"<b>{html.escape(text('widgets.cannot_plan'))}</b> {body}</div>")


# --- figures ---------------------------------------------------------------------------------

def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=plots.DPI)
    return buffer.getvalue()


def memory_figure(memory: dict, title: str = "") -> Figure:
    """One stacked bar (GiB) of weights, gradients, optimizer, activations vs usable and
    capacity (a Figure outside pyplot: nothing to close)."""
    fig = Figure(figsize=(4.2, 1.8), dpi=plots.DPI)
    fig.subplots_adjust(left=0.04, right=0.97, top=0.86, bottom=0.45)
    ax = fig.subplots()
    left = 0.0
    colors = ("#4C72B0", "#DD8452", "#55A868", "#8172B2")
    for (key, label_key), color in zip(_MEMORY_PARTS.items(), colors):
        width = memory[key] / GiB
        ax.barh(0, width, left=left, color=color, label=plots.label(label_key),
                height=0.5)
        left += width
    ax.axvline(memory["usable"] / GiB, color="#C44E52", linestyle="--",
               label=plots.label("widgets.memory_usable"))
    ax.axvline(memory["capacity"] / GiB, color="#8C8C8C",
               label=plots.label("widgets.memory_capacity"))
    ax.set_yticks([])
    ax.set_xlim(0, max(left, memory["capacity"] / GiB) * 1.05)
    ax.set_title(plots.label("widgets.memory_title_of", title=title) if title
                 else plots.label("widgets.memory_title"), fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return fig


def memory_png(memory: dict, title: str = "") -> bytes:
    """:func:`memory_figure` as PNG bytes (for the widget's Image)."""
    return _png(memory_figure(memory, title))


def timeline_size(pp: int, m: int, v: int) -> tuple:
    """(ranks, micro-batches, chunks) drawn: capped, micro-batches a multiple of the ranks
    when interleaved."""
    ranks = min(pp, TIMELINE_RANKS)
    mbs = max(1, min(m, TIMELINE_MICROBATCHES))
    if v > 1 and ranks > 1:
        mbs = ranks * max(1, mbs // ranks)
    return ranks, mbs, (v if ranks > 1 else 1)


def timeline_figure(config, n_microbatches: int, bubble: float) -> Figure:
    """A simulated 1F1B (interleaved when v > 1; t_F = 1, t_B = 2) or ZB-H1 (t_F = t_B = t_W =
    1: the same work) timeline of the first stages and micro-batches, in the colours of
    :func:`labs.notebook.plots.plot_timeline` but one bar collection per rank and kind (a widget update
    stays fast)."""
    from labs import pipeline as pp  # why here: labs.pipeline imports torch (~3 s)

    ranks, mbs, chunks = timeline_size(config.pp, n_microbatches, config.v)
    zb = config.schedule == "zb-h1"
    name = "zb-h1" if zb else "interleaved" if chunks > 1 else "1f1b"
    times = dict(backward_s=1.0, weight_s=1.0) if zb else {}
    try:
        timeline = pp.simulate(pp.build_schedule(name, ranks, mbs, chunks), **times)
    except ValueError:
        timeline = pp.simulate(pp.build_schedule("1f1b", ranks, mbs))
    fig = Figure(figsize=(4.6, 2.0), dpi=plots.DPI)
    fig.subplots_adjust(left=0.22, right=0.98, top=0.80, bottom=0.20)
    ax = fig.subplots()
    for r, events in enumerate(timeline.events):
        for kind in ("F", "B", "W"):
            spans = [(e.start, e.end - e.start) for e in events if e.kind == kind]
            ax.broken_barh(spans, (r - 0.4, 0.8), color=plots.COLORS[kind],
                           edgecolor="white", linewidth=0.5)
    kinds = (("F", "plots.kind_forward"), ("B", "widgets.timeline_backward_input"),
             ("W", "widgets.timeline_weight")) if zb else (
        ("F", "plots.kind_forward"), ("B", "plots.kind_backward"))
    ax.legend(handles=[Patch(color=plots.COLORS[k], label=plots.label(key)) for k, key in kinds],
              fontsize=6, loc="lower left", bbox_to_anchor=(0.0, 0.0), ncol=len(kinds),
              bbox_transform=fig.transFigure, frameon=False)  # bottom left: off the bars
    labels = [plots.label("widgets.timeline_stage_idle", stage=r, idle=idle)
              for r, idle in enumerate(timeline.idle_fraction())]
    ax.set_yticks(range(ranks), labels, fontsize=6)
    ax.set_ylim(ranks - 0.5, -0.5)
    ax.set_xlim(*timeline.span())
    ax.set_xlabel(plots.label("widgets.timeline_time"), fontsize=7)
    ax.tick_params(axis="x", labelsize=6)
    ax.set_title(plots.label("widgets.timeline_title", ranks=ranks, pp=config.pp, mbs=mbs,
                             m=n_microbatches, v=chunks, bubble=bubble), fontsize=7)
    return fig


def timeline_png(config, n_microbatches: int, bubble: float) -> bytes:
    """:func:`timeline_figure` as PNG bytes (for the widget's Image)."""
    return _png(timeline_figure(config, n_microbatches, bubble))


def render(outputs: dict, r: dict) -> None:
    """Write results ``r`` into the output widgets (figures emptied when there is no layout)."""
    outputs["message"].value = _message_html(r)
    outputs["summary"].value = summary_html(r)
    outputs["steps"].value = steps_html(r)
    outputs["comm"].value = comm_html(r)
    outputs["plans"].value = plans_html(r)
    est = r["estimate"]
    if est is None:
        outputs["memory"].value = b""
        outputs["timeline"].value = b""
        return
    stage = plots.label("widgets.memory_stage", stage=est.memory.stage, gpu=r["gpu"].name)
    outputs["memory"].value = memory_png(r["memory"], title=stage)
    outputs["timeline"].value = timeline_png(est.config, est.n_microbatches, est.bubble)
