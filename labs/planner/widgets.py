"""An interactive 3D-parallelism planner for notebooks: controls in, the planner's answers out.

The logic is pure and testable without a browser (:func:`compute` turns plain control values
into a results dict); :class:`PlannerWidget` only wires ipywidgets controls to it and renders
the results with :mod:`labs.planner.view`::

    from labs.planner.widgets import planner_widget
    w = planner_widget(preset="GPT-3 175B", n_gpus=1024, global_batch=1536)
    w.display()                       # or leave ``w`` as the cell's last value
    w.set(tp=8, pp=16)                # from Python: one recomputation
    w.results()["step_time_s"]        # what the outputs show, as numbers

Layout rule (``tp``, ``pp``, ``dp``, ``v``; 0 or "auto" = free):

- two or three of tp / pp / dp fixed: a *fixed* layout (the third is n_gpus / the product),
  estimated with :func:`~labs.planner.estimate` (v free: the fastest valid v, fitting first;
  the micro-batch and ZeRO stage are the training controls');
- otherwise *auto*: :func:`~labs.planner.plan`'s fitting layouts that match the fixed
  values, fastest first; the first one is shown.

The ``schedule`` control: "1f1b", or "zb-h1" to try ZB-H1 beside 1F1B on v = 1 layouts.

The *deciding* step of :func:`~labs.planner.decide` is the first step whose layout
(tp, pp, dp) is the final one -- where the chapter's walk settled the shape; when no layout
fits, the last step (which says so).

Owns: the widget's state and callbacks, presets and defaults. Must not: compute an estimate itself
(labs.planner), draw (labs.planner.view), print, or be imported by the checks or the grader.
"""
from __future__ import annotations

import contextlib
import time

from traitlets import TraitError

from labs import planner as pl
from labs.hardware import GPUS
from labs.planner.search import CHUNKS, pipelines
from labs.messages import joined, sentences, text

__all__ = ["PRESETS", "CUSTOM", "MODEL_FIELDS", "SHAPE_FIELDS", "DEFAULTS", "LAYOUT_FIELDS", "build_inputs",
           "choose_layout", "decided_step", "notes", "link_names", "compute", "PlannerWidget",
           "planner_widget"]

_MODEL_KEYS = ("n_layers", "hidden", "n_heads", "seq_len", "vocab")
PRESETS = {name: dict(zip(_MODEL_KEYS, shape), **extra) for name, shape, extra in (
    ("BERT-Base", (12, 768, 12, 512, 30522), {}),
    ("1.5B (GPT-2 XL shape)", (48, 1600, 25, 1024, 50257), {}),
    ("GPT-3 175B", (96, 12288, 96, 2048, 51200), {}),
    ("MT-NLG 530B", (105, 20480, 128, 2048, 51200), {}),
    ("LLaMA-65B", (80, 8192, 64, 2048, 32000),
     dict(ffn_hidden=22016, mlp="swiglu", tied_embeddings=False, learned_positions=False)),
)}
CUSTOM = "custom"  # a GPT-style model (GELU MLP, tied embeddings, learned positions)
MODEL_FIELDS = _MODEL_KEYS
#: The shape beyond the five sizes, editable in "custom" (a preset shows its own): KV heads
#: (0 = as many as the heads: no GQA), MLP width (0 = 4·hidden) and MLP kind.
SHAPE_FIELDS = ("n_kv_heads", "ffn_hidden", "mlp")
LAYOUT_FIELDS = ("tp", "pp", "dp", "v")
DEFAULTS = dict(preset="GPT-3 175B", **PRESETS["GPT-3 175B"], gpu="A100-80GB", n_gpus=1024,
                gpus_per_node=8, global_batch=1536, micro_batch=1, precision="bf16",
                zero_stage=0, recompute="full", schedule="1f1b", tp=0, pp=0, dp=0, v=0,
                n_kv_heads=0, ffn_hidden=0, mlp="gelu")
