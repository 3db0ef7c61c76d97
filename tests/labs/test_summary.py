"""Notebook 2.5's helpers: the four-paradigm table and the same script under torchrun on one
node and on two localhost nodes (the capstone checks: tests/labs/planner/test_capstone.py and
the answers catalog, tests/catalog/answers_2_5.py)."""
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from labs import summary
from labs import planner as pl
from labs.planner.types import GiB
from labs.messages import text
from tests.support.messages import said

MODEL = pl.Model(n_layers=40, hidden=5120, n_heads=40, seq_len=2048, vocab=50257)
CLUSTER = pl.Cluster("A100-80GB", 64)
TRAIN = pl.Training(global_batch=512)


# --- the four paradigms --------------------------------------------------------------------

@pytest.fixture(scope="module")
def rows():
    return summary.paradigm_table(MODEL, CLUSTER, TRAIN)


def test_table_has_the_four_paradigms_on_their_layouts(rows):
    assert [r.name[:2] for r in rows] == ["DP", "TP", "PP", "3D"]
    assert [(r.config.tp, r.config.pp, r.config.dp) for r in rows[:3]] == \
        [(1, 1, 8), (8, 1, 1), (1, 8, 1)]
    assert [r.n_gpus for r in rows] == [8, 8, 8, 64]
    assert rows[3].config == summary.best_config(MODEL, CLUSTER, TRAIN).config


def test_dp_row_bytes_and_memory_by_hand(rows):
    dp = rows[0]
    n = MODEL.n_params
    assert dp.comm_bytes == pytest.approx(2 * 7 / 8 * n * 2)  # ring all-reduce of bf16 grads
    assert dp.comm_by_dim["tp"] == dp.comm_by_dim["pp"] == 0
    assert dp.states_bytes == pytest.approx(16 * n)  # mixed-precision Adam, no ZeRO
    assert not dp.fits  # 13B x 16 B does not fit 80 GB


def test_tp_and_pp_row_bytes_by_hand(rows):
    b, s, h, L, m = 1, 2048, 5120, 40, 512  # micro-batch 1, dp 1: 512 micro-batches
    activation = b * s * h * 2
    # 4 ring all-reduces per layer and micro-batch, x1.5 for the recomputed forward
    assert rows[1].comm_bytes == pytest.approx(1.5 * L * m * 4 * 2 * 7 / 8 * activation)
    assert rows[1].states_bytes == pytest.approx(16 * MODEL.n_params / 8)
    # one activation forward and one gradient back per micro-batch
    assert rows[2].comm_bytes == pytest.approx(2 * m * activation)
    assert rows[1].fits and rows[2].fits


def test_hybrid_row_takes_a_given_layout():
    config = pl.Config(8, 2, 4, micro_batch=2, zero_stage=1, recompute="full")
    row = summary.paradigm_table(MODEL, CLUSTER, TRAIN, hybrid=config)[3]
    assert row.config == config
    est = pl.estimate(MODEL, CLUSTER, TRAIN, tp=8, pp=2, dp=4, micro_batch=2, zero_stage=1)
    assert row.step_time_s == est.step_time_s and row.memory_bytes == est.memory.total


def test_four_paradigms_on_the_same_gpus():
    """2.5's table (issue 29 c3): a 7B model, DP, TP, PP 8-way and a 2 x 2 x 2 hybrid all on
    the same 8 GPUs; plain DP does not fit (16 bytes per parameter), the hybrid is the fastest
    of the rows that do (TP pays exposed all-reduces, PP a 7/71 bubble)."""
    model = pl.Model(n_layers=32, hidden=4096, n_heads=32, seq_len=2048, vocab=51200)
    node = pl.Cluster("A100-80GB", 8)
    train = pl.Training(global_batch=64, recompute="full")
    rows = summary.paradigm_table(model, node, train, hybrid=pl.Config(2, 2, 2))
    assert [r.n_gpus for r in rows] == [8, 8, 8, 8]
    assert [r.fits for r in rows] == [False, True, True, True]
    assert rows[0].states_bytes == pytest.approx(16 * model.n_params)
    hybrid = pl.estimate(model, node, train, tp=2, pp=2, dp=2)
    assert rows[3].step_time_s == hybrid.step_time_s
    assert rows[3].step_time_s < min(rows[1].step_time_s, rows[2].step_time_s)
    pp = pl.estimate(model, node, train, tp=1, pp=8, dp=1)
    assert pp.bubble == pytest.approx(7 / 71)


