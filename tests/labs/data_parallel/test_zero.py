"""labs.data_parallel.zero / zero_stages: ZeRO-1, -2 and -3 written by hand train to the weights
of one process on the global batch, and to those of torch's own (ZeroRedundancyOptimizer for
ZeRO-1; FSDP2 fully_shard for ZeRO-3), on real gloo ranks (labs.launch); each rank holds the
bytes labs.formulas.memory predicts for its stage, plus the partition's unevenness or padding, exactly.

Agreement with one process is to float32 rounding (labs.numerics): the ranks' gradients are
summed in another order. Replicas agree bit for bit across ranks.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.distributed as dist

import labs
from labs.data import regression_batch, shard_batch
from labs.data_parallel import allreduce_gradients
from labs.data_parallel.zero import ShardedOptimizer, partition_by_size
from labs.data_parallel.zero_stages import Zero2Optimizer, Zero3Optimizer
from labs.formulas.memory import bytes_per_param, model_state_bytes_per_gpu
from labs.models import MLP
from labs.numerics import assert_close
from tests.support.messages import pattern, said

pytestmark = pytest.mark.numerics

SIZES = [5, 6, 3]  # tensors of 30, 6, 18, 3 elements: 57, odd, so 2 and 4 divide nothing evenly
N_PARAMS = 57
STEPS, BATCH, TIMEOUT = 3, 8, 120
OPTIMIZERS = {"sgd_momentum": (torch.optim.SGD, dict(lr=0.05, momentum=0.9)),
              "adamw": (torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.1))}
MEMORY_RECIPE = {"sgd_momentum": "sgd_momentum", "adamw": "adam"}  # labs.formulas.memory's names
STAGE = {"zero1": 1, "zero2": 2, "zero3": 3}


def batches(step, seed=0):
    return regression_batch(step, BATCH, SIZES[0], SIZES[-1], seed=seed)


def single_process(name, seed=0):
    """The ground truth: one process, the whole batch, the unsharded optimizer."""
    model = MLP(SIZES)
    cls, options = OPTIMIZERS[name]
    opt, losses = cls(model.parameters(), **options), []
    for step in range(STEPS):
        opt.zero_grad()
        _, loss = model(*batches(step, seed))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(losses=losses, weights={n: p.detach().clone() for n, p in model.named_parameters()})


# --- what runs on the ranks --------------------------------------------------------------

def _train(model, step_fn, zero_grad, group=None, seed=0):
    """STEPS steps on this rank's slice of the global batch; the global mean loss per step."""
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    losses = []
    for step in range(STEPS):
        x, y = shard_batch(*batches(step, seed), rank, world_size)
        zero_grad()
        _, loss = model(x, y)
        loss.backward()
        step_fn()
        losses.append(loss.detach())
    losses = torch.stack(losses)
    dist.all_reduce(losses, group=group)  # equal slices: mean of the means = global mean
    return (losses / world_size).tolist()


