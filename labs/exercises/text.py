"""Every graded exercise of the course, declared once; and the words the catalog shows.

Owns :data:`EXERCISES`, one :class:`Exercise` record per exercise: its id (the ``grade_id`` of
its check cell), notebook, number (``练习 n``), points, difficulty, title in each language
(the heading ``### 练习 n（k 分）：title`` / ``### Exercise n (k points): title``) and the dotted
names the grader's copy flags look for in a submission. Everything else is derived from it or
checked against it: the lookups of labs.exercises.catalog, the points of the ``@graded``
checks, the copy flags' REFERENCES, the README's exercise table (``python -m
labs.exercises.catalog --readme``), every test's point totals; tests/labs/exercises/test_exercise_declaration.py
checks the notebooks (headings in both editions, nbgrader metadata, hints) and the README.

It is the catalog of the area ``exercises`` (labs.messages.CATALOGS) because its titles are
text a student reads, in two languages (no Chinese string lives outside the catalogs). It must
not import anything of labs: it is data.
"""

from __future__ import annotations

from typing import NamedTuple


class Exercise(NamedTuple):
    id: str  # the check cell's metadata.nbgrader.grade_id; grades.csv keeps it
    notebook: str  # file name in solutions/, solutions/en/, notebooks/, notebooks/en/
    number: int  # 练习 n / Exercise n, as the heading numbers it
    points: int
    difficulty: str  # "warmup" (1 point), "basic" (2), "build" (3 and more): the README's rule
    zh: str  # the title, as the Chinese heading writes it
    en: str  # the title, as the English heading writes it
    #: Dotted names that implement what the exercise asks for (labs or torch): a submission
    #: that calls one is flagged for the instructor (grader's copy flags), never penalised.
    references: tuple[str, ...] = ()


_DIST_ALL_REDUCE = ("torch.distributed.all_reduce", "torch.distributed.all_reduce_coalesced")
_PLANNER_SEARCH = ("labs.planner.plan", "labs.planner.decide", "labs.planner.search.plan",
                   "labs.planner.search.decide")
_MESH = ("labs.hybrid.mesh.new_groups", "labs.hybrid.mesh.device_mesh",
         "torch.distributed.device_mesh.init_device_mesh")
#: The course's layout arithmetic: one class, under chapter 2.4's name first (the name a refusal
#: shows), then torchtitan's (labs.parallel_dims), so that the copy flags find either.
_MESH_SHAPE = ("labs.hybrid.mesh.MeshShape", "labs.parallel_dims.ParallelDims")

