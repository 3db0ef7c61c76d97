"""One owner per formula: every number the course teaches is pinned here to a value computed by
hand, and, where the course measures it, to the measured value.

Memory formulas live in labs.formulas.memory, traffic, bubble, time and "does it fit" in labs.formulas.cost; the
other modules re-export them (the same function object), never retype them.
"""
from __future__ import annotations

import inspect
import io
import re
import tokenize
from pathlib import Path

import pytest
import torch

import labs
from labs import collectives
from labs.formulas import cost, memory
from labs import pipeline as pp
from labs.messages import text
from labs.models import TinyGPT, TinyGPTConfig
from tests.support.messages import said

pytestmark = pytest.mark.numerics

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90


# --- the owners -----------------------------------------------------------------------------------

def test_re_exports_are_the_owners_functions():
    assert collectives.ring_all_reduce_bytes_per_rank is cost.ring_all_reduce_bytes_per_rank
    assert collectives.naive_all_reduce_bytes_busiest_rank is cost.naive_all_reduce_bytes_busiest_rank
    assert collectives.bus_bandwidth is cost.bus_bandwidth
    assert pp.bubble_fraction is cost.bubble_fraction
    assert pp.min_microbatches is cost.min_microbatches


def _code_only(text: str) -> str:
    """The source without its strings and comments (labels and docstrings may quote formulas)."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in (tokenize.STRING, tokenize.COMMENT)]
    return " ".join(t.string for t in tokens)


def test_no_formula_is_retyped_in_the_lab_code():
    """The 12·h² layer, the ring's 2(N-1)/N, the bubble and the memory and "fits" functions
    appear in the code of their owners only."""
    patterns = {r"12\s*\*\s*h\s*\*\s*h|12\s*\*\s*hidden\s*\*\s*hidden": "labs/formulas/memory.py",
                r"\(p\s*-\s*1\)\s*/\s*\(": "labs/formulas/cost.py",
                r"2\s*\*\s*\(n\s*-\s*1\)\s*/\s*n": "labs/formulas/cost.py",
                r"def model_state_bytes\b": "labs/formulas/memory.py",
                r"def fits_on_one_card\b|class \w*(Decision|Report)\b": "labs/formulas/fit.py"}
    for path in sorted((ROOT / "labs").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("labs/_compat.py",):
            continue
        text = _code_only(path.read_text())
        for pattern, owner in patterns.items():
            if rel != owner:
                assert not re.search(pattern, text), f"{rel} retypes {pattern!r}: call {owner}"


# --- labs.formulas.memory ----------------------------------------------------------------------------------

def test_layer_params_by_hand_and_counted():
    assert memory.transformer_layer_params(12288, biases=False) == 12 * 12288**2
    assert memory.transformer_layer_params(4) == 12 * 16 + 13 * 4  # 244
    config = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=2, n_head=4, n_embd=32)
    block = TinyGPT(config).transformer.h[0]
    assert memory.transformer_layer_params(32) == sum(p.numel() for p in block.parameters())
    assert memory.layer_weight_bytes(12288)["layer (12 h^2)"] == 2 * 12 * 12288**2  # fp16


def test_model_state_bytes_per_gpu_by_hand():
    assert memory.model_state_bytes_per_gpu(175e9, tp=8, pp=8, precision="mixed").total == \
        pytest.approx(175e9 * 16 / 64)  # 43.75 GB, the chapter's TP8 x PP8
    per = {k: memory.model_state_bytes_per_gpu(1, dp=4, zero_stage=k, optimizer="adam",
                                               precision="fp32").total for k in range(4)}
    assert per == {0: 16, 1: 4 + 4 + 8 / 4, 2: 4 + 4 / 4 + 8 / 4, 3: 16 / 4}
    mixed = memory.model_state_bytes_per_gpu(1, dp=8, zero_stage=1, precision="mixed")
    assert mixed.total == pytest.approx(2 + 2 + 12 / 8)  # ZeRO paper: K = 12 sharded
    with pytest.raises(ValueError, match="zero_stage"):
        memory.model_state_bytes_per_gpu(1, zero_stage=4)


def _zero_state_bytes(kind):
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP

    from labs.data import regression_batch
    from labs.models import MLP

    model = MLP([64] * 5)  # 4 equal layers: whole tensors split evenly over 2 ranks
    if kind == 3:
        for layer in model.layers:
            fully_shard(layer)
        fully_shard(model)
        run, opt = model, torch.optim.Adam(model.parameters())
    else:
        run = DDP(model)
        opt = (ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam)
               if kind == 1 else torch.optim.Adam(model.parameters()))
    run(*regression_batch(dist.get_rank(), 8, 64, 64))[1].backward()
    opt.step()
    local = opt.optim if kind == 1 else opt
    return memory.measured_model_state_bytes(model, local).total, model.num_params()


@pytest.mark.parametrize("stage", [0, 1, 3])
def test_zero_bytes_equal_the_measured_shards(stage):
    for total, n_params in labs.launch(_zero_state_bytes, 2, args=(stage,), timeout=TIMEOUT):
        expected = memory.model_state_bytes_per_gpu(n_params, dp=2, zero_stage=stage,
                                                    optimizer="adam", precision="fp32")
        assert total == expected.total


# --- labs.formulas.cost: bytes on the wire -----------------------------------------------------------------

def test_collective_bytes_by_hand():
    assert cost.ring_all_reduce_bytes_per_rank(1000, 4) == 1500  # 2·3/4·S
    assert cost.naive_all_reduce_bytes_busiest_rank(1000, 4) == 3000
    assert cost.bus_bandwidth(1e9, 1.0, 4) == 1.5e9


def test_tp_and_pipeline_bytes_by_hand():
    S = 8 * 64 * 128 * 4
    assert cost.activation_message_bytes(batch=8, seq_len=64, hidden=128) == S
    c = cost.tp_layer_comm(batch=8, seq_len=64, hidden=128, tp=4)
    assert c == {"collectives": 4, "message_bytes": S, "sent_bytes_per_rank": 4 * 1.5 * S,
                 "wire_messages": 4 * 2 * 3, "wire_message_bytes": S / 4}
    assert cost.tp_layer_comm(batch=8, seq_len=64, hidden=128, tp=1)["sent_bytes_per_rank"] == 0
    assert cost.layerwise_comm(batch=8, seq_len=64, hidden=128, stages=4) == {
        "messages": 6, "message_bytes": S, "sent_bytes_by_a_middle_rank": 2 * S}
    # GPT-3 micro-batch, m=32, 12 layers per stage, TP=8: the numbers of notebook 2.3
    GiB = 2**30
    assert cost.pp_bytes_per_step(1, 2048, 12288, 32) / GiB == pytest.approx(3.0)
    assert cost.tp_bytes_per_step(1, 2048, 12288, 32, 12, 8) / GiB == pytest.approx(126.0)
    message = 1 * 2048 * 12288 * 2
    assert cost.schedule_bytes(pp.build_schedule("1f1b", 4, 32)[1], message) == \
        cost.pp_bytes_per_step(1, 2048, 12288, 32)


def _tp_block_bytes(config, batch):
    from labs.tensor_parallel.model import ParallelBlock

    counter = collectives.CommCounter()
    block = ParallelBlock(TinyGPT(config, seed=0).transformer.h[0], counter=counter)
    x = torch.randn(batch, config.block_size, config.n_embd, device=labs.device())
    block(x.requires_grad_()).sum().backward()
    return [(e.kind, e.nbytes) for e in counter.events]


def test_tp_layer_bytes_equal_the_counted_collectives():
    config = TinyGPTConfig(vocab_size=96, block_size=8, n_layer=1, n_head=4, n_embd=32)
    events = labs.launch(_tp_block_bytes, 2, args=(config, 4), timeout=TIMEOUT)[0]
    expected = cost.tp_layer_comm(batch=4, seq_len=8, hidden=32, tp=2)
    assert len(events) == expected["collectives"]
    assert all(kind == "all_reduce" and nbytes == expected["message_bytes"]
               for kind, nbytes in events)
    sent = sum(cost.ring_all_reduce_bytes_per_rank(nbytes, 2) for _, nbytes in events)
    assert sent == expected["sent_bytes_per_rank"]


def test_layerwise_bytes_equal_the_counted_sends():
    from labs.tensor_parallel.experiments import layerwise_step

    config = TinyGPTConfig(vocab_size=96, block_size=16, n_layer=4, n_head=2, n_embd=32)
    per_rank = labs.launch(layerwise_step, 4, args=(config, 2), timeout=TIMEOUT)
    sends = [e for _, _, events, _ in per_rank for e in events if e.kind == "send"]
    expected = cost.layerwise_comm(batch=2, seq_len=16, hidden=32, stages=4)
    assert len(sends) == expected["messages"]
    assert {e.nbytes for e in sends} == {expected["message_bytes"]}


# --- labs.formulas.cost: bubble and time -------------------------------------------------------------------

def test_bubble_by_hand_and_simulated():
    assert cost.bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert cost.bubble_fraction(4, 8, v=2) == pytest.approx(3 / 19)
    assert cost.min_microbatches(8, 0.10) == 63  # (7 / (m + 7) <= 0.1) <=> m >= 63
    for name, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2)):
        timeline = pp.simulate(pp.build_schedule(name, 4, 8, n_chunks=v), forward_s=1 / v,
                               backward_s=2 / v)
        assert max(timeline.idle_fraction()) == pytest.approx(cost.bubble_fraction(4, 8, v))


def test_time_and_flops_by_hand():
    assert cost.seconds_on_link(1e9, 100e9) == pytest.approx(0.01)
    assert cost.seconds_on_link(0, 1e9, latency_s=5e-6) == 5e-6
    assert cost.training_flops(110e6, 16 * 512) == 6 * 110e6 * 16 * 512  # BERT case of 2.1
    assert cost.training_flops(1, 1, n_layers=2, seq_len=3, hidden=4) == 6 + 12 * 2 * 3 * 4


# --- labs.formulas.cost: one decision type -----------------------------------------------------------------

def test_one_decision_type_for_the_three_questions(monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    one = cost.fits_on_one_card(110e6, 40e9)
    tp = cost.tp_decision(1.5e9, 32e9, hidden=1600, heads=16)
    stages = cost.pp_decision(96, 12288, 32 * 2**30, tp=8)
    assert {type(d) for d in (one, tp, stages)} == {cost.FitDecision}
    assert one.fits and not one.needed and one.model_state_bytes == pytest.approx(1.76e9)
    assert (tp.tp, tp.fits, tp.states_per_gpu_bytes) == (2, True, pytest.approx(12e9))
    assert "smallest TP that fits: 2" in tp.verdict
    layer = 12 * 12288**2 * 16
    assert stages.layer_state_bytes == layer
    assert (stages.tp_needed, stages.tp, stages.layers_per_gpu, stages.pp) == (2, 8, 6, 16)
    assert stages.fits and "PP stages >= 16" in stages.verdict
    assert cost.pp_decision(96, 12288, 32 * 2**30, tp=1).pp is None  # not one layer fits
    for fn in (cost.fits_on_one_card, cost.tp_decision, cost.pp_decision):
        assert inspect.signature(fn).return_annotation in ("FitDecision", cost.FitDecision)


def test_the_verdicts_speak_the_notebooks_language(monkeypatch):
    for lang in ("zh", "en"):
        monkeypatch.setenv("LABS_LANG", lang)
        head = text("cost.one_card_head", lang=lang, states=1.76, card=40, share=0.04, budget=0.7)
        assert cost.fits_on_one_card(110e6, 40e9).verdict == text("cost.one_card_fits", lang=lang,
                                                                   head=head)
        said(cost.tp_decision(1.5e9, 32e9, hidden=1600, heads=16).verdict, "cost.tp_smallest",
             lang=lang, tp=2)
        said(cost.pp_decision(96, 12288, 32 * 2**30, tp=8).verdict, "cost.pp_stages", lang=lang,
             tp=8, pp=16)
        with pytest.raises(ValueError) as info:
            memory.model_state_bytes_per_gpu(1, zero_stage=4)
        said(info.value, "memory.unknown_zero_stage", lang=lang, zero_stage=4, stages=(0, 1, 2, 3))


# --- the planner's formulas (labs.formulas.memory, labs.formulas.cost) --------------------------------------------

def test_general_layer_params_by_hand():
    h = 12288
    assert memory.general_layer_params(h, n_heads=96) == memory.transformer_layer_params(
        h, biases=False)  # 12h² for GPT: the chapter's number
    # LLaMA-65B (arXiv:2302.13971): 4h² attention + 3·h·22016 SwiGLU
    assert memory.general_layer_params(8192, ffn_hidden=22016, n_heads=64, gated_mlp=True) == \
        4 * 8192**2 + 3 * 8192 * 22016  # 809,500,672
    # Llama 3 405B (arXiv:2407.21783): GQA, 8 of 128 heads carry K and V
    assert memory.general_layer_params(16384, ffn_hidden=53248, n_heads=128, n_kv_heads=8,
                                       gated_mlp=True) == \
        2 * 16384**2 + 2 * 16384**2 * 8 / 128 + 3 * 16384 * 53248  # 3,187,671,040


def test_layer_activations_are_korthikanti_by_hand():
    s, b, h, a = 2048, 1, 12288, 96  # GPT-3
    sbh = s * b * h
    kw = dict(seq_len=s, micro_batch=b, hidden=h, n_heads=a)
    # eq. (1): 34sbh + 5as²b, no parallelism, attention materialised
    assert memory.layer_activation_bytes(**kw, flash_attention=False) == 34 * sbh + 5 * a * s**2 * b
    # §4.2.2 with TP 8: without SP 10sbh + 24sbh/t + 5as²b/t; with SP all / t
    no_sp = memory.layer_activation_bytes(**kw, tp=8, sequence_parallel=False,
                                          flash_attention=False)
    assert no_sp == pytest.approx(sbh * (10 + 24 / 8 + 5 * a * s / (h * 8)))
    assert memory.layer_activation_bytes(**kw, tp=8, flash_attention=False) == \
        pytest.approx(sbh / 8 * (34 + 5 * a * s / h))
    # selective recomputation: 34sbh/t; full: the layer input 2sbh (Table 2)
    assert memory.layer_activation_bytes(**kw, tp=8, recompute="selective",
                                         flash_attention=False) == pytest.approx(34 * sbh / 8)
    assert memory.layer_activation_bytes(**kw, tp=8, recompute="full") == 2 * sbh
    # flash attention: no s² terms, an fp32 log-sum-exp per head and token
    assert memory.layer_activation_bytes(**kw) == 34 * sbh + 4 * a * s * b
    # SwiGLU (f = 22016), no dropout: LN 4sbh, QKV & MLP inputs 4sbh, Q + proj input 4sbh,
    # K and V 4sbh, gate/up/product 6sbf (LLaMA-65B, s = 2048)
    h, f, a = 8192, 22016, 64
    sbh = s * h
    assert memory.layer_activation_bytes(seq_len=s, micro_batch=1, hidden=h, n_heads=a,
                                         ffn_hidden=f, gated_mlp=True, dropout=False) == \
        16 * sbh + 6 * s * f + 4 * a * s
    with pytest.raises(ValueError, match="recompute"):
        memory.layer_activation_bytes(**kw, recompute="some")


def test_output_activations_and_microbatches_in_flight_by_hand():
    s, b, h, V = 2048, 1, 12288, 51200
    assert memory.output_activation_bytes(seq_len=s, micro_batch=b, hidden=h, vocab=V, tp=8) == \
        pytest.approx(4 * s * b * h / 8 * (1 + V / h))
    assert memory.microbatches_in_flight(8, 32) == 8  # 1F1B: stage 0 keeps p
    assert memory.microbatches_in_flight(8, 32, stage=3) == 5  # p - i
    assert memory.microbatches_in_flight(8, 4) == 4  # fewer micro-batches than stages
    assert memory.microbatches_in_flight(8, 32, v=2) == 8 + 7 / 2  # p·(1 + (p-1)/(p·v))
    assert memory.microbatches_in_flight(1, 32) == 1  # gradient accumulation
    with pytest.raises(ValueError):
        memory.microbatches_in_flight(4, 8, stage=4)


def test_planner_time_formulas_by_hand():
    assert cost.pipeline_bubble_ratio(4, 8) == 3 / 8
    assert cost.pipeline_bubble_ratio(4, 8, v=2) == 3 / 16
    r = cost.pipeline_bubble_ratio(4, 8)
    assert cost.bubble_fraction(4, 8) == pytest.approx(r / (1 + r))  # two views of one bubble
    assert cost.pipeline_step_seconds(1.0, 8, 4) == pytest.approx(8 + 3)  # m + p - 1 slots
    assert cost.pipeline_step_seconds(1.0, 8, 4, v=2) == pytest.approx(8 + 3 / 2)
    assert cost.compute_seconds(312e12, 312e12, 0.5) == 2.0
    assert cost.exposed_seconds(3.0, 1.0) == 2.0 and cost.exposed_seconds(1.0, 3.0) == 0.0
    assert cost.flops_utilization(1e15, 2.0, 4, 250e12) == 0.5


def test_matmul_flops_are_ptdp_eq3_by_hand():
    B, s, l, h, V = 1536, 2048, 96, 12288, 51200
    kw = dict(n_layers=l, layer_params=12 * h**2, seq_len=s, hidden=h, vocab=V)
    # PTD-P (arXiv:2104.04473) §5.1: 72Bslh²(1 + s/6h + V/12lh) without recomputation ...
    assert cost.matmul_flops(B * s, **kw) == pytest.approx(
        72 * B * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h)))
    # ... eq. (3), 96Bslh²(1 + s/6h + V/16lh), with full recomputation
    assert cost.matmul_flops(B * s, **kw, recompute="full") == pytest.approx(
        96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h)))
    # selective: the attention's 4·s·h per layer and token once more
    assert cost.matmul_flops(B * s, **kw, recompute="selective") - cost.matmul_flops(
        B * s, **kw) == pytest.approx(4 * l * s * h * B * s)


def test_dp_bytes_per_zero_stage_by_hand():
    S, N = 1000, 4  # ring: 2·3/4·S = 1500; a reduce-scatter or all-gather 750
    assert cost.dp_bytes_per_step(S, N) == 1500
    assert cost.dp_bytes_per_step(S, N, zero_stage=1, n_microbatches=8) == 1500
    assert cost.dp_bytes_per_step(S, N, zero_stage=2, n_microbatches=3) == (3 + 1) * 750
    assert cost.dp_bytes_per_step(S, N, zero_stage=3) == 1.5 * 1500  # ZeRO §7.2.2: 1.5x
    assert cost.dp_bytes_per_step(S, N, zero_stage=3, n_microbatches=2) == 2 * 2250


def test_expert_parallel_traffic_by_hand():
    # 2 ranks, 1 expert each; rank 0 sends 2 of its 5 token rows to rank 1 and gets 1 back.
    got = cost.expert_parallel_traffic([[3, 2], [1, 4]], 0, row_bytes=8, n_experts=2)
    assert got == {("forward", "counts"): (1, 8), ("forward", "dispatch"): (1, 16),
                   ("forward", "combine"): (1, 8), ("backward", "combine"): (1, 16),
                   ("backward", "dispatch"): (1, 8)}
    assert cost.ring_attention_traffic(100, 2) == {("forward", "kv"): (1, 200),
                                                   ("backward", "kv"): (1, 200),
                                                   ("backward", "dkv"): (2, 400)}
