"""What notebook 2.2's measurements say (the ``interpret_*`` readings), in the notebook's
language (messages ``tensor_parallel_readings.*``): the general expectation, whether this
machine's numbers agree, and why not when they do not (a few CPU cores shared by the ranks,
gloo over loopback instead of NVLink). Each reading first checks the physical bound its
measurement implies (a speedup above what overlap can hide, busy shares above 100 %, a rank
starting before the rank it waits for has finished) and, when the numbers break it, says the
measurement is noise and what to rerun instead of concluding.

Takes plain numbers (and a :class:`labs.notebook.timeline.Timeline` for :func:`layerwise_spans`); runs
no experiment and imports nothing of :mod:`labs.tensor_parallel.experiments`.

Must not: run an experiment or communicate, draw or print, or import the checks or the grader.
"""
from __future__ import annotations

from typing import Sequence

from labs.messages import joined, text
from labs.notebook.timeline import Timeline

__all__ = ["NOISE", "layerwise_spans", "overlap_parts", "interpret_layerwise", "interpret_overlap",
           "interpret_tp_scaling", "interpret_activations"]

NOISE = 0.05  # relative differences below 5 % are within this course's timing noise



def _crowded(ranks: int, cores: int | None) -> str:
    """Why a CPU run differs from GPUs: the ranks share the cores, gloo goes over loopback."""
    if cores is not None and ranks > cores:
        return text("tensor_parallel_readings.crowded_cores", ranks=ranks, cores=cores)
    return text("tensor_parallel_readings.crowded")


def _crowded_for(degrees: Sequence[int], cores: int | None) -> str:
    """Why steps at these TP degrees were slow: the ranks crammed onto too few cores only
    where there are more ranks than cores (TP=2 on 2 cores is not crowded, TP=4 is)."""
    crowded = [t for t in degrees if cores is not None and t > cores]
    if not crowded or len(crowded) == len(degrees):
        return _crowded(max(degrees), cores)
    return text("tensor_parallel_readings.crowded_some", crowded=_crowded(min(degrees), cores),
                degrees=joined(map(str, crowded)),
                ranks=max(crowded), cores=cores)


def layerwise_spans(timeline: Timeline) -> dict:
    """``{"forward": [(start, end) per rank], "backward": [...]}`` of one layer-wise step's
    timeline (a rank's phase spans its first start to its last end of that kind)."""
    spans = {}
    for phase in ("forward", "backward"):
        spans[phase] = [(min(e.start for e in row if e.kind == phase),
                         max(e.end for e in row if e.kind == phase)) for row in timeline.events]
    return spans


#: A pass whose hand-offs are out of order -> the reading that says so.
OUT_OF_ORDER = {"forward": "tensor_parallel_readings.layerwise_out_of_order_forward",
                "backward": "tensor_parallel_readings.layerwise_out_of_order_backward"}
CLOCK_SLACK = 1e-4  # seconds: a later rank may start this early and still count as after


def _out_of_order(spans: dict):
    """The first hand-off of a layer-wise step that the clocks put in the wrong order: rank
    r+1's forward starts after rank r's forward ends (it waits for the activations), rank r's
    backward after rank r+1's (it waits for the gradient). (phase, earlier, later, seconds)."""
    forward, backward = spans["forward"], spans["backward"]
    for r in range(len(forward) - 1):
        for phase, a, b, first, then in (("forward", r, r + 1, forward[r], forward[r + 1]),
                                         ("backward", r + 1, r, backward[r + 1], backward[r])):
            early = first[1] - then[0]
            if early > CLOCK_SLACK:
                return phase, a, b, early
    return None