def _weights(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _zero1(cls, options, group=None, seed=0):
    model = MLP(SIZES)
    opt = ShardedOptimizer(model.parameters(), cls, group=group, **options)
    losses = _train(model, lambda: (opt.average_gradients(), opt.step()), opt.zero_grad,
                    group, seed)
    names = {id(p): n for n, p in model.named_parameters()}
    mine = opt.partition[opt.rank]
    assert all(opt.owner_of(p) == r for r, part in enumerate(opt.partition) for p in part)
    return dict(losses=losses, weights=_weights(model), memory=opt.state_bytes().as_dict(),
                owned=sorted(names[id(p)] for p in mine), owned_numel=sum(p.numel() for p in mine),
                states=len(opt.state_dict()["state"]), n_own=len(mine))


def _zero2(cls, options, group=None, seed=0):
    model = MLP(SIZES)
    opt = Zero2Optimizer(model, cls, group=group, **options)
    losses = _train(model, opt.step, opt.zero_grad, group, seed)
    return dict(losses=losses, weights=_weights(model), memory=opt.state_bytes().as_dict(),
                shard=opt.flat.shard_numel, padding=opt.flat.padding)


def _zero3(cls, options, group=None, seed=0):
    model = MLP(SIZES)
    opt = Zero3Optimizer(model, cls, group=group, **options)
    gathered = []  # in each layer's forward: how many units hold their full parameters
    for layer in model.layers:  # registered after Zero3's hooks: runs after its gather
        layer.register_forward_pre_hook(lambda *_: gathered.append(
            sum(u.full.untyped_storage().nbytes() > 0 for u in opt.units)))
    losses = _train(model, opt.step, opt.zero_grad, group, seed)
    memory = opt.state_bytes().as_dict()  # before full_state_dict, which gathers
    return dict(losses=losses, weights=opt.full_state_dict(), memory=memory, gathered=gathered,
                units=[(u.flat.numel, u.flat.shard_numel) for u in opt.units])


def _torch_zero1(cls, options):
    from torch.distributed.optim import ZeroRedundancyOptimizer

    model = MLP(SIZES)
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=cls, **options)
    losses = _train(model, lambda: (allreduce_gradients(model), opt.step()), opt.zero_grad)
    names = {id(p): n for n, p in model.named_parameters()}
    return dict(losses=losses, weights=_weights(model),
                owned=sorted(names[id(p)] for g in opt.optim.param_groups for p in g["params"]))


def _torch_fsdp(cls, options):
    from torch.distributed.fsdp import fully_shard

    model = MLP(SIZES)
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    opt = cls(model.parameters(), **options)
    losses = _train(model, opt.step, opt.zero_grad)
    return dict(losses=losses, weights={n: p.full_tensor() for n, p in model.named_parameters()})


def _every_stage():
    out = {}
    for name, (cls, options) in OPTIMIZERS.items():
        out[name] = dict(zero1=_zero1(cls, options), zero2=_zero2(cls, options),
                         zero3=_zero3(cls, options), torch_zero1=_torch_zero1(cls, options),
                         torch_fsdp=_torch_fsdp(cls, options))
    return out


def _two_groups():
    """4 ranks, data-parallel pairs {0, 1} and {2, 3}, each on its own data (seed = pair)."""
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    pair = dist.get_rank() // 2
    cls, options = OPTIMIZERS["adamw"]
    out = dict(pair=pair, zero1=_zero1(cls, options, groups[pair], seed=pair),
               zero2=_zero2(cls, options, groups[pair], seed=pair),
               zero3=_zero3(cls, options, groups[pair], seed=pair))
    try:
        ShardedOptimizer(MLP(SIZES).parameters(), cls, group=groups[1 - pair], **options)
    except ValueError as exc:
        out["other_group_error"] = str(exc)
    return out


@pytest.fixture(scope="module", params=[2, 4])
def runs(request):
    world_size = request.param
    return world_size, labs.launch(_every_stage, world_size, backend="gloo", timeout=TIMEOUT)


@pytest.fixture(scope="module")
def references():
    refs = {name: single_process(name) for name in OPTIMIZERS}
    refs["seed1"] = single_process("adamw", seed=1)
    return refs


def assert_same_run(result, expected, what):
    assert_close(result["losses"], expected["losses"], msg=f"{what}: losses")
    assert_close(result["weights"], expected["weights"], msg=f"{what}: weights")


# --- the tests ---------------------------------------------------------------------------

