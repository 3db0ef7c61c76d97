"""Searching layouts (:func:`plan`) and walking the chapter's five steps (:func:`decide`) with
the estimates of :mod:`labs.planner.model`.

Owns: :func:`plan` and :func:`decide`. Must not: estimate a layout itself (labs.planner.model),
import the widget or the grader, or print."""
from __future__ import annotations

from dataclasses import dataclass, replace

from labs.formulas import memory
from labs.messages import text
from labs.parallel_dims import ParallelDims
from labs.planner.model import estimate, layers_per_stage, stage_memory, stages
from labs.planner.types import (GiB, SCHEDULES, Cluster, Config, Efficiency, Estimate, Model,
                                Training, check_hardware, pipeline_chunks)

__all__ = ["MICRO_BATCHES", "CHUNKS", "LAYER_BUDGET", "SEARCH", "Plans", "Step", "plan",
           "decide", "candidates"]

MICRO_BATCHES = (1, 2, 4, 8)
CHUNKS = (1, 2, 4)  # interleaved virtual stages per GPU
SEARCH = "search"  # plan(recompute=SEARCH): explore none / selective / full
LAYER_BUDGET = 0.7  # share of a GPU one layer's states may take: the chapter's 70 % rule
# (labs.formulas.cost.fits_on_one_card / pp_decision), the rest left for activations


class Plans(list):
    """Fitting :class:`~labs.planner.types.Estimate` s, fastest first. ``rejected``: why
    a family found nothing, keyed ``"tp=T"`` (no pipeline depth works with that TP) or
    ``"tp=T,pp=P"``; ``considered``: how many layouts were estimated."""

    def __init__(self, items=(), rejected=None, considered=0):
        super().__init__(items)
        self.rejected = dict(rejected or {})
        self.considered = considered


@dataclass(frozen=True)
class Step:
    """One step of :func:`decide`: the question, this case's answer, the numbers behind it and
    the layout after the step."""

    number: int
    question: str
    answer: str
    numbers: dict
    config: Config | None

    def __str__(self) -> str:
        return f"{self.number}. {self.question}\n   {self.answer}\n   -> {self.config}"


def _divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


def _try(model, cluster, train, efficiency, **layout) -> Estimate | None:
    try:
        return estimate(model, cluster, train, efficiency=efficiency, **layout)
    except ValueError:
        return None


