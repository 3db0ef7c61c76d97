"""Notebook 2.5 (the summary): the four paradigms side by side, and the same script on one
node and on two "nodes" of one machine.

The table is computed, not typed: every number comes from the planner
(:mod:`labs.planner`, which composes :mod:`labs.formulas.memory` and :mod:`labs.formulas.cost`)::

    from labs import summary
    from labs import planner as pl
    model = pl.Model(n_layers=40, hidden=5120, n_heads=40, seq_len=2048, vocab=50257)
    cluster = pl.Cluster(gpu="A100-80GB", n_gpus=64, gpus_per_node=8)
    train = pl.Training(global_batch=512)
    rows = summary.paradigm_table(model, cluster, train)   # DP, TP, PP on one node; 3D on all
    print(summary.format_table(rows))                       # or HTML(summary.table_html(rows))

    one = summary.run_one_node(steps=3)                     # torchrun --standalone, 2 processes
    two = summary.run_two_nodes(steps=3)                    # 2 torchruns, --nnodes=2, localhost
    assert one.final_loss == two.final_loss

Owns: the paradigm table and the one-node / two-node runs. Must not: hold a formula of its own (the
planner computes), print (it returns tables and results), or import the planner widget, the checks
or the grader.
"""
from __future__ import annotations

import html
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from labs import planner as pl
from labs.planner.types import GiB
from labs.messages import text

__all__ = ["ParadigmRow", "paradigm_table", "format_table", "table_html", "best_config",
           "RunResult", "one_node_command", "two_node_commands", "run_one_node",
           "run_two_nodes", "free_port", "as_shell", "SCRIPT"]

SCRIPT = "labs.data_parallel.script"
ROOT = Path(__file__).resolve().parents[1]


# --- the four paradigms ------------------------------------------------------------------------

@dataclass(frozen=True)
class ParadigmRow:
    """One paradigm: what it splits and sends (words), and its planner estimate (numbers).

    ``comm_bytes``: bytes one GPU sends per training step, all dimensions together
    (``comm_by_dim`` splits them into "tp", "pp", "dp"); ``memory_bytes``: the fullest GPU's
    peak (model states + activations); ``usable_bytes``: what the card leaves for them."""

    name: str
    split: str
    communicates: str
    typical_degree: str
    hardware: str
    config: pl.Config
    n_gpus: int
    comm_bytes: float
    comm_by_dim: dict
    memory_bytes: float
    states_bytes: float
    usable_bytes: float
    fits: bool
    step_time_s: float
    estimate: pl.Estimate = field(repr=False, compare=False)

    @property
    def degree(self) -> str:
        c = self.config
        return f"TP {c.tp} × PP {c.pp} × DP {c.dp}"


def best_config(model: pl.Model, cluster: pl.Cluster, train: pl.Training) -> pl.Estimate:
    """The planner's fastest fitting layout with TP inside a node (tp ≤ gpus_per_node)."""
    plans = pl.plan(model, cluster, train, top=10**6)
    inside = [e for e in plans if e.config.tp <= cluster.gpus_per_node]
    if not inside:
        raise ValueError(text("summary.no_layout_fits", params=model.n_params / 1e9,
                              n_gpus=cluster.n_gpus, gpu=cluster.gpu.name,
                              rejected=plans.rejected))
    return inside[0]


def _estimate(model, cluster, train, tp, pp, dp, *, micro_batch=None, v=1, zero_stage=None):
    try:
        return pl.estimate(model, cluster, train, tp=tp, pp=pp, dp=dp, v=v,
                           micro_batch=micro_batch, zero_stage=zero_stage)
    except ValueError as exc:
        raise ValueError(text("summary.cannot_lay_out", tp=tp, pp=pp, dp=dp,
                              error=exc)) from None


def _row(name, split, communicates, typical, hardware, est: pl.Estimate) -> ParadigmRow:
    return ParadigmRow(
        name=name, split=split, communicates=communicates, typical_degree=typical,
        hardware=hardware, config=est.config, n_gpus=est.n_gpus,
        comm_bytes=float(sum(est.comm_bytes.values())), comm_by_dim=dict(est.comm_bytes),
        memory_bytes=est.memory.total, states_bytes=est.memory.states,
        usable_bytes=est.memory.usable, fits=est.fits, step_time_s=est.step_time_s,
        estimate=est)


