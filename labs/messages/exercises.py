"""Messages of the exercise catalog (labs.exercises.catalog): 练习 n, titles, difficulty words."""

MESSAGES = {
    "label": {
        "zh": "练习 {number}",
        "en": "Exercise {number}",
    },
    "difficulty_warmup": {
        "zh": "热身",
        "en": "warm-up",
    },
    "difficulty_basic": {
        "zh": "基础",
        "en": "core",
    },
    "difficulty_build": {
        "zh": "构建",
        "en": "build",
    },
    # --- the titles: the heading "### 练习 n（k 分）：title" of each exercise, by its grade_id
    # (tests/test_exercise_names.py checks them against the notebooks) ---
    "ex2_0_ring_all_reduce": {
        "zh": "用 isend / irecv 实现 ring all-reduce",
        "en": "Ring all-reduce with isend / irecv",
    },
    "ex2_0_rs_ag_all_reduce": {
        "zh": "用 reduce_scatter + all_gather 组合出 all-reduce",
        "en": "All-reduce from reduce_scatter + all_gather",
    },
    "ex2_0_ring_bytes": {
        "zh": "每个 rank 发送的字节数",
        "en": "Bytes each rank sends",
    },
    "ex2_1_average_gradients": {
        "zh": "梯度 all-reduce",
        "en": "Gradient all-reduce",
    },
    "ex2_1_buckets": {
        "zh": "分桶",
        "en": "Bucketing",
    },
    "ex2_1_model_state_bytes": {
        "zh": "模型状态的字节数",
        "en": "Bytes of the model states",
    },
    "ex2_1_warmup_lr": {
        "zh": "线性缩放 + 预热的学习率",
        "en": "Learning rate with linear scaling + warmup",
    },
    "ex2_1_hours_per_epoch": {
        "zh": "重算案例中的训练时间",
        "en": "Recompute the case study's training time",
    },
    "ex2_1_zero1": {
        "zh": "手写 ZeRO-1 分片优化器",
        "en": "A ZeRO-1 sharded optimizer by hand",
    },
    "ex2_2_conjugate_ops": {
        "zh": "f 和 g 这一对共轭算子",
        "en": "f and g, the pair of conjugate operators",
    },
    "ex2_2_column_linear": {
        "zh": "列并行线性层的前向",
        "en": "Forward of a column-parallel linear layer",
    },
    "ex2_2_row_linear": {
        "zh": "行并行线性层",
        "en": "Row-parallel linear layer",
    },
    "ex2_2_parallel_mlp": {
        "zh": "并行 MLP（f 和 g 放在哪里）",
        "en": "Parallel MLP (where f and g go)",
    },
    "ex2_2_attention_heads": {
        "zh": "按头切分融合的 q/k/v 权重",
        "en": "Split the fused q/k/v weight by heads",
    },
    "ex2_2_tp_bytes": {
        "zh": "每层的通信字节数",
        "en": "Communication bytes per layer",
    },
    "ex2_2_sequence_parallel_mlp": {
        "zh": "序列并行的 MLP block",
        "en": "The sequence-parallel MLP block",
    },
    "ex2_3_gpipe_order": {
        "zh": "生成 GPipe 的计算顺序",
        "en": "Generate the GPipe schedule",
    },
    "ex2_3_1f1b_order": {
        "zh": "生成 1F1B 的计算顺序",
        "en": "Generate the 1F1B schedule",
    },
    "ex2_3_bubble": {
        "zh": "气泡占比",
        "en": "Bubble fraction",
    },
    "ex2_3_min_microbatches": {
        "zh": "要多少个 micro-batch",
        "en": "How many micro-batches",
    },
    "ex2_3_balanced_partition": {
        "zh": "按成本均衡切分",
        "en": "Partition balanced by cost",
    },
    "ex2_3_1f1b_executor": {
        "zh": "在真实 rank 上执行 1F1B",
        "en": "Run 1F1B on real ranks",
    },
    "ex2_4_coords": {
        "zh": "rank → 网格坐标",
        "en": "rank → grid coordinates",
    },
    "ex2_4_groups": {
        "zh": "一维的所有进程组",
        "en": "All the process groups of one dimension",
    },
    "ex2_4_memory": {
        "zh": "每张卡的模型状态",
        "en": "Model states per GPU",
    },
    "ex2_4_layout": {
        "zh": "在约束下选一个布局",
        "en": "Choose a layout under constraints",
    },
    "ex2_4_hybrid_step": {
        "zh": "在真实的 rank 上搭一个 DP × TP 训练步",
        "en": "Build a DP × TP training step on real ranks",
    },
    "ex2_5_capstone": {
        "zh": "为一个新场景选配置并给出论证数字",
        "en": "Choose a configuration for a new scenario and back it with numbers",
    },
    "ex2_5_diagnose": {
        "zh": "这个配置为什么不行？",
        "en": "Why does this configuration not work?",
    },
    "ex2_5_training_days": {
        "zh": "训练要多少天",
        "en": "How many days of training",
    },
}
