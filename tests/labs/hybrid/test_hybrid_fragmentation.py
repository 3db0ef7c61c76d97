"""The fragmentation model of 2.4's myth 2, and the GPU measurement where a GPU exists."""
from __future__ import annotations

import pytest
import torch

from labs.hybrid.fragmentation import FirstFit, measure_cuda, simulate

pytestmark = pytest.mark.numerics


def test_free_bytes_are_not_one_block():
    stats = simulate(capacity=100, small=6, large=30)
    assert stats["free"] == 100 - 8 * 6  # 16 tensors of 6, every other one freed
    assert stats["largest_free"] == 6 and not stats["fits"]
    assert stats["fragmentation"] == pytest.approx(1 - 6 / 52)
    assert simulate(capacity=100, small=6, large=6)["fits"]


def test_first_fit_reuses_a_freed_gap_and_merges_neighbours():
    alloc = FirstFit(10)
    assert alloc.malloc("a", 3) and alloc.malloc("b", 3) and alloc.malloc("c", 3)
    assert not alloc.malloc("d", 2)  # 1 unit left
    alloc.free("a")
    alloc.free("b")
    assert alloc.gaps() == [(0, 6), (9, 1)]
    assert alloc.malloc("d", 5) and alloc.live["d"] == (0, 5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_expandable_segments_on_a_gpu():
    plain, expandable = measure_cuda(False), measure_cuda(True)
    for stats in (plain, expandable):
        assert stats["allocated_bytes.all.current"] <= stats["reserved_bytes.all.current"]
    assert plain["inactive_after_free"] > 0  # the freed tensors left split blocks


def test_no_gpu_means_no_measurement():
    if not torch.cuda.is_available():
        assert measure_cuda(True) is None
