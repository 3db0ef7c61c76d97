"""Which exercise a check belongs to, as the student knows it: 练习 n of a notebook.

Checks and the grader identify an exercise by its id, the ``grade_id`` of its check cell
(``metadata.nbgrader.grade_id``, e.g. ``ex2_0_ring_all_reduce``); grades.csv keeps those ids.
What a student reads names the exercise as the notebook's heading does, ``### 练习 n（k 分）：title``:
this table maps one to the other. tests/test_exercise_names.py fails when a notebook's numbering,
title or points and this table disagree.

Hints: every exercise has at least three collapsible hints ``练习 n · 提示 1..3`` (the idea, the
shape of the code, a near-solution; tests/test_exercise_hints.py). A failed check points to one
of the first two -- never to the near-solution -- by what went wrong (:data:`HINT_FOR`).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Exercise", "EXERCISES", "HINT_FOR", "lookup", "label", "hint", "difficulty"]


class Exercise(NamedTuple):
    notebook: str  # file name in solutions/ and notebooks/
    number: int  # 练习 n, as the heading numbers it
    title: str  # the heading's text after "（k 分）："
    points: int


EXERCISES: dict[str, Exercise] = {
    "ex2_0_ring_all_reduce": Exercise("2.0_collectives.ipynb", 1, "用 isend / irecv 实现 ring all-reduce", 3),
    "ex2_0_rs_ag_all_reduce": Exercise("2.0_collectives.ipynb", 2, "用 reduce_scatter + all_gather 组合出 all-reduce", 2),
    "ex2_0_ring_bytes": Exercise("2.0_collectives.ipynb", 3, "每个 rank 发送的字节数", 1),
    "ex2_1_average_gradients": Exercise("2.1_data_parallel.ipynb", 1, "梯度 all-reduce", 3),
    "ex2_1_buckets": Exercise("2.1_data_parallel.ipynb", 2, "分桶", 2),
    "ex2_1_model_state_bytes": Exercise("2.1_data_parallel.ipynb", 3, "模型状态的字节数", 2),
    "ex2_1_warmup_lr": Exercise("2.1_data_parallel.ipynb", 4, "线性缩放 + 预热的学习率", 2),
    "ex2_1_hours_per_epoch": Exercise("2.1_data_parallel.ipynb", 5, "重算案例中的训练时间", 1),
    "ex2_1_zero1": Exercise("2.1_data_parallel.ipynb", 6, "手写 ZeRO-1 分片优化器", 4),
    "ex2_2_conjugate_ops": Exercise("2.2_model_parallel.ipynb", 1, "f 和 g 这一对共轭算子", 2),
    "ex2_2_column_linear": Exercise("2.2_model_parallel.ipynb", 2, "列并行线性层的前向", 2),
    "ex2_2_row_linear": Exercise("2.2_model_parallel.ipynb", 3, "行并行线性层", 2),
    "ex2_2_parallel_mlp": Exercise("2.2_model_parallel.ipynb", 4, "并行 MLP（f 和 g 放在哪里）", 2),
    "ex2_2_attention_heads": Exercise("2.2_model_parallel.ipynb", 5, "按头切分融合的 q/k/v 权重", 2),
    "ex2_2_tp_bytes": Exercise("2.2_model_parallel.ipynb", 6, "每层的通信字节数", 1),
    "ex2_2_sequence_parallel_mlp": Exercise("2.2_model_parallel.ipynb", 7, "序列并行的 MLP block", 4),
    "ex2_3_gpipe_order": Exercise("2.3_pipeline_parallel.ipynb", 1, "生成 GPipe 的计算顺序", 2),
    "ex2_3_1f1b_order": Exercise("2.3_pipeline_parallel.ipynb", 2, "生成 1F1B 的计算顺序", 3),
    "ex2_3_bubble": Exercise("2.3_pipeline_parallel.ipynb", 3, "气泡占比", 1),
    "ex2_3_min_microbatches": Exercise("2.3_pipeline_parallel.ipynb", 4, "要多少个 micro-batch", 1),
    "ex2_3_balanced_partition": Exercise("2.3_pipeline_parallel.ipynb", 5, "按成本均衡切分", 3),
    "ex2_3_1f1b_executor": Exercise("2.3_pipeline_parallel.ipynb", 6, "在真实 rank 上执行 1F1B", 4),
    "ex2_4_coords": Exercise("2.4_hybrid_parallel.ipynb", 1, "rank → 网格坐标", 1),
    "ex2_4_groups": Exercise("2.4_hybrid_parallel.ipynb", 2, "一维的所有进程组", 2),
    "ex2_4_memory": Exercise("2.4_hybrid_parallel.ipynb", 3, "每张卡的模型状态", 2),
    "ex2_4_layout": Exercise("2.4_hybrid_parallel.ipynb", 4, "在约束下选一个布局", 3),
    "ex2_4_hybrid_step": Exercise("2.4_hybrid_parallel.ipynb", 5, "在真实的 rank 上搭一个 DP × TP 训练步", 4),
    "ex2_5_capstone": Exercise("2.5_summary.ipynb", 1, "为一个新场景选配置并给出论证数字", 4),
    "ex2_5_diagnose": Exercise("2.5_summary.ipynb", 2, "这个配置为什么不行？", 2),
    "ex2_5_training_days": Exercise("2.5_summary.ipynb", 3, "训练要多少天", 2),
}

#: Which hint helps with which failure: "error" (the student's code raised: 提示 2, the shape
#: of the code), "wrong" (a wrong answer: 提示 1, the idea, which also says how to read the
#: usual messages), "timeout" (the ranks did not finish: 提示 1, where the ring exercise
#: explains the deadlock). Per exercise: ``HINT_OVERRIDES[id][kind]`` (None: point to none).
HINT_FOR = {"error": 2, "wrong": 1, "timeout": 1}
HINT_OVERRIDES: dict[str, dict[str, int | None]] = {}


def lookup(exercise_id: str) -> Exercise | None:
    return EXERCISES.get(exercise_id)


def label(exercise_id: str) -> str:
    """``练习 n`` for a known exercise; an unknown id (a test's own check) is shown as is."""
    exercise = EXERCISES.get(exercise_id)
    return f"练习 {exercise.number}" if exercise else f"练习 {exercise_id}"


def hint(exercise_id: str, kind: str) -> int | None:
    """The number k of the hint ``练习 n · 提示 k`` to point to after a failure of ``kind``."""
    if exercise_id not in EXERCISES:
        return None
    return HINT_OVERRIDES.get(exercise_id, {}).get(kind, HINT_FOR.get(kind))


def difficulty(points: int) -> str:
    """The README's difficulty of an exercise, by its points: 1 热身 (warm-up), 2 基础,
    3 and more 构建 (a mechanism written end to end on real ranks, or a capstone)."""
    return "热身" if points <= 1 else "基础" if points == 2 else "构建"
