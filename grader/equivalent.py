"""Mutants that compute the same thing by the same mechanism as the reference answer
(``python -m grader.mutants``): a check cannot and must not fail them.

``EQUIVALENT[grade_id][mutation name] = why`` -- the name exactly as the report writes it
(``operator: `before` -> `after```), the reason in one sentence. A survivor not listed here
counts against the exercise's score.

Owns: the list and its reasons. Must not: hold code.
"""

_GLOO_CONTIGUOUS = ("gloo copies a non-contiguous input itself: the same collective, bytes "
                    "and values (NCCL refuses one loudly, never computes another result).")

_LAYOUT_KEY = ("every (tp, pp) has its own key (tp·pp, -tp): the same best in any order, "
               "by < or <=.")
_SAME_ORDER = ("every rank still makes every group in the same order (torch's one rule): the "
               "same groups.")
_SAME_GROUP = "the same ranks listed high to low: dist.new_group makes the same group."
_CONTIGUOUS = "the tensor is contiguous already: the same buffer is sent."
_DETACHED = "the check detaches what a rank returns: the same values."
_LEAF_VIEW = ("the chunk is a view of a tensor that needs no gradient, so it becomes a leaf of "
              "its own: the same gradient, and the input is a copy the check made.")

_TOP = ("pl.plan's top only has to exceed the fitting layouts (a few hundred at most): 9**6, "
        "11**6, 10**5 and 10**7 return the same list.")

