"""The planner against runs that teams published (:mod:`labs.planner.calibration`, each row
with its source and accounting): what they ran must fit, what they could not run must not, the
estimate of each row must land near the paper's figure on the paper's accounting (Megatron-LM's
TFLOP/s count the recomputed forward, PTD-P eq. 3: ``hfu``), and the estimates must follow the
papers' trends across rows -- so that a planner answering one constant fails (tested below).
Nothing in the planner is fitted to these rows (its constants: ``labs.planner.Efficiency``).

The table itself is printed by ``python -m labs.bench planner --calibration`` and shown in 2.4.
"""
from __future__ import annotations

import statistics

import pytest

from labs import planner as pl
from labs.planner import calibration

BAND = 0.30  # every row within 30 % of its paper's figure ...
MEDIAN = 0.15  # ... and the median |error| within 15 % (issue 29, item 3)
# PTD-P Table 2: ZeRO-3 without model parallelism. The planner counts 4 passes over the
# parameters per micro-batch under full recomputation (3 gathers + 1 reduce-scatter), hides
# each pass's gathers only under that pass's compute, and slows that compute by the measured
# 18.9 % while they overlap (Efficiency.overlap_slowdown). Before that slowdown the row where
# compute and gathers take about as long (384 GPUs) was 35 % high: it is the row to watch.
ZERO3_ROW = "ZeRO-3 175B, 384 GPUs"
ROWS = calibration.table()


def gpt(layers, hidden, heads):
    return calibration.gpt(layers, hidden, heads)


def _family(prefix, rows=ROWS):
    return [r for r in rows if r.run.name.startswith(prefix)]


def _ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0] * len(xs)
    for rank, i in enumerate(order):
        ranks[i] = rank
    return ranks


def problems(estimated: dict, rows=ROWS) -> list:
    """What is wrong with ``estimated`` (run name -> figure on the run's accounting): rows out
    of the band, a median error above target, trends the papers show and the figures miss."""
    out = []
    errors = {r.run.name: estimated[r.run.name] / r.run.reported - 1 for r in rows}
    for r in rows:
        name = r.run.name
        err = errors[name]
        if not -BAND <= err <= BAND:
            out.append(f"{name}: {err:+.0%} outside ±{BAND:.0%}")
    median = statistics.median(abs(e) for e in errors.values())
    if median > MEDIAN:
        out.append(f"median |error| {median:.0%} > {MEDIAN:.0%}")
    # PTD-P Table 1: 135-163 TFLOP/s rising with the model; the estimates must rank alike
    t1 = _family("PTD-P")
    est, rep = [estimated[r.run.name] for r in t1], [r.run.reported for r in t1]
    if len(set(est)) < 2 or statistics.correlation(_ranks(est), _ranks(rep)) < 0.6:
        out.append("PTD-P Table 1: the estimates do not rise with the reported figures")
    if est[-1] / est[3] < 1.0:  # 18.4B -> 1T: 135 -> 163 reported
        out.append("PTD-P Table 1: 1T not above 18.4B")
    # PTD-P Table 2: ZeRO-3 falls 144 -> 88 -> 44 as the same batch spreads over more GPUs
    z = [estimated[r.run.name] for r in _family("ZeRO-3")]
    if not (z[0] > z[1] > z[2]) or not 0.7 <= (z[0] / z[2]) / (144 / 44) <= 1.3:
        out.append(f"ZeRO-3: {z} does not fall like 144/88/44")
    # MT-NLG: 126 > 121 > 113 as DP grows at a fixed batch (fewer micro-batches, more bubble)
    mt = [estimated[r.run.name] for r in _family("MT-NLG")]
    if not mt[0] > mt[1] > mt[2]:
        out.append(f"MT-NLG: {mt} does not fall with DP")
    return out


def test_every_row_names_its_source_and_accounting():
    assert len(ROWS) >= 15
    assert {r.run.gpu for r in ROWS} >= {"A100-80GB", "H100-80GB"}
    for r in ROWS:
        assert r.run.source and r.run.accounting in ("hfu", "mfu", "tokens")


