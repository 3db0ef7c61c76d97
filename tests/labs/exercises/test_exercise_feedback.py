"""What a student reads when a check fails: the exercise, the rank, their own line, once.

- An exception in the student's code on rank 2 gives a verdict that starts with the exercise, the
  rank and the student's line (its source text) and the exception; no site-packages path, no
  frame of the lab, no torch/gloo log line; then what to do, pointing to a hint.
- The full traceback is kept (``full_traceback``, ``labs.exercises.last_traceback()``,
  ``LABS_FULL_TRACEBACK=1``).
- The verdict is printed exactly once: in captured output, and in a notebook executed as
  Jupyter does (nbclient), where "Run All" still goes past the failing check cells.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import labs.exercises
from labs.exercises import checks, feedback
from labs.exercises.checks import ExerciseFailed, case, graded, run_check
from labs.messages import text
from labs.runtime.errors import RankError

pytestmark = pytest.mark.slow

HERE = Path(__file__).name
GLOO_NOISE = "[W1201 04:41:43.535004 4242 ProcessGroupGloo.cpp:727] Warning: Unable to resolve"


def raises_on_rank_2(tensor):
    import torch.distributed as dist

    os.write(2, (GLOO_NOISE + "\n").encode())  # what torch's C++ side prints, on every rank
    rank = dist.get_rank()
    if rank == 2:
        chunks = tensor.tensor_split(4)
        return chunks[rank + 7]  # the student's bug
    dist.barrier()
    return tensor


def label(number: int) -> str:
    """How a verdict names exercise ``number`` of its notebook."""
    return text("exercises.label", number=number)


def failed(number: int, points: int, message: str = "") -> str:
    """The verdict line of a failed check (``message`` empty: the part before the message)."""
    return text("checks.verdict_failed", exercise=label(number), points=points, message=message)


def hint(number: int, k: int) -> str:
    return text("checks.hint_pointer", exercise=label(number), number=k)


def _line_of(text: str) -> int:
    source = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(source, 1) if text in line)


def test_rank_error_shows_the_exercise_rank_and_student_line_first(monkeypatch, capsys):
    from labs.exercises import collectives_checks

    monkeypatch.setattr(collectives_checks, "ALL_REDUCE_CASES",
                        collectives_checks.ALL_REDUCE_CASES[:1])
    with pytest.raises(ExerciseFailed) as info:
        collectives_checks.check_ring_all_reduce(raises_on_rank_2)
    captured = capsys.readouterr()
    out, shown = captured.out + captured.err, info.value._render_traceback_()
    verdict = out[out.index("❌"):].splitlines()

    line = _line_of("return chunks[rank + 7]")
    case_1 = text("checks_2_0.case_ranks_length", n=1, world_size=4, length=8)
    assert verdict[:4] == [
        failed(1, 3, text("checks.your_code_raised_on_rank_in_case", rank=2, case=case_1)),
        "    " + text("checks.frame_with_source", place=HERE, line=line, func="raises_on_rank_2"),
        "        return chunks[rank + 7]  # the student's bug",
        "    IndexError: tuple index out of range",
    ]
    assert verdict[4] == text("checks.todo_fix_error", hint=hint(1, 2))
    assert verdict[5] == text("checks.traceback_note")
    for noise in ("site-packages", "/labs/", "labs/runtime", "ProcessGroupGloo", "Traceback",
                  "ex2_0_ring_all_reduce"):
        assert noise not in out and not any(noise in s for s in shown), noise
    # once: not repeated by the error IPython shows (one short line), nor by the ranks' output
    assert out.count(failed(1, 3)) == 1 and out.count("IndexError") == 1
    assert shown == ["ExerciseFailed: " + text(ExerciseFailed.SHORT_KEY)]
    assert label(1) not in "".join(shown)

    full = info.value.full_traceback  # on demand: every frame, the rank's traceback, the logs
    assert "labs/runtime/launcher.py" in full and text("runtime.traceback_on_rank", rank=2) in full
    assert "return chunks[rank + 7]" in full and GLOO_NOISE in full
    labs.exercises.last_traceback()
    printed = capsys.readouterr().out
    assert printed.startswith(text("checks.last_header", exercise=label(1)) + "\n")
    assert full in printed
    monkeypatch.setenv(checks.FULL_TRACEBACK_ENV, "1")
    assert info.value._render_traceback_()[:-2] == full.splitlines()


def test_local_error_and_wrong_answer_verdicts(capsys):
    def student(xs):
        total = 0
        for x in xs:
            total += x.value  # the student's bug
        return total

    @graded("ex2_1_buckets", points=2)
    def check(fn):
        with case("case 1"):
            checks.assert_equal(6, fn([1, 2, 3]), what=text("checks.what_returned"))

    with pytest.raises(ExerciseFailed) as info:
        check(student)
    out = capsys.readouterr().out
    assert out.splitlines()[:4] == [
        failed(2, 2, text("checks.your_code_raised_in_case", case="case 1")),
        "    " + text("checks.frame_with_source", place=HERE, line=_line_of("total += x.value"),
                      func="student"),
        "        total += x.value  # the student's bug",
        "    AttributeError: 'int' object has no attribute 'value'",
    ]
    assert hint(2, 2) in out and out.count(failed(2, 2)) == 1
    assert "/labs/" not in out and "/labs/" in info.value.full_traceback
    assert info.value.kind == "error"

    with pytest.raises(ExerciseFailed) as info:
        check(lambda xs: 5)
    out = capsys.readouterr().out
    wrong = text("checks.wrong_value", where=text("checks.what_returned"), expected=6, got=5)
    assert out == (failed(2, 2, text("checks.case_failed", case="case 1", message=wrong)) + "\n"
                   + text("checks.todo_hint", hint=hint(2, 1)) + "\n")
    assert info.value.full_traceback is None  # nothing more to show
    labs.exercises.last_traceback()
    assert capsys.readouterr().out == text("checks.last_not_an_exception", exercise=label(2)) + "\n"


def test_remote_traceback_text_is_cut_to_the_students_line():
    """A rank's traceback arrives as text: the student's frame is found under torch's c10d
    frames, and torch's C++ context is cut from the exception."""
    remote = (
        'Traceback (most recent call last):\n'
        '  File "/home/u/course/labs/exercises/collectives_checks.py", line 121, in _run_student\n'
        '    out = fn(tensor)\n'
        '          ^^^^^^^^^^\n'
        '  File "/tmp/ipykernel_77/123.py", line 9, in my_ring_all_reduce\n'
        '    works = [dist.irecv(buf, src=left), dist.isend(x, dst=n)]\n'
        '  File "/home/u/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py",'
        ' line 81, in wrapper\n'
        '    return func(*args, **kwargs)\n'
        '  File "/home/u/.venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py",'
        ' line 2381, in isend\n'
        '    return pg.send([tensor], dst, tag)\n'
        'torch.distributed.DistBackendError: Invalid destination rank 4\n'
        'Exception raised from send at /pytorch/torch/csrc/distributed/c10d/ProcessGroupGloo.cpp:2541'
        ' (most recent call first):\n'
        'frame #0: c10::Error::Error(...) + 0x98 (0x7f in libc10.so)\n')
    error = RankError("rank 3 of 4 raised DistBackendError: Invalid destination rank 4", rank=3,
                      exc_type="DistBackendError", remote_traceback=remote, original=None)
    message, in_student_code = feedback.describe(error, "case 2")
    assert in_student_code
    assert message.splitlines() == [
        text("checks.your_code_raised_on_rank_in_case", rank=3, case="case 2"),
        "    " + text("checks.frame_with_source", place="<cell>", line=9,  # "Cell In[n]" in a kernel
                      func="my_ring_all_reduce"),
        "        works = [dist.irecv(buf, src=left), dist.isend(x, dst=n)]",
        "    DistBackendError: Invalid destination rank 4",
    ]
    assert feedback.NOISE.match("[rank 1] " + GLOO_NOISE) and feedback.NOISE.match(
        "[W socket.cpp:464] [c10d] The server socket has failed to listen")
    assert not feedback.NOISE.match("[rank 1] [W] my own warning")