def test_partition_by_size_is_greedy_and_deterministic():
    assert partition_by_size([30, 6, 18, 3], 2) == [[0], [2, 1, 3]]  # 30 | 18 + 6 + 3 = 27
    assert partition_by_size([30, 6, 18, 3], 4) == [[0], [2], [1], [3]]
    assert partition_by_size([4, 4, 4], 2) == [[0, 2], [1]]  # ties: index order, lowest rank
    assert partition_by_size([5], 3) == [[0], [], []]  # more ranks than tensors: some own none


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_every_stage_equals_single_process_and_torch(runs, references, optimizer):
    world_size, results = runs
    for rank, per_rank in enumerate(results):
        r = per_rank[optimizer]
        for stage in ("zero1", "zero2", "zero3"):
            assert_same_run(r[stage], references[optimizer], f"{stage} rank {rank}")
        assert_same_run(r["zero1"], r["torch_zero1"], f"zero1 vs ZeroRedundancyOptimizer {rank}")
        assert_same_run(r["zero3"], r["torch_fsdp"], f"zero3 vs fully_shard rank {rank}")
        assert r["zero1"]["owned"] == r["torch_zero1"]["owned"]  # the same partition rule
        assert r["zero1"]["states"] == r["zero1"]["n_own"]  # state_dict: own shard only
        assert r["zero3"]["gathered"] == [1] * (STEPS * len(SIZES[1:]))  # one layer at a time
    for stage in ("zero1", "zero2", "zero3"):  # replicas bit-identical
        for per_rank in results[1:]:
            for n, w in results[0][optimizer][stage]["weights"].items():
                assert torch.equal(per_rank[optimizer][stage]["weights"][n], w), (stage, n)


def _memory_rows(world_size, results, optimizer):
    """(rank, stage, measured, predicted, expected excess) in bytes, by kind."""
    per = bytes_per_param(MEMORY_RECIPE[optimizer])  # bytes per element, by kind
    rows = []
    for rank, per_rank in enumerate(results):
        r = per_rank[optimizer]
        even = N_PARAMS / world_size
        units_excess = sum(s - u / world_size for u, s in r["zero3"]["units"])
        excess = {  # elements above the even split, by kind (params, grads, optimizer states)
            "zero1": (0, 0, r["zero1"]["owned_numel"] - even),  # whole tensors: uneven shares
            "zero2": (r["zero2"]["padding"], r["zero2"]["shard"] - even,
                      r["zero2"]["shard"] - even),  # one flat buffer padded to N·S
            "zero3": (units_excess,) * 3,  # each unit's shard padded to ceil(u/N)
        }
        for stage, (xp, xg, xs) in excess.items():
            predicted = model_state_bytes_per_gpu(N_PARAMS, dp=world_size, zero_stage=STAGE[stage],
                                                  optimizer=MEMORY_RECIPE[optimizer],
                                                  precision="fp32").as_dict()
            expected = dict(params=xp * per.params, grads=xg * per.grads, master_params=0,
                            optimizer_states=xs * per.optimizer_states)
            expected["total"] = sum(expected.values())
            rows.append((rank, stage, r[stage]["memory"], predicted, expected))
    return rows


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_memory_measured_is_prediction_plus_partition_excess(runs, optimizer):
    world_size, results = runs
    rows = _memory_rows(world_size, results, optimizer)
    print(f"\nworld size {world_size}, {optimizer}, {N_PARAMS} parameters: bytes measured "
          "(predicted by labs.formulas.memory + excess explained by the partition)")
    for rank, stage, measured, predicted, expected in rows:
        print(f"  rank {rank} {stage}: " + ", ".join(
            f"{k} {measured[k]} ({predicted[k]:g} + {expected[k]:g})"
            for k in ("params", "grads", "optimizer_states", "total")))
        for kind in ("params", "grads", "master_params", "optimizer_states", "total"):
            assert measured[kind] == predicted[kind] + expected[kind], (rank, stage, kind)
        if stage != "zero1":  # padding: under one element per kind and unit
            assert 0 <= expected["total"] < (3 * len(SIZES[1:]) + 1) * 16
    for stage in ("zero1", "zero2"):  # the shares add up: optimizer states sum to N·k·4 + pad
        total = sum(row[2]["optimizer_states"] for row in rows if row[1] == stage)
        pad = 0 if stage == "zero1" else results[0][optimizer]["zero2"]["padding"]
        per_element = bytes_per_param(MEMORY_RECIPE[optimizer]).optimizer_states
        assert total == (N_PARAMS + pad) * per_element
    largest = max(math.prod(p.shape) for p in MLP(SIZES).parameters())
    for row in rows:  # ZeRO-1's greedy partition: within one largest tensor of the even split
        if row[1] == "zero1":
            assert abs(results[row[0]][optimizer]["zero1"]["owned_numel"]
                       - N_PARAMS / world_size) <= largest