_NAMES = ("preset", *MODEL_FIELDS, *SHAPE_FIELDS, "gpu", "n_gpus", "gpus_per_node", "global_batch",
          "micro_batch", "precision", "zero_stage", "recompute", "schedule", *LAYOUT_FIELDS)


def _layout_value(name: str, value) -> int:
    """0 / None / "auto" -> 0 (free); a non-negative integer otherwise."""
    if value in (None, "auto", "", 0):
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(text("widgets.layout_value", name=name, value=value))
    return value


def build_inputs(values: dict) -> tuple:
    """(Model, Cluster, Training) from control values; ValueError with the planner's message."""
    preset = values["preset"]
    if preset == CUSTOM:
        spec = {k: values[k] for k in MODEL_FIELDS}
        spec.update(n_kv_heads=values.get("n_kv_heads") or None,
                    ffn_hidden=values.get("ffn_hidden") or None, mlp=values.get("mlp", "gelu"))
    elif preset in PRESETS:
        spec = PRESETS[preset]
    else:
        raise ValueError(text("widgets.unknown_preset", preset=preset,
                              choices=[*PRESETS, CUSTOM]))
    model = pl.Model(**spec)
    cluster = pl.Cluster(gpu=values["gpu"], n_gpus=values["n_gpus"],
                         gpus_per_node=values["gpus_per_node"])
    train = pl.Training(global_batch=values["global_batch"], micro_batch=values["micro_batch"],
                        precision=values["precision"], zero_stage=values["zero_stage"],
                        recompute=values["recompute"])
    return model, cluster, train


def _fixed_layout(cluster, tp, pp, dp) -> tuple | None:
    """(tp, pp, dp) when at least two are fixed (the third derived), else None."""
    if sum(x > 0 for x in (tp, pp, dp)) < 2:
        return None
    if tp and pp and dp:
        return tp, pp, dp
    known = max(tp, 1) * max(pp, 1) * max(dp, 1)
    if cluster.n_gpus % known:
        raise ValueError(text("widgets.fixed_product", known=known, n_gpus=cluster.n_gpus))
    rest = cluster.n_gpus // known
    return tp or rest, pp or rest, dp or rest


def _check_fixed(model, cluster, fixed: dict) -> None:
    """Raise ValueError for a single fixed degree no layout can have."""
    for name, x in fixed.items():
        if x and cluster.n_gpus % x:
            raise ValueError(text("widgets.degree_divides", name=name, x=x,
                                  n_gpus=cluster.n_gpus))
    tp = fixed["tp"]
    if tp and (model.n_heads % tp or model.n_kv_heads % tp):
        raise ValueError(text("planner.tp_heads", tp=tp, n_heads=model.n_heads,
                              n_kv_heads=model.n_kv_heads))


def _matches(config, fixed: dict) -> bool:
    return all(getattr(config, k) == v for k, v in fixed.items() if v)


