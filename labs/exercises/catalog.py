"""Which exercise a check belongs to, as the student knows it: 练习 n of a notebook.

Checks and the grader identify an exercise by its id, the ``grade_id`` of its check cell
(``metadata.nbgrader.grade_id``, e.g. ``ex2_0_ring_all_reduce``); grades.csv keeps those ids.
What a student reads names the exercise as the notebook's heading does, ``### 练习 n（k 分）：title``:
this table maps one to the other (the titles, in each language, are the messages of
labs/messages/exercises.py, keyed by the id). tests/test_exercise_names.py fails when a
notebook's numbering, title or points and this table disagree.

Hints: every exercise has at least three collapsible hints ``练习 n · 提示 1..3`` (the idea, the
shape of the code, a near-solution; tests/test_exercise_hints.py). A failed check points to one
of the first two -- never to the near-solution -- by what went wrong (:data:`HINT_FOR`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from labs.messages import LazyMapping, text

__all__ = ["Exercise", "EXERCISES", "HINT_FOR", "lookup", "label", "hint", "difficulty"]


class Exercise(NamedTuple):
    notebook: str  # file name in solutions/ and notebooks/
    number: int  # 练习 n, as the heading numbers it
    title: str  # the heading's text after "（k 分）：" (catalog messages, by grade_id)
    points: int


#: ``grade_id -> (notebook, number, points)``; the title is the catalog's message of the id.
_EXERCISES: dict[str, tuple[str, int, int]] = {
    "ex2_0_ring_all_reduce": ("2.0_collectives.ipynb", 1, 3),
    "ex2_0_rs_ag_all_reduce": ("2.0_collectives.ipynb", 2, 2),
    "ex2_0_ring_bytes": ("2.0_collectives.ipynb", 3, 1),
    "ex2_1_average_gradients": ("2.1_data_parallel.ipynb", 1, 3),
    "ex2_1_buckets": ("2.1_data_parallel.ipynb", 2, 2),
    "ex2_1_model_state_bytes": ("2.1_data_parallel.ipynb", 3, 2),
    "ex2_1_warmup_lr": ("2.1_data_parallel.ipynb", 4, 2),
    "ex2_1_hours_per_epoch": ("2.1_data_parallel.ipynb", 5, 1),
    "ex2_1_zero1": ("2.1_data_parallel.ipynb", 6, 4),
    "ex2_2_conjugate_ops": ("2.2_model_parallel.ipynb", 1, 2),
    "ex2_2_column_linear": ("2.2_model_parallel.ipynb", 2, 2),
    "ex2_2_row_linear": ("2.2_model_parallel.ipynb", 3, 2),
    "ex2_2_parallel_mlp": ("2.2_model_parallel.ipynb", 4, 2),
    "ex2_2_attention_heads": ("2.2_model_parallel.ipynb", 5, 2),
    "ex2_2_tp_bytes": ("2.2_model_parallel.ipynb", 6, 1),
    "ex2_2_sequence_parallel_mlp": ("2.2_model_parallel.ipynb", 7, 4),
    "ex2_3_gpipe_order": ("2.3_pipeline_parallel.ipynb", 1, 2),
    "ex2_3_1f1b_order": ("2.3_pipeline_parallel.ipynb", 2, 3),
    "ex2_3_bubble": ("2.3_pipeline_parallel.ipynb", 3, 1),
    "ex2_3_min_microbatches": ("2.3_pipeline_parallel.ipynb", 4, 1),
    "ex2_3_balanced_partition": ("2.3_pipeline_parallel.ipynb", 5, 3),
    "ex2_3_1f1b_executor": ("2.3_pipeline_parallel.ipynb", 6, 4),
    "ex2_4_coords": ("2.4_hybrid_parallel.ipynb", 1, 1),
    "ex2_4_groups": ("2.4_hybrid_parallel.ipynb", 2, 2),
    "ex2_4_memory": ("2.4_hybrid_parallel.ipynb", 3, 2),
    "ex2_4_layout": ("2.4_hybrid_parallel.ipynb", 4, 3),
    "ex2_4_hybrid_step": ("2.4_hybrid_parallel.ipynb", 5, 4),
    "ex2_5_capstone": ("2.5_summary.ipynb", 1, 4),
    "ex2_5_diagnose": ("2.5_summary.ipynb", 2, 2),
    "ex2_5_training_days": ("2.5_summary.ipynb", 3, 2),
}


def _exercise(exercise_id: str) -> Exercise:
    notebook, number, points = _EXERCISES[exercise_id]
    return Exercise(notebook, number, text(f"exercises.{exercise_id}"), points)


#: ``grade_id -> Exercise``, each title in the language of the moment (labs.messages).
EXERCISES: Mapping[str, Exercise] = LazyMapping(_EXERCISES, _exercise)

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
    known = _EXERCISES.get(exercise_id)
    return text("exercises.label", number=known[1] if known else exercise_id)


def hint(exercise_id: str, kind: str) -> int | None:
    """The number k of the hint ``练习 n · 提示 k`` to point to after a failure of ``kind``."""
    if exercise_id not in _EXERCISES:
        return None
    return HINT_OVERRIDES.get(exercise_id, {}).get(kind, HINT_FOR.get(kind))


def difficulty(points: int) -> str:
    """The README's difficulty of an exercise, by its points: 1 热身 (warm-up), 2 基础,
    3 and more 构建 (a mechanism written end to end on real ranks, or a capstone)."""
    return text("exercises.difficulty_warmup" if points <= 1 else
                "exercises.difficulty_basic" if points == 2 else "exercises.difficulty_build")