def test_sharded_optimizer_on_two_groups_of_two(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")  # the ranks inherit it: the English error text
    results = labs.launch(_two_groups, 4, backend="gloo", timeout=TIMEOUT)
    expected = [single_process("adamw", seed=0), single_process("adamw", seed=1)]
    for rank, r in enumerate(results):
        assert r["pair"] == rank // 2
        for stage in ("zero1", "zero2", "zero3"):
            assert_same_run(r[stage], expected[r["pair"]], f"{stage} rank {rank}")
        assert "not a member of the group" in r["other_group_error"]
        assert f"global rank {rank}" in r["other_group_error"]


# --- bad input (checked before any communication) ----------------------------------------

def test_bad_optimizer_class_says_pass_the_class(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    params = list(MLP(SIZES).parameters())
    with pytest.raises(TypeError) as info:
        ShardedOptimizer(params, torch.optim.SGD(params, lr=0.1), lr=0.1)
    said(info.value, "data_parallel.optimizer_instance", lang="en", name="SGD")
    for bad in ("adamw", torch.nn.Linear, lambda p: torch.optim.SGD(p, lr=0.1)):
        with pytest.raises(TypeError) as info:
            ShardedOptimizer(params, bad, lr=0.1)
        said(info.value, "data_parallel.optimizer_not_a_class", lang="en", value=bad)
        with pytest.raises(TypeError) as info:
            Zero3Optimizer(MLP(SIZES), bad, lr=0.1)
        said(info.value, "data_parallel.optimizer_not_a_class", lang="en", value=bad)


def test_bad_input_says_so_in_the_notebooks_language(monkeypatch):
    params = list(MLP(SIZES).parameters())
    monkeypatch.setenv("LABS_LANG", "zh")
    with pytest.raises(TypeError) as info:
        ShardedOptimizer(params, torch.optim.SGD(params, lr=0.1), lr=0.1)
    said(info.value, "data_parallel.optimizer_instance", lang="zh", name="SGD")  # pass the class
    with pytest.raises(ValueError) as info:
        ShardedOptimizer([], torch.optim.SGD, lr=0.1)
    said(info.value, "data_parallel.params_empty", lang="zh")
    with pytest.raises(RuntimeError) as info:
        ShardedOptimizer(MLP(SIZES).parameters(), torch.optim.SGD, lr=0.1)
    said(info.value, "data_parallel.no_process_group", lang="zh")  # run it under labs.launch
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(ValueError) as info:
        ShardedOptimizer([], torch.optim.SGD, lr=0.1)
    said(info.value, "data_parallel.params_empty", lang="en")


def test_empty_params_and_no_process_group(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(ValueError) as info:
        ShardedOptimizer([], torch.optim.SGD, lr=0.1)
    said(info.value, "data_parallel.params_empty", lang="en")
    used = MLP(SIZES).parameters()
    list(used)
    with pytest.raises(ValueError, match=pattern("data_parallel.params_empty")):
        ShardedOptimizer(used, torch.optim.SGD, lr=0.1)
    with pytest.raises(ValueError, match=pattern("data_parallel.model_has_no_parameters")):
        Zero2Optimizer(torch.nn.ReLU(), torch.optim.SGD, lr=0.1)
    assert not dist.is_initialized()  # here, in the test process
    with pytest.raises(RuntimeError, match="labs.launch"):
        ShardedOptimizer(MLP(SIZES).parameters(), torch.optim.SGD, lr=0.1)