def test_the_table_spans_what_issue_29_asks():
    """A100 and H100; TP, PP and DP; the interleaved schedule (v > 1); ZeRO-3."""
    runs = [r.run for r in ROWS]
    assert any(r.tp > 1 for r in runs) and any(r.pp > 1 for r in runs)
    assert any(r.v > 1 for r in runs) and any(r.zero_stage == 3 for r in runs)
    assert any(r.v > 1 and r.gpu == "H100-80GB" for r in runs)


def test_h100_recipes_fall_slightly_with_scale_as_measured():
    """NVIDIA's recipes weak-scale (global batch grows with the GPUs): tokens/s per GPU falls
    by 1-3 % from the smallest to the largest scale; the estimates must not rise. Llama 3 405B
    strong-scales (the same 16M-token batch on twice the GPUs: half the micro-batches, a
    larger bubble): 430 -> 400 TFLOP/s; the estimate must fall too."""
    h100 = [r for r in ROWS if r.run.gpu == "H100-80GB"]
    recipes = {}
    for r in h100:
        recipes.setdefault(r.run.name.rsplit(",", 1)[0], []).append(r)
    assert len(recipes) == 4 and "Llama 3 405B" in recipes
    for name, (small, large) in recipes.items():
        assert small.run.n_gpus < large.run.n_gpus
        assert large.run.reported < small.run.reported, name
        assert large.estimated <= small.estimated, name


@pytest.mark.parametrize("row", ROWS, ids=[r.run.name for r in ROWS])
def test_published_runs_fit(row):
    assert row.estimate.fits, row.estimate.summary()


def test_the_planner_matches_the_papers_row_by_row_and_in_trend():
    assert problems({r.run.name: r.estimated for r in ROWS}) == []


@pytest.mark.parametrize("constant", [120, 140, 150, 160])
def test_a_planner_answering_a_constant_fails(constant):
    """A planner that answers 150 TFLOP/s everywhere passed the old ±30 % rows."""
    answers = {r.run.name: constant if r.run.accounting != "tokens" else 380 for r in ROWS}
    assert problems(answers)


def test_the_summary_reports_the_median_and_the_worst_row():
    s = calibration.summary(ROWS)
    assert s["median_abs_error"] <= MEDIAN
    assert s["max_abs_error"] == max(abs(r.error) for r in ROWS)


def test_llama_65b_best_plan_is_near_380_tokens_per_gpu():
    """LLaMA-65B (arXiv:2302.13971, §2.4): the layout is not published; the planner's best
    plan is compared."""
    row = calibration.compare(next(r for r in calibration.RUNS if r.name.startswith("LLaMA")))
    assert row.estimate.fits
    assert row.estimated == pytest.approx(380, rel=BAND)


GPT3 = gpt(96, 12288, 96)


@pytest.mark.parametrize("gpu", sorted(pl.GPUS))
def test_gpt3_without_model_parallelism_fits_no_gpu(gpu):
    precision = "bf16" if "bf16" in pl.GPUS[gpu].peaks else "fp16"  # V100: no bf16
    est = pl.estimate(GPT3, pl.Cluster(gpu, 8), pl.Training(global_batch=8, precision=precision),
                      tp=1, pp=1, dp=8)
    assert not est.fits and est.memory.states > pl.GPUS[gpu].memory_bytes


def test_layouts_no_one_could_run_do_not_fit():
    a100 = pl.Cluster("A100-80GB", 1024)
    tp_only = pl.estimate(GPT3, a100, pl.Training(global_batch=1536), tp=8, pp=1, dp=128)
    assert not tp_only.fits  # 175e9 x 16 B / 8 = 350 GB per GPU without ZeRO
    trillion = pl.estimate(gpt(128, 25600, 160), pl.Cluster("A100-80GB", 3072),
                           pl.Training(global_batch=3072), tp=8, pp=8, dp=48)
    assert not trillion.fits  # 1T x 16 B / 64 = 250 GB per GPU


def test_the_bench_prints_the_calibration_table(capsys):
    from labs.bench import planner as bench
    assert bench.main(["--calibration"]) == 0
    out = capsys.readouterr().out
    assert all(r.run.name in out for r in ROWS + H100)
    assert sum(line.startswith("median |error|") for line in out.splitlines()) == 2  # 2 tables


