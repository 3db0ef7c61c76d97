"""``python -m labs doctor``: is this machine ready for the course? Says how to fix it if not."""

from __future__ import annotations

import os
import platform
import sys
import time

__all__ = ["doctor", "environment"]

PINNED_TORCH = "2.13.0"


def _memory_gib() -> float | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def doctor(out=None) -> bool:
    """Print the environment and run real 2- and 4-rank all-reduces. True when all is well."""
    from labs.runtime import processes as _processes
    from labs.runtime.errors import LaunchError

    out = out or sys.stdout
    problems = []

    def say(line=""):
        print(line, file=out, flush=True)

    def report():
        say()
        if problems:
            say("PROBLEMS:")
            for p in problems:
                say(f"- {p}")
            return False
        say("All good: the course can run here.")
        return True

    # First, before torch: importing torch itself fails without a usable temporary folder.
    try:
        root = _processes.temp_folder()
        say(f"temp folder {root} ({_processes.free_bytes(root) / 2**30:.1f} GiB free)")
    except LaunchError as exc:
        say("temp folder NONE USABLE")
        problems.append(str(exc))
        return report()

    import torch
    import torch.distributed as dist

    from labs.runtime import examples, launcher
    from labs.runtime import rank as _rank

    say(f"python      {sys.version.split()[0]} ({platform.platform()})")
    say(f"torch       {torch.__version__}")
    if torch.__version__.split("+")[0] != PINNED_TORCH:
        problems.append(f"torch {torch.__version__} is not the course's {PINNED_TORCH}: run "
                        "`make setup` (or `pip install torch==2.13.0`) so results match.")
    gloo, nccl = dist.is_gloo_available(), dist.is_nccl_available()
    say(f"backends    gloo={'yes' if gloo else 'no'}  nccl={'yes' if nccl else 'no'}")
    if not gloo:
        problems.append("this torch build has no gloo backend: install the official "
                        f"torch=={PINNED_TORCH} wheel.")
    mem = _memory_gib()
    say(f"cpu         {_rank.cpu_count()} cores" + (f", {mem:.1f} GiB memory" if mem else ""))
    try:
        say(f"max ranks   {launcher.max_world_size()} CPU ranks at once (LABS_MAX_WORLD_SIZE "
            "overrides)")
    except ValueError as exc:
        problems.append(str(exc))
        return report()
    gpus = launcher.cuda_device_count()
    if gpus:
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(gpus))
        say(f"gpus        {gpus}: {names}")
    else:
        say("gpus        none (the course runs on CPU with gloo)")

    checks = [("gloo", n) for n in (2, 4)] + [("nccl", n) for n in (1, 2, 4, 8) if n <= gpus]
    for backend, n in checks:
        if backend == "gloo" and n > launcher.max_world_size():
            problems.append(f"{n} CPU ranks do not fit this machine's memory: close other "
                            "programs or use fewer ranks.")
            continue
        try:
            times = []
            for _ in range(2):  # the first launch may start the forkserver (cold)
                start = time.perf_counter()
                got = launcher.launch(examples.all_reduce_demo, n, backend=backend,
                                      timeout=120)
                times.append(time.perf_counter() - start)
            expected = float(n * (n + 1) // 2)
            ok = all(g == expected for g in got)
            say(f"all_reduce  {backend} x{n}: {'ok' if ok else 'WRONG'} "
                f"(sum={got[0]:g}, expected {expected:g}); launch {times[0]:.2f} s, then "
                f"{times[1]:.2f} s warm")
            if not ok:
                problems.append(f"the {backend} all-reduce on {n} ranks gave {got}, not "
                                f"{expected}: reinstall torch=={PINNED_TORCH}.")
        except Exception as exc:  # noqa: BLE001
            say(f"all_reduce  {backend} x{n}: FAILED ({type(exc).__name__})")
            problems.append(f"the {backend} all-reduce on {n} ranks failed: {exc}\n"
                            "  If it is a network error, set GLOO_SOCKET_IFNAME=lo (Linux) or "
                            "lo0 (macOS); check that the temporary folder "
                            f"({os.environ.get('TMPDIR', '/tmp')}) is writable.")
    return report()


def environment(world_size: int, backend: str = "auto", out=None) -> str:
    """The environment cell of every notebook: what this run will use, in one short block.

    Returns the backend ("gloo" or "nccl") that ``labs.launch`` will pick for ``world_size``.
    """
    import torch

    from labs.runtime import launcher
    from labs.runtime import rank as _rank

    out = out or sys.stdout
    chosen = launcher.resolve_backend(backend, world_size)
    gpus = launcher.cuda_device_count()
    if chosen == "nccl":
        devices = ", ".join(f"cuda:{i}" for i in range(world_size))
    else:
        devices = f"cpu × {world_size}（每个 rank {_rank.threads_per_rank(world_size)} 个线程）"
    print(f"torch {torch.__version__} · python {sys.version.split()[0]} · "
          f"{_rank.cpu_count()} CPU 核 · GPU {gpus} 块", file=out)
    print(f"本笔记本使用：world_size={world_size}，backend={chosen}，设备：{devices}", file=out)
    return chosen
