"""labs.hybrid.mesh: rank <-> coordinates both ways, the groups of each dimension on real
ranks, torch's DeviceMesh with the same layout, and clear errors for layouts that cannot run."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.distributed as dist

import labs
from labs.hybrid.mesh import DIMS, Coords, MeshShape, device_mesh, new_groups

SHAPES = [MeshShape(2, 2, 2), MeshShape(dp=1, pp=4, tp=2), MeshShape(dp=2, pp=4, tp=1),
          MeshShape(dp=4, pp=1, tp=2), MeshShape(dp=3, pp=1, tp=1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_coords_and_rank_are_inverse_and_tp_is_innermost(shape):
    seen = set()
    for r in range(shape.world_size):
        c = shape.coords(r)
        assert shape.rank(**c._asdict()) == r
        seen.add(c)
    assert len(seen) == shape.world_size
    for group in shape.group_ranks("tp"):  # TP peers are consecutive ranks: one node
        assert group == list(range(group[0], group[0] + shape.tp))
    for dim in DIMS:  # each dimension's groups partition the ranks, each of its degree
        groups = shape.group_ranks(dim)
        assert sorted(itertools.chain(*groups)) == list(range(shape.world_size))
        assert all(len(g) == getattr(shape, dim) for g in groups)


def test_hand_computed_positions_2x2x2():
    shape = MeshShape(dp=2, pp=2, tp=2)
    assert shape.coords(5) == Coords(dp=1, pp=0, tp=1)  # 5 = (1*2 + 0)*2 + 1
    assert shape.coords(6) == Coords(dp=1, pp=1, tp=0)
    assert shape.group_ranks("tp") == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert shape.group_ranks("pp") == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert shape.group_ranks("dp") == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert shape.peers(5, "dp") == [1, 5]


@pytest.mark.parametrize("kwargs, words", [
    (dict(world_size=6), "product is 6"),
    (dict(n_heads=3), "does not divide the 3 attention heads"),
    (dict(n_layers=1), "only 1 layers"),
])
def test_layouts_that_cannot_run_say_what_would(kwargs, words):
    with pytest.raises(ValueError, match=words):
        MeshShape(dp=2, pp=2, tp=2).check(**kwargs)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_degrees_must_be_whole_numbers(bad):
    with pytest.raises(ValueError, match="whole number"):
        MeshShape(dp=bad)


def _sums_per_dimension(shape):
    groups = new_groups(shape)
    out = {}
    for dim, group in groups.items():
        t = torch.tensor([float(dist.get_rank())])
        dist.all_reduce(t, group=group)
        out[dim] = t.item()
    mesh = device_mesh(shape)
    out["torch_mesh"] = mesh.mesh.tolist()
    out["torch_coords"] = tuple(mesh.get_coordinate())
    return out


@pytest.mark.parametrize("shape", [MeshShape(2, 2, 2), MeshShape(dp=1, pp=4, tp=2)], ids=str)
def test_groups_on_eight_real_ranks_match_the_arithmetic(shape):
    results = labs.launch(_sums_per_dimension, shape.world_size, args=(shape,), timeout=120)
    for rank, got in enumerate(results):
        for dim in DIMS:
            assert got[dim] == float(sum(shape.peers(rank, dim))), (rank, dim)
        assert got["torch_coords"] == tuple(shape.coords(rank))
        grid = got["torch_mesh"]  # torch's DeviceMesh holds the same rank at each position
        for r in range(shape.world_size):
            c = shape.coords(r)
            assert grid[c.dp][c.pp][c.tp] == r


def test_probe_groups_on_real_ranks():
    import labs
    from labs.hybrid.mesh import probe_groups

    shape = MeshShape(dp=2, pp=1, tp=2)
    for r, got in enumerate(labs.launch(probe_groups, 4, args=(shape,), timeout=60)):
        assert got["coords"] == tuple(shape.coords(r))
        for dim in ("dp", "pp", "tp"):
            assert got[dim]["peers"] == shape.peers(r, dim)
            assert got[dim]["sum"] == sum(shape.peers(r, dim))
