"""Mutants that compute the same thing by the same mechanism as the reference answer
(``python -m grader.mutants``): a check cannot and must not fail them.

``EQUIVALENT[grade_id][mutation name] = why`` -- the name exactly as the report writes it
(``operator: `before` -> `after```), the reason in one sentence. A survivor not listed here
counts against the exercise's score.

Owns: the list and its reasons. Must not: hold code.
"""

EQUIVALENT: dict[str, dict[str, str]] = {
    # --- 2.0 ---
    "ex2_0_ring_all_reduce": {},
    "ex2_0_rs_ag_all_reduce": {},
    "ex2_0_ring_bytes": {},
    # --- 2.1 ---
    "ex2_1_average_gradients": {},
    "ex2_1_buckets": {},
    "ex2_1_model_state_bytes": {},
    "ex2_1_warmup_lr": {},
    "ex2_1_hours_per_epoch": {},
    "ex2_1_zero1": {},
    # --- 2.2 ---
    "ex2_2_conjugate_ops": {},
    "ex2_2_column_linear": {},
    "ex2_2_row_linear": {},
    "ex2_2_parallel_mlp": {},
    "ex2_2_attention_heads": {},
    "ex2_2_tp_bytes": {},
    "ex2_2_sequence_parallel_mlp": {},
    # --- 2.3 ---
    "ex2_3_gpipe_order": {},
    "ex2_3_1f1b_order": {},
    "ex2_3_bubble": {},
    "ex2_3_min_microbatches": {},
    "ex2_3_balanced_partition": {},
    "ex2_3_1f1b_executor": {},
    "ex2_3_zb_h1_order": {},
    # --- 2.4 ---
    "ex2_4_coords": {},
    "ex2_4_groups": {},
    "ex2_4_memory": {},
    "ex2_4_layout": {},
    "ex2_4_hybrid_step": {},
    "ex2_4_3d_step": {},
    # --- 2.5 ---
    "ex2_5_capstone": {},
    "ex2_5_diagnose": {},
    "ex2_5_training_days": {},
}
