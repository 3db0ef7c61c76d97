"""1F1B as three visible loops (labs.pipeline.one_f_one_b, picotron's and Megatron-LM's way of
writing it) runs the order of the table-driven executor and gives its gradients bit for bit."""
from __future__ import annotations

import pytest
import torch

import labs
from labs import pipeline as pp
from labs.pipeline import step as ps
from labs.pipeline.one_f_one_b import one_f_one_b_step

pytestmark = pytest.mark.numerics


@pytest.mark.parametrize("p, m", [(2, 4), (4, 4), (4, 2)])  # m < p: the warm-up is m forwards
def test_three_loops_run_1f1b_and_equal_the_executor(p, m):
    run = ps.PipelineRun(schedule="1f1b", n_microbatches=m)
    loops = labs.launch(one_f_one_b_step, p, args=(run,), timeout=60)
    table = labs.launch(ps.pipeline_step, p, args=(run,), timeout=60)
    for stage, r in enumerate(loops):
        assert r["order"] == pp.compute_order(pp.one_f_one_b_order(p, m, stage))
    ours, theirs = ps.merge(loops), ps.merge(table)
    assert ours["loss"] == theirs["loss"]
    assert ours["grads"].keys() == theirs["grads"].keys()
    for name, grad in theirs["grads"].items():
        assert torch.equal(ours["grads"][name], grad), name
    ps.compare(ours, ps.reference_step(run))
