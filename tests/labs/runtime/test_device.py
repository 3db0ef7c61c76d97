"""One device convention: every tensor the DP, TP and PP code (and the hand-written collectives)
creates is created on the rank's device, ``labs.device()``.

On this CPU-only machine every device is the CPU, so a tensor built without ``device=`` would
land on the right device by luck -- and on the wrong one under nccl (``backend="auto"`` with one
GPU per rank). So the check is on the call, not on where the tensor happened to land: a
``TorchFunctionMode`` watches every tensor factory (``torch.zeros``, ``torch.empty``,
``torch.randn``, ... and the ones inside ``nn.Module`` constructors) called from the lab's
parallel code during real DP, TP and PP steps on gloo ranks, and records each one that does not
say ``device=labs.device()``. Tensors made like another (``*_like``, ``new_*``, ops) inherit its
device and are fine; the shared models and data (``labs.models``, ``labs.data``) build on the
CPU by design and the parallel code moves them.

A GPU run of these tests (ranks placed on the GPUs with ``backend="auto"``) needs a machine
with GPUs; see the README ("在 GPU 上有什么不同").
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

import labs
from labs.models import TinyGPTConfig

pytestmark = pytest.mark.numerics

LAB = Path(labs.__file__).resolve().parent
AUDITED = (LAB / "data_parallel", LAB / "tensor_parallel", LAB / "pipeline",
           LAB / "collectives")
TORCH_MODULES = Path(torch.nn.modules.__file__).resolve().parent  # nn.Linear(...) and friends
FACTORIES = {torch.empty, torch.zeros, torch.ones, torch.full, torch.tensor, torch.as_tensor,
             torch.arange, torch.linspace, torch.eye, torch.rand, torch.randn, torch.randint,
             torch.randperm, torch.empty_strided, torch.scalar_tensor}
TIMEOUT = 180
CONFIG = TinyGPTConfig(vocab_size=96, block_size=8, n_layer=2, n_head=2, n_embd=16)


def _lab_caller(frame, audited) -> str | None:
    """'file:line' of the lab code that called a factory (directly, or through an nn.Module
    constructor), or None when the caller is not audited code."""
    while frame is not None and Path(frame.f_code.co_filename).resolve().is_relative_to(
            TORCH_MODULES):
        frame = frame.f_back
    if frame is None:
        return None
    path = Path(frame.f_code.co_filename).resolve()
    if any(path == a or path.is_relative_to(a) for a in audited):
        return f"{path.relative_to(LAB.parent) if path.is_relative_to(LAB.parent) else path}" \
               f":{frame.f_lineno}"
    return None


class OffDeviceAudit(TorchFunctionMode):
    """Records tensor factories called from ``audited`` code without ``device=`` the expected
    device: ``found`` lists 'file:line: factory(device=...)'."""

    def __init__(self, device, audited=AUDITED):
        super().__init__()
        self.device, self.audited, self.found = torch.device(device), audited, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES:
            where = _lab_caller(sys._getframe(1), self.audited)
            device = kwargs.get("device")
            if where and (device is None or torch.device(device) != self.device):
                self.found.append(f"{where}: {func.__name__}(device={device!r})")
        return func(*args, **kwargs)


def _audited(calls):
    """Rank body: run ``(function, args, kwargs)`` calls under the audit; the findings."""
    found = {}
    for fn, args, kwargs in calls:
        with OffDeviceAudit(labs.device()) as audit:
            fn(*args, **kwargs)
        if audit.found:
            found[getattr(fn, "__name__", repr(fn))] = sorted(set(audit.found))
    return found


def _check(world_size, calls):
    for found in labs.launch(_audited, world_size, args=(calls,), timeout=TIMEOUT):
        assert not found, "tensors created off labs.device():\n" + "\n".join(
            f"  {name}: {where}" for name, places in found.items() for where in places)


def test_the_audit_catches_a_tensor_made_without_device():
    here = Path(__file__).resolve()
    with OffDeviceAudit("cpu", audited=(here,)) as audit:
        torch.zeros(3)  # no device: wrong under nccl
        torch.zeros(3, device="cpu")  # says where: fine
        torch.nn.Linear(2, 2)  # parameters without device: wrong under nccl
        torch.zeros(3).new_ones(2)  # inherits (only the zeros above counts)
    assert [f.split(": ")[1] for f in audit.found] == [
        "zeros(device=None)", "empty(device=None)", "empty(device=None)", "zeros(device=None)"]


def _dp_batches(step):
    from labs.data import get_batch
    return get_batch(step, 4, CONFIG.block_size)


def _dp_variant(variant):
    from labs.data_parallel import train_data_parallel
    from labs.models import TinyGPT
    return train_data_parallel(TinyGPT(CONFIG), _dp_batches, steps=2, lr=1e-3, variant=variant,
                               bucket_bytes=4096)


def test_data_parallel_creates_tensors_on_the_rank_device():
    from labs import collectives
    from labs.data_parallel import VARIANTS, experiments

    small = experiments.SMALL
    calls = [(_dp_variant, (v,), {}) for v in VARIANTS]
    calls += [(experiments.step_times, (small["sizes"], 4), dict(steps=1, warmup=1)),
              (experiments.compute_vs_comm, (small["sizes"], 4), dict(repeats=1)),
              (collectives.bandwidth_sweep, ([1024], {"ring": collectives.ring_all_reduce,
                                                      "naive": collectives.naive_all_reduce}),
               dict(repeats=1))]
    _check(2, calls)


def test_tensor_parallel_creates_tensors_on_the_rank_device():
    from labs.tensor_parallel import experiments as tpx
    from labs.tensor_parallel import verify

    calls = [(verify.tp_step_vs_full, (CONFIG, 2), {}),
             (verify.tp_step_vs_full, (CONFIG, 2), dict(sequence_parallel=True)),
             (verify.dtensor_vs_hand, (CONFIG, 2), {}),
             (tpx.layerwise_step, (CONFIG, 2), {}),
             (tpx.tp_step_times, (CONFIG, 2), dict(repeats=1)),
             (tpx.overlap_backward, (8, 16, 16), dict(overlap=True, repeats=1)),
             (tpx.activation_bytes_per_rank, (CONFIG, 2),
              dict(sequence_parallel=True, checkpoint=True, repeats=1))]
    calls += [(tpx.pairing_mlp, (pairing, 16, 4), {}) for pairing in tpx.PAIRINGS]
    _check(2, calls)


@pytest.mark.parametrize("world_size", [2])
def test_pipeline_creates_tensors_on_the_rank_device(world_size):
    from labs import pipeline as pp
    from labs.pipeline import step as px

    timed = px.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=4,
                           timing=pp.FixedTime(0.002, 0.004))  # stamps travel too
    interleaved = px.PipelineRun(schedule="interleaved", n_chunks=2, n_microbatches=2,
                                 batch_size=4)
    calls = [(px.pipeline_step, (timed,), {}), (px.pipeline_step, (interleaved,), {}),
             (px.torch_pipeline_step, (px.PipelineRun(schedule="gpipe", n_microbatches=2,
                                                      batch_size=4),), {})]
    _check(world_size, calls)


def test_no_device_is_hard_coded_in_the_parallel_code():
    """The audit sees tensors being made; a hard-coded ``"cpu"`` (``model.to("cpu")``,
    ``PipelineStage(..., torch.device("cpu"))``, ``init_device_mesh("cpu", ...)``) is caught
    here. Results go back to the notebook with ``.cpu()``, which is fine."""
    import io
    import tokenize

    for root in AUDITED:
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
            bad = [t.start[0] for t in tokens if t.type == tokenize.STRING
                   and t.string.strip("\"'").lower() in ("cpu", "cuda", "cuda:0")]
            assert not bad, f"{path.relative_to(LAB.parent)} lines {bad}: use labs.device()"