EQUIVALENT: dict[str, dict[str, str]] = {
    # --- 2.0 ---
    "ex2_0_ring_all_reduce": {},
    "ex2_0_rs_ag_all_reduce": {},
    "ex2_0_ring_bytes": {},
    # --- 2.1 ---
    "ex2_1_average_gradients": {},
    "ex2_1_buckets": {
        "swap: `bucket_bytes` -> `sizes_bytes` #2":
            "only the words of the ValueError's message change, not when it is raised",
        "swap: `current` -> `filled`":
            "every gradient has bytes, so the bucket's byte count is non-zero exactly when "
            "the bucket holds a tensor",
        "swap: `current` -> `filled` #4":
            "every gradient has bytes, so the last bucket's byte count is non-zero exactly "
            "when it holds a tensor",
    },
    "ex2_1_model_state_bytes": {
        "logic: `if precision == 'fp32': per_param = 4 + 4 + 4 * states else: per_para…` -> "
        "`if not precision == 'fp32': per_param = 4 + 4 + 4 * states else: per_…`":
            "the two precisions' formulas give the same total (4 + 4 = 2 + 2 + 4 bytes per "
            "parameter before the optimizer states), so swapping them changes no number",
        "bound: `precision == 'fp32'` -> `precision != 'fp32'`":
            "the two precisions' formulas give the same total (4 + 4 = 2 + 2 + 4), so "
            "swapping them changes no number",
        "swap: `precision` -> `optimizer`":
            "every precision then takes the mixed formula, whose total equals fp32's "
            "(2 + 2 + 4 = 4 + 4 bytes per parameter before the optimizer states)",
    },
    "ex2_1_warmup_lr": {
        "bound: `warmup_steps <= 0` -> `warmup_steps < 0`":
            "with warmup_steps = 0, step >= warmup_steps holds for every step, so the "
            "target is returned anyway",
        "bound: `0` -> `-1`":
            "with warmup_steps = 0, step >= warmup_steps holds for every step, so the "
            "target is returned anyway",
        "bound: `step >= warmup_steps` -> `step > warmup_steps`":
            "at step = warmup_steps the interpolation reaches the target itself "
            "(base_lr + (target - base_lr) · 1)",
    },
    "ex2_1_hours_per_epoch": {},
    "ex2_1_zero1": {
        "bound: `0` -> `1`":
            "every rank's load starts one element higher: the least loaded rank, hence the "
            "partition, is the same",
        "bound: `0` -> `-1`":
            "every rank's load starts one element lower: the least loaded rank, hence the "
            "partition, is the same",
        "order: `range(len(self.params))` -> `reversed(range(len(self.params)))`":
            "tensors of equal size are dealt in the other order: another partition, exactly as "
            "balanced, with the same sharding and broadcasts",
    },
    # --- 2.2 ---
    "ex2_2_conjugate_ops": {},
    "ex2_2_column_linear": {
        "bound: `0` -> `-1` #2": "bias is 1-D: its dim -1 is its dim 0, the same chunk.",
    },
    "ex2_2_row_linear": {},
    "ex2_2_parallel_mlp": {},
    "ex2_2_attention_heads": {},
    "ex2_2_tp_bytes": {},
    "ex2_2_sequence_parallel_mlp": {  # gloo, where checks run, takes a non-contiguous input
        "copy: `x.movedim(1, 0).contiguous()` -> `x.movedim(1, 0)`": _GLOO_CONTIGUOUS,
        "copy: `x.movedim(1, 0).contiguous()` -> `x.movedim(1, 0)` #2": _GLOO_CONTIGUOUS,
        "copy: `grad.movedim(1, 0).contiguous()` -> `grad.movedim(1, 0)`": _GLOO_CONTIGUOUS,
        "copy: `grad.movedim(1, 0).contiguous()` -> `grad.movedim(1, 0)` #2": _GLOO_CONTIGUOUS,
    },
    # --- 2.3 ---
    "ex2_3_gpipe_order": {},
    "ex2_3_1f1b_order": {},
    "ex2_3_bubble": {},
    "ex2_3_min_microbatches": {},
    "ex2_3_balanced_partition": {
        "bound: `0` -> `1`": "every prefix sum shifts by the same constant; the DP only reads "
                             "their differences, the stage costs.",
        "bound: `0` -> `-1`": "every prefix sum shifts by the same constant; the DP only reads "
                              "their differences, the stage costs.",
        "bound: `0` -> `-1` #4": "the empty start's max cost below any stage's cost (costs are "
                                 "not negative): every max ignores it, as it ignores 0.",
        "order: `range(k, n - (n_stages - k) + 1)` -> `reversed(range(k, n - (n_stages - k) + "
        "1))`": "each row k reads row k - 1 only: filling it in another order fills the same "
                "table.",
        "order: `range(k - 1, i)` -> `reversed(range(k - 1, i))`": "min() over the (cost, cut) "
                                                                   "options is the same in any "
                                                                   "order.",
        "bound: `1` -> `2` #6": "j = k - 2 is never in best for k - 1 stages (the guard drops "
                                "it): the same options.",
    },
    "ex2_3_1f1b_executor": {
        "copy: `y.detach()` -> `y`": "isend sends the tensor's data; the autograd link of what "
                                     "is sent is never used on either side.",
        "swap: `y` -> `x` #6": "a stage's input and output both have activation_shape: the "
                               "gradient's buffer has the same shape either way.",
        "swap: `x` -> `y` #6": "the object kept beside an isend's Work only keeps a reference: "
                               "the Work holds the buffer it sends itself.",
    },
    "ex2_3_zb_h1_order": {},
    # --- 2.4 ---
    "ex2_4_coords": {},
    "ex2_4_groups": {
        "order: `range(dp * pp * tp)` -> `reversed(range(dp * pp * tp))`":
            "the same groups with their ranks listed high to low: a group is a set of ranks.",
        "swap: `dp` -> `pp` #2": "my_coords never reads its dp (dp_index is what is left "
                                 "after pp and tp): the same coordinates.",
    },
    "ex2_4_memory": {
        "arith: `n_params / (tp * pp)` -> `n_params // (tp * pp)`":
            "whole parameters per GPU: under 16 B off out of gigabytes, below float64's "
            "tolerance (a real split holds whole parameters anyway).",
    },
    "ex2_4_layout": {
        "order: `range(1, min(gpus_per_node, n_heads) + 1)` -> `reversed(range(1, "
        "min(gpus_per_node, n_heads) + 1))`": _LAYOUT_KEY,
        "order: `range(1, n_layers + 1)` -> `reversed(range(1, n_layers + 1))`": _LAYOUT_KEY,
        "bound: `(tp * pp, -tp) < best[0]` -> `(tp * pp, -tp) <= best[0]`": _LAYOUT_KEY,
        "swap: `n_heads` -> `n_gpus`": "a tp above n_heads fails n_heads % tp, one above "
                                       "n_gpus fails n_gpus % tp: either bound, the same tps.",
        "swap: `n_gpus` -> `n_heads`": "n_gpus % (tp * pp) == 0, tested next, implies "
                                       "n_gpus % tp == 0.",
        "bound: `1` -> `2` #4": "pp = n_layers + 1 never divides n_layers: the same stages.",
        "arith: `n_gpus // (tp * pp)` -> `n_gpus / (tp * pp)`":
            "dp·pp·tp = n_gpus: a float of a whole value, which the check takes as an int.",
        "bound: `0` -> `-1`": "ZeRO stage -1 shards nothing, as stage 0 (every `>=` is false).",
    },
    "ex2_4_hybrid_step": {
        "order: `range(dp)` -> `reversed(range(dp))`": _SAME_ORDER,
        "order: `range(tp)` -> `reversed(range(tp))`": _SAME_ORDER,
        "order: `range(d * tp, (d + 1) * tp)` -> `reversed(range(d * tp, (d + 1) * tp))`":
            _SAME_GROUP,
        "order: `range(t, dp * tp, tp)` -> `reversed(range(t, dp * tp, tp))`": _SAME_GROUP,
        "copy: `w1.chunk(tp, dim=0)[tp_index].clone()` -> `w1.chunk(tp, dim=0)[tp_index]`":
            _LEAF_VIEW,
        "copy: `w2.chunk(tp, dim=1)[tp_index].clone()` -> `w2.chunk(tp, dim=1)[tp_index]`":
            _LEAF_VIEW,
        "group: `copy_to_tensor_parallel_region(x_mine, group=tp_group)` -> "
        "`copy_to_tensor_parallel_region(x_mine, group=None)`":
            "f's group is used only by its backward, which never runs: x needs no gradient.",
    },
    "ex2_4_3d_step": {
        "copy: `w1s[stage].chunk(tp, dim=0)[tp_index].clone()` -> "
        "`w1s[stage].chunk(tp, dim=0)[tp_index]`": _LEAF_VIEW,
        "copy: `w2s[stage].chunk(tp, dim=1)[tp_index].clone()` -> "
        "`w2s[stage].chunk(tp, dim=1)[tp_index]`": _LEAF_VIEW,
        "copy: `out.detach().contiguous()` -> `out.detach()`": _CONTIGUOUS,
        "copy: `h.grad.contiguous()` -> `h.grad`": _CONTIGUOUS,
        "copy: `out.detach()` -> `out`": "dist.send sends the tensor's data; its autograd link "
                                         "is never used on either side.",
        "copy: `loss.detach()` -> `loss`": _DETACHED,
        "copy: `w.detach()` -> `w`": _DETACHED,
        "swap: `x_mine` -> `y_mine` #2": "x_mine and y_mine have the same rows: the same buffer.",
        "bound: `1` -> `0` #2": "both stages' w1 have D columns: the same buffer.",
    },
    # --- 2.5 ---
    "ex2_5_capstone": {
        "bound: `10` -> `11`": _TOP,
        "bound: `10` -> `9`": _TOP,
        "bound: `6` -> `7`": _TOP,
        "bound: `6` -> `5`": _TOP,
        "swap: `ours` -> `theirs`":
            "both step splits have the same five keys: max walks the same parts",
    },
    "ex2_5_diagnose": {},
    "ex2_5_training_days": {},
}