def _splits(model: Model, train: Training, pp: int, dp: int, mb: int, v: int) -> bool:
    """Whether the batch and the layers split this way (check_layout's rules, tested first
    because a raised ValueError formats its message: the search skips them cheaply)."""
    if train.global_batch % (dp * mb):
        return False
    return v == 1 or (pp > 1 and pipeline_chunks(model, train) % (pp * v) == 0
                      and (train.global_batch // (dp * mb)) % pp == 0)


def _fits_memory(model: Model, cluster: Cluster, train: Training, efficiency: Efficiency,
                 config: Config) -> bool:
    """Whether ``config`` (with its recompute) fits: the memory of the fullest stages only
    (:func:`~labs.planner.model.stages`), without estimating the time (the search's cheap test
    before trying a recompute)."""
    run = replace(train, recompute=config.recompute)
    return all(stage_memory(model, cluster, run, config, st, efficiency).total
               <= efficiency.usable_bytes(cluster.gpu) for st in stages(config.pp, run))


def _recomputes(train: Training, recompute: str) -> tuple:
    return memory.RECOMPUTE if recompute == SEARCH else (recompute or train.recompute,)


def pipelines(pp: int, schedules: tuple) -> list:
    """The (v, schedule) pairs to try: 1F1B with every chunk count, ZB-H1 with v = 1 and a
    pipeline (without one it is 1F1B's step)."""
    for schedule in schedules:
        if schedule not in SCHEDULES:
            raise ValueError(text("planner.schedule_unknown", schedule=schedule,
                                  choices=SCHEDULES))
    pairs = [(v, "1f1b") for v in CHUNKS] if "1f1b" in schedules else []
    return pairs + ([(1, "zb-h1")] if "zb-h1" in schedules and pp > 1 else [])


def candidates(model: Model, cluster: Cluster, train: Training, tp: int, pp: int,
               efficiency: Efficiency, recompute: str = SEARCH,
               schedules: tuple = ("1f1b",)) -> list:
    """Every estimable layout of the family (tp, pp): micro-batches, chunks, ZeRO stages
    (ZeRO 2 and 3 only without a pipeline, as DeepSpeed allows; none with dp = 1) and
    activation recomputation (``recompute`` names one to fix it): none, else selective, else
    full -- the first that fits, since each recomputes more than the one before and is slower --
    and the pipeline ``schedules`` asked for (:func:`pipelines`)."""
    dims = ParallelDims.filling(cluster.n_gpus, pp=pp, tp=tp)
    dp = dims.dp
    zeros = (0,) if not dims.dp_enabled else (0, 1) if dims.pp_enabled else memory.ZERO_STAGES
    found = []
    for mb in MICRO_BATCHES:
        for v, schedule in pipelines(pp, schedules):
            if not _splits(model, train, pp, dp, mb, v):
                continue
            for zero in zeros:
                *lighter, last = _recomputes(train, recompute)
                for again in lighter + [last]:
                    if again != last and not _fits_memory(model, cluster, train, efficiency,
                                                          Config(tp, pp, dp, mb, v, zero, again,
                                                                 schedule)):
                        continue  # a heavier recomputation may fit: only memory decides here
                    est = _try(model, cluster, train, efficiency, tp=tp, pp=pp, dp=dp, v=v,
                               micro_batch=mb, zero_stage=zero, recompute=again,
                               schedule=schedule)
                    if est is not None:
                        found.append(est)
                        if est.fits:  # none < selective < full in time: the rest are slower
                            break
    return found


def plan(model: Model, cluster: Cluster, train: Training, *, top: int = 5,
         recompute: str = SEARCH, schedules: tuple = ("1f1b",),
         efficiency: Efficiency = Efficiency()) -> Plans:
    """The ``top`` fitting layouts, ranked by estimated step time.

    Searched: tp over the divisors of n_gpus that divide the heads and KV heads, pp over the
    divisors of n_gpus / tp up to the layer count, dp = n_gpus / (tp·pp) -- every GPU is used
    (tp·pp·dp = n_gpus, as the published runs do; a smaller job is a smaller cluster) --
    micro-batch in {1, 2, 4, 8}, interleaving v in {1, 2, 4}, ZeRO 0-1 (0-3 without PP),
    activation recomputation none / selective / full (``recompute="search"``; a value, or None
    for ``train.recompute``, fixes it), the pipeline ``schedules`` (default 1F1B alone;
    ``("1f1b", "zb-h1")`` tries ZB-H1 beside it where v = 1). The other recipe settings are
    ``train``'s.
    """
    check_hardware(cluster, train)  # not a layout's fault: raised, not rejected
    n, found, rejected, considered = cluster.n_gpus, [], {}, 0
    for tp in _divisors(n):
        if tp > model.n_heads:
            break
        if not ParallelDims.filling(n, tp=tp).splits_heads(model.n_heads, model.n_kv_heads):
            rejected[f"tp={tp}"] = text("planner.rejected_tp_heads", tp=tp,
                                        n_heads=model.n_heads, n_kv_heads=model.n_kv_heads)
            continue
        tp_found = len(found)
        for pp in _divisors(n // tp):
            key, dims = f"tp={tp},pp={pp}", ParallelDims.filling(n, pp=pp, tp=tp)
            if not dims.fits_layers(model.n_layers):
                rejected[key] = text("planner.rejected_pp_layers", n_layers=model.n_layers)
                break
            family = candidates(model, cluster, train, tp, pp, efficiency, recompute,
                                tuple(schedules))
            considered += len(family)
            fitting = [e for e in family if e.fits]
            found += fitting
            if not family:
                rejected[key] = text("planner.rejected_batch", global_batch=train.global_batch,
                                     dp=dims.dp)
            elif not fitting:
                rejected[key] = min(family, key=lambda e: e.memory.total).reasons[0]
        if len(found) == tp_found:
            rejected[f"tp={tp}"] = text("planner.rejected_no_depth", tp=tp)
    found.sort(key=lambda e: e.step_time_s)
    return Plans(found[:top], rejected, considered)


def _gib(x: float) -> float:
    return round(x / GiB, 2)


def _step1(model, cluster, train, efficiency) -> tuple[Step, bool]:
    one = estimate(model, replace(cluster, n_gpus=1), replace(train, global_batch=train.micro_batch,
                                                             zero_stage=0, shard_group=None),
                   tp=1, pp=1, dp=1, efficiency=efficiency)
    m = one.memory
    numbers = {"params": model.n_params, "states_GiB": _gib(m.states),
               "activations_GiB": _gib(m.activations), "usable_GiB": _gib(m.usable)}
    if one.fits:
        answer = text("planner.step1_yes", total=m.total / GiB, usable=m.usable / GiB,
                      n_gpus=cluster.n_gpus)
        return Step(1, text("planner.step1_question"), answer,
                    numbers, Config(1, 1, cluster.n_gpus, train.micro_batch)), True
    answer = text("planner.step1_no", states=m.states / GiB, activations=m.activations / GiB,
                  usable=m.usable / GiB)
    return Step(1, text("planner.step1_question"), answer, numbers, None), False


def _fits(model, cluster, train, efficiency, tp, pp) -> Estimate | None:
    est = _try(model, cluster, train, efficiency,
               **ParallelDims.filling(cluster.n_gpus, pp=pp, tp=tp).sizes())
    return est if est is not None and est.fits else None


def _step2(model, cluster, train, efficiency) -> Step:
    usable = efficiency.usable_bytes(cluster.gpu)
    layer = memory.model_state_bytes(model.layer_params, "adam", train.state_precision).total
    valid = [t for t in _divisors(cluster.n_gpus)
             if ParallelDims.filling(cluster.n_gpus, tp=t).splits_heads(model.n_heads,
                                                                       model.n_kv_heads)]
    needed = next((t for t in valid if layer / t <= LAYER_BUDGET * usable), valid[-1])
    in_node = [t for t in valid if needed <= t <= cluster.gpus_per_node] or [needed]
    alone = next((t for t in in_node if _fits(model, cluster, train, efficiency, t, 1)), None)
    tp = alone or in_node[-1]
    numbers = {"layer_state_GiB": _gib(layer), "usable_GiB": _gib(usable), "tp_needed": needed,
               "tp": tp}
    why = text("planner.step2_too_big" if needed > 1 else "planner.step2_fine",
               gib=layer / GiB, needed=needed)
    if alone or tp > 1:
        answer = text("planner.step2_alone" if alone else "planner.step2_fill_node", why=why, tp=tp)
    else:  # no TP > 1 inside a node divides the heads (25 heads on 8 GPUs)
        answer = text("planner.step2_no_tp", why=why, n_heads=model.n_heads,
                      n_kv_heads=model.n_kv_heads, per_node=cluster.gpus_per_node)
    return Step(2, text("planner.step2_question"), answer,
                numbers, Config(tp, 1, cluster.n_gpus // tp, train.micro_batch))


def _step3(model, cluster, train, efficiency, tp) -> Step:
    depths = [p for p in _divisors(cluster.n_gpus // tp) if p <= model.n_layers]
    pp = next((p for p in depths if _fits(model, cluster, train, efficiency, tp, p)), None)
    question = text("planner.step3_question")
    if pp is None:
        return Step(3, question, text("planner.step3_none", tp=tp),
                    {"tp": tp, "depths_tried": depths}, None)
    est = _fits(model, cluster, train, efficiency, tp, pp)
    numbers = {"pp": pp, "layers_per_stage": layers_per_stage(model, pp),
               "memory_GiB": _gib(est.memory.total), "usable_GiB": _gib(est.memory.usable)}
    answer = (text("planner.step3_not_needed") if pp == 1 else
              text("planner.step3_pp", pp=pp, layers=layers_per_stage(model, pp),
                   gib=est.memory.total / GiB, stage=est.memory.stage))
    return Step(3, question, answer, numbers, est.config)


def _step4(model, cluster, train, efficiency, config) -> Step:
    est = estimate(model, cluster, train, tp=config.tp, pp=config.pp, dp=config.dp,
                   efficiency=efficiency)
    numbers = {"dp": config.dp, "n_microbatches": est.n_microbatches, "bubble": est.bubble,
               "dp_GiB_per_step": _gib(est.comm_bytes["dp"])}
    answer = text("planner.step4_answer", dp=config.dp, m=est.n_microbatches, bubble=est.bubble,
                  step=est.step_time_s, mfu=est.mfu)
    return Step(4, text("planner.step4_question"), answer, numbers, config)


def _step5(model, cluster, train, efficiency, config) -> Step:
    base = estimate(model, cluster, train, tp=config.tp, pp=config.pp, dp=config.dp,
                    efficiency=efficiency)
    tuned = [e for e in candidates(model, cluster, train, config.tp, config.pp, efficiency)
             if e.fits] or [base]
    best = min(tuned, key=lambda e: e.step_time_s)
    if best.step_time_s > 0.99 * base.step_time_s:  # less than 1 % faster: keep it simple
        best = base
    overall = plan(model, cluster, train, top=1, efficiency=efficiency)
    numbers = {"step_s_before": base.step_time_s, "step_s_after": best.step_time_s,
               "bubble_before": base.bubble, "bubble_after": best.bubble,
               "exposed_comm_s": sum(best.exposed_s.values()),
               "uneven_layers": model.n_layers % config.pp != 0,
               "planner_best": str(overall[0].config) if overall else None,
               "planner_best_step_s": overall[0].step_time_s if overall else None}
    answer = text("planner.step5_answer", micro_batch=best.config.micro_batch, v=best.config.v,
                  zero_stage=best.config.zero_stage, before=base.step_time_s,
                  after=best.step_time_s, bubble_before=base.bubble, bubble_after=best.bubble,
                  exposed=sum(best.exposed_s.values()),
                  overlap=text("planner.on" if train.overlap_grad_reduce else "planner.off"),
                  recompute=best.config.recompute)
    if model.n_layers % config.pp:
        answer = text("planner.step5_uneven", answer=answer, n_layers=model.n_layers,
                      pp=config.pp)
    return Step(5, text("planner.step5_question"), answer, numbers, best.config)


def decide(model: Model, cluster: Cluster, train: Training, *,
           efficiency: Efficiency = Efficiency()) -> list:
    """Walk the chapter's five steps: 1. does everything fit one GPU (then DDP); 2. is one layer
    too big (TP first, inside a node); 3. still too big (PP across nodes); 4. the remaining GPUs
    are DP; 5. fine tuning (micro-batch, interleaving, ZeRO, overlap, load balance), compared
    with :func:`plan`'s best. Returns the five :class:`Step` s."""
    check_hardware(cluster, train)
    first, fits = _step1(model, cluster, train, efficiency)
    if fits:
        config = first.config
        skipped = [Step(n, text(q), text("planner.step_not_needed"), {}, config)
                   for n, q in ((2, "planner.step2_question_short"),
                                (3, "planner.step3_question_short"))]
        return [first, *skipped, _step4(model, cluster, train, efficiency, config),
                _step5(model, cluster, train, efficiency, config)]
    second = _step2(model, cluster, train, efficiency)
    third = _step3(model, cluster, train, efficiency, second.config.tp)
    if third.config is None:
        return [first, second, third]
    return [first, second, third, _step4(model, cluster, train, efficiency, third.config),
            _step5(model, cluster, train, efficiency, third.config)]