def paradigm_table(model: pl.Model, cluster: pl.Cluster, train: pl.Training, *,
                   degree: int | None = None, hybrid: pl.Config | None = None) -> list:
    """Rows for DP, TP, PP and their 3D hybrid, estimated by the planner.

    DP, TP and PP each run alone on ``degree`` GPUs (default: one node, ``gpus_per_node``) of
    ``cluster``'s kind -- each with the same global batch, so their bytes and memory compare
    directly; the hybrid row runs ``hybrid`` (default: :func:`best_config`) on the whole
    cluster. Raises ValueError when ``degree`` does not suit a paradigm (tp must divide the
    heads, pp must not exceed the layers, the batch must split over dp)."""
    degree = cluster.gpus_per_node if degree is None else degree
    if not isinstance(degree, int) or isinstance(degree, bool) or degree < 2:
        raise ValueError(text("summary.degree", degree=degree))
    node = pl.Cluster(cluster.gpu, n_gpus=degree,
                      gpus_per_node=min(degree, cluster.gpus_per_node))
    dp = _estimate(model, node, train, 1, 1, degree)
    tp = _estimate(model, node, train, degree, 1, 1, zero_stage=0)
    pp = _estimate(model, node, train, 1, degree, 1, zero_stage=0)
    if hybrid is None:
        hy = best_config(model, cluster, train)
    else:
        hy = _estimate(model, cluster, train, hybrid.tp, hybrid.pp, hybrid.dp,
                       micro_batch=hybrid.micro_batch, v=hybrid.v, zero_stage=hybrid.zero_stage)
    L, heads, per_node = model.n_layers, model.n_heads, cluster.gpus_per_node
    c = hy.config
    values = dict(degree=degree, per_node=per_node, heads=heads, layers=L, tp=c.tp, pp=c.pp,
                  dp=c.dp, total=c.tp * c.pp * c.dp)
    return [_row(*(text(key, **values) for key in _ROW_WORDS[kind]), est)
            for kind, est in (("dp", dp), ("tp", tp), ("pp", pp), ("hybrid", hy))]


# Each row's words (name, split, communicates, typical, hardware) and the columns: messages.
_ROW_WORDS = {
    "dp": ("summary.dp_name", "summary.dp_split", "summary.dp_communicates", "summary.dp_typical",
           "summary.dp_hardware"),
    "tp": ("summary.tp_name", "summary.tp_split", "summary.tp_communicates", "summary.tp_typical",
           "summary.tp_hardware"),
    "pp": ("summary.pp_name", "summary.pp_split", "summary.pp_communicates", "summary.pp_typical",
           "summary.pp_hardware"),
    "hybrid": ("summary.hybrid_name", "summary.hybrid_split", "summary.hybrid_communicates",
               "summary.hybrid_typical", "summary.hybrid_hardware"),
}
_COLUMNS = ("summary.column_paradigm", "summary.column_split", "summary.column_communicates",
            "summary.column_degree", "summary.column_comm", "summary.column_memory",
            "planner.fits", "summary.column_step", "summary.column_typical",
            "summary.column_hardware")


def _columns() -> list:
    return [text(key) for key in _COLUMNS]


def _cells(row: ParadigmRow) -> tuple:
    dims = ", ".join(f"{k.upper()} {v / GiB:.2f}" for k, v in row.comm_by_dim.items() if v)
    gib = row.comm_bytes / GiB
    return (row.name, row.split, row.communicates,
            text("summary.degree_cell", degree=row.degree, n_gpus=row.n_gpus),
            text("summary.comm_cell_dims", gib=gib, dims=dims) if dims
            else text("summary.comm_cell", gib=gib),
            f"{row.memory_bytes / GiB:.1f} / {row.usable_bytes / GiB:.1f} GiB",
            text("summary.yes" if row.fits else "summary.no"),
            f"{row.step_time_s:.2f} s" if row.fits else text("summary.no_step"),
            row.typical_degree, row.hardware)


def format_table(rows: list) -> str:
    """The table as plain text: one block per paradigm, one line per column."""
    blocks = []
    for row in rows:
        cells = _cells(row)
        blocks.append("\n".join([f"== {cells[0]}"] + [
            text("summary.table_line", name=name, value=value)
            for name, value in zip(_columns()[1:], cells[1:])]))
    return "\n".join(blocks)


def table_html(rows: list) -> str:
    """The table as HTML (``IPython.display.HTML(table_html(rows))``)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in _columns())
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in _cells(r))
                   + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- one node, then two nodes on one machine --------------------------------------------------

_LOSS = re.compile(r"loss (\d+\.\d+) -> (\d+\.\d+)")


@dataclass(frozen=True)
class RunResult:
    """What the torchrun processes of one run printed; ``final_loss`` is rank 0's last loss
    (the script prints ``loss FIRST -> LAST``)."""

    commands: list
    outputs: list  # stdout + stderr of each torchrun process
    returncodes: list
    seconds: float

    @property
    def final_loss(self) -> float:
        for text in self.outputs:
            found = _LOSS.search(text)
            if found:
                return float(found.group(2))
        raise ValueError(text("summary.no_loss_line", output="\n".join(self.outputs)))


def free_port() -> int:
    """A TCP port free on localhost now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun() -> list:
    return [sys.executable, "-m", "torch.distributed.run"]


