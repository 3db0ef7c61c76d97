"""labs.parallel_dims: one declaration of a layout's degrees (torchtitan's ``ParallelDims``) that
the mesh, the 3D step and the planner read; the planner's layout hands its degrees to it and
says a broken rule in its own words."""
from __future__ import annotations

import pytest

from labs import planner as pl
from labs.hybrid import mesh, three_d
from labs.parallel_dims import MeshShape, ParallelDims, is_degree
from tests.support.messages import pattern

A100 = pl.GPUS["A100-80GB"]
MODEL = pl.Model(n_layers=8, hidden=1024, n_heads=16, seq_len=512, vocab=1000, n_kv_heads=4)
TRAIN = pl.Training(global_batch=64)


def test_one_class_under_both_names():
    assert ParallelDims is MeshShape is mesh.MeshShape is mesh.ParallelDims
    assert three_d.MeshShape is MeshShape  # the 3D step's annotation is the same class
    shape = MeshShape(dp=2, pp=2, tp=2)
    assert repr(shape) == "MeshShape(dp=2, pp=2, tp=2)"  # what notebook 2.4 prints


def test_the_planners_layout_is_the_meshs_declaration():
    config = pl.Config(4, 2, 8, micro_batch=2)
    assert config.dims == MeshShape(dp=8, pp=2, tp=4)
    assert config.dims.sizes() == {"dp": 8, "pp": 2, "tp": 4}
    est = pl.estimate(MODEL, pl.Cluster(A100, 64), TRAIN, **config.dims.sizes())
    assert est.config.dims == config.dims
    plans = pl.plan(MODEL, pl.Cluster(A100, 16), TRAIN)
    assert plans and all(p.config.dims.fills(16) for p in plans)


def test_filling_and_enabled_dimensions():
    dims = ParallelDims.filling(64, pp=2, tp=4)
    assert dims == ParallelDims(dp=8, pp=2, tp=4) and dims.non_data_parallel_size == 8
    assert (dims.dp_enabled, dims.pp_enabled, dims.tp_enabled) == (True, True, True)
    alone = ParallelDims()
    assert (alone.dp_enabled, alone.pp_enabled, alone.tp_enabled) == (False, False, False)
    assert alone.world_size == 1


def test_the_rules():
    dims = ParallelDims(dp=2, pp=4, tp=4)
    assert dims.fills(32) and not dims.fills(16)
    assert dims.splits_heads(16) and dims.splits_heads(16, 4) and not dims.splits_heads(16, 2)
    assert dims.fits_layers(4) and not dims.fits_layers(3)
    assert [is_degree(x) for x in (1, 8, 0, -1, 1.0, True, "2")] == [True, True] + [False] * 5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("layout, key, fields", [
    ((0, 1, 64), "memory.not_positive_integer", dict(name="tp", value=0)),
    ((2, 1, True), "memory.not_positive_integer", dict(name="dp", value=True)),
    ((3, 1, 16), "planner.layout_product_no_dp", dict(tp=3, pp=1, dp=16, n_gpus=64)),
    ((4, 2, 4), "planner.layout_product", dict(tp=4, pp=2, dp=4, n_gpus=64)),
    ((8, 1, 8), "planner.tp_heads", dict(tp=8, n_heads=16, n_kv_heads=4)),
    ((1, 16, 4), "planner.pp_layers", dict(pp=16, n_layers=8)),
])
def test_the_planner_says_the_rules_in_its_words(monkeypatch, lang, layout, key, fields):
    monkeypatch.setenv("LABS_LANG", lang)
    with pytest.raises(ValueError, match=pattern(key, lang=lang, **fields)):
        pl.estimate(MODEL, pl.Cluster(A100, 64), TRAIN, **dict(zip(("tp", "pp", "dp"), layout)))