def choose_layout(model, cluster, train, *, tp=0, pp=0, dp=0, v=0, top=5, plans=None,
                  schedules=("1f1b",)) -> tuple:
    """(mode, Estimate or None, the top matching plans, message or None); see the module
    docstring for the rule. ``plans``: a full :func:`plan` result to reuse (searched with
    ``schedules``). Raises ValueError for a fixed layout that cannot exist."""
    tp, pp, dp, v = (_layout_value(n, x) for n, x in zip(LAYOUT_FIELDS, (tp, pp, dp, v)))
    found = plans if plans is not None else pl.plan(model, cluster, train, top=10**9,
                                                    schedules=schedules)
    fixed = _fixed_layout(cluster, tp, pp, dp)
    if fixed is not None:
        est = _fixed_estimate(model, cluster, train, fixed, v, schedules)
        return "fixed", est, list(found[:top]), None
    _check_fixed(model, cluster, dict(tp=tp, pp=pp, dp=dp))
    if v and v not in CHUNKS:
        raise ValueError(text("widgets.v_searched", v=v, chunks=CHUNKS))
    wanted = dict(tp=tp, pp=pp, dp=dp, v=v)
    matching = [e for e in found if _matches(e.config, wanted)][:top]
    if matching:
        return "auto", matching[0], matching, None
    fixed = joined((f"{k}={x}" for k, x in wanted.items() if x), "comma")
    where = dict(n_gpus=cluster.n_gpus, gpu=cluster.gpu.name)
    head = (text("widgets.no_layout_fits_fixed", fixed=fixed, **where) if fixed
            else text("widgets.no_layout_fits_any", **where))
    families = [text("widgets.rejected_family", family=k, reason=r)
                for k, r in found.rejected.items() if not tp or k.split(",")[0] == f"tp={tp}"]
    shown = 4  # one line per family, whole; the rest counted
    listed = "\n".join(f"- {f}" for f in families[:shown]) + (
        "\n" + text("widgets.more_rejected", n=len(families) - shown)
        if len(families) > shown else "")
    message = sentences(head, text("widgets.search_tried"),
                        listed and text("widgets.families_ruled_out", families=listed))
    return "auto", None, [], message


def _fixed_estimate(model, cluster, train, fixed: tuple, v: int, schedules) -> pl.Estimate:
    """The fixed layout's estimate, the fastest valid (v, schedule) of :func:`pipelines` (v
    free when 0), fitting first; the first pair's error is raised when none is valid."""
    tp, pp, dp = fixed
    pairs = [(c, s) for c, s in pipelines(pp, schedules) if c == (v or c)] or [(v, "1f1b")]
    found = []
    for chunks, schedule in pairs:
        try:
            found.append(pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=chunks,
                                     schedule=schedule))
        except ValueError:
            if (chunks, schedule) == pairs[0]:
                raise
    return min(found, key=lambda e: (not e.fits, e.step_time_s))


def notes(values: dict, cluster, train, r: dict) -> list:
    """What the screen would otherwise leave unsaid about the layout shown in ``r``."""
    est, out = r["estimate"], []
    if est is None:
        return out
    c = est.config
    if r["mode"] == "auto":
        out.append(text("widgets.note_auto_searched", micro_batch=c.micro_batch, v=c.v,
                        zero_stage=c.zero_stage, recompute=c.recompute))
    elif not _layout_value("v", values.get("v", 0)):
        out.append(text("widgets.note_v_searched", chunks=CHUNKS, v=c.v))
    if c.tp > cluster.gpus_per_node:
        out.append(text("widgets.note_tp_across_nodes", tp=c.tp, per_node=cluster.gpus_per_node))
    final = r["steps"][-1].config if r["steps"] else None
    if final is not None and (final.tp, final.pp, final.dp, final.v) != (c.tp, c.pp, c.dp, c.v):
        shown = text("widgets.shown_search" if r["mode"] == "auto" else "widgets.shown_fixed")
        out.append(text("widgets.note_steps_differ", shown=shown, steps=final))
    if c.zero_stage == 3:
        out.append(text("widgets.note_zero3"))
    if values.get("schedule", "1f1b") != "1f1b":
        out.append(text("widgets.note_schedule", schedule=c.schedule))
    out.append(text("widgets.note_recompute", recompute=c.recompute or train.recompute))
    return out


def decided_step(steps: list) -> int | None:
    """The first step whose (tp, pp, dp) is the final step's; the last step when no layout
    came out; None without steps."""
    if not steps:
        return None
    final = steps[-1].config
    if final is None:
        return steps[-1].number
    shape = (final.tp, final.pp, final.dp)
    return next(s.number for s in steps
                if s.config is not None and (s.config.tp, s.config.pp, s.config.dp) == shape)