def test_the_overlap_slowdown_is_what_brings_the_compute_bound_zero3_row_in():
    """PTD-P Table 2's 384-GPU ZeRO-3 row (144 TFLOP/s): compute and gathers about as long.
    Perfect overlap (no slowdown) reads +35 %; the measured 18.9 % slowdown of the compute
    beside the gathers brings it within the band. The communication-bound rows barely move."""
    rows = {r.run.name: r for r in ROWS}
    run = rows[ZERO3_ROW].run
    cluster = pl.Cluster(run.gpu, run.n_gpus)
    perfect = pl.estimate(run.model, cluster, run.training, tp=run.tp, pp=run.pp, dp=run.dp,
                          efficiency=pl.Efficiency(overlap_slowdown=0.0))
    assert perfect.flops_per_gpu / 1e12 / run.reported - 1 > BAND
    assert abs(rows[ZERO3_ROW].error) <= BAND
    est = rows[ZERO3_ROW].estimate
    compute_mb = est.compute_s / est.n_microbatches
    # one micro-batch; its dp seconds split 1 : 3 over the forward (1/4) and the rest (3/4)
    one, forward = est.comm_s["dp"] / 4, compute_mb / 4
    slowdown = pl.Efficiency().overlap_slowdown
    by_hand = (max(0, one - forward) + slowdown * min(one, forward)
               + max(0, 3 * one - 3 * forward) + slowdown * min(3 * one, 3 * forward))
    assert est.exposed_s["dp"] == pytest.approx(by_hand, rel=1e-9)


# --- FSDP on H100: MosaicML llm-foundry's H100 80GB BF16 table (ZeRO-3 over every GPU) -------
# Shown in 2.4 beside the targeted table and NOT within its targets: a known limit of the
# planner (PyTorch FSDP on H100, 2023, against a ZeRO-3 model that matches DeepSpeed's of 2021).
H100 = calibration.table(calibration.FSDP_RUNS)


def test_fsdp_rows_name_their_source_and_ran():
    assert len(H100) == 10 and {r.run.gpu for r in H100} == {"H100-80GB"}
    for r in H100:
        assert "llm-foundry" in r.run.source and r.run.accounting == "tokens"
        assert r.run.zero_stage == 3 and r.run.tp == r.run.pp == 1
        assert r.estimate.fits, r.run.name  # they ran


@pytest.mark.xfail(strict=True, reason="the FSDP rows miss the table's targets (median |error| "
                   "43 %): a known limit shown in 2.4; when the planner meets them this passes "
                   "and fails strictly: then move FSDP_RUNS into RUNS")
def test_fsdp_rows_meet_the_targets():
    s = calibration.summary(H100)
    assert s["median_abs_error"] <= MEDIAN and s["max_abs_error"] <= BAND


def test_the_fsdp_gap_is_what_2_4_says_it_is():
    """2.4 names two gaps, in opposite directions: the planner is fast on one node (all three
    single-node rows high, where it is within 6 % of Megatron's H100 runs), and its ZeRO-3
    across nodes is slow where the measurement is flat (13B at micro-batch 2: 4,767-4,811
    tokens/s on 8 to 64 GPUs; the planner falls more than 2x from 8 to 16 GPUs, where the
    gathers leave NVLink)."""
    by = {r.run.name: r for r in H100}
    single = [r for r in H100 if r.run.n_gpus == 8]
    assert len(single) == 3 and all(r.error > 0.2 for r in single)
    b13 = [by[f"MPT-13B, {n} H100"] for n in (8, 16, 32, 64)]
    measured = [r.run.reported for r in b13]
    assert max(measured) / min(measured) < 1.02
    assert b13[0].estimated / b13[1].estimated > 2
    assert all(r.error < -0.3 for r in b13[1:])
    megatron_h100 = [r for r in ROWS if "dgxc-benchmarking" in r.run.source]
    assert len(megatron_h100) == 6
    assert max(abs(r.error) for r in megatron_h100) < 0.06