def test_rank_wrapped_check_failure_keeps_its_message(capsys):
    error = RankError("rank 1 of 2 raised ExerciseFailed", rank=1, exc_type="ExerciseFailed",
                      remote_traceback="", original=ExerciseFailed("wrong result"))

    def launch():
        raise error

    with pytest.raises(ExerciseFailed) as info:
        run_check("ex2_0_ring_all_reduce", 3, launch)
    on_rank = text("checks.rank_check_failed", rank=1, message="wrong result")
    assert str(info.value) == on_rank
    assert capsys.readouterr().out.startswith(failed(1, 3, on_rank) + "\n")


NOTEBOOK_CELLS = [
    "import labs\nfrom labs.exercises.data_parallel_checks import check_buckets, check_warmup_lr",
    "def make_buckets(sizes, cap):\n    return [[i] for i in range(len(sizes) + 1)]",
    "check_buckets(make_buckets)",
    "def warmup_lr(step, base_lr, batch, base_batch, warmup_steps):\n"
    "    return base_lr * batch / base_batch * step / warmup_stepz",
    "check_warmup_lr(warmup_lr)",
    "print('the notebook ran to the end')",
]


def test_a_failing_check_prints_its_verdict_once_in_a_notebook(tmp_path):
    """As Jupyter runs a student notebook (nbclient): each failing check cell shows its verdict
    once -- the error IPython shows does not repeat it -- and "Run All" goes on past it."""
    import nbformat  # here, not at the top: the ranks import this module (raises_on_rank_2)
    from nbclient import NotebookClient

    root = Path(__file__).resolve().parents[3]
    cells = [nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(root)!r})")]
    for source in NOTEBOOK_CELLS:
        cell = nbformat.v4.new_code_cell(source)
        if source.startswith("check_"):
            cell.metadata["tags"] = ["raises-exception"]
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()

    def shown(cell):  # what Jupyter displays: streams, and an error's traceback (not evalue)
        parts = []
        for o in cell.outputs:
            parts += [o.text] if o.output_type == "stream" else o.get("traceback", [])
        return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(parts))

    buckets, warmup = nb.cells[3], nb.cells[5]
    for cell, number, points in ((buckets, 2, 2), (warmup, 4, 2)):
        seen = shown(cell)
        assert seen.count(failed(number, points)) == 1, seen
        assert [o.ename for o in cell.outputs if o.output_type == "error"] == ["ExerciseFailed"]
        assert "/labs/" not in seen and "site-packages" not in seen, seen
    assert text("checks_2_1.what_buckets") in shown(buckets)
    warmup_shown = shown(warmup)
    assert "    " + text("checks.frame_with_source", place="Cell In[5]", line=2,
                         func="warmup_lr") in warmup_shown
    assert "NameError: name 'warmup_stepz' is not defined" in warmup_shown
    assert nb.cells[-1].outputs[0].text == "the notebook ran to the end\n"
