"""Pipeline parallelism (PP) by hand, notebook 2.3. Read the files in this order:

1. :mod:`~labs.pipeline.partition` -- cut the layers into stages of consecutive layers, evenly
   or balanced by cost; a stage of a GPT (``GPTStage``: embedding on the first stage, blocks,
   head on the last), built from any model with ``embed`` / ``blocks`` / ``head`` (``TinyGPT``,
   or the tensor-parallel ``ParallelTinyGPT``).
2. :mod:`~labs.pipeline.schedules` -- a schedule is data: per rank, the ordered list of actions
   (``F3``, ``B3``, ``SEND_F3->2`` ...) of GPipe, 1F1B and interleaved 1F1B.
3. :mod:`~labs.pipeline.simulator` -- runs a schedule on paper: proves it cannot deadlock and
   computes its ideal timeline.
4. :mod:`~labs.pipeline.comm` -- the point-to-point messages between stages (isend / irecv).
5. :mod:`~labs.pipeline.executor` -- ``run_schedule`` runs exactly that list on real ranks and
   records a measured timeline; its core loop is ``run_actions``.
6. :mod:`~labs.pipeline.plots` -- timelines (simulated and measured alike), bubble vs formula,
   memory per rank.
7. :mod:`~labs.pipeline.step` -- a training step on real ranks (``PipelineRun``,
   ``pipeline_step``) compared with one process and with torch.distributed.pipelining; 2.4's
   3D step builds on it.
   :mod:`~labs.pipeline.one_f_one_b` -- the same 1F1B step as three visible loops (warm-up,
   steady 1F1B, cool-down), as picotron and Megatron-LM write it; same gradients, bit for bit.
8. :mod:`~labs.pipeline.experiments` -- the sweeps of notebook 2.3, and what each measurement
   says against the formula (``interpret_*``, in the notebook's language, printed by the notebook).
9. :mod:`~labs.pipeline.zero_bubble` -- the backward split into B (input gradient) and W (weight
   gradient): 1F1B, ZB-H1 and ZB-V doing the same work, simulated and measured, each with its
   formula and in-flight bound (notebook 2.3's last section).

The bubble (p-1)/(v·m+p-1) and the bytes per step are :mod:`labs.formulas.cost`'s; the timeline type is
:mod:`labs.notebook.timeline`'s. ``from labs import pipeline as pp`` gives the names below::

    schedule = pp.build_schedule("1f1b", n_ranks=4, n_microbatches=8)
    timeline = pp.simulate(schedule, forward_s=1.0, backward_s=2.0)

GPipe: arXiv:1811.06965. 1F1B and interleaving: PTD-P, arXiv:2104.04473 §2.2. ZB-H1: Qi et al.,
"Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv:2401.10241 §2.1; ZB-V: not in the ICLR
paper but in its arXiv version and in Qi et al., "Pipeline Parallelism with Controllable
Memory", arXiv:2405.15362.

Must not: hold logic of its own, or import the step, one_f_one_b, experiments, zero_bubble or plots
(torch.distributed, matplotlib) at import time.
"""
from labs.pipeline.schedules import (
    LOOP,
    SCHEDULES,
    V_SHAPE,
    W,
    Action,
    add_communication,
    bubble_fraction,
    build_schedule,
    compute_order,
    gpipe_order,
    in_flight_bound,
    interleaved_order,
    min_microbatches,
    one_f_one_b_order,
    one_f_one_b_warmup,
    placement_of,
    stage_rank,
    zb_h1_order,
    zb_v_order,
)
from labs.pipeline.simulator import DeadlockError, ScheduleError, simulate, validate
from labs.pipeline.executor import (
    REAL_COMPUTE,
    FixedTime,
    Recorder,
    gather_timeline,
    mode_label,
    run_schedule,
    run_actions,
    RankContext,
)
from labs.pipeline.partition import (
    Bounds,
    GPTStage,
    balanced_partition,
    build_gpt_stages,
    check_microbatches,
    gpt_layer_costs,
    layer_grads_to_none,
    measure_layer_costs,
    partition_evenly,
    split_microbatches,
    stage_costs,
)
from labs.notebook.timeline import Timeline

__all__ = [
    # partition
    "Bounds", "partition_evenly", "stage_costs", "balanced_partition", "gpt_layer_costs",
    "measure_layer_costs", "layer_grads_to_none", "GPTStage", "build_gpt_stages",
    "check_microbatches", "split_microbatches",
    # schedules
    "Action", "SCHEDULES", "stage_rank", "gpipe_order", "one_f_one_b_warmup", "one_f_one_b_order",
    "interleaved_order", "add_communication", "build_schedule", "compute_order",
    "bubble_fraction", "min_microbatches", "W", "zb_h1_order", "zb_v_order", "in_flight_bound",
    "LOOP", "V_SHAPE", "placement_of",
    # simulator
    "Timeline", "ScheduleError", "DeadlockError", "validate", "simulate",
    # executor
    "REAL_COMPUTE", "FixedTime", "mode_label", "Recorder", "run_schedule", "run_actions",
    "RankContext", "gather_timeline",
]
