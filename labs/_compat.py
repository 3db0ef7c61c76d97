"""Adapters that keep the old names of the flat layout working where a signature changed.

Only the old module paths use them (see :mod:`labs._moved`): each adapter calls the new owner of
the formula and returns what the old function returned. Removed with the old paths, in labs 0.2.

Owns: the old signatures only. Must not: hold a formula of its own (each adapter calls the new
owner) or be imported by anything but :mod:`labs._moved`'s old paths.
"""
from __future__ import annotations

from labs.formulas import cost, memory
from labs.messages import text
from labs.tensor_parallel import experiments as _tp_experiments
from labs.notebook.timeline import Event, Timeline

ADAM_MIXED_BYTES_PER_PARAM = 16  # old labs.pipeline_planning constant


def _mixed_adam(bytes_per_param: float) -> None:
    if bytes_per_param != ADAM_MIXED_BYTES_PER_PARAM:
        raise TypeError(text("runtime.compat_bytes_per_param"))


# --- labs.tensor_parallel_planning --------------------------------------------------------------

def tp_layer_comm(*, batch, seq, hidden, tp, bytes_per_element=4, sequence_parallel=False):
    out = cost.tp_layer_comm(batch=batch, seq_len=seq, hidden=hidden, tp=tp,
                             bytes_per_element=bytes_per_element,
                             sequence_parallel=sequence_parallel)
    out["sent_per_rank"] = out.pop("sent_bytes_per_rank")
    return out


def layerwise_comm(*, batch, seq, hidden, stages, bytes_per_element=4):
    out = cost.layerwise_comm(batch=batch, seq_len=seq, hidden=hidden, stages=stages,
                              bytes_per_element=bytes_per_element)
    out["sent_by_a_middle_rank"] = out.pop("sent_bytes_by_a_middle_rank")
    return out


# --- labs.pipeline_planning -----------------------------------------------------------------------

def transformer_layer_params(hidden):
    return memory.transformer_layer_params(hidden, biases=False)


def model_state_bytes(n_params, bytes_per_param=ADAM_MIXED_BYTES_PER_PARAM):
    _mixed_adam(bytes_per_param)
    return memory.model_state_bytes(n_params, "adam", "mixed").total


def states_per_gpu(n_params, tp, pp, bytes_per_param=ADAM_MIXED_BYTES_PER_PARAM):
    _mixed_adam(bytes_per_param)
    return memory.model_state_bytes_per_gpu(n_params, tp=tp, pp=pp, optimizer="adam",
                                            precision="mixed").total


def judge_pipeline(n_layers, hidden, gpu_bytes, *, tp=None,
                   bytes_per_param=ADAM_MIXED_BYTES_PER_PARAM, usable=0.7):
    _mixed_adam(bytes_per_param)
    d = cost.pp_decision(n_layers, hidden, gpu_bytes, tp=tp, budget=usable)
    return dict(layer_state_bytes=d.layer_state_bytes, fits_one_card=d.tp_needed == 1,
                tp_needed=d.tp_needed, tp=d.tp, layers_per_gpu=d.layers_per_gpu,
                min_stages=d.pp)


def pp_bytes_per_step(micro_batch, seq_len, hidden, n_microbatches, dtype_bytes=2):
    return cost.pp_bytes_per_step(micro_batch, seq_len, hidden, n_microbatches, dtype_bytes)


def tp_bytes_per_step(micro_batch, seq_len, hidden, n_microbatches, n_layers, tp, dtype_bytes=2):
    return cost.tp_bytes_per_step(micro_batch, seq_len, hidden, n_microbatches, n_layers, tp,
                                  dtype_bytes)


# --- labs.tensor_parallel_experiments, labs.plots_tp: timelines as (rank, what, start, end) -------

def layerwise_step(*args, **kwargs):
    loss, events, comm_events, grads = _tp_experiments.layerwise_step(*args, **kwargs)
    return loss, [(e.stage, e.kind, e.start, e.end) for e in events], comm_events, grads


def overlap_backward(*args, **kwargs):
    import torch.distributed as dist

    seconds, events, grad = _tp_experiments.overlap_backward(*args, **kwargs)
    rank = dist.get_rank()
    return seconds, [(rank, e.kind, e.start, e.end) for e in events], grad


def plot_timeline(events, *, title, lanes=None, row_prefix="rank", figsize=None):
    """Old signature: events ``(row, what, start_s, end_s)``, rows split into lanes by kind."""
    # why here: labs.notebook.plots imports matplotlib (~3 s); only this old plotting name needs it
    from labs.notebook.plots import plot_timeline as new

    events = list(events)
    keys = sorted({(e[0], lanes.get(e[1], e[1]) if lanes else "") for e in events})
    rows = [[Event(what, None, None, start, end) for row, what, start, end in events
             if (row, lanes.get(what, what) if lanes else "") == key] for key in keys]
    labels = [f"{row_prefix} {r}" + (f" {lane}" if lane else "") for r, lane in keys]
    return new(Timeline(rows, rows=labels), title=title, show_idle=False, figsize=figsize)
