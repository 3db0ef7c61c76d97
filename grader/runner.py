"""The grader's worker: runs ONE prepared submission, exercise by exercise, and writes what the
cells printed. ``python -m grader.runner JOB.json RESULT.json`` (started by
:mod:`grader.submission`, one process per submission, never inside the sandbox).

The job names the setup cell(s) and, per exercise, its cells (the exercise cells and, last, its
check) and its time limit. The kernel -- in the sandbox of :mod:`grader.sandbox` -- runs
the setup, then the exercises in order, each exercise with its own time limit. On a timeout or
a kernel death only that exercise is lost: the kernel and every process it started are killed,
a new kernel runs the setup again and replays the (non-check) cells of the exercises that had
finished, and grading goes on with the next exercise. The limits of :mod:`grader.resources`
(memory, /tmp and /dev/shm, processes, CPU time and outputs per exercise) are held the same way:
past one, the exercise's status names the limit and the kernel is restarted. The result is plain JSON (the outputs of
the cells run, a status per exercise); this process unpickles nothing the student made. It dies
with the grader (``PR_SET_PDEATHSIG``), and its kernel with it.

Every kernel starts with the grader's recorder installed (:data:`KERNEL_START`, run by the
kernel itself before any cell: ``--IPKernelApp.exec_lines``), so the checks leave records; the
course code (``labs``) knows nothing of it. Owns: the kernel's life and the cells' order and
limits. Must not: judge, or read the records (the grader does, after the kernel is gone).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

from labs.messages import text

from grader import monitor as monitor_module
from grader import limits as time_limits
from grader import resources, sandbox
from grader.imports import leave_out_unused_format_checkers

__all__ = ["run_job", "main"]

OK, TIMEOUT, DEAD, OVERALL, SETUP, LIMIT = "ok", "timeout", "dead", "overall", "setup", "limit"
_OUTPUTS = ("stream", "display_data", "execute_result", "error", "update_display_data")
#: Run by each kernel at start, before the first cell: the grader's recorder in the checks'
#: interceptor slot (grader.recorder), binding no name in the student's namespace.
KERNEL_START = "__import__('grader.recorder').recorder.install()"


def _manager_class(prefix: list[str], ipc: Path):
    # Async, as nbclient expects: with a blocking manager its client blocks the event loop
    # in get_msg, so nbclient's timeout and dead-kernel checks never run (a kernel that
    # died mid-cell hung the worker forever).
    from jupyter_client.manager import AsyncKernelManager

    class SandboxedKernelManager(AsyncKernelManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.transport = "ipc"  # unix sockets: the sandbox has no network of its own
            tag = uuid.uuid4().hex[:8]
            self.ip = str(ipc / tag)
            self.connection_file = str(ipc / f"{tag}.json")

        def format_kernel_cmd(self, extra_arguments=None):
            return [*prefix, *super().format_kernel_cmd(extra_arguments),
                    f"--IPKernelApp.exec_lines={KERNEL_START}"]

    return SandboxedKernelManager


def _size(content: dict) -> int:
    """The bytes an output message adds to the notebook."""
    parts = [content.get("text", ""), *content.get("traceback", []),
             *(content.get("data") or {}).values()]
    return sum(len(p) if isinstance(p, str) else len(json.dumps(p)) for p in parts)


def _client_class(monitor: monitor_module.Monitor, note: str):
    """nbclient's client, counting each output against the monitor's output limit: past it,
    nothing more is kept but one note, and the monitor stops the kernel."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_output

    class LimitedClient(NotebookClient):
        def process_message(self, msg, cell, cell_index):
            if msg.get("msg_type") in _OUTPUTS and not monitor.add_output(_size(msg["content"])):
                if not cell.metadata.get("output_truncated"):  # the outputs end with the note
                    cell.metadata["output_truncated"] = True
                    cell.outputs.append(new_output("stream", name="stderr", text=note + "\n"))
                return None
            return super().process_message(msg, cell, cell_index)

    return LimitedClient


