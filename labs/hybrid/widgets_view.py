"""The planner widget's display: its ipywidgets controls and outputs, HTML tables and small
figures drawn from :func:`labs.hybrid.widgets.compute`'s results (no logic of its own).

Every control and output carries a stable CSS class ``labs-planner-<name>`` and a description
(controls) or tooltip (HTML outputs; the figures have a title instead), for a browser test to
find. Figures are small, drawn on a :class:`matplotlib.figure.Figure` outside pyplot (nothing
to close, no global state) with fixed margins (no tight_layout) and shown as PNG in an
``Image`` widget.
"""
from __future__ import annotations

import html
import io

import ipywidgets as w
from matplotlib.figure import Figure

from labs import plots
from labs.hybrid.planner_types import GiB

__all__ = ["CLASS", "TIMELINE_RANKS", "TIMELINE_MICROBATCHES", "make_controls", "make_outputs",
           "layout", "render", "steps_html", "summary_html", "comm_html", "plans_html",
           "memory_png", "timeline_png", "timeline_size"]

CLASS = "labs-planner"
TIMELINE_RANKS = 4  # at most this many pipeline stages drawn
TIMELINE_MICROBATCHES = 8  # and this many micro-batches
_DESCRIPTIONS = dict(
    preset="Model", n_layers="Layers", hidden="Hidden", n_heads="Heads", seq_len="Seq len",
    vocab="Vocab", gpu="GPU", n_gpus="GPUs", gpus_per_node="GPUs/node",
    global_batch="Global batch", micro_batch="Micro-batch", precision="Precision",
    zero_stage="ZeRO stage", recompute="Recompute", tp="TP (0=auto)", pp="PP (0=auto)",
    dp="DP (0=auto)", v="v (0=auto)")
_OUTPUTS = dict(message="Problems with the inputs", summary="Chosen layout: time and MFU",
                steps="The five steps of decide", memory="Memory per GPU",
                timeline="Pipeline bubble (simulated)", comm="Communication per dimension",
                plans="Top plans")
_STYLE = {"description_width": "90px"}


def _classed(widget, name: str):
    widget.add_class(f"{CLASS}-{name}")
    return widget


def make_controls(values: dict, presets: list, gpus: list) -> dict:
    """name -> control widget, set to ``values``."""
    choices = dict(preset=presets, gpu=gpus, precision=["bf16", "fp16", "fp32"],
                   zero_stage=[0, 1, 2, 3], recompute=["none", "selective", "full"])
    controls = {}
    for name, description in _DESCRIPTIONS.items():
        if name in choices:
            widget = w.Dropdown(options=choices[name], value=values[name])
        else:
            widget = w.IntText(value=values[name])
        widget.description = description
        widget.style = _STYLE
        widget.layout = w.Layout(width="220px")
        controls[name] = _classed(widget, name.replace("_", "-"))
    return controls


def make_outputs() -> dict:
    """name -> output widget (HTML, or Image for the two figures)."""
    outputs = {}
    for name, tooltip in _OUTPUTS.items():
        if name in ("memory", "timeline"):
            # No tooltip on an Image: with one, JupyterLab's widget manager (jupyterlab_widgets
            # 3.0) cannot create its view and the figure never shows. Its title says what it is.
            widget = w.Image(format="png")
        else:
            widget = w.HTML(description="", tooltip=tooltip)
        outputs[name] = _classed(widget, name)
    return outputs


def _titled(title: str, widget):
    return w.VBox([w.HTML(f"<b>{html.escape(title)}</b>"), widget])


def layout(controls: dict, outputs: dict):
    """The whole widget: controls in four columns, then the outputs."""
    groups = (("Model", ("preset", "n_layers", "hidden", "n_heads", "seq_len", "vocab")),
              ("Cluster", ("gpu", "n_gpus", "gpus_per_node")),
              ("Training", ("global_batch", "micro_batch", "precision", "zero_stage",
                            "recompute")),
              ("Layout", ("tp", "pp", "dp", "v")))
    columns = w.HBox([_titled(title, w.VBox([controls[n] for n in names]))
                      for title, names in groups])
    figures = w.HBox([_titled(_OUTPUTS[n], outputs[n]) for n in ("memory", "timeline")])
    body = [outputs["message"], outputs["summary"], figures,
            *(_titled(_OUTPUTS[n], outputs[n]) for n in ("comm", "steps", "plans"))]
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
                    f"{html.escape(str(s.config) if s.config else 'no layout')}</li>")
    note = f"<p>decided at step {r['decided_step']}</p>"
    return note + "<ol>" + "".join(rows) + "</ol>"


def summary_html(r: dict) -> str:
    if r["estimate"] is None:
        return ""
    fits = "fits" if r["fits"] else "does NOT fit: " + "; ".join(r["estimate"].reasons)
    return (f"<p><b>{html.escape(r['mode'])} layout</b>: {html.escape(str(r['config']))} "
            f"({html.escape(fits)})<br>step {r['step_time_s']:.2f} s, "
            f"{r['tokens_per_s']:,.0f} tokens/s "
            f"({r['tokens_per_s'] / r['n_gpus']:,.0f} per GPU), MFU {r['mfu']:.1%}, "
            f"bubble {r['bubble']:.1%}</p>")


