"""Hybrid parallelism: data, pipeline and tensor parallelism on one mesh of ranks, and the
two dimensions today's training adds (context and expert parallelism: the "5D" picture).

Read in this order:

1. :mod:`labs.hybrid.mesh` -- the DP × PP × TP layout (TP innermost: one node), rank <->
   coordinates (:class:`MeshShape`, declared once in :mod:`labs.parallel_dims` for the mesh,
   the 3D step and the planner), the process groups of each dimension, torch's DeviceMesh of
   the same shape;
   :mod:`labs.hybrid.plots_mesh` draws it with the link each dimension uses
   (:mod:`labs.hardware`: GPUs and links, each number sourced).
2. :mod:`labs.hybrid.three_d` -- 3D training by hand: tensor-parallel blocks (optionally with
   sequence parallelism) inside pipeline stages (the 1F1B executor), one pipeline per
   data-parallel replica; equal to one process.
3. :mod:`labs.hybrid.torch_3d` -- the same with torch's own pieces (DeviceMesh,
   parallelize_module, fully_shard, pipelining), and model-state memory of DDP vs FSDP.
4. :mod:`labs.hybrid.context_parallel` -- causal ring attention over a CP group: the sequence
   split across ranks, K/V passed around the ring, online softmax; hand-written backward.
5. :mod:`labs.hybrid.expert_parallel` -- a mixture-of-experts layer with its experts spread
   over an EP group, tokens routed with all-to-all; :mod:`labs.hybrid.verify_cp_ep` checks
   both against one process on the ranks, :mod:`labs.hybrid.send_counter` and
   :mod:`labs.hybrid.plots_cp_ep` count and draw who talks to whom.
6. :mod:`labs.hybrid.fragmentation`, :mod:`labs.hybrid.profiling` -- two pitfalls: memory
   fragmentation, and where the time of a hybrid step goes (torch.profiler).

The planner (memory, bubble, communication, step time and MFU of a configuration; the search;
the chapter's five steps; its widget) has a package of its own: :mod:`labs.planner`.

Must not: hold logic of its own, or import torch's 3D, profiling, plots or the old planner paths at
import time.
"""

from labs.hybrid.context_parallel import ring_attention, sequence_chunk
from labs.hybrid.expert_parallel import ExpertParallelMoE, MoE
from labs.hybrid.mesh import DIMS, Coords, MeshShape, ParallelDims, device_mesh, new_groups

__all__ = ["DIMS", "Coords", "MeshShape", "ParallelDims", "device_mesh", "new_groups",
           "ring_attention", "sequence_chunk", "MoE", "ExpertParallelMoE"]