class _Kernel:
    """One kernel's life: started, cells run, then killed with everything it started."""

    def __init__(self, nb, job: dict, manager_class, client_class):
        self.client = client_class(
            nb, timeout=60, allow_errors=True, interrupt_on_timeout=False,
            shutdown_kernel="immediate", kernel_name=job.get("kernel_name") or "python3",
            resources={"metadata": {"path": job["workdir"]}}, record_timing=False,
            kernel_manager_class=manager_class, startup_timeout=120)
        self.token = job["env"]["LABS_GRADE_MARK"]
        self._ctx = self.client.setup_kernel()
        self._ctx.__enter__()

    def run(self, cell, index: int, limit: float) -> str:
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self.client.timeout = max(1, int(limit + 0.999))
        try:
            self.client.execute_cell(cell, index)
        except CellTimeoutError:
            return TIMEOUT
        except DeadKernelError:
            return DEAD
        except Exception:  # noqa: BLE001 - a broken channel is a dead kernel
            from jupyter_core.utils import run_sync

            if not run_sync(self.client.km.is_alive)():
                return DEAD
            raise
        return OK

    def close(self) -> None:
        try:
            self._ctx.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - it is killed below anyway
            pass
        sandbox.kill_marked(self.token)
        sandbox.kill_orphans(keep=set())


def _run_cells(kernel: _Kernel, nb, indices, deadline: float, overall: float,
               monitor: monitor_module.Monitor, cpu: bool = True):
    """Run cells ``indices`` until ``deadline``, watched by ``monitor``; (status, index it
    stopped at). Past a resource limit the status is LIMIT (the limit: ``monitor.tripped``);
    ``cpu=False`` (the setup): no CPU-time limit, the wall-time limit only."""
    start = time.monotonic()
    monitor.begin(cpu=cpu, wall=deadline - start)  # the limit, counted at the load's pace
    # the clock's own deadline: as far as the load may stretch the limit (grader.limits)
    deadline = start + (deadline - start) * time_limits.MAX_STRETCH
    status, at = OK, None
    for index in indices:
        left = min(deadline, overall) - time.monotonic()
        if left <= 0:
            status, at = (OVERALL if overall <= deadline else TIMEOUT), index
            break
        status = kernel.run(nb.cells[index], index, left)
        if status == TIMEOUT and overall <= deadline and time.monotonic() >= overall - 0.5:
            status = OVERALL
        if status != OK or monitor.tripped:
            at = index
            break
    ran = [o for i in indices[:indices.index(at) + 1 if at is not None else len(indices)]
           for o in nb.cells[i].get("outputs", [])]
    tripped = monitor.end(ran)
    if tripped == "time":  # the wall-time limit, counted at the load's pace: a timeout
        monitor.tripped = None
        return (OVERALL if time.monotonic() >= overall - 0.5 else TIMEOUT), (
            at if at is not None else indices[-1])
    if tripped:
        return LIMIT, at if at is not None else indices[-1]
    return status, at


class _Exercises:
    """The job's exercises run in order; after a lost one, a new kernel replays the finished."""

    def __init__(self, nb, job: dict, monitor: monitor_module.Monitor, manager_class,
                 client_class):
        self.nb, self.job, self.monitor = nb, job, monitor
        self.manager_class, self.client_class = manager_class, client_class
        self.setup_limit = float(job["setup_timeout"])
        self.overall = time.monotonic() + float(job["timeout"])
        self.status: dict[str, dict] = {}
        self.finished: list[dict] = []
        self.restarts = 0
        self.kernel: _Kernel | None = None
        self.setup_error: dict | None = None

    def run(self, exercise: dict) -> None:
        """Run one exercise (starting a kernel first when there is none); record its status."""
        gid = exercise["grade_id"]
        if time.monotonic() >= self.overall:
            self.status[gid] = {"status": OVERALL, "cell": None}
            return
        if self.kernel is None and not self._start_kernel(gid):
            return
        state, at = _run_cells(self.kernel, self.nb, exercise["cells"],
                               time.monotonic() + float(exercise["limit"]), self.overall,
                               self.monitor)
        self.status[gid] = {"status": state, "cell": at}
        if state == LIMIT:
            self.status[gid]["limit"] = self.monitor.tripped
        if state == OK:
            self.finished.append(exercise)
        else:
            self.kernel.close()
            self.kernel = None
            self.restarts += 1

    def close(self) -> None:
        """Close the kernel, if one is running."""
        if self.kernel is not None:
            self.kernel.close()

    def _start_kernel(self, gid: str) -> bool:
        """Start a kernel ready for exercise ``gid``; if none could be, record why it is lost."""
        try:
            self.kernel = self._fresh_kernel()
        except Exception as exc:  # noqa: BLE001 - kernel failed to start
            self.status[gid] = {"status": SETUP, "cell": None,
                                "detail": f"{type(exc).__name__}: {exc}"}
            self.kernel = None
            return False
        if self.kernel is None:
            self.status[gid] = self._setup_failure()
            return False
        return True

    def _setup_failure(self) -> dict:
        """The status of an exercise lost because no kernel got through the setup and replay."""
        error = self.setup_error
        status = {"status": SETUP, "cell": (error or {}).get("cell"),
                  "detail": (error or {}).get("status")}
        if error and error["status"] == LIMIT:
            status["limit"] = error.get("limit")
        if error and error["status"] == OVERALL:
            status["status"] = OVERALL
        return status

    def _fresh_kernel(self) -> _Kernel | None:
        """A new kernel that ran the setup and replayed the finished exercises, else None."""
        k = _Kernel(self.nb, self.job, self.manager_class, self.client_class)
        state, at = _run_cells(k, self.nb, self.job["setup"],
                               time.monotonic() + self.setup_limit, self.overall, self.monitor,
                               cpu=False)
        if state != OK:
            self.setup_error = {"status": state, "cell": at, "limit": self.monitor.tripped}
            k.close()
            return None
        for done in self.finished:  # replay what the exercises before defined
            cells = [i for i in done["cells"] if i != done["check"]]
            state, _ = _run_cells(k, self.nb, cells, time.monotonic() + float(done["limit"]),
                                  self.overall, self.monitor)
            if state != OK:
                k.close()
                return None
        return k


