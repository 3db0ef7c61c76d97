"""2.0's build checks enforce the mechanism, not only the result (issue 30, item 1).

Each planted answer below gives the right sum (or the right formula) and got full marks before;
each now gets 0 of the exercise's points, with the reason: every route to a ready-made
collective is refused (dist, distributed_c10d, ProcessGroup methods, torch.ops.c10d, the
functional collectives), the ring talks to its two neighbours only and sends 2(N-1)/N·S bytes
per rank (counted on every rank), the tensor is summed in place, and 练习 3 may not call the
course's formula.
"""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

from labs.exercises import collectives_checks as checks
from labs.exercises.checks import ExerciseFailed

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
def c10d_op(tensor):
    import torch
    torch.ops.c10d.allreduce_([tensor], dist.group.WORLD, None, None, False)
    return tensor
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


RING = [  # (plant, what the verdict says); each: 0/3 instead of 3/3
    (reloaded_lab_ring, "不能调用 labs.collectives"),
    (c10d, "不能调用 distributed_c10d.all_reduce"),
    (pgm, "不能调用 ProcessGroup.allreduce"),
    (c10d_op, "不能调用 torch.ops.c10d.allreduce_"),
    (funct, "不能调用 torch.distributed._functional_collectives.all_reduce"),
    (everyone, "rank 0 与 rank 2 通信了"),
    (gather0, "rank 0 与 rank 2 通信了"),
    (whole_ring, "rank 0 发送了 96 字节，ring all-reduce 每个 rank 应发送约 2(N-1)/N·S = 48 字节"),
    (on_clone, "rank 0 的输入张量没有被原地改成总和"),
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
        "✅ 练习 1 通过：3/3 分", "✅ 练习 2 通过：2/2 分", "✅ 练习 3 通过：1/1 分"]


@pytest.mark.parametrize("plant, reason", RING, ids=[p.__name__ for p, _ in RING])
def test_a_ring_that_is_not_one_scores_zero(first_cases, capsys, plant, reason):
    with pytest.raises(ExerciseFailed, match=reason.replace("(", r"\(").replace(")", r"\)")):
        checks.check_ring_all_reduce(plant)
    assert capsys.readouterr().out.startswith("❌ 练习 1 未通过（0/3 分）")


def test_rs_ag_decoys_and_copies_score_zero(first_cases, capsys):
    with pytest.raises(ExerciseFailed, match="不能调用 distributed_c10d.all_reduce"):
        checks.check_all_reduce_from_rs_ag(rs_ag_decoy)
    with pytest.raises(ExerciseFailed, match="输入张量没有被原地改成总和"):
        checks.check_all_reduce_from_rs_ag(rs_ag_copy)
    out = capsys.readouterr().out
    assert out.count("❌ 练习 2 未通过（0/2 分）") == 2


def test_calling_the_course_formula_scores_zero(capsys):
    with pytest.raises(ExerciseFailed, match="不能调用 ring_all_reduce_bytes_per_rank"):
        checks.check_ring_bytes(bytes_call)
    assert capsys.readouterr().out.startswith("❌ 练习 3 未通过（0/1 分）")


def test_the_mechanism_messages_speak_english(first_cases, capsys, monkeypatch):
    monkeypatch.setenv("LABS_LANG", "en")
    with pytest.raises(ExerciseFailed, match="exchanged data with rank 2: in a ring"):
        checks.check_ring_all_reduce(everyone)
    with pytest.raises(ExerciseFailed, match="was not changed in place"):
        checks.check_ring_all_reduce(on_clone)
    with pytest.raises(ExerciseFailed, match="sends about 2\\(N-1\\)/N·S = 48 bytes"):
        checks.check_ring_all_reduce(whole_ring)


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
    with pytest.raises(ExerciseFailed, match="recv 的张量是 torch.float32，而输入是 torch.float64"):
        checks.check_ring_all_reduce(float32_buffer)
    capsys.readouterr()