def interpret_layerwise(busy: Sequence[float], *, spans: dict | None = None) -> str:
    """Section 1 of 2.2: each rank's busy share of one layer-wise step (``Timeline.busy_seconds``
    divided by the span), and optionally each rank's forward and backward spans
    (:func:`layerwise_spans`). Expected: at most one rank computes at a time, so the shares add
    up to at most 100 %, and each rank starts after its predecessor ends. A measurement that
    breaks these bounds (a total above 100 %, a share outside 0-100 %, a rank starting before
    the one it waits for has finished) is noise or clock skew: the reading says so and asks for
    a rerun instead of concluding."""
    n, total = len(busy), sum(busy)
    mean = total / n
    shares = joined(f"{b:.0%}" for b in busy)
    head = text("tensor_parallel_readings.layerwise_head", n=n, shares=shares, total=total, ideal=1 / n)
    if min(busy) < 0 or max(busy) > 1 or total > 1 + NOISE:
        return head + "\n" + text("tensor_parallel_readings.layerwise_overlapping")
    wrong = _out_of_order(spans) if spans is not None else None
    if wrong is not None:
        phase, earlier, later, early = wrong
        return head + "\n" + text(OUT_OF_ORDER[phase], later=later, earlier=earlier,
                                   ms=early * 1e3)
    conclusion = text("tensor_parallel_readings.layerwise_serial", mean=mean)
    if total < 0.7:
        conclusion = text("tensor_parallel_readings.layerwise_idle", conclusion=conclusion, rest=1 - total)
    if min(busy) > 0 and max(busy) / min(busy) > 1.5:
        conclusion += text("tensor_parallel_readings.layerwise_uneven", low=min(busy), high=max(busy))
    return head + "\n" + conclusion


def overlap_parts(events) -> dict:
    """Seconds of the all-reduce and of the weight gradient in one repeat of
    :func:`overlap_backward` (its events): the most overlap can hide is the smaller one."""
    out = {"all-reduce": 0.0, "grad weight": 0.0}
    for e in events:
        if e.kind in out:
            out[e.kind] += e.end - e.start
    return out


def interpret_overlap(no_overlap_s: float, overlap_s: float, *, ranks: int, cores: int | None,
                      comm_s: float | None = None, weight_grad_s: float | None = None) -> str:
    """Section 5 of 2.2: backward of a column-parallel layer without and with the all-reduce
    overlapped with the weight gradient. Expected on GPUs: faster, by up to
    min(all-reduce, weight gradient); on a few shared CPU cores: little or nothing. A speedup
    above that bound (or a time <= 0) is impossible: the reading calls it noise and asks for a
    rerun instead of concluding."""
    if min(no_overlap_s, overlap_s) <= 0:
        return text("tensor_parallel_readings.overlap_impossible_time", no_ms=no_overlap_s * 1e3,
                    yes_ms=overlap_s * 1e3)
    speedup = no_overlap_s / overlap_s
    times = dict(no_ms=no_overlap_s * 1e3, yes_ms=overlap_s * 1e3, speedup=speedup)
    if comm_s is not None and weight_grad_s is not None:
        hidden = min(comm_s, weight_grad_s)
        best = no_overlap_s / max(no_overlap_s - hidden, 1e-12)
        head = text("tensor_parallel_readings.overlap_times_bound", **times, comm_ms=comm_s * 1e3,
                  wgrad_ms=weight_grad_s * 1e3, best=best)
        if hidden >= no_overlap_s or speedup > best * (1 + NOISE):
            # the step saved more than the shorter part lasts: the load changed between runs
            return head + "\n" + text("tensor_parallel_readings.overlap_above_bound", speedup=speedup,
                                       best=best, saved_ms=(no_overlap_s - overlap_s) * 1e3,
                                       hidden_ms=hidden * 1e3)
    else:
        head = text("tensor_parallel_readings.overlap_times", **times)
    if speedup >= 1 + NOISE:
        conclusion = text("tensor_parallel_readings.overlap_gain", saved=1 - 1 / speedup)
        if cores is not None and ranks > cores:
            conclusion = text("tensor_parallel_readings.overlap_gain_fewer_cores", conclusion=conclusion)
        return head + "\n" + conclusion
    if speedup > 1 - NOISE:
        conclusion = text("tensor_parallel_readings.overlap_noise")
    else:
        conclusion = text("tensor_parallel_readings.overlap_slower", slower=1 / speedup - 1)
    return head + "\n" + text("tensor_parallel_readings.overlap_why", conclusion=conclusion,
                               crowded=_crowded(ranks, cores))