def _enter_job_environment(job: dict) -> None:
    """Become the subreaper of the kernels and take the job's environment variables."""
    sandbox.set_subreaper()
    os.environ.update(job["env"])
    for name in job.get("unset_env", []):
        os.environ.pop(name, None)


def _sandbox_prefix(job: dict, limits: resources.Limits) -> list[str]:
    """The sandbox's command put in front of each kernel's (bwrap: without JPY_PARENT_PID)."""
    prefix = sandbox.kernel_prefix(job["sandbox"], workdir=Path(job["workdir"]),
                                   course=Path(job["course"]), ipc=Path(job["ipc"]),
                                   hide=[Path(p) for p in job.get("hide", [])],
                                   tmp_size=limits.tmp)
    if job["sandbox"] == "bwrap":
        at = prefix.index("--")
        prefix[at:at] = ["--unsetenv", "JPY_PARENT_PID"]
    return prefix


def run_job(job: dict) -> dict:
    """Run the job's setup and exercises in a sandboxed kernel; the outputs and their status."""
    import nbformat

    _enter_job_environment(job)
    nb = nbformat.from_dict(job["notebook"])
    limits = resources.Limits(**job.get("limits", {}))
    token = job["env"]["LABS_GRADE_MARK"]
    prefix = _sandbox_prefix(job, limits)
    cgroups = resources.Cgroups(job.get("cgroup") or resources.cgroup_name(os.getppid(), token),
                                limits)
    monitor = monitor_module.Monitor(limits, cgroups, token, job["sandbox"])
    manager_class = _manager_class([*resources.shim(limits, cgroups, job["sandbox"]), *prefix],
                                   Path(job["ipc"]))
    client_class = _client_class(monitor, text("grade.output_truncated",
                                               limit=resources.shown("output", limits)))
    exercises = _Exercises(nb, job, monitor, manager_class, client_class)
    try:
        for exercise in job["exercises"]:
            exercises.run(exercise)
    finally:
        exercises.close()
        sandbox.kill_marked(token)
        sandbox.kill_orphans(keep=set())
        monitor.close()
        cgroups.close()
    wanted = {i for e in job["exercises"] for i in e["cells"]} | set(job["setup"])
    cells = {str(i): nb.cells[i].get("outputs", []) for i in sorted(wanted)
             if nb.cells[i].cell_type == "code"}
    return {"cells": cells, "exercises": exercises.status, "restarts": exercises.restarts,
            "limits_weak": resources.weak(job["sandbox"], cgroups)}


def die_with_parent(parent: int | None) -> None:
    """Be killed when the process that started this one ends (Linux ``PR_SET_PDEATHSIG``): a
    grader killed hard takes its workers with it, and their kernels with them (bwrap
    ``--die-with-parent``; the fallback's shim does the same for its kernel)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:  # it ended before prctl took effect
        os._exit(1)


def main(argv: list[str] | None = None) -> int:
    leave_out_unused_format_checkers()  # before nbclient is imported: 1.3 s less per submission
    argv = sys.argv[1:] if argv is None else argv
    parent = os.environ.pop("LABS_GRADE_PARENT", None)
    die_with_parent(int(parent) if parent and parent.isdigit() else None)
    job_path, result_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    result = run_job(job)
    tmp = result_path.with_name(result_path.name + ".tmp")
    tmp.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, result_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
