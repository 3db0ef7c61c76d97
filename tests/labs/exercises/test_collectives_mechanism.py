"""2.0's build checks enforce the mechanism, not only the result (issue 30, item 1).

Each planted answer below gives the right sum (or the right formula) and got full marks before;
each now gets 0 of the exercise's points, with the reason: every route to a ready-made
collective is refused (dist, distributed_c10d, ProcessGroup methods, torch.ops.c10d, the
functional collectives), the ring talks to its two neighbours only and sends 2(N-1)/N·S bytes
per rank (counted on every rank), the tensor is summed in place, and exercise 3 may not call the
course's formula.
"""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises import collectives_checks as checks
from labs.exercises.checks import ExerciseFailed
from labs.messages import text
from tests.support.messages import pattern, said

ALL_CASES = checks.ALL_REDUCE_CASES  # before a test keeps only some of them


def reason(error) -> str:
    """What a failed 2.0 check says, without the rank and the case it names first."""
    first = str(error).splitlines()[0]
    for case in ALL_CASES:
        for key in ("checks.rank_check_failed_in_case", "checks.case_failed"):
            found = pattern(key, case=str(case.label)).fullmatch(first)
            if found:
                return found["message"]
    raise AssertionError(f"no case named: {first!r}")


def failed(exercise: int, points: int) -> str:
    """How the verdict of a failed check starts."""
    return text("checks.verdict_failed", exercise=text("exercises.label", number=exercise),
                points=points, message="")

