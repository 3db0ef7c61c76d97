"""A frame of the grader sandbox's private copy of the lab is lab code, not the student's: the
judge reads the ranks' tracebacks with its own lab path (issue 31: 2.2 练习 7's failure named
routes.py instead of the student's forward)."""
from __future__ import annotations

from labs.runtime import stacks


def test_a_copy_of_the_lab_is_library_code():
    assert stacks.is_library("/tmp/grading-x/course/labs/exercises/trace.py")
    assert stacks.is_library("/srv/labs/copy/labs/runtime/stacks.py")  # the last /labs/ counts


def test_the_students_files_are_not():
    assert not stacks.is_library("/tmp/ipykernel_123/456.py")
    assert not stacks.is_library("/home/s/tests/labs/test_mine.py")  # no such lab file
    assert not stacks.is_library("/home/s/labs/my_answer.py")
    assert not stacks.is_library("/home/s/labs/")
    frames = [stacks.Frame("/tmp/c/labs/exercises/trace.py", 165, "guard"),
              stacks.Frame("/tmp/ipykernel_1/2.py", 12, "forward")]
    assert stacks.first_user_frame(frames).func == "forward"
