"""labs.hybrid.mesh: rank <-> coordinates both ways, the groups of each dimension on real
ranks, torch's DeviceMesh with the same layout, and clear errors for layouts that cannot run;
labs.hybrid.plots_mesh: the mesh figure and the link each dimension uses."""

from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")  # figures are drawn, never shown

import pytest  # noqa: E402

import labs  # noqa: E402
from labs.hybrid.mesh import DIMS, Coords, MeshShape, device_mesh, probe_groups  # noqa: E402
from tests.support.messages import said  # noqa: E402

pytestmark = pytest.mark.numerics

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


@pytest.fixture
def english(monkeypatch):
    """Messages in English (the words these tests match); the launched ranks inherit it."""
    monkeypatch.setenv("LABS_LANG", "en")


@pytest.mark.parametrize("kwargs, key, fields", [
    (dict(world_size=6), "hybrid.mesh_world_size", dict(ranks=8, world_size=6)),
    (dict(n_heads=3), "hybrid.mesh_tp_heads", dict(tp=2, n_heads=3)),
    (dict(n_layers=1), "hybrid.mesh_pp_layers", dict(pp=2, n_layers=1)),
])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_layouts_that_cannot_run_say_what_would(monkeypatch, lang, kwargs, key, fields):
    monkeypatch.setenv("LABS_LANG", lang)
    with pytest.raises(ValueError) as info:
        MeshShape(dp=2, pp=2, tp=2).check(**kwargs)
    said(info.value, key, lang=lang, **fields)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_degrees_must_be_whole_numbers(bad):
    with pytest.raises(ValueError) as info:
        MeshShape(dp=bad)
    said(info.value, "hybrid.mesh_degree", dim="dp", value=bad)  # whole numbers >= 1


def test_the_mesh_errors_in_english(english):
    with pytest.raises(ValueError) as info:
        MeshShape(dp=0)
    said(info.value, "hybrid.mesh_degree", lang="en", dim="dp", value=0)
    with pytest.raises(ValueError) as info:
        MeshShape(2, 2, 2).coords(8)
    said(info.value, "hybrid.mesh_rank_outside", lang="en", rank=8, world_size=8, dp=2, pp=2, tp=2)


def _groups_and_torch_mesh(shape):
    out = probe_groups(shape)  # all-reduces each rank's number over each of its groups
    mesh = device_mesh(shape)
    out["torch_mesh"] = mesh.mesh.tolist()
    out["torch_coords"] = tuple(mesh.get_coordinate())
    return out


@pytest.mark.parametrize("shape", [MeshShape(2, 2, 2), MeshShape(dp=1, pp=4, tp=2),
                                   MeshShape(dp=2, pp=1, tp=2)], ids=str)
def test_groups_on_real_ranks_match_the_arithmetic(shape):
    results = labs.launch(_groups_and_torch_mesh, shape.world_size, args=(shape,), timeout=120)
    for rank, got in enumerate(results):
        assert got["coords"] == tuple(shape.coords(rank))
        for dim in DIMS:
            assert got[dim]["peers"] == shape.peers(rank, dim), (rank, dim)
            assert got[dim]["sum"] == sum(shape.peers(rank, dim)), (rank, dim)
        assert got["torch_coords"] == tuple(shape.coords(rank))
        grid = got["torch_mesh"]  # torch's DeviceMesh holds the same rank at each position
        for r in range(shape.world_size):
            c = shape.coords(r)
            assert grid[c.dp][c.pp][c.tp] == r


# --- the mesh, visible (labs.hybrid.plots_mesh) ------------------------------------------------

FIGURE_SHAPES = [MeshShape(2, 2, 2), MeshShape(1, 2, 4), MeshShape(2, 1, 4), MeshShape(4, 1, 2),
                 MeshShape(1, 1, 8), MeshShape(2, 2, 4), MeshShape(1, 4, 4)]


