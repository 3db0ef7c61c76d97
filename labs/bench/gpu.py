"""The GPU path, measured: nccl through labs.launch, device placement, matmul rate and MFU.

Run on a machine with CUDA GPUs (``python -m labs.bench gpu``). Every figure is measured here
and printed with its conditions; peak figures are the vendor's dense bf16 numbers, named.

Owns: this benchmark's main and its printed table. Must not: state a measured figure it did not
measure, assert a target, or be imported by labs' course modules.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.distributed as dist

import labs
from labs.formulas.cost import bus_bandwidth, training_flops
from labs.models import TinyGPT, TinyGPTConfig

__all__ = ["main"]

# Dense bf16 tensor-core peaks (vendor datasheets, without sparsity), TFLOP/s.
PEAK_BF16_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "V100": 125.0}


def peak_tflops(name: str) -> float | None:
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)


def _nccl_rank(numel: int) -> dict:
    """One rank: check device placement, time an all-reduce of ``numel`` fp32 values."""
    dev = labs.device()
    t = torch.ones(numel, device=dev) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        dist.all_reduce(t)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / 10
    return dict(device=str(dev), tensor_device=str(t.device), backend=dist.get_backend(),
                current=torch.cuda.current_device(), seconds=seconds)


def matmul_tflops(n: int = 8192, repeats: int = 10) -> float:
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e12


def gpt_step_mfu(config: TinyGPTConfig, batch: int, steps: int = 10) -> dict:
    """Model FLOPs utilisation of a bf16-autocast training step of TinyGPT (PaLM's count:
    6·N + 12·L·T·d FLOPs per token, N without embeddings)."""
    model = TinyGPT(config).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, config.vocab_size, (batch, config.block_size), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            _, loss = model(x, x)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / steps
    tokens = batch * config.block_size
    n = model.num_params(exclude_embeddings=True)
    flops = training_flops(n, tokens, n_layers=config.n_layer, seq_len=config.block_size,
                           hidden=config.n_embd)
    return dict(params=n, tokens_per_s=tokens / seconds, tflops=flops / seconds / 1e12,
                step_s=seconds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs.bench gpu")
    parser.add_argument("--numel", type=int, default=64 * 2**20, help="all-reduce size")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU here: this benchmark needs one (the course itself runs on CPU).")
        return 0
    gpus = torch.cuda.device_count()
    name = torch.cuda.get_device_name(0)
    peak = peak_tflops(name)
    print(f"torch {torch.__version__}, {gpus} x {name}, nccl {torch.cuda.nccl.version()}")
    for n in sorted({1, gpus}):
        start = time.perf_counter()
        res = labs.launch(_nccl_rank, n, args=(args.numel,), backend="auto", timeout=300)
        wall = time.perf_counter() - start
        placed = all(r["device"] == f"cuda:{i}" == r["tensor_device"] and r["current"] == i
                     for i, r in enumerate(res))
        size = args.numel * 4
        busbw = bus_bandwidth(size, res[0]["seconds"], n) / 1e9 if n > 1 else float("nan")
        print(f"labs.launch nccl x{n}: backend={res[0]['backend']}, each rank on its own GPU: "
              f"{placed}; launch+run {wall:.2f} s; all-reduce of {size / 2**20:.0f} MiB "
              f"{res[0]['seconds'] * 1e3:.2f} ms (bus bandwidth {busbw:.0f} GB/s)")
    tf = matmul_tflops()
    print(f"bf16 matmul 8192^3: {tf:.0f} TFLOP/s"
          + (f" = {tf / peak:.0%} of the {peak:.0f} TFLOP/s datasheet peak" if peak else ""))
    for cfg, batch in [(TinyGPTConfig(vocab_size=96, block_size=1024, n_layer=12, n_head=12,
                                      n_embd=768), 16),
                       (TinyGPTConfig(vocab_size=96, block_size=1024, n_layer=24, n_head=16,
                                      n_embd=2048), 8)]:
        r = gpt_step_mfu(cfg, batch)
        mfu = f", MFU {r['tflops'] / peak:.1%}" if peak else ""
        print(f"TinyGPT L={cfg.n_layer} d={cfg.n_embd} T={cfg.block_size} B={batch} "
              f"({r['params'] / 1e6:.0f}M params, bf16 autocast, explicit attention): "
              f"{r['step_s'] * 1e3:.1f} ms/step, {r['tokens_per_s']:.0f} tokens/s, "
              f"{r['tflops']:.0f} TFLOP/s{mfu}")
    return 0
