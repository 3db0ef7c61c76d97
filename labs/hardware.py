"""The GPUs and links the course reasons about: capacity, peak rate and bandwidths, each sourced.

Units are SI base units: bytes, FLOP/s, bytes/s (GiB, TFLOP/s and GB/s only when displayed).

- ``memory_bytes``: the capacity ``nvidia-smi`` reports (MiB × 2^20); the datasheet's "80GB" is
  80 GiB on A100/H100, "141GB" on H200 is 143,771 MiB.
- ``peaks``: dense (no 2:4 sparsity) peak FLOP/s per arithmetic the card has: "fp32" (CUDA
  cores; what PyTorch's fp32 matmuls use, since ``torch.backends.cuda.matmul.allow_tf32`` is
  False by default from PyTorch 1.12), "tf32", "fp16"/"bf16" and "fp8" tensor cores. A dtype the
  card lacks is absent (V100: no TF32, bf16 or fp8; A100: no fp8). The H100/H200 datasheets
  print tensor rates "with sparsity": the dense rate is half of it.
- ``peak_flops``: ``peaks["bf16"]`` (fp16 on V100, which has no bf16), kept for callers that
  want one number. MFU is measured against the peak of the run's precision (PaLM,
  arXiv:2204.02311, App. B), :meth:`GPU.peak`.
- ``hbm_bw``: memory bandwidth in bytes/s (datasheet).
- ``flash_attention``: whether FlashAttention runs on the card: FlashAttention 1.x needs Turing
  or Ampere, 2.x Ampere, Ada or Hopper (Dao-AILab/flash-attention README); V100 (Volta): no.
- ``intra_node_bw``: NVLink bytes/s per GPU per direction: half the datasheet's bidirectional
  figure (A100 "600 GB/s" = 12 links × 25 GB/s each way × 2 directions).
- ``inter_node_bw``: InfiniBand bytes/s per GPU per direction, for the DGX/HGX design of that
  GPU: one NIC per GPU (DGX A100: 8 × HDR 200 Gb/s; DGX H100/H200: 8 × NDR 400 Gb/s); DGX-1
  (V100): 4 × EDR 100 Gb/s for 8 GPUs.

These are peak figures; what collectives reach is lower (nccl-tests on DGX A100: all-reduce
bus bandwidth ≈ 230 GB/s inside a node, ≈ 23 GB/s per GPU across nodes) -- the planner applies
its own efficiency factors and says so.

Owns: the GPU and link table, each number sourced. Must not: hold a formula, import torch or any
other labs module, or print.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GPU", "GPUS", "Link", "links", "DTYPES"]

MiB = 2**20
DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")
_A100 = ("NVIDIA A100 Tensor Core GPU datasheet (2021), SXM: FP32 19.5, TF32 156, BF16/FP16 312 "
         "TFLOP/s dense (no FP8); HBM2e 2,039 GB/s (80GB), HBM2 1,555 GB/s (40GB); NVLink 600 GB/s")
_H100 = ("NVIDIA H100 Tensor Core GPU datasheet, SXM5: FP32 67, TF32 989, BF16/FP16 1,979, FP8 3,958 "
         "TFLOP/s with sparsity (half dense); HBM3 3.35 TB/s; NVLink 900 GB/s")
_H200 = ("NVIDIA H200 Tensor Core GPU datasheet, SXM: 141 GB HBM3e at 4.8 TB/s; FP32 67, TF32 989, "
         "BF16/FP16 1,979, FP8 3,958 TFLOP/s with sparsity (half dense); NVLink 900 GB/s")
_V100 = ("NVIDIA V100 Tensor Core GPU datasheet, SXM2: FP32 15.7, FP16 tensor 125 TFLOP/s (no TF32, "
         "BF16 or FP8); HBM2 900 GB/s; NVLink 300 GB/s")
_FLASH = ("Dao-AILab/flash-attention README: FlashAttention-2 supports Ampere, Ada, Hopper; 1.x "
          "Turing and Ampere; not Volta (V100)")
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
    peaks: dict = field(default_factory=dict, compare=False)
    hbm_bw: float = 0.0
    flash_attention: bool = True

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s of ``dtype``'s arithmetic; KeyError if the card has none."""
        if dtype not in self.peaks:
            raise KeyError(dtype)
        return self.peaks[dtype]

    @property
    def source(self) -> str:
        """Where every number comes from, one line per field."""
        return "\n".join(f"{key}: {value}" for key, value in self.sources.items())


def _gpu(name, mib, tflops, hbm_gbs, nvlink_bidir_gbs, ib_gbit_per_gpu, chip_source, node_source,
         flash=True):
    peaks = {k: v * 1e12 for k, v in tflops.items()}
    return GPU(name=name, memory_bytes=mib * MiB, peak_flops=peaks.get("bf16", peaks["fp16"]),
               intra_node_bw=nvlink_bidir_gbs / 2 * 1e9, inter_node_bw=ib_gbit_per_gpu / 8 * 1e9,
               peaks=peaks, hbm_bw=hbm_gbs * 1e9, flash_attention=flash,
               sources={"memory_bytes": chip_source + f"; nvidia-smi total {mib} MiB",
                        "peak_flops": chip_source, "peaks": chip_source, "hbm_bw": chip_source,
                        "intra_node_bw": f"{chip_source.split(':')[0]}: NVLink {nvlink_bidir_gbs} GB/s "
                                         "(bidirectional)",
                        "inter_node_bw": node_source, "flash_attention": _FLASH})


_V100_PEAKS = dict(fp32=15.7, fp16=125)
_A100_PEAKS = dict(fp32=19.5, tf32=156, fp16=312, bf16=312)
_H100_PEAKS = dict(fp32=67, tf32=989 / 2, fp16=1979 / 2, bf16=1979 / 2, fp8=3958 / 2)

GPUS: dict[str, GPU] = {g.name: g for g in (
    _gpu("V100-32GB", 32768, _V100_PEAKS, 900, 300, 400 / 8, _V100, _DGX1, flash=False),
    _gpu("A100-40GB", 40960, _A100_PEAKS, 1555, 600, 200, _A100, _DGX_A100),
    _gpu("A100-80GB", 81920, _A100_PEAKS, 2039, 600, 200, _A100, _DGX_A100),
    _gpu("H100-80GB", 81559, _H100_PEAKS, 3350, 900, 400, _H100, _DGX_H100),
    _gpu("H200", 143771, _H100_PEAKS, 4800, 900, 400, _H200, _DGX_H100),
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