@pytest.mark.parametrize("gpus_per_node", [None, 2, 3])
@pytest.mark.parametrize("shape", FIGURE_SHAPES, ids=str)
def test_mesh_figure_has_one_labelled_cell_per_rank(shape, gpus_per_node):
    from labs.hybrid.plots_mesh import draw_mesh
    from labs.notebook.plots import label

    fig = draw_mesh(shape, gpus_per_node=gpus_per_node)
    (ax,) = fig.axes
    cells = [p for p in ax.patches if (p.get_gid() or "").startswith("rank")]
    assert sorted(p.get_gid() for p in cells) == sorted(f"rank{r}" for r in range(shape.world_size))
    texts = {t.get_text() for t in ax.texts}
    for r in range(shape.world_size):
        c = shape.coords(r)
        assert f"{r}\n({c.dp},{c.pp},{c.tp})" in texts
    n_nodes = -(-shape.world_size // (gpus_per_node or 8))
    assert {label("hybrid.mesh_node", n=n) for n in range(n_nodes)} <= texts
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(line.startswith(f"TP x{shape.tp}") for line in legend)


def test_mesh_figure_draws_into_a_given_axes():
    from labs.hybrid.plots_mesh import draw_mesh
    from labs.notebook.plots import subplots

    fig, ax = subplots()
    assert draw_mesh(MeshShape(2, 2, 2), ax=ax) is fig
    assert len([p for p in ax.patches if (p.get_gid() or "").startswith("rank")]) == 8


def _links(shape, gpus_per_node):
    from labs.hybrid.plots_mesh import link_table

    return {row["dim"]: row for row in link_table(shape, gpus_per_node, "H100-80GB")}


@pytest.mark.parametrize("shape, gpus_per_node, expected", [
    (MeshShape(1, 1, 8), 8, dict(tp="NVLink", pp=None, dp=None)),
    (MeshShape(1, 1, 16), 8, dict(tp="InfiniBand", pp=None, dp=None)),
    (MeshShape(2, 2, 2), 8, dict(tp="NVLink", pp="NVLink", dp="NVLink")),  # all on one node
    (MeshShape(2, 2, 2), 4, dict(tp="NVLink", pp="NVLink", dp="InfiniBand")),
    (MeshShape(2, 2, 2), 2, dict(tp="NVLink", pp="InfiniBand", dp="InfiniBand")),
    (MeshShape(2, 2, 4), 8, dict(tp="NVLink", pp="NVLink", dp="InfiniBand")),
    (MeshShape(1, 4, 2), 6, dict(tp="NVLink", pp="InfiniBand", dp=None)),  # [0,2,4,6] crosses
    (MeshShape(4, 1, 2), 1, dict(tp="InfiniBand", pp=None, dp="InfiniBand")),
])
def test_link_table_picks_nvlink_only_inside_a_node(shape, gpus_per_node, expected):
    from labs.hardware import links

    bandwidth = {link.name: link.bandwidth for link in links("H100-80GB").values()}
    table = _links(shape, gpus_per_node)
    assert list(table) == ["tp", "pp", "dp"]
    for dim, name in expected.items():
        row = table[dim]
        assert row["degree"] == getattr(shape, dim)
        assert row["link"] == name, (dim, row)
        assert row["bandwidth"] == (bandwidth[name] if name else None)
        assert row["why"] and (row["source"] if name else True)
        assert row["inside_node"] == (row["groups_crossing"] == 0)
    assert bandwidth["NVLink"] > bandwidth["InfiniBand"]


def test_link_table_counts_crossing_groups_and_rejects_bad_node_sizes():
    from labs.hybrid.plots_mesh import link_table, nodes_of

    table = _links(MeshShape(1, 4, 2), 6)
    assert (table["pp"]["groups"], table["pp"]["groups_crossing"]) == (2, 2)
    assert nodes_of(MeshShape(1, 4, 2), 6) == [[0, 1, 2, 3, 4, 5], [6, 7]]
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="gpus_per_node"):
            link_table(MeshShape(2, 2, 2), bad)


@pytest.mark.parametrize("shape,gpus_per_node,mixed", [(MeshShape(dp=2, pp=4, tp=1), 2, True),
                                                       (MeshShape(dp=2, pp=2, tp=2), 2, False)])
def test_mesh_legend_says_when_pp_boundaries_stay_inside_a_node(shape, gpus_per_node, mixed):
    """Issue 29: with 2 GPUs per node, dp=2 x pp=4 x tp=1 has stage boundaries inside a node
    (0->1) and across nodes (1->2); the legend must not say PP only crosses nodes. No code name
    (hardware.links) in the legend."""
    from labs.hybrid.plots_mesh import REASONS, draw_mesh
    from labs.notebook.plots import label

    fig = draw_mesh(shape, gpus_per_node=gpus_per_node)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    key = "hybrid.mesh_legend_pp_mixed" if mixed else "hybrid.mesh_legend_across"
    assert label(key, dim="PP", degree=shape.pp, link="InfiniBand", bandwidth=25.0,
                 why=label(REASONS["pp"])) in legend
    assert not any("hardware.links" in line for line in legend)
