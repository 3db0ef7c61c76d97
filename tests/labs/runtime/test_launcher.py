"""The launcher contract (DESIGN.md): results, output, failures, hangs, interrupts, cleanup.

The messages are checked in English (LABS_LANG=en, which the subprocesses and the ranks
inherit); the tests at the end check that they follow the notebook's language, ranks included.
"""

from __future__ import annotations

import inspect
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

import labs
from labs import messages
from labs.messages import text
from tests.support.messages import found_in, pattern
from labs.runtime import launcher
from labs.runtime.processes import alive  # a zombie counts as gone

# the session's background work starts beside this module (tests/support/early.py)
pytestmark = pytest.mark.leaves_a_core

ROOT = Path(__file__).resolve().parents[3]


# --- helpers -----------------------------------------------------------------------------

def launcher_tmpdirs(pid: int | None = None) -> set:
    """Temporary folders of launches made by process ``pid`` (default: this one)."""
    return set(Path(tempfile.gettempdir()).glob(f"labs-launch-{pid or os.getpid()}-*"))


def write_pid(pid_dir, name: str, text: str) -> None:
    """Write a pid file under a temporary name, then rename it: a test polling the folder never
    sees a file created but still empty (int("") would fail it on a loaded machine)."""
    path = os.path.join(pid_dir, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


WRITE_PID = inspect.getsource(write_pid)  # for the code run in a kernel or a fresh Python


def record_pid(pid_dir: str) -> None:
    write_pid(pid_dir, f"{dist.get_rank()}.pid", str(os.getpid()))


def recorded_pids(pid_dir) -> list[int]:
    return [int(p.read_text()) for p in Path(pid_dir).glob("*.pid")]


def wait_for_pids(pid_dir, n: int, seconds: float = 60.0) -> list[int]:
    """The pids recorded in ``pid_dir`` once ``n`` ranks recorded theirs (or time ran out)."""
    deadline = time.monotonic() + seconds
    while len(recorded_pids(pid_dir)) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return recorded_pids(pid_dir)


def wait_until_gone(pids, seconds: float = 5.0) -> list[int]:
    """The pids still running after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def interrupt_sleeping_cell(km, kc, pid_dir, *, interrupts: int, gap_s: float = 0.01) -> None:
    """In a kernel that has imported labs, os, time and dist: run 4 sleeping ranks in a
    cell, interrupt the kernel ``interrupts`` times ``gap_s`` apart once they all run, and
    check the cell ended with KeyboardInterrupt leaving no rank and no run folder."""
    msg_id = kc.execute(WRITE_PID + textwrap.dedent(f"""
        def sleeper():
            write_pid({str(pid_dir)!r}, f"{{dist.get_rank()}}.pid", str(os.getpid()))
            time.sleep(120)
        labs.launch(sleeper, 4, timeout=120)
    """))
    pids = wait_for_pids(pid_dir, 4)
    assert len(pids) == 4, f"{len(pids)} of 4 ranks started within 60 s"
    for k in range(interrupts):
        if k:
            time.sleep(gap_s)
        km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"]["msg_id"] != msg_id:  # replies of the earlier cells
        reply = kc.get_shell_msg(timeout=30)
    assert reply["content"].get("ename") == "KeyboardInterrupt", reply["content"]
    assert wait_until_gone(pids, 10) == []
    assert launcher_tmpdirs(km.provisioner.pid) == set()


@pytest.fixture(autouse=True)
def english(monkeypatch):
    """The launcher's messages in English, here and in what this test starts."""
    monkeypatch.setenv(messages.LANG_ENV, "en")


@pytest.fixture
def clean(tmp_path):
    """Yields a folder for rank pids; afterwards checks no rank and no temp folder is left."""
    before = launcher_tmpdirs()
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    yield str(pid_dir)
    deadline = time.monotonic() + 5
    while any(alive(p) for p in recorded_pids(pid_dir)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in recorded_pids(pid_dir) if alive(p)] == []
    assert launcher_tmpdirs() - before == set()


@pytest.fixture
def warm():
    """A forkserver that has imported torch already, so that a timing covers the run alone
    (a cold start under load can take longer than the short timeouts below)."""
    labs.launch(environment_of_rank, 1)


def run_script(code: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, **kwargs)


# --- functions the ranks run -------------------------------------------------------------

def rank_and_sum(pid_dir):
    record_pid(pid_dir)
    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    print(f"rank {dist.get_rank()} says hi")
    return dist.get_rank(), t.item()


def fail_on_rank_2(pid_dir):
    record_pid(pid_dir)
    if dist.get_rank() == 2:
        raise ValueError("planted failure on rank two")
    dist.barrier()  # the others wait for rank 2, which never comes
    return "unreachable"


def abort_on_rank_1(pid_dir):
    record_pid(pid_dir)
    print(f"rank {dist.get_rank()} before the crash", flush=True)
    if dist.get_rank() == 1:
        os.abort()
    dist.barrier()


def recv_nobody_sends(pid_dir):
    record_pid(pid_dir)
    if dist.get_rank() == 1:
        t = torch.zeros(2)
        dist.recv(t, src=0)  # rank 0 never sends
    return dist.get_rank()


def mismatched_collectives(pid_dir):
    record_pid(pid_dir)
    t = torch.ones(4)
    if dist.get_rank() == 0:
        dist.all_reduce(t)
        dist.all_reduce(t)  # one more than the others
    else:
        dist.all_reduce(t)
    return t.sum().item()


def environment_of_rank():
    return dict(device=str(labs.device()), threads=torch.get_num_threads(),
                rank=os.environ["RANK"], world=os.environ["WORLD_SIZE"],
                extra=os.environ.get("LABS_TEST_FORWARDED"),
                backend=dist.get_backend())


# --- results and output ------------------------------------------------------------------

def test_results_in_rank_order_and_prefixed_output(clean, capfd):
    results = labs.launch(rank_and_sum, 4, args=(clean,))
    assert results == [(r, 10.0) for r in range(4)]
    out = capfd.readouterr().out
    for r in range(4):
        assert f"[rank {r}] rank {r} says hi" in out


@pytest.mark.slow  # a fresh interpreter runs a script on ranks (make test only, issue 27)
def test_functions_and_classes_defined_in_main_script():
    """A script's __main__ (like a notebook cell) ships functions and classes by value."""
    proc = run_script("""
        import labs, torch, torch.distributed as dist

        class Scaler:
            def __init__(self, k):
                self.k = k
            def __call__(self, x):
                return self.k * x

        def work(k):
            t = torch.tensor([float(dist.get_rank())])
            dist.all_reduce(t)
            print("partial", Scaler(k)(dist.get_rank()))
            return Scaler(k)(t.item()) + dist.get_rank()

        if __name__ == "__main__":
            print("RESULT", labs.launch(work, 4, args=(2,)))
    """)
    assert proc.returncode == 0, proc.stderr
    assert "RESULT [12.0, 13.0, 14.0, 15.0]" in proc.stdout
    for r in range(4):
        assert f"[rank {r}] partial {2 * r}" in proc.stdout


def test_kwargs_and_return_of_tensors(clean):
    def make(n, *, scale):
        record_pid(clean)
        return {"t": torch.full((n,), float(dist.get_rank()) * scale)}

    out = labs.launch(make, 2, args=(3,), kwargs={"scale": 2.0})
    torch.testing.assert_close(out[1]["t"], torch.full((3,), 2.0))


def test_rank_environment_threads_device_and_forwarded_env(monkeypatch):
    monkeypatch.delenv("LABS_THREADS_PER_RANK", raising=False)  # the default share is checked
    monkeypatch.setenv("LABS_TEST_FORWARDED", "set-after-forkserver-start")
    envs = labs.launch(environment_of_rank, 2)
    threads = max(1, launcher.cpu_count() // 2)
    for r, env in enumerate(envs):
        assert env == dict(device="cpu", threads=threads, rank=str(r), world="2",
                           extra="set-after-forkserver-start", backend="gloo")


def test_world_size_one_runs():
    assert labs.launch(environment_of_rank, 1)[0]["rank"] == "0"


# --- failures ----------------------------------------------------------------------------

def test_exception_names_root_rank_with_traceback(warm, clean):
    start = time.monotonic()
    with pytest.raises(labs.RankError) as info:
        labs.launch(fail_on_rank_2, 4, args=(clean,), timeout=60)
    elapsed = time.monotonic() - start
    err = info.value
    assert err.rank == 2 and err.exc_type == "ValueError"
    assert "rank 2 of 4 raised ValueError: planted failure on rank two" in str(err)
    assert 'raise ValueError("planted failure on rank two")' in str(err)  # the source line
    assert isinstance(err.original, ValueError)
    assert elapsed < 10, "the other ranks were not stopped promptly"


def test_rank_killed_by_signal_is_reported_with_output_tail(clean):
    with pytest.raises(labs.RankCrashedError) as info:
        labs.launch(abort_on_rank_1, 4, args=(clean,))
    assert info.value.rank == 1
    assert "SIGABRT" in str(info.value)
    assert "rank 1 before the crash" in str(info.value)


def test_hung_recv_times_out_naming_the_waiting_rank(warm, clean):
    start = time.monotonic()
    with pytest.raises(labs.LaunchTimeoutError) as info:
        labs.launch(recv_nobody_sends, 4, args=(clean,), timeout=3)
    assert time.monotonic() - start < 3 + 5
    assert info.value.waiting == [1]
    message = str(info.value)
    assert "ranks [1] of 4 were still running" in message
    assert "in recv" in message and "recv_nobody_sends" in message  # where it hung
    assert info.value.in_communication is True and "deadlock" in message
    assert "your code: " in message and "site-packages" not in message  # short paths
    assert info.value.stacks[1][0].func == "recv"


def test_mismatched_collective_times_out(warm, clean):
    start = time.monotonic()
    with pytest.raises(labs.LaunchTimeoutError) as info:
        labs.launch(mismatched_collectives, 3, args=(clean,), timeout=3)
    assert time.monotonic() - start < 3 + 5
    assert 0 in info.value.waiting
    assert info.value.in_communication is True


def spin_on_rank_0():
    import torch.distributed as dist
    if dist.get_rank() == 0:
        while True:  # an endless loop in the student's own code (no peer is awaited)
            pass
    dist.barrier()


def test_endless_loop_is_a_timeout_not_a_deadlock(warm, clean):
    with pytest.raises(labs.LaunchTimeoutError) as info:
        labs.launch(spin_on_rank_0, 2, timeout=3)
    assert info.value.in_communication is False
    message = str(info.value)
    assert "endless loop" in message and "deadlock" not in message
    assert "rank 0: still running (not in communication)" in message
    assert "ranks 1: " not in message and "rank 1: waiting in communication" in message


@pytest.mark.slow  # a process fault (SIGINT) (make test only, issue 27)
def test_keyboard_interrupt_stops_all_ranks(tmp_path):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time, labs, tests.labs.runtime.test_launcher as t
        def sleeper():
            t.record_pid({str(pid_dir)!r})
            time.sleep(120)
        try:
            labs.launch(sleeper, 4, timeout=120)
        except KeyboardInterrupt:
            print("INTERRUPTED", flush=True)
    """)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(recorded_pids(pid_dir)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = recorded_pids(pid_dir)
    assert len(pids) == 4
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert "INTERRUPTED" in out, err
    time.sleep(0.5)
    assert [p for p in pids if alive(p)] == []
    assert launcher_tmpdirs(proc.pid) == set()


@pytest.mark.slow  # two launching processes at once (make test only, issue 27)
def test_two_launches_from_two_processes_do_not_interfere():
    code = """
        import sys, labs, torch, torch.distributed as dist
        def work(base):
            t = torch.tensor([base + dist.get_rank()], dtype=torch.float64)
            for _ in range(200):
                dist.all_reduce(t)
                t /= dist.get_world_size()
            return t.item()
        base = float(sys.argv[1])
        print("RESULT", labs.launch(work, 2, args=(base,)))
    """
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(b)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for b in (100, 200)]
    outs = [p.communicate(timeout=120) for p in procs]
    for (out, err), base, p in zip(outs, (100, 200), procs):
        assert p.returncode == 0, err
        assert f"RESULT [{base + 0.5}, {base + 0.5}]" in out


# --- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("world_size, error, words", [
    (0, ValueError, "at least one rank"),
    (-2, ValueError, "at least one rank"),
    ("4", TypeError, "must be an int"),
    (10_000, ValueError, "too many CPU ranks"),
])
def test_bad_world_size(world_size, error, words):
    with pytest.raises(error, match=words):
        labs.launch(environment_of_rank, world_size)


def test_bad_backend_and_timeout():
    with pytest.raises(ValueError) as info:
        labs.launch(environment_of_rank, 2, backend="mpi")
    found_in(info.value, "runtime.unknown_backend", backend="mpi")
    with pytest.raises(ValueError, match="> 0"):
        labs.launch(environment_of_rank, 2, timeout=0)
    with pytest.raises(TypeError) as info:
        labs.launch(42, 2)
    assert str(info.value) == text("runtime.not_a_function", type="int")


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="this machine has the GPUs")
def test_nccl_without_enough_gpus_says_what_to_do():
    with pytest.raises(ValueError, match="backend='gloo'"):
        labs.launch(environment_of_rank, 2, backend="nccl")


def test_auto_backend_is_gloo_without_gpus():
    expected = "nccl" if launcher.cuda_device_count() >= 2 else "gloo"
    assert launcher.resolve_backend("auto", 2) == expected


def test_return_value_that_cannot_be_sent_back(clean):
    def returns_lock():
        record_pid(clean)
        return threading.Lock()

    with pytest.raises(labs.LaunchError) as info:
        labs.launch(returns_lock, 2)
    found_in(info.value, "runtime.result_unsendable", world_size=2)


def test_argument_that_cannot_be_sent():
    with pytest.raises(labs.LaunchError) as info:
        labs.launch(environment_of_rank, 2, args=(threading.Lock(),))
    found_in(info.value, "runtime.cannot_send_task", name="environment_of_rank")


# --- GPU path (never faked: skipped without GPUs) -----------------------------------------

@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA GPUs")
def test_nccl_all_reduce_on_gpus():
    n = torch.cuda.device_count()

    def on_gpu():
        t = torch.ones(4, device=labs.device()) * (dist.get_rank() + 1)
        dist.all_reduce(t)
        return str(labs.device()), dist.get_backend(), t.cpu().tolist()

    results = labs.launch(on_gpu, n, backend="nccl")
    total = float(n * (n + 1) // 2)
    assert results == [(f"cuda:{r}", "nccl", [total] * 4) for r in range(n)]


# --- the same function under torchrun, the doctor, the benchmark ---------------------------

@pytest.mark.slow  # torchrun end to end (make test only, issue 27)
def test_torchrun_entry_runs_the_same_function():
    torchrun = Path(sys.executable).with_name("torchrun")
    proc = subprocess.run([str(torchrun), "--standalone", "--nproc-per-node=2", "-m", "labs",
                           "run", "labs.runtime.examples:all_reduce_demo", "--backend", "gloo"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("all_reduce_demo returned 3.0") == 2


@pytest.mark.slow  # torchrun end to end (make test only, issue 27)
def test_a_torchrun_worker_leaves_with_its_output_and_code_and_no_group():
    """exit_rank (how every rank ends, skipping the interpreter's finalization)
    destroys the group, flushes what was printed without a newline, and keeps the exit code."""
    code = ("import os, torch.distributed as dist, sys\n"
            "from labs.runtime.rank import exit_rank\n"
            "store = dist.HashStore()\n"
            "dist.init_process_group('gloo', store=store, rank=0, world_size=1)\n"
            "dist.destroy_process_group = (lambda f: lambda: (f(), print('destroyed', end=' ')))"
            "(dist.destroy_process_group)\n"
            "print('unflushed', end=' '); sys.stderr.write('err')\n"
            "exit_rank(3)\n"
            "print('never')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert (proc.returncode, proc.stdout, proc.stderr[-3:]) == (3, "unflushed destroyed ", "err")


def test_labs_run_outside_torchrun_says_how():
    proc = subprocess.run([sys.executable, "-m", "labs", "run",
                           "labs.runtime.examples:all_reduce_demo"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={k: v for k, v in os.environ.items()
                               if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR")})
    assert proc.returncode != 0
    assert "must be started by torchrun" in proc.stderr


@pytest.mark.slow  # the doctor's all-reduces in a fresh interpreter (make test only, issue 27)
def test_doctor_runs_real_all_reduces():
    proc = subprocess.run([sys.executable, "-m", "labs", "doctor"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all_reduce  gloo x2: ok" in proc.stdout
    assert "all_reduce  gloo x4: ok" in proc.stdout
    assert "all_reduce  gloo x8: ok" in proc.stdout  # 2.4's rank count (the pre-workshop check)


@pytest.mark.slow  # a benchmark run (cold and warm launches) (make test only, issue 27)
def test_launch_benchmark_prints_all_methods():
    proc = subprocess.run([sys.executable, "-m", "labs.bench", "launch", "--sizes", "2",
                           "--repeats", "1"], capture_output=True, text=True, timeout=240,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for method in ("labs.launch", "mp.spawn", "torchrun"):
        assert method in proc.stdout
    assert "like with like: cold labs.launch vs cold torchrun" in proc.stdout  # not warm vs cold


def test_gpu_benchmark_reports_when_there_is_no_gpu():
    from labs.bench import gpu
    assert gpu.peak_tflops("NVIDIA H200") == 989.0 and gpu.peak_tflops("a CPU") is None
    proc = subprocess.run([sys.executable, "-m", "labs.bench", "gpu"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    if not torch.cuda.is_available():
        assert "no CUDA GPU here" in proc.stdout
    else:
        assert "labs.launch nccl x1: backend=nccl, each rank on its own GPU: True" in proc.stdout


@pytest.mark.slow  # a kernel and an interrupt (make test only, issue 27)
def test_in_a_jupyter_kernel_cells_run_on_ranks_and_interrupt_stops_them(tmp_path):
    """As a student would: define a function in a cell, run it on 4 ranks, see the prefixed
    output; then interrupt the kernel during a long launch and find no rank left."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        def run(code, timeout=120):
            out = []
            msg_id = kc.execute(code)
            while True:
                msg = kc.get_iopub_msg(timeout=timeout)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream":
                    out.append(content["text"])
                elif kind == "error":
                    out.append(f"{content['ename']}: {content['evalue']}")
                elif kind == "status" and content["execution_state"] == "idle":
                    return "".join(out)

        out = run(textwrap.dedent("""
            import labs, torch, torch.distributed as dist
            class Greeter:
                def hello(self):
                    return f"hello from {dist.get_rank()}"
            def cell_fn():
                print(Greeter().hello())
                return dist.get_rank() ** 2
            print("RESULT", labs.launch(cell_fn, 4))
        """))
        assert "RESULT [0, 1, 4, 9]" in out
        for r in range(4):
            assert f"[rank {r}] hello from {r}" in out

        pid_dir = tmp_path / "pids"
        pid_dir.mkdir()
        run("import os, time")
        interrupt_sleeping_cell(km, kc, pid_dir, interrupts=1)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_rank_limit_follows_memory_and_cores(monkeypatch):
    monkeypatch.delenv("LABS_MAX_WORLD_SIZE", raising=False)
    monkeypatch.setattr(launcher, "available_memory_bytes", lambda: 64 * 2**30)
    assert launcher.max_world_size() == max(8, 4 * launcher.cpu_count())
    monkeypatch.setattr(launcher, "available_memory_bytes", lambda: 3 * launcher.RANK_MEMORY_BYTES)
    assert launcher.max_world_size() == 3
    with pytest.raises(ValueError, match=pattern("runtime.world_size_too_large", world_size=4, most=3)):
        labs.launch(environment_of_rank, 4)
    monkeypatch.setenv("LABS_MAX_WORLD_SIZE", "4")
    assert labs.launch(environment_of_rank, 4)[3]["rank"] == "3"


# --- the notebook's language, in the launcher and on the ranks -----------------------------

def language_on_rank(folder):
    os.chdir(folder)  # a folder that, by itself, would give the rank the other language
    return os.environ.get(messages.LANG_ENV), messages.language()


def raise_message_on_rank_1(folder):
    os.chdir(folder)
    if dist.get_rank() == 1:
        raise ValueError(text("runtime.world_size_too_small", world_size=0))
    return dist.get_rank()


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_launcher_errors_speak_the_notebook_language(monkeypatch, lang):
    monkeypatch.setenv(messages.LANG_ENV, lang)
    with pytest.raises(ValueError) as info:
        labs.launch(environment_of_rank, 0)
    assert str(info.value) == text("runtime.world_size_too_small", lang=lang, world_size=0)
    other = next(other for other in messages.LANGUAGES if other != lang)
    assert str(info.value) != text("runtime.world_size_too_small", lang=other, world_size=0)
    with pytest.raises(TypeError) as info:
        labs.launch(42, 2)
    assert str(info.value) == text("runtime.not_a_function", lang=lang, type="int")


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_ranks_speak_the_language_of_the_launch(warm, monkeypatch, tmp_path, lang):
    """The forkserver (started above under LABS_LANG=en) forks ranks in the language that the
    launching notebook speaks at launch time, here told by its folder (notebooks/en/ is
    English); a rank that changes folder keeps it, and so do the messages it raises."""
    notebook = tmp_path / ("en" if lang == "en" else "notebooks")
    elsewhere = tmp_path / ("zh" if lang == "en" else "en")  # the other language's folder
    notebook.mkdir()
    elsewhere.mkdir()
    monkeypatch.delenv(messages.LANG_ENV)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(notebook)
    assert messages.language() == lang
    assert labs.launch(language_on_rank, 2, args=(str(elsewhere),)) == [(lang, lang)] * 2
    with pytest.raises(labs.RankError) as info:
        labs.launch(raise_message_on_rank_1, 2, args=(str(elsewhere),))
    message = str(info.value)
    assert text("runtime.world_size_too_small", lang=lang, world_size=0) in message  # the rank's
    assert message.startswith(text("runtime.rank_raised", lang=lang, rank=1, world_size=2,
                                   message="ValueError"))  # the launcher's