def solution(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    if n == 1:
        return tensor
    chunks = tensor.view(-1).tensor_split(n)
    right, left = (rank + 1) % n, (rank - 1) % n
    buffer = torch.empty_like(chunks[0])
    for step in range(n - 1):
        send, target = chunks[(rank - step) % n], chunks[(rank - step - 1) % n]
        incoming = buffer[: target.numel()]
        works = [dist.irecv(incoming, src=left), dist.isend(send, dst=right)]
        for work in works:
            work.wait()
        target.add_(incoming)
    for step in range(n - 1):
        send, target = chunks[(rank - step + 1) % n], chunks[(rank - step) % n]
        works = [dist.irecv(target, src=left), dist.isend(send, dst=right)]
        for work in works:
            work.wait()
    return tensor

def c10d(tensor):
    torch.distributed.distributed_c10d.all_reduce(tensor); return tensor
def pgm(tensor):
    dist.group.WORLD.allreduce([tensor]).wait(); return tensor
def funct(tensor):
    import torch.distributed._functional_collectives as fc
    tensor.copy_(fc.all_reduce(tensor, "sum", dist.group.WORLD)); return tensor
def everyone(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    orig = tensor.clone(); bufs = [torch.empty_like(tensor) for _ in range(n)]
    works = []
    for p in range(n):
        if p != rank:
            works += [dist.isend(orig, p), dist.irecv(bufs[p], p)]
    for w in works: w.wait()
    for p in range(n):
        if p != rank: tensor.add_(bufs[p])
    return tensor
def gather0(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        buf = torch.empty_like(tensor)
        for p in range(1, n):
            dist.recv(buf, p); tensor.add_(buf)
        for p in range(1, n): dist.send(tensor, p)
    else:
        dist.send(tensor, 0); dist.recv(tensor, 0)
    return tensor
def whole_ring(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    cur = tensor.clone(); acc = tensor.clone(); buf = torch.empty_like(tensor)
    for _ in range(n - 1):
        w = [dist.irecv(buf, (rank - 1) % n), dist.isend(cur, (rank + 1) % n)]
        for x in w: x.wait()
        acc += buf; cur = buf.clone()
    tensor.copy_(acc); return tensor
def on_clone(tensor):
    return solution(tensor.clone())
def rs_ag_decoy(tensor):
    n = dist.get_world_size()
    d = torch.zeros(n); s = torch.zeros(1)
    dist.reduce_scatter_single(s, d); dist.all_gather_single(d, s)
    torch.distributed.distributed_c10d.all_reduce(tensor); return tensor
def rs_ag_solution(tensor):
    n = dist.get_world_size(); flat = tensor.view(-1)
    padded = torch.cat([flat, flat.new_zeros((-flat.numel()) % n)])
    shard = padded.new_empty(padded.numel() // n)
    dist.reduce_scatter_single(shard, padded); dist.all_gather_single(padded, shard)
    flat.copy_(padded[: flat.numel()]); return tensor
def rs_ag_copy(tensor):
    return rs_ag_solution(tensor.clone())
def bytes_ok(s, n): return 2 * (n - 1) / n * s
def bytes_call(s, n):
    from labs import collectives
    return collectives.ring_all_reduce_bytes_per_rank(s, n)


def reloaded_lab_ring(tensor):
    import importlib

    import labs.collectives
    importlib.reload(labs.collectives).ring_all_reduce(tensor)
    return tensor


RING = [  # (plant, the reason's message and the fields it must have); each: 0/3 instead of 3/3
    (reloaded_lab_ring, "checks.off_limits", dict(shown="labs.collectives.ring_reduce_scatter")),
    (c10d, "checks.off_limits", dict(shown="torch.distributed.all_reduce")),
    (pgm, "invariants.only", dict(rank=0, op="all_reduce", allowed="send, recv")),
    (funct, "invariants.only", dict(rank=0, op="all_reduce", allowed="send, recv")),
    (everyone, "invariants.peers", dict(rank=0, peer=2, allowed=[1, 3])),
    (gather0, "invariants.peers", dict(rank=0, peer=2, allowed=[1, 3])),
    (whole_ring, "invariants.wire_most", dict(rank=0, most=48)),
    (on_clone, "checks_2_0.not_in_place", dict(rank=0)),
]


@pytest.fixture
def first_cases(monkeypatch):
    # 4 ranks (a non-neighbour exists) and an uneven 3-rank case; the grading runs every case
    cases = checks.ALL_REDUCE_CASES
    monkeypatch.setattr(checks, "ALL_REDUCE_CASES", (cases[0], cases[2]))


def test_the_solution_still_scores_full_marks(first_cases, capsys):
    checks.check_ring_all_reduce(solution)
    checks.check_all_reduce_from_rs_ag(rs_ag_solution)
    checks.check_ring_bytes(bytes_ok)
    assert capsys.readouterr().out.splitlines()[-3:] == [
        text("checks.verdict_passed", exercise=text("exercises.label", number=n), points=points)
        for n, points in ((1, 3), (2, 2), (3, 1))]


def _reason(error, key, **fields):
    """The reason of a failed check (after its case and rank) is message ``key``."""
    said(reason(error), key, then=True, **fields)


@pytest.mark.parametrize("plant, key, fields", RING, ids=[p.__name__ for p, _, _ in RING])
def test_a_ring_that_is_not_one_scores_zero(first_cases, capsys, plant, key, fields):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_ring_all_reduce(plant)
    _reason(info.value, key, **fields)
    assert capsys.readouterr().out.startswith(failed(1, 3))


def test_rs_ag_decoys_and_copies_score_zero(first_cases, capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_all_reduce_from_rs_ag(rs_ag_decoy)
    _reason(info.value, "checks.off_limits", shown="torch.distributed.all_reduce")
    with pytest.raises(ExerciseFailed) as info:
        checks.check_all_reduce_from_rs_ag(rs_ag_copy)
    _reason(info.value, "checks_2_0.not_in_place")
    out = capsys.readouterr().out
    assert out.count(failed(2, 2)) == 2


def test_calling_the_course_formula_scores_zero(capsys):
    with pytest.raises(ExerciseFailed) as info:
        checks.check_ring_bytes(bytes_call)
    case = text("checks_2_0.case_bytes", size=2**20, n=4)
    said(said(str(info.value), "checks.case_failed", case=case)["message"], "checks.off_limits",
         shown="labs.collectives.ring_all_reduce_bytes_per_rank")
    assert capsys.readouterr().out.startswith(failed(3, 1))


def test_the_mechanism_messages_speak_english(first_cases, capsys, monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    for plant, key, fields in RING[5:]:  # the ring's, the bytes' and the in-place message
        with pytest.raises(ExerciseFailed) as info:
            checks.check_ring_all_reduce(plant)
        assert "rank" in str(info.value) and not any("\u4e00" <= ch <= "\u9fff"
                                                     for ch in str(info.value))


def float32_buffer(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = tensor.view(-1).tensor_split(n)
    right, left = (rank + 1) % n, (rank - 1) % n
    buffer = torch.empty(chunks[0].numel())  # float32, whatever the input's dtype
    for step in range(n - 1):
        send, target = chunks[(rank - step) % n], chunks[(rank - step - 1) % n]
        incoming = buffer[: target.numel()]
        works = [dist.irecv(incoming, src=left), dist.isend(send, dst=right)]
        for work in works:
            work.wait()
        target.add_(incoming)
    return tensor


def test_a_receive_buffer_of_another_dtype_is_named_not_a_crash(monkeypatch, capsys):
    # issue 31: gloo aborts the rank on it ("exited without a Python exception"); now: dtype
    monkeypatch.setattr(checks, "ALL_REDUCE_CASES", (checks.ALL_REDUCE_CASES[3],))  # float64
    with pytest.raises(ExerciseFailed) as info:
        checks.check_ring_all_reduce(float32_buffer)
    said(reason(info.value), "checks_2_0.p2p_dtype", kind="recv", got="torch.float32",
         dtype="torch.float64")
    capsys.readouterr()
