"""Which torch the course works with: the tested version, the range that should work, and the
torch APIs the notebooks use beyond the collectives.

Read by ``labs doctor`` (:mod:`labs.runtime.doctor`: a note, a warning or a problem) and by the
hosted bootstrap (:mod:`labs.notebook.hosted`: a line under the install on Colab or Kaggle).

Owns: the torch pins and the list of APIs. Must not: import torch at import time (only
:func:`missing_torch_apis` does), or any other module of labs.
"""

from __future__ import annotations

__all__ = ["PINNED_TORCH", "TORCH_RANGE", "TORCH_APIS", "torch_support", "missing_torch_apis"]

PINNED_TORCH = "2.13.0"
# The torch versions the course works with. 2.6 is the first with everything the notebooks import:
# torch.distributed.pipelining (2.4), the public torch.distributed.tensor (2.5) and
# torch.distributed.fsdp.fully_shard (2.6). Only PINNED_TORCH is tested; another version in the
# range gets a note, one outside it a warning, and only a missing API (known to break) a problem.
TORCH_RANGE = ((2, 6), (3, 0))
# What the notebooks use from torch beyond the collectives (module, attribute or None), and where.
TORCH_APIS = [
    ("torch.distributed.pipelining", "PipelineStage", "2.3, 2.4"),
    ("torch.distributed.tensor", "DTensor", "2.2, 2.4"),
    ("torch.distributed.tensor.parallel", "parallelize_module", "2.2, 2.4"),
    ("torch.distributed.device_mesh", "init_device_mesh", "2.4"),
    ("torch.distributed.fsdp", "fully_shard", "2.4"),
    ("torch.distributed._composable.replicate_with_fsdp", "replicate", "2.4"),
]


def torch_support(version: str) -> str:
    """Where a torch version stands: "tested" (the pinned one), "in_range" (should work, not
    tested), "too_old" (before TORCH_RANGE: some notebooks will break) or "too_new" (a major
    version the course has not seen: warn)."""
    release = version.split("+")[0]
    if release == PINNED_TORCH:
        return "tested"
    try:
        major_minor = tuple(int(part) for part in release.split(".")[:2])
    except ValueError:
        return "too_new"
    low, high = TORCH_RANGE
    if major_minor < low:
        return "too_old"
    return "in_range" if major_minor < high else "too_new"


def missing_torch_apis() -> list[tuple[str, str]]:
    """The (name, notebooks) of TORCH_APIS this torch lacks: the sections that will break."""
    import importlib

    missing = []
    for module, attribute, notebooks in TORCH_APIS:
        try:
            found = hasattr(importlib.import_module(module), attribute)
        except Exception:  # noqa: BLE001  (absent, or broken in this build)
            found = False
        if not found:
            missing.append((f"{module}.{attribute}", notebooks))
    return missing
