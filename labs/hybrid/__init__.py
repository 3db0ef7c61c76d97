"""Hybrid parallelism: data, pipeline and tensor parallelism on one mesh of ranks, and the
two dimensions today's training adds (context and expert parallelism: the "5D" picture).

Read in this order:

1. :mod:`labs.hybrid.mesh` -- the DP × PP × TP layout (TP innermost: one node), rank <->
   coordinates, the process groups of each dimension, torch's DeviceMesh of the same shape.
2. :mod:`labs.hybrid.three_d` -- 3D training by hand: tensor-parallel blocks inside pipeline
   stages (the 1F1B executor), one pipeline per data-parallel replica; equal to one process.
3. :mod:`labs.hybrid.context_parallel` -- causal ring attention over a CP group: the sequence
   split across ranks, K/V passed around the ring, online softmax; hand-written backward.
4. :mod:`labs.hybrid.expert_parallel` -- a mixture-of-experts layer with its experts spread
   over an EP group, tokens routed with all-to-all.
5. :mod:`labs.hybrid.send_counter`, :mod:`labs.hybrid.plots_cp_ep` -- bytes sent, and who
   talks to whom.
"""

from labs.hybrid.context_parallel import ring_attention, sequence_chunk
from labs.hybrid.expert_parallel import ExpertParallelMoE, MoE
from labs.hybrid.mesh import DIMS, Coords, MeshShape, device_mesh, new_groups

__all__ = ["DIMS", "Coords", "MeshShape", "device_mesh", "new_groups", "ring_attention",
           "sequence_chunk", "MoE", "ExpertParallelMoE"]