def interpret_tp_scaling(degrees: Sequence[int], compute: Sequence[float],
                         communication: Sequence[float], *, cores: int | None) -> str:
    """Section 6 of 2.2 (myth 1): one TP block at t = degrees[i], seconds of compute and of
    communication per step (the slowest rank). Expected: compute ~ 1/t, communication share
    rising, efficiency T_1 / (t · T_t) falling."""
    steps = [c + m for c, m in zip(compute, communication)]
    shares = [m / s for m, s in zip(communication, steps)]
    base = steps[0] if degrees[0] == 1 else None
    lines = []
    rising = all(b >= a - NOISE for a, b in zip(shares, shares[1:]))
    trend = " → ".join(f"{x:.0%}" for x in shares)
    lines.append(text("tensor_parallel_readings.tp_share_rising" if rising
                      else "tensor_parallel_readings.tp_share_not_rising", trend=trend))
    for t, c in zip(degrees, compute):
        if t == 1 or degrees[0] != 1:
            continue
        ratio = c / compute[0]
        if ratio > 1 + NOISE:
            lines.append(text("tensor_parallel_readings.tp_compute_slower", t=t, ratio=ratio, cores=cores))
        elif ratio <= 1.3 / t:
            lines.append(text("tensor_parallel_readings.tp_compute_scaled", t=t, ratio=ratio, ideal=1 / t))
        elif cores is not None and t > cores:
            lines.append(text("tensor_parallel_readings.tp_compute_few_cores", t=t, ratio=ratio,
                              ideal=1 / t, cores=cores))
        else:
            lines.append(text("tensor_parallel_readings.tp_compute_small_matrices", t=t, ratio=ratio, ideal=1 / t))
    if base is not None:
        effs = [base / (t * s) for t, s in zip(degrees, steps)]
        slower = [t for t, s in zip(degrees, steps) if t > 1 and s > base * (1 + NOISE)]
        falling = all(b <= a + NOISE for a, b in zip(effs, effs[1:]))
        efficiency = text("tensor_parallel_readings.tp_efficiency_falling" if falling
                          else "tensor_parallel_readings.tp_efficiency_noisy",
                        effs=" → ".join(f"{e:.0%}" for e in effs))
        if slower:
            efficiency = text("tensor_parallel_readings.tp_slower_than_one", efficiency=efficiency,
                            degrees=joined(map(str, slower)),
                            crowded=_crowded_for(slower, cores))
        lines.append(efficiency)
    lines.append(text("tensor_parallel_readings.tp_conclusion_expected" if rising
                      else "tensor_parallel_readings.tp_conclusion_unexpected"))
    return "\n".join(lines)


def interpret_activations(measured: dict, *, cores: int | None) -> str:
    """Section 7 of 2.2 (myth 2): ``{variant: (activation bytes per rank, step seconds)}`` with
    the variants "TP=1", "TP=2", "TP=2 + SP", "TP=1 + checkpointing" (others are ignored).
    Bytes: TP=2 does not halve them (replicated regions), SP cuts more, checkpointing keeps one
    input per block. Time: checkpointing adds one forward, about 1/3 of forward + backward
    (backward ~ 2 x forward), i.e. ~1.33 x; TP on a few CPU cores may be slower than TP=1."""
    b1, s1 = measured["TP=1"]
    lines = []
    if "TP=2" in measured:
        b2, s2 = measured["TP=2"]
        memory = text("tensor_parallel_readings.act_tp2", ratio=b2 / b1)
        if "TP=2 + SP" in measured:
            memory = text("tensor_parallel_readings.act_tp2_sp", memory=memory, ratio=measured["TP=2 + SP"][0] / b1)
        lines.append(memory)
        ratio = s2 / s1
        if ratio > 1 + NOISE:
            lines.append(text("tensor_parallel_readings.act_time_slower", ratio=ratio, crowded=_crowded(2, cores)))
        elif ratio < 1 - NOISE:
            lines.append(text("tensor_parallel_readings.act_time_faster", ratio=ratio))
        else:
            lines.append(text("tensor_parallel_readings.act_time_noise", ratio=ratio))
    if "TP=1 + checkpointing" in measured:
        bc, sc = measured["TP=1 + checkpointing"]
        cost_ratio = sc / s1
        head = text("tensor_parallel_readings.act_ckpt_head", bytes_ratio=bc / b1, cost_ratio=cost_ratio)
        if cost_ratio > 1.6:
            lines.append(text("tensor_parallel_readings.act_ckpt_expensive", head=head))
        elif cost_ratio < 1.15:
            lines.append(text("tensor_parallel_readings.act_ckpt_cheap", head=head))
        else:
            lines.append(text("tensor_parallel_readings.act_ckpt_expected", head=head))
    lines.append(text("tensor_parallel_readings.act_conclusion"))
    return "\n".join(lines)
