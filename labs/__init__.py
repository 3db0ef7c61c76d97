"""Lab module of the hands-on distributed training course.

``labs.launch(fn, world_size)`` runs a function on several processes from a notebook, a test
or a script. ``import labs`` is cheap: torch is imported when the launcher is first used.
The map, one folder or file per idea (each package's ``__init__`` is its own map):

- running ranks: ``labs.launch``, ``labs.device()``, ``labs.cpu_count()``, ``labs.environment``
  (:mod:`labs.runtime`: launcher, forkserver, rank, doctor, torchrun; ``python -m labs``);
- shared ground: :mod:`labs.models` (TinyGPT, MLP), :mod:`labs.data`, :mod:`labs.reference`
  (the single-process truth every parallel run is compared with);
- 2.0 :mod:`labs.collectives` -- ring all-reduce by hand, the communication counter;
- 2.1 :mod:`labs.data_parallel` -- DDP by hand (ddp, buckets, scaling, experiments, plots, script);
- 2.2 :mod:`labs.tensor_parallel` -- Megatron TP (comm, layers, model, dtensor, verify, ...);
- 2.3 :mod:`labs.pipeline` -- PP (partition, schedules, simulator, comm, executor, plots, ...);
- 2.4 :mod:`labs.hybrid` -- the DP x PP x TP mesh, the composed 3D step, CP/EP, profiling;
- 2.4/2.5 :mod:`labs.planner` -- a layout's memory, traffic and time, the search, the widget
  (on the GPUs and links of :mod:`labs.hardware`);
- the layout: :mod:`labs.parallel_dims` (the DP x PP x TP degrees, declared once for the mesh,
  the 3D step and the planner);
- the numbers: :mod:`labs.memory` (bytes of model states and activations) and :mod:`labs.cost`
  (bytes on the wire, bubbles, time on a link), :mod:`labs.fit` ("does it fit?");
- drawing: :mod:`labs.timeline` (one timeline type) and :mod:`labs.plots` (figure style, shared
  figures);
- :mod:`labs.exercises` (checks, student notebooks, grader) and :mod:`labs.bench` (benchmarks).

Owns: the package's map and the top-level names (``labs.launch``, ``labs.device`` ...). Must not:
import torch or a parallelism package at import time, hold logic of its own, or import ``grader``.
"""

from labs import _moved

_LAUNCHER_NAMES = ("launch", "device", "cpu_count", "LaunchError", "RankError",
                   "RankCrashedError", "LaunchTimeoutError")

__all__ = list(_LAUNCHER_NAMES) + ["environment"]

_moved.install()  # old module paths (labs.tp_communications ...) keep working, with a warning


def __getattr__(name):
    if name in _LAUNCHER_NAMES:
        # why here: labs.runtime.launcher imports torch (~0.8 s); `import labs` stays cheap
        from labs.runtime import launcher
        return getattr(launcher, name)
    if name == "environment":
        # why here: `import labs` stays cheap (~8 ms; the doctor and its runtime modules add ~6 ms)
        from labs.runtime.doctor import environment
        return environment
    if f"labs.{name}" in _moved.MOVED_MODULES:
        import importlib
        return importlib.import_module(f"labs.{name}")
    raise AttributeError(f"module 'labs' has no attribute {name!r}")
