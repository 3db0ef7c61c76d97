"""Lab module of the hands-on distributed training course.

``labs.launch(fn, world_size)`` runs a function on several processes from a notebook, a test
or a script. ``import labs`` is cheap: it imports the launcher and the doctor, not torch, which
the launcher imports when it first starts ranks (and ``labs.device()`` when first called).
The map, one folder or file per idea (each package's ``__init__`` is its own map):

- running ranks: ``labs.launch``, ``labs.device()``, ``labs.cpu_count()``, ``labs.environment``
  (:mod:`labs.runtime`: launcher, forkserver, rank, doctor, torchrun; ``python -m labs``);
  :mod:`labs.torch_versions` (the torch the course is tested on, the range that should work);
- shared ground: :mod:`labs.models` (TinyGPT, MLP), :mod:`labs.data`, :mod:`labs.reference`
  (the single-process truth every parallel run is compared with), :mod:`labs.numerics` (when
  two results count as the same);
- 2.0 :mod:`labs.collectives` -- ring all-reduce by hand, the communication counter
  (timed over message sizes by :mod:`labs.bandwidth`);
- 2.1 :mod:`labs.data_parallel` -- DDP by hand (ddp, buckets, scaling, experiments, plots, script);
- 2.2 :mod:`labs.tensor_parallel` -- Megatron TP (comm, layers, model, dtensor, verify, ...);
- 2.3 :mod:`labs.pipeline` -- PP (partition, schedules, simulator, comm, executor, plots, ...);
- 2.4 :mod:`labs.hybrid` -- the DP x PP x TP mesh, the composed 3D step, CP/EP, profiling;
- 2.4/2.5 :mod:`labs.planner` -- a layout's memory, traffic and time, the search, the widget
  (on the GPUs and links of :mod:`labs.hardware`); 2.5 :mod:`labs.summary` -- the paradigm
  table and the one-node / two-node runs;
- the layout: :mod:`labs.parallel_dims` (the DP x PP x TP degrees, declared once for the mesh,
  the 3D step and the planner);
- the numbers: :mod:`labs.formulas` -- memory (bytes of model states and activations), cost
  (bytes on the wire, bubbles, time on a link) and fit ("does it fit?");
- notebook support: :mod:`labs.notebook` -- timeline (one timeline type), plots (figure style,
  shared figures), fonts, the cell clock and the hosted (Colab, Kaggle) bootstrap;
- :mod:`labs.exercises` (checks, student notebooks) and :mod:`labs.bench` (benchmarks);
  :mod:`labs.messages` (the language and the lookup; every package keeps the sentences it says,
  in both languages, in its own ``text*.py``).

Old module paths of notebooks handed out before a move (``labs.tp_communications`` ...) keep
working, with a warning, until labs 0.2 (:mod:`labs._moved`).

Owns: the package's map and the top-level names (``labs.launch``, ``labs.device`` ...). Must not:
import torch or a parallelism package at import time, hold logic of its own, or import ``grader``.
"""

from labs import _moved
from labs.runtime.doctor import environment
from labs.runtime.errors import LaunchError, LaunchTimeoutError, RankCrashedError, RankError
from labs.runtime.launcher import launch
from labs.runtime.placement import cpu_count, device

__all__ = ["launch", "device", "cpu_count", "LaunchError", "RankError", "RankCrashedError",
           "LaunchTimeoutError", "environment"]

_moved.install()  # old module paths (labs.tp_communications ...) keep working, with a warning