def link_names(cluster, config) -> dict:
    """The link each dimension's group uses: TP innermost, then PP, DP outermost; a group that
    spans at most one node's GPUs is on NVLink, else InfiniBand (the planner's rule)."""
    spans = {"tp": config.tp, "pp": config.tp * config.pp, "dp": cluster.n_gpus}
    return {k: "NVLink" if span <= cluster.gpus_per_node else "InfiniBand"
            for k, span in spans.items()}


def _decide(model, cluster, train) -> tuple:
    try:
        return pl.decide(model, cluster, train), None
    except ValueError as exc:
        return [], text("widgets.decide_stops", error=exc)


def compute(values: dict, *, top: int = 5, cache: dict | None = None) -> dict:
    """The planner's answers for plain control values (see :data:`DEFAULTS` for the keys).

    Never raises for bad input: ``error`` holds the message (None when a layout is shown).
    ``cache``: a dict kept by the caller, so that changing only the layout controls does not
    rerun :func:`decide` and :func:`plan` (keyed by the inputs)."""
    out = dict(error=None, mode=None, steps=[], decide_error=None, decided_step=None,
               estimate=None, config=None, fits=False, memory=None, bubble=None, comm=None,
               step_time_s=None, tokens_per_s=None, mfu=None, plans=[], n_gpus=None,
               gpu=None, notes=[])
    try:
        model, cluster, train = build_inputs(values)
    except (ValueError, TypeError) as exc:
        return dict(out, error=str(exc))
    out.update(n_gpus=cluster.n_gpus, gpu=cluster.gpu)
    schedules = ("1f1b", "zb-h1") if values.get("schedule") == "zb-h1" else ("1f1b",)
    key = (model, cluster, train, schedules)
    if cache is not None and cache.get("key") == key:
        steps, decide_error, found = cache["steps"], cache["decide_error"], cache["plans"]
    else:
        steps, decide_error = _decide(model, cluster, train)
        found = pl.plan(model, cluster, train, top=10**9, schedules=schedules)
        if cache is not None:
            cache.update(key=key, steps=steps, decide_error=decide_error, plans=found)
    out.update(steps=steps, decide_error=decide_error, decided_step=decided_step(steps))
    try:
        mode, est, plans, message = choose_layout(
            model, cluster, train, **{k: values[k] for k in LAYOUT_FIELDS}, top=top,
            plans=found, schedules=schedules)
    except ValueError as exc:
        return dict(out, error=str(exc))
    out.update(mode=mode, plans=[e.config for e in plans], plan_estimates=plans, error=message)
    if est is None:
        return out
    mem = est.memory
    out.update(estimate=est, config=est.config, fits=est.fits, bubble=est.bubble,
               memory=dict(weights=mem.weights, grads=mem.grads, optimizer=mem.optimizer,
                           activations=mem.activations, total=mem.total, usable=mem.usable,
                           capacity=cluster.gpu.memory_bytes),
               comm={k: dict(bytes=est.comm_bytes[k], seconds=est.comm_s[k],
                             exposed=est.exposed_s[k], link=link)
                     for k, link in link_names(cluster, est.config).items()},
               step_time_s=est.step_time_s, tokens_per_s=est.tokens_per_s, mfu=est.mfu)
    out["notes"] = notes(values, cluster, train, out)
    return out


