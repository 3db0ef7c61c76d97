"""The GPUs and links the course reasons about: capacity, peak rate and bandwidths, each sourced.

Units are SI base units: bytes, FLOP/s, bytes/s (GiB, TFLOP/s and GB/s only when displayed).

- ``memory_bytes``: the capacity ``nvidia-smi`` reports (MiB × 2^20); the datasheet's "80GB" is
  80 GiB on A100/H100, "141GB" on H200 is 143,771 MiB.
- ``peak_flops``: dense (no 2:4 sparsity) bf16 tensor-core rate, fp16 on V100 (no bf16 there).
  MFU is measured against this number (PaLM, arXiv:2204.02311, App. B).
- ``intra_node_bw``: NVLink bytes/s per GPU per direction: half the datasheet's bidirectional
  figure (A100 "600 GB/s" = 12 links × 25 GB/s each way × 2 directions).
- ``inter_node_bw``: InfiniBand bytes/s per GPU per direction, for the DGX/HGX design of that
  GPU: one NIC per GPU (DGX A100: 8 × HDR 200 Gb/s; DGX H100/H200: 8 × NDR 400 Gb/s); DGX-1
  (V100): 4 × EDR 100 Gb/s for 8 GPUs.

These are peak figures; what collectives reach is lower (nccl-tests on DGX A100: all-reduce
bus bandwidth ≈ 230 GB/s inside a node, ≈ 23 GB/s per GPU across nodes) -- the planner applies
its own efficiency factors and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GPU", "GPUS", "Link", "links"]

MiB = 2**20
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOP/s bf16 dense, NVLink 600 GB/s"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (SXM5): 989 TFLOP/s bf16 dense, NVLink 900 GB/s"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM): 141 GB HBM3e, 989 TFLOP/s bf16 dense, NVLink 900 GB/s"
_V100 = "NVIDIA V100 Tensor Core GPU datasheet (SXM2): 125 TFLOP/s fp16 tensor, NVLink 300 GB/s"
_DGX_A100 = "NVIDIA DGX A100 user guide: 8 × ConnectX-6 HDR InfiniBand 200 Gb/s (one per GPU)"
_DGX_H100 = "NVIDIA DGX H100/H200 user guide: 8 × ConnectX-7 NDR InfiniBand 400 Gb/s (one per GPU)"
_DGX1 = "NVIDIA DGX-1 (V100) system architecture whitepaper: 4 × EDR InfiniBand 100 Gb/s for 8 GPUs"


@dataclass(frozen=True)
class GPU:
    """One accelerator in its usual 8-GPU server (see the module docstring for each field)."""

    name: str
    memory_bytes: float
    peak_flops: float
    intra_node_bw: float
    inter_node_bw: float
    sources: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def source(self) -> str:
        """Where every number comes from, one line per field."""
        return "\n".join(f"{key}: {value}" for key, value in self.sources.items())


def _gpu(name, mib, tflops, nvlink_bidir_gbs, ib_gbit_per_gpu, chip_source, node_source):
    return GPU(name=name, memory_bytes=mib * MiB, peak_flops=tflops * 1e12,
               intra_node_bw=nvlink_bidir_gbs / 2 * 1e9, inter_node_bw=ib_gbit_per_gpu / 8 * 1e9,
               sources={"memory_bytes": chip_source + f"; nvidia-smi total {mib} MiB",
                        "peak_flops": chip_source, "intra_node_bw": chip_source + " (bidirectional)",
                        "inter_node_bw": node_source})


GPUS: dict[str, GPU] = {g.name: g for g in (
    _gpu("V100-32GB", 32768, 125, 300, 400 / 8, _V100, _DGX1),
    _gpu("A100-40GB", 40960, 312, 600, 200, _A100, _DGX_A100),
    _gpu("A100-80GB", 81920, 312, 600, 200, _A100, _DGX_A100),
    _gpu("H100-80GB", 81559, 989, 900, 400, _H100, _DGX_H100),
    _gpu("H200", 143771, 989, 900, 400, _H200, _DGX_H100),
)}


@dataclass(frozen=True)
class Link:
    """A kind of connection between ranks, for the mesh picture: per-GPU, per-direction bytes/s."""

    name: str
    bandwidth: float
    scope: str
    source: str


def links(gpu: GPU | str = "A100-80GB") -> dict[str, Link]:
    """The links a dimension of the mesh uses on ``gpu``'s server: NVLink inside, IB across."""
    gpu = GPUS[gpu] if isinstance(gpu, str) else gpu
    return {"intra": Link("NVLink", gpu.intra_node_bw, "inside a node (8 GPUs)",
                          gpu.sources["intra_node_bw"]),
            "inter": Link("InfiniBand", gpu.inter_node_bw, "between nodes",
                          gpu.sources["inter_node_bw"])}
