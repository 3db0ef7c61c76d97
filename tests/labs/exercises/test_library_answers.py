"""torch's own schedule where the course expects the student's (issue 39): refused with a message
about what it is, not with the error it led to.

- handed to a check in place of the student's function (``check_1f1b_order(Schedule1F1B)``), it
  is named before it runs (it used to fail inside torch: "'int' object has no attribute
  'num_stages'");
- reached inside the student's code under an exercise that refuses torch's pipelining, the
  refusal stays the verdict when another error follows (it was lost: the error was shown);
- given to the course's executor as a schedule (``PipelineRun(schedule=Schedule1F1B)``), a
  ValueError says to pass a name ('1f1b') instead ("'ABCMeta' object is not iterable").
No ranks are started."""
from __future__ import annotations

import pytest

from labs.exercises import offlimits
from labs.exercises.checks import ExerciseFailed
from labs.exercises.pipeline_checks import check_1f1b_order
from labs.messages import text
from tests.support.messages import found_in

pipelining = pytest.importorskip("torch.distributed.pipelining")


def test_a_library_schedule_handed_to_a_check_is_named(capsys):
    with pytest.raises(ExerciseFailed) as info:
        check_1f1b_order(pipelining.Schedule1F1B)
    fields = found_in(info.value, "checks.library_answer")
    assert "Schedule1F1B" in fields["shown"] and "num_stages" not in str(info.value)
    capsys.readouterr()


def test_the_student_s_own_function_is_not_a_library_object():
    def my_1f1b_order(n_stages, n_microbatches, stage):
        return []

    assert offlimits.library_name(my_1f1b_order) is None
    assert offlimits.library_name(pipelining.Schedule1F1B).startswith("torch.distributed.pipelining")
    assert offlimits.library_name(len) is None  # builtins are not a library answer here


def test_a_refusal_survives_the_error_that_follows_it():
    with pytest.raises(ExerciseFailed) as info:
        with offlimits.forbidden("ex2_3_1f1b_executor"):  # torch's pipelining refused by path
            pipelining.Schedule1F1B(3, 4)  # enters torch's code, then fails inside it
    found_in(info.value, "checks.off_limits", shown="torch.distributed.pipelining")
    assert isinstance(info.value.__cause__, AttributeError)


def test_other_errors_pass_through_when_nothing_was_refused():
    with pytest.raises(ZeroDivisionError):
        with offlimits.forbidden("ex2_3_1f1b_executor"):
            1 / 0


def test_torch_s_schedule_given_to_the_course_s_executor():
    from labs import pipeline as pp
    from labs.pipeline.step import PipelineRun

    for build in (lambda s: PipelineRun(schedule=s).build_schedule(4),
                  lambda s: pp.build_schedule(s, 4, 4)):
        with pytest.raises(ValueError) as info:
            build(pipelining.Schedule1F1B)
        found_in(info.value, "pipeline.torch_schedule_given", shown="Schedule1F1B")
    assert len(PipelineRun(schedule="1f1b").build_schedule(2)) == 2


def test_the_messages_exist_in_both_languages():
    for lang in ("zh", "en"):
        assert "X.Y" in text("checks.library_answer", shown="X.Y", exercise="E", lang=lang)
        assert "'1f1b'" in text("pipeline.torch_schedule_given", shown="S", schedules=("1f1b",),
                                lang=lang)