def test_a_row_that_does_not_fit_shows_no_step_time(rows):
    """A step time for a layout that cannot run would read as a result (issue 29, 2.5 c3)."""
    html = summary.table_html(rows)
    assert not rows[0].fits and f"{rows[0].step_time_s:.2f} s" not in html
    assert rows[1].fits and f"{rows[1].step_time_s:.2f} s" in html


@pytest.mark.parametrize("degree", [1, 0, 2.0, True])
def test_bad_degree_is_refused(degree):
    with pytest.raises(ValueError, match="degree"):
        summary.paradigm_table(MODEL, CLUSTER, TRAIN, degree=degree)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_degree_that_does_not_divide_the_heads_is_refused(monkeypatch, lang):
    monkeypatch.setenv("LABS_LANG", lang)
    with pytest.raises(ValueError) as info:
        summary.paradigm_table(MODEL, pl.Cluster("A100-80GB", 6, gpus_per_node=6),
                               pl.Training(global_batch=513), degree=3)
    said(info.value, "summary.cannot_lay_out", lang=lang, tp=3, pp=1, dp=1, error=text(
        "planner.tp_heads", lang=lang, tp=3, n_heads=40, n_kv_heads=40))


def test_the_table_in_english(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    rows = summary.paradigm_table(MODEL, CLUSTER, TRAIN)
    assert [r.name for r in rows] == ["DP (data parallelism)", "TP (tensor parallelism)",
                                      "PP (pipeline parallelism)", "3D hybrid"]
    text = summary.format_table(rows)
    assert "  what it splits: " in text and "（" not in text and "<th>paradigm</th>" in \
        summary.table_html(rows)


def test_text_and_html_show_every_row(rows):
    text, page = summary.format_table(rows), summary.table_html(rows)
    for row in rows:
        assert row.name in text and row.name in page
    assert f"{rows[0].comm_bytes / GiB:.2f} GiB" in text
    assert page.count("<tr>") == 5 and "<script" not in page


# --- one node and two nodes under torchrun -------------------------------------------------

def test_commands_are_the_documented_ones():
    one = summary.one_node_command(steps=2)
    assert one[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--standalone" in one and "--nproc-per-node=2" in one and summary.SCRIPT in one
    first, second = summary.two_node_commands(port=29555, steps=2)
    for rank, cmd in enumerate((first, second)):
        assert {"--nnodes=2", f"--node-rank={rank}", "--nproc-per-node=1",
                "--rdzv-backend=c10d", "--rdzv-endpoint=localhost:29555"} <= set(cmd)
    assert summary.as_shell(one) == ("torchrun --standalone --nproc-per-node=2 -m "
                                     "labs.data_parallel.script --steps 2 --batch-size 16 "
                                     "--backend gloo")
    with pytest.raises(ValueError, match="steps"):
        summary.one_node_command(steps=0)
    with pytest.raises(ValueError, match="port"):
        summary.two_node_commands(port=70000)


@pytest.mark.slow  # two training runs, one of two nodes (make test only, issue 27)
def test_one_node_and_two_nodes_give_the_same_training():
    with ThreadPoolExecutor(2) as pool:  # both at once: they wait on start-up and rendezvous
        one = pool.submit(summary.run_one_node, steps=3, timeout=180)
        two = pool.submit(summary.run_two_nodes, steps=3, timeout=180)
        one, two = one.result(), two.result()
    assert one.returncodes == [0] and two.returncodes == [0, 0]
    from labs.messages import text  # the script's result line, up to the numbers
    line = text("data_parallel.script_result", variant="ddp", world_size=2, backend="gloo",
                batch_size=16, first=0.0, last=0.0).split("loss")[0]
    assert line in one.outputs[0]
    assert sum(line in out for out in two.outputs) == 1  # rank 0 prints
    assert one.final_loss == two.final_loss


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie counts as gone
        return f.read().split()[2] != "Z"


def test_a_failing_node_stops_the_other(tmp_path):
    pid_file = tmp_path / "pid"
    sleeper = [sys.executable, "-c",
               f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
               "time.sleep(60)"]
    failing = [sys.executable, "-c", "import time; time.sleep(1); raise SystemExit(3)"]
    start = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        summary._run_together([sleeper, failing], timeout=30)
    said(info.value, "summary.run_failed", failed=text("summary.exited", i=1, code=3))
    assert time.monotonic() - start < 15
    assert not _alive(int(pid_file.read_text()))


def test_a_hanging_run_times_out(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="within 1 s"):
        summary._run_together([[sys.executable, "-c", "import time; time.sleep(60)"]],
                              timeout=1)
    assert time.monotonic() - start < 15