EXERCISES: tuple[Exercise, ...] = (
    # --- 2.0 collectives ---
    Exercise("ex2_0_ring_all_reduce", "2.0_collectives.ipynb", 1, 3, "build",
             "用 isend / irecv 实现 ring all-reduce", "Ring all-reduce with isend / irecv",
             ("labs.collectives.ring_all_reduce", "labs.collectives.naive_all_reduce",
              "labs.collectives.ring_reduce_scatter", "labs.collectives.ring_all_gather",
              *_DIST_ALL_REDUCE, "torch.distributed.reduce", "torch.distributed.reduce_scatter",
              "torch.distributed.reduce_scatter_tensor", "torch.distributed.all_gather",
              "torch.distributed.all_gather_into_tensor")),
    Exercise("ex2_0_rs_ag_all_reduce", "2.0_collectives.ipynb", 2, 2, "basic",
             "用 reduce_scatter + all_gather 组合出 all-reduce",
             "All-reduce from reduce_scatter + all_gather",
             ("labs.collectives.ring_all_reduce", "labs.collectives.naive_all_reduce",
              *_DIST_ALL_REDUCE)),
    Exercise("ex2_0_ring_bytes", "2.0_collectives.ipynb", 3, 1, "warmup",
             "每个 rank 发送的字节数", "Bytes each rank sends",
             ("labs.collectives.ring_all_reduce_bytes_per_rank",
              "labs.formulas.cost.ring_all_reduce_bytes_per_rank")),
    # --- 2.1 data parallel ---
    Exercise("ex2_1_average_gradients", "2.1_data_parallel.ipynb", 1, 3, "build",
             "梯度 all-reduce", "Gradient all-reduce",
             ("labs.data_parallel.ddp.allreduce_gradients",
              "labs.data_parallel.ddp.allreduce_gradients_bucketed",
              "labs.data_parallel.ddp.AllReduceGradReducer",
              "labs.data_parallel.ddp.BucketedGradReducer",
              "labs.data_parallel.ddp.OverlappedGradReducer",
              "torch.nn.parallel.DistributedDataParallel")),
    Exercise("ex2_1_buckets", "2.1_data_parallel.ipynb", 2, 2, "basic",
             "分桶", "Bucketing",
             ("labs.data_parallel.buckets.assign_buckets",)),
    Exercise("ex2_1_model_state_bytes", "2.1_data_parallel.ipynb", 3, 2, "basic",
             "模型状态的字节数", "Bytes of the model states",
             ("labs.formulas.memory.model_state_bytes", "labs.formulas.memory.model_state_bytes_per_gpu",
              "labs.formulas.memory.bytes_per_param")),
    Exercise("ex2_1_warmup_lr", "2.1_data_parallel.ipynb", 4, 2, "basic",
             "线性缩放 + 预热的学习率", "Learning rate with linear scaling + warmup",
             ("labs.data_parallel.scaling.warmup_lr",
              "labs.data_parallel.scaling.linear_scaling_lr")),
    Exercise("ex2_1_hours_per_epoch", "2.1_data_parallel.ipynb", 5, 1, "warmup",
             "重算案例中的训练时间", "Recompute the case study's training time"),
    Exercise("ex2_1_zero1", "2.1_data_parallel.ipynb", 6, 4, "build",
             "手写 ZeRO-1 分片优化器", "A ZeRO-1 sharded optimizer by hand",
             ("torch.distributed.optim.ZeroRedundancyOptimizer",
              "labs.data_parallel.zero.ShardedOptimizer",
              "labs.data_parallel.zero.partition_by_size",
              "labs.data_parallel.zero_stages.FlatShard",
              "labs.data_parallel.zero_stages.Zero2Optimizer",
              "labs.data_parallel.zero_stages.Zero3Optimizer")),
    # --- 2.2 model (tensor) parallel ---
    Exercise("ex2_2_conjugate_ops", "2.2_model_parallel.ipynb", 1, 2, "basic",
             "f 和 g 这一对共轭算子", "f and g, the pair of conjugate operators",
             ("labs.tensor_parallel.comm.CopyToTensorParallelRegion",
              "labs.tensor_parallel.comm.ReduceFromTensorParallelRegion",
              "labs.tensor_parallel.comm.copy_to_tensor_parallel_region",
              "labs.tensor_parallel.comm.reduce_from_tensor_parallel_region")),
    Exercise("ex2_2_column_linear", "2.2_model_parallel.ipynb", 2, 2, "basic",
             "列并行线性层的前向", "Forward of a column-parallel linear layer",
             ("labs.tensor_parallel.layers.ColumnParallelLinear",)),
    Exercise("ex2_2_row_linear", "2.2_model_parallel.ipynb", 3, 2, "basic",
             "行并行线性层", "Row-parallel linear layer",
             ("labs.tensor_parallel.layers.RowParallelLinear",)),
    Exercise("ex2_2_parallel_mlp", "2.2_model_parallel.ipynb", 4, 2, "basic",
             "并行 MLP（f 和 g 放在哪里）", "Parallel MLP (where f and g go)",
             ("labs.tensor_parallel.layers.ParallelMLP",
              "labs.tensor_parallel.layers.ColumnParallelLinear",
              "labs.tensor_parallel.layers.RowParallelLinear")),
    Exercise("ex2_2_attention_heads", "2.2_model_parallel.ipynb", 5, 2, "basic",
             "按头切分融合的 q/k/v 权重", "Split the fused q/k/v weight by heads",
             ("labs.tensor_parallel.layers.ParallelSelfAttention",
              "labs.tensor_parallel.layers.shard")),
    Exercise("ex2_2_tp_bytes", "2.2_model_parallel.ipynb", 6, 1, "warmup",
             "每层的通信字节数", "Communication bytes per layer",
             ("labs.formulas.cost.tp_layer_comm", "labs.formulas.cost.layerwise_comm",
              "labs.formulas.cost.tp_bytes_per_step")),
    Exercise("ex2_2_sequence_parallel_mlp", "2.2_model_parallel.ipynb", 7, 4, "build",
             "序列并行的 MLP block", "The sequence-parallel MLP block",
             ("labs.tensor_parallel.comm.GatherFromSequenceParallelRegion",
              "labs.tensor_parallel.comm.ReduceScatterToSequenceParallelRegion",
              "labs.tensor_parallel.comm.gather_from_sequence_parallel_region",
              "labs.tensor_parallel.comm.reduce_scatter_to_sequence_parallel_region",
              "labs.tensor_parallel.comm.all_gather_along",
              "labs.tensor_parallel.comm.reduce_scatter_along",
              "torch.distributed.nn.functional.all_gather",
              "torch.distributed.nn.functional.reduce_scatter",
              "torch.distributed.nn.functional._AllGather",
              "torch.distributed.nn.functional._AllGatherBase",
              "torch.distributed.nn.functional._Reduce_Scatter",
              "torch.distributed._functional_collectives.all_gather_tensor_autograd",
              "torch.distributed._functional_collectives.reduce_scatter_tensor_autograd")),
    # --- 2.3 pipeline parallel ---
    Exercise("ex2_3_gpipe_order", "2.3_pipeline_parallel.ipynb", 1, 2, "basic",
             "生成 GPipe 的计算顺序", "Generate the GPipe schedule",
             ("labs.pipeline.schedules.gpipe_order", "labs.pipeline.schedules.build_schedule",
              "labs.pipeline.schedules.compute_order")),
    Exercise("ex2_3_1f1b_order", "2.3_pipeline_parallel.ipynb", 2, 3, "build",
             "生成 1F1B 的计算顺序", "Generate the 1F1B schedule",
             ("labs.pipeline.schedules.one_f_one_b_order",
              "labs.pipeline.schedules.build_schedule", "labs.pipeline.schedules.compute_order",
              "labs.pipeline.schedules.one_f_one_b_warmup",
              "labs.pipeline.schedules.zb_h1_order")),
    Exercise("ex2_3_bubble", "2.3_pipeline_parallel.ipynb", 3, 1, "warmup",
             "气泡占比", "Bubble fraction",
             ("labs.formulas.cost.bubble_fraction", "labs.formulas.cost.pipeline_bubble_ratio",
              "labs.pipeline.schedules.bubble_fraction", "labs.formulas.cost.zb_h1_bubble_seconds",
              "labs.pipeline.simulator.simulate")),
    Exercise("ex2_3_min_microbatches", "2.3_pipeline_parallel.ipynb", 4, 1, "warmup",
             "要多少个 micro-batch", "How many micro-batches",
             ("labs.formulas.cost.min_microbatches", "labs.pipeline.schedules.min_microbatches")),
    Exercise("ex2_3_balanced_partition", "2.3_pipeline_parallel.ipynb", 5, 3, "build",
             "按成本均衡切分", "Partition balanced by cost",
             ("labs.pipeline.partition.balanced_partition",)),
    Exercise("ex2_3_1f1b_executor", "2.3_pipeline_parallel.ipynb", 6, 4, "build",
             "在真实 rank 上执行 1F1B", "Run 1F1B on real ranks",
             ("labs.pipeline.executor.run_schedule", "labs.pipeline.executor.run_actions",
              "labs.pipeline.one_f_one_b.train_step_1f1b",
              "labs.pipeline.one_f_one_b.one_f_one_b_step",
              "torch.distributed.pipelining")),  # torch's executor, refused whole (by path)
    Exercise("ex2_3_zb_h1_order", "2.3_pipeline_parallel.ipynb", 7, 3, "build",
             "由 1F1B 生成 ZB-H1 的计算顺序", "Generate the ZB-H1 schedule from 1F1B's",
             ("labs.pipeline.schedules.zb_h1_order", "labs.pipeline.schedules.build_schedule",
              "labs.pipeline.schedules.compute_order")),
    # --- 2.4 hybrid parallel ---
    Exercise("ex2_4_coords", "2.4_hybrid_parallel.ipynb", 1, 1, "warmup",
             "rank → 网格坐标", "rank → grid coordinates", _MESH_SHAPE),
    Exercise("ex2_4_groups", "2.4_hybrid_parallel.ipynb", 2, 2, "basic",
             "一维的所有进程组", "All the process groups of one dimension",
             (*_MESH, *_MESH_SHAPE)),
    Exercise("ex2_4_memory", "2.4_hybrid_parallel.ipynb", 3, 2, "basic",
             "每张卡的模型状态", "Model states per GPU",
             ("labs.formulas.memory.model_state_bytes_per_gpu", "labs._compat.states_per_gpu",
              "labs.planner.estimate", "labs.planner.model.estimate")),
    Exercise("ex2_4_layout", "2.4_hybrid_parallel.ipynb", 4, 3, "build",
             "在约束下选一个布局", "Choose a layout under constraints",
             ("labs.planner.plan", "labs.planner.decide", "labs.planner.search.plan",
              "labs.planner.search.decide", "labs.planner.widgets.choose_layout")),
    Exercise("ex2_4_hybrid_step", "2.4_hybrid_parallel.ipynb", 5, 4, "build",
             "在真实的 rank 上搭一个 DP × TP 训练步", "Build a DP × TP training step on real ranks",
             (*_MESH, "torch.distributed.device_mesh.DeviceMesh",
              "labs.pipeline.step.average_replicas",
              "labs.tensor_parallel.layers.ColumnParallelLinear",
              "labs.tensor_parallel.layers.RowParallelLinear",
              "labs.tensor_parallel.layers.ParallelMLP")),
    Exercise("ex2_4_3d_step", "2.4_hybrid_parallel.ipynb", 6, 5, "build",
             "手写一个 DP × PP × TP 训练步", "Build a DP × PP × TP training step by hand",
             ("labs.hybrid.three_d.hybrid_step", "labs.hybrid.three_d.check_3d",
              "labs.pipeline.executor.run_schedule", "labs.pipeline.executor.run_actions",
              "labs.pipeline.step.pipeline_step", "labs.pipeline.step.torch_pipeline_step",
              "labs.pipeline.step.build_stages", "labs.pipeline.step.average_replicas",
              "torch.distributed.pipelining.PipelineStage",
              "torch.distributed.pipelining.ScheduleGPipe",
              "torch.distributed.pipelining.Schedule1F1B")),
    # --- 2.5 summary ---
    Exercise("ex2_5_capstone", "2.5_summary.ipynb", 1, 4, "build",
             "为一个新场景选配置并给出论证数字",
             "Choose a configuration for a new scenario and back it with numbers",
             ("labs.summary.best_config", "labs.exercises.capstone_rules.plan_training",
              "labs.exercises.capstone_rules.runner_up", "labs.exercises.capstone_rules.deciding",
              "labs.exercises.capstone_rules.step_parts")),
    Exercise("ex2_5_diagnose", "2.5_summary.ipynb", 2, 2, "basic",
             "这个配置为什么不行？", "Why does this configuration not work?",
             ("labs.exercises.summary_checks.diagnose",
              "labs.exercises.summary_checks.broken_rules")),
    Exercise("ex2_5_training_days", "2.5_summary.ipynb", 3, 2, "basic",
             "训练要多少天", "How many days of training",
             ("labs.exercises.summary_checks.training_days", "labs.formulas.cost.training_flops",
              "labs.formulas.cost.compute_seconds")),
)

#: The words of the catalog (labs.exercises.catalog): 练习 n, the README table, difficulties.
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
    "readme_section": {
        "zh": "## 练习一览",
        "en": "## Exercises",
    },
    "table_header": {
        "zh": "| 笔记本 | 练习 | 分数 | 难度 |",
        "en": "| Notebook | Exercise | Points | Difficulty |",
    },
    "table_row": {
        "zh": "| `{notebook}` | 练习 {number}：{title} | {points} | {difficulty} |",
        "en": "| `{notebook}` | Exercise {number}: {title} | {points} | {difficulty} |",
    },
    "points_disagree": {
        "zh": "{exercise_id} 在 labs/exercises/text.py 中声明为 {declared} 分，检查却写了 {points} 分；"
              "分数只在声明里写。",
        "en": "{exercise_id} is declared with {declared} points in labs/exercises/text.py, "
              "but its check says {points}; write the points only in the declaration.",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "label",  # an exercise's name, as the notebook heads it
    "difficulty_warmup", "difficulty_basic", "difficulty_build",  # the README table's cells
    "readme_section",  # the README's heading
})