def as_shell(command: list) -> str:
    """``command`` as one would type it: ``torchrun ...`` for ``python -m torch.distributed.run``
    (what the helpers run, so that no PATH lookup is needed)."""
    words = list(command)
    if words[:3] == _torchrun():
        words = ["torchrun"] + words[3:]
    return shlex.join(words)


def _script_args(steps: int, batch_size: int) -> list:
    for name, value in (("steps", steps), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(text("memory.not_positive_integer", name=name, value=value))
    return ["-m", SCRIPT, "--steps", str(steps), "--batch-size", str(batch_size),
            "--backend", "gloo"]


def one_node_command(*, nproc: int = 2, steps: int = 3, batch_size: int = 16) -> list:
    """``torchrun --standalone --nproc-per-node=N -m labs.data_parallel.script ...``."""
    if not isinstance(nproc, int) or nproc < 1:
        raise ValueError(text("memory.not_positive_integer", name="nproc", value=nproc))
    return _torchrun() + ["--standalone", f"--nproc-per-node={nproc}"] + \
        _script_args(steps, batch_size)


def two_node_commands(*, port: int | None = None, steps: int = 3, batch_size: int = 16,
                      nproc_per_node: int = 1, host: str = "localhost") -> list:
    """The two commands of a 2-node run, one per node (here both on ``host``): the same
    rendezvous endpoint, ``--node-rank`` 0 and 1 (as on a real cluster; the c10d rendezvous
    numbers the nodes in order of arrival and says it ignores ``--node-rank``)."""
    port = free_port() if port is None else port
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(text("summary.port", port=port))
    return [_torchrun() + ["--nnodes=2", f"--node-rank={rank}",
                           f"--nproc-per-node={nproc_per_node}", "--rdzv-backend=c10d",
                           f"--rdzv-endpoint={host}:{port}", "--rdzv-id=labs-summary"]
            + _script_args(steps, batch_size) for rank in (0, 1)]


def _stop(proc: subprocess.Popen) -> None:
    """Kill ``proc``'s process group (torchrun and its workers), if still running."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _run_together(commands: list, timeout: float) -> RunResult:
    """Start every command at once (each in its own process group, output to a temporary
    file), wait for all up to ``timeout`` seconds; as soon as one fails, or at the timeout,
    kill them all and raise RuntimeError with the outputs."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    start = time.monotonic()
    files = [tempfile.TemporaryFile(mode="w+") for _ in commands]
    procs = []
    try:
        for cmd, out in zip(commands, files):
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True))
        failed = None
        while failed is None and any(p.poll() is None for p in procs):
            if time.monotonic() - start > timeout:
                failed = text("summary.timed_out", timeout=timeout)
            failed = failed or next((text("summary.exited", i=i, code=p.returncode)
                                     for i, p in enumerate(procs) if p.poll()), None)
            time.sleep(0.05)
        failed = failed or next((text("summary.exited", i=i, code=p.returncode)
                                 for i, p in enumerate(procs) if p.returncode), None)
    finally:
        for proc in procs:
            _stop(proc)
    outputs = []
    for out in files:
        out.seek(0)
        outputs.append(out.read())
        out.close()
    if failed:
        shown = "\n".join(f"$ {' '.join(c)}\n{o[-2000:]}" for c, o in zip(commands, outputs))
        raise RuntimeError(text("summary.run_failed", failed=failed, shown=shown))
    return RunResult(commands=commands, outputs=outputs,
                     returncodes=[p.returncode for p in procs],
                     seconds=time.monotonic() - start)


def run_one_node(*, steps: int = 3, batch_size: int = 16, nproc: int = 2,
                 timeout: float = 120.0) -> RunResult:
    """Run the data-parallel script with torchrun on one node, ``nproc`` processes."""
    return _run_together([one_node_command(nproc=nproc, steps=steps, batch_size=batch_size)],
                         timeout)


def run_two_nodes(*, steps: int = 3, batch_size: int = 16, timeout: float = 120.0) -> RunResult:
    """Run the same script as two 1-process "nodes" on this machine: two torchrun processes
    that meet at a c10d rendezvous on a free localhost port."""
    return _run_together(two_node_commands(steps=steps, batch_size=batch_size), timeout)
