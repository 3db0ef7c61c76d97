"""The first brick of 2.4: pipeline stages that hold tensor-parallel blocks.

TinyGPT and the tensor-parallel ParallelTinyGPT share the ``embed`` / ``blocks`` / ``head``
interface, so ``labs.pipeline.GPTStage`` cuts stages out of either. On 4 ranks, 2 pipeline
stages of TP=2 blocks train one step that equals single-process training.
"""
from __future__ import annotations

import pytest
import torch

import labs
from labs import pipeline as pp
from labs.models import TinyGPT
from labs.pipeline import step as px
from labs.tensor_parallel.model import ParallelTinyGPT

pytestmark = pytest.mark.numerics

TIMEOUT = 120


def test_tp_model_has_the_embed_blocks_head_interface():
    device = labs.device()  # ParallelTinyGPT is built there (labs' one device convention)
    model = TinyGPT(px.TINY, seed=0).to(device)
    parallel = ParallelTinyGPT(TinyGPT(px.TINY, seed=0))  # one process: TP size 1
    x = px.PipelineRun().batches(0)[0].to(device)
    for m in (model, parallel):
        assert len(m.blocks) == px.TINY.n_layer
        torch.testing.assert_close(m.head(m.run_blocks(m.embed(x))), m(x)[0])
    torch.testing.assert_close(parallel(x)[0], model(x)[0])
    bounds = pp.partition_evenly(px.TINY.n_layer, 2)
    for m in (model, parallel):
        first, last = (pp.GPTStage(m, *bounds[s], first=s == 0, last=s == 1) for s in (0, 1))
        torch.testing.assert_close(last(first(x)), model(x)[0])
        names = set(first.global_names.values()) | set(last.global_names.values())
        assert names == {n for n, _ in m.named_parameters()}  # every parameter, once


def _pipeline_of_tp_blocks(run):
    """Rank body on 4 ranks: stage = rank // 2, TP rank = rank % 2. Checks this rank's loss,
    gradient shards and weight shards against one process on the whole batch."""
    import torch.distributed as dist

    from labs.tensor_parallel.model import local_shards, tensor_parallel_group

    rank = dist.get_rank()
    tp_group = tensor_parallel_group(2)  # {0, 1}: stage 0; {2, 3}: stage 1
    pp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]  # every rank creates both
    result = px.pipeline_step(run, pp_groups[rank % 2], tp_group=tp_group)
    reference = px.reference_step(run)
    layout = ParallelTinyGPT(TinyGPT(run.config, seed=run.seed), group=tp_group)
    expected = {what: local_shards(layout, reference[what], group=tp_group)
                for what in ("grads", "state")}
    if result["loss"] is not None:  # the last stage
        torch.testing.assert_close(torch.tensor(result["loss"]), torch.tensor(reference["loss"]))
    for what in ("grads", "state"):
        assert result[what], f"rank {rank} has no {what}"
        for name, value in result[what].items():
            # float32 sums in another order (micro-batches, shards): close, not bit-equal
            torch.testing.assert_close(value, expected[what][name],
                                       msg=lambda m, n=name: f"rank {rank} {what} {n}: {m}")
    return rank // 2, sorted(result["grads"])


def test_two_stages_of_tp2_blocks_on_four_ranks_equal_one_process():
    run = px.PipelineRun(schedule="1f1b", n_microbatches=2, batch_size=4)
    per_rank = labs.launch(_pipeline_of_tp_blocks, 4, args=(run,), timeout=TIMEOUT)
    all_names = {n for n, _ in TinyGPT(run.config).named_parameters()}
    for tp_rank in (0, 1):  # the two stages of one TP rank hold every parameter between them
        stage_names = [set(names) for (stage, names), r in zip(per_rank, range(4))
                       if r % 2 == tp_rank]
        assert stage_names[0] | stage_names[1] == all_names
        assert not stage_names[0] & stage_names[1]