def comm_html(r: dict) -> str:
    if not r["comm"]:
        return ""
    rows = [(k.upper(), f"{c['bytes'] / GiB:.2f}", f"{c['seconds']:.3f}", f"{c['exposed']:.3f}",
             c["link"]) for k, c in r["comm"].items()]
    return _table(("dim", "GiB per GPU per step", "time (s)", "exposed (s)", "link"), rows,
                  "comm")


def plans_html(r: dict) -> str:
    estimates = r.get("plan_estimates") or []
    if not estimates:
        return "no fitting plan"
    rows = [(i + 1, html.escape(str(e.config)), f"{e.step_time_s:.2f}",
             f"{e.tokens_per_s:,.0f}", f"{e.mfu:.1%}", f"{e.memory.total / GiB:.1f}")
            for i, e in enumerate(estimates)]
    return _table(("#", "layout", "step (s)", "tokens/s", "MFU", "GiB per GPU"), rows, "plans")


def _message_html(r: dict) -> str:
    if not r["error"]:
        return ""
    return (f'<div class="{CLASS}-error" style="color:#C44E52"><b>Cannot plan this:</b> '
            f"{html.escape(r['error'])}</div>")


# --- figures ---------------------------------------------------------------------------------

def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=plots.DPI)
    return buffer.getvalue()


def memory_png(memory: dict, title: str = "") -> bytes:
    """One stacked bar (GiB) of weights, gradients, optimizer, activations vs usable and
    capacity."""
    fig = Figure(figsize=(4.2, 1.8), dpi=plots.DPI)
    fig.subplots_adjust(left=0.04, right=0.97, top=0.86, bottom=0.45)
    ax = fig.subplots()
    left = 0.0
    colors = ("#4C72B0", "#DD8452", "#55A868", "#8172B2")
    for (name, key), color in zip((("weights", "weights"), ("gradients", "grads"),
                                   ("optimizer", "optimizer"),
                                   ("activations", "activations")), colors):
        width = memory[key] / GiB
        ax.barh(0, width, left=left, color=color, label=name, height=0.5)
        left += width
    ax.axvline(memory["usable"] / GiB, color="#C44E52", linestyle="--", label="usable")
    ax.axvline(memory["capacity"] / GiB, color="#8C8C8C", label="capacity")
    ax.set_yticks([])
    ax.set_xlim(0, max(left, memory["capacity"] / GiB) * 1.05)
    ax.set_title(f"GiB per GPU ({title})" if title else "GiB per GPU", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return _png(fig)


def timeline_size(pp: int, m: int, v: int) -> tuple:
    """(ranks, micro-batches, chunks) drawn: capped, micro-batches a multiple of the ranks
    when interleaved."""
    ranks = min(pp, TIMELINE_RANKS)
    mbs = max(1, min(m, TIMELINE_MICROBATCHES))
    if v > 1 and ranks > 1:
        mbs = ranks * max(1, mbs // ranks)
    return ranks, mbs, (v if ranks > 1 else 1)


def timeline_png(config, n_microbatches: int, bubble: float) -> bytes:
    """A simulated 1F1B (interleaved when v > 1) timeline of the first stages and
    micro-batches (t_F = 1, t_B = 2), in the colours of :func:`labs.plots.plot_timeline` but
    one bar collection per rank and kind (a widget update stays fast)."""
    from labs import pipeline as pp

    ranks, mbs, chunks = timeline_size(config.pp, n_microbatches, config.v)
    name = "interleaved" if chunks > 1 else "1f1b"
    try:
        timeline = pp.simulate(pp.build_schedule(name, ranks, mbs, chunks))
    except ValueError:
        timeline = pp.simulate(pp.build_schedule("1f1b", ranks, mbs))
    fig = Figure(figsize=(4.6, 1.8), dpi=plots.DPI)
    fig.subplots_adjust(left=0.22, right=0.98, top=0.86, bottom=0.22)
    ax = fig.subplots()
    for r, events in enumerate(timeline.events):
        for kind in ("F", "B"):
            spans = [(e.start, e.end - e.start) for e in events if e.kind == kind]
            ax.broken_barh(spans, (r - 0.4, 0.8), color=plots.COLORS[kind],
                           edgecolor="white", linewidth=0.5)
    labels = [f"stage {r} idle {idle:.0%}" for r, idle in enumerate(timeline.idle_fraction())]
    ax.set_yticks(range(ranks), labels, fontsize=6)
    ax.set_ylim(ranks - 0.5, -0.5)
    ax.set_xlim(*timeline.span())
    ax.set_xlabel("time (t_F = 1)", fontsize=7)
    ax.tick_params(axis="x", labelsize=6)
    ax.set_title(f"{ranks} of {config.pp} stages, {mbs} of {n_microbatches} micro-batches, "
                 f"v={chunks}; step bubble {bubble:.1%}", fontsize=7)
    return _png(fig)


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
    stage = f"stage {est.memory.stage}, {r['gpu'].name}"
    outputs["memory"].value = memory_png(r["memory"], title=stage)
    outputs["timeline"].value = timeline_png(est.config, est.n_microbatches, est.bubble)