class PlannerWidget:
    """The planner's controls and live outputs (build with :func:`planner_widget`).

    ``controls``: name -> ipywidget (names as in :data:`DEFAULTS`); ``outputs``: name ->
    ipywidget (``message``, ``summary``, ``steps``, ``memory``, ``timeline``, ``comm``,
    ``plans``). Every change of a control recomputes once (``observe``); :meth:`set` changes
    several at once and recomputes once. ``last_update_s``: the last refresh's wall time."""

    def __init__(self, **initial):
        # why here: view imports ipywidgets and matplotlib; compute() (no display) needs neither
        from labs.planner import view

        unknown = set(initial) - set(_NAMES)
        if unknown:
            raise ValueError(text("widgets.unknown_controls", names=sorted(unknown),
                                  choices=list(_NAMES)))
        self._view = view
        self._cache: dict = {}
        self._hold = 0
        self._results: dict = {}
        self.updates = 0
        self.last_update_s = 0.0
        values = dict(DEFAULTS, **initial)
        if "preset" not in initial and any(k in initial for k in (*MODEL_FIELDS,
                                                                   *SHAPE_FIELDS)):
            values["preset"] = CUSTOM
        self.controls = view.make_controls(values, [*PRESETS, CUSTOM], sorted(GPUS))
        self.outputs = view.make_outputs()
        self._sync_model_fields()
        for name, control in self.controls.items():
            control.observe(self._on_change, names="value")
        self.box = view.layout(self.controls, self.outputs)
        self.refresh()

    # --- values -----------------------------------------------------------------------------
    def state(self) -> dict:
        """The controls' current values (layout fields: 0 = auto)."""
        return {name: control.value for name, control in self.controls.items()}

    def results(self) -> dict:
        """What the outputs show, as numbers (see :func:`compute`)."""
        return self._results

    def set(self, **values) -> dict:
        """Set controls from Python ("auto" = 0 for tp / pp / dp / v); recompute once; return
        :meth:`results`. Unknown names raise ValueError."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(text("widgets.unknown_controls", names=sorted(unknown),
                                  choices=list(self.controls)))
        if "preset" not in values and any(k in values for k in (*MODEL_FIELDS, *SHAPE_FIELDS)):
            values = dict(preset=CUSTOM, **values)
        names = sorted(values, key=lambda n: n != "preset")  # the preset before its fields
        with self._held():
            for name in names:
                value = values[name]
                if name in LAYOUT_FIELDS and value in ("auto", None):
                    value = 0
                try:
                    self.controls[name].value = value
                except TraitError as exc:  # a wrong type or an option the dropdown lacks
                    raise ValueError(text("widgets.not_accepted", name=name, value=value,
                                          error=exc)) from None
        return self._results

    @contextlib.contextmanager
    def _held(self, refresh: bool = True):
        """Changes inside recompute once, at the end (``refresh=False``: not at all)."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
        if refresh and not self._hold:
            self.refresh()

    def _sync_model_fields(self, *, switched: bool = False) -> None:
        """Preset: its fields shown, read-only. Custom: editable; on switching to it the shape
        fields start from the plain GPT (0 = derived, GELU), not the last preset's."""
        preset = self.controls["preset"].value
        custom = preset == CUSTOM
        with self._held(refresh=False):
            if custom and switched:
                for name in SHAPE_FIELDS:
                    self.controls[name].value = DEFAULTS[name]
            shape = {} if custom else vars(pl.Model(**PRESETS[preset]))
            for name in (*MODEL_FIELDS, *SHAPE_FIELDS):
                field = self.controls[name]
                field.disabled = not custom
                if not custom:
                    field.value = shape[name]

    def _on_change(self, change) -> None:
        if change["owner"] is self.controls["preset"]:
            self._sync_model_fields(switched=True)
        if not self._hold:
            self.refresh()

    # --- outputs ----------------------------------------------------------------------------
    def refresh(self) -> dict:
        """Recompute from the controls and redraw every output."""
        start = time.perf_counter()
        self._results = compute(self.state(), cache=self._cache)
        self._view.render(self.outputs, self._results)
        self.updates += 1
        self.last_update_s = time.perf_counter() - start
        return self._results

    def display(self):
        from IPython.display import display

        display(self.box)

    def _ipython_display_(self):
        self.display()


def planner_widget(**initial) -> PlannerWidget:
    """A :class:`PlannerWidget` starting from :data:`DEFAULTS` updated with ``initial``
    (model fields without ``preset`` select "custom")."""
    return PlannerWidget(**initial)
