"""The check of notebook 2.4's exercise 5, one DP × TP step on real ranks, and what exercise 6
(three_d_checks) shares with it: cases, data, the one-process reference and the invariants of
Megatron's split with a DP average (both served by labs.exercises.hybrid_checks). :data:`STEP`,
on every rank: only all-reduces (another is refused before it can hang), each in the group its
pass allows (forward TP, backward TP or DP, after it DP; never judged by shape), FLOPs about
1/(dp·tp) of one process's, no whole weight multiplied, the output once through TP and the
gradient shards once through DP. Every rank makes every group in the same order.

Owns: 2.4's rank cases, data, reference and invariants; exercise 5's body and judge. Must not:
import the grader, print, or keep process groups in globals.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import types
from dataclasses import dataclass

import torch
import torch.distributed as dist

from labs.exercises import trace
from labs.exercises.checks import ExerciseFailed, Message, compare_tensors, graded, msg
from labs.exercises.invariants import Invariant, flops, hold, only, sharded
from labs.exercises.ranks import check_cases
from labs.exercises.secret import hidden_int, hidden_seed
from labs.hybrid.mesh import MeshShape
from labs.messages import text

__all__ = ["check_hybrid_step", "Case", "STEP", "RANK_EXERCISES"]

TAG = "2.4"  # the domain of 2.4's hidden seeds and sizes (as labs.exercises.hybrid_checks)


@dataclass(frozen=True)
class Case:
    """One step on a dp × pp × tp mesh: stage s is relu(h w1[s]ᵀ) w2[s]ᵀ, loss the mean square
    error; ``sizes`` = (D_in, H, D_out) (exercise 6: D_in = D_out = D)."""
    label: Message
    dp: int
    tp: int
    sizes: tuple
    batch: int
    seed: int
    hidden: bool = False
    pp: int = 1
    lr: float = 0.0

    @property
    def mesh(self) -> MeshShape:
        return MeshShape(dp=self.dp, pp=self.pp, tp=self.tp)

    @property
    def world_size(self) -> int:
        return self.mesh.world_size

    @property
    def rows(self) -> int:  # of one DP replica
        return self.batch // self.dp

    def stage(self, rank: int) -> int:
        return self.mesh.coords(rank).pp

    def d_in(self, stage: int) -> int:
        return self.sizes[0] if stage == 0 else self.sizes[2]


def data(c: Case):
    """Every stage's full w1s[s] (H, D_in), w2s[s] (D_out, H); the global batch x, y."""
    gen = torch.Generator().manual_seed(c.seed)
    hidden, d_out = c.sizes[1:]
    w1s = [torch.randn(hidden, c.d_in(s), generator=gen) / c.d_in(s) ** 0.5 for s in range(c.pp)]
    w2s = [torch.randn(d_out, hidden, generator=gen) / hidden ** 0.5 for _ in range(c.pp)]
    return w1s, w2s, torch.randn(c.batch, c.sizes[0], generator=gen), \
        torch.randn(c.batch, d_out, generator=gen)


def reference(c: Case, part: int | None = None):
    """One process: (loss, [(grad w1, grad w2) per stage]) on the batch or replica ``part``'s."""
    w1s, w2s, x, y = data(c)
    if part is not None:
        x, y = x.chunk(c.dp)[part], y.chunk(c.dp)[part]
    ws = [(a.clone().requires_grad_(), b.clone().requires_grad_()) for a, b in zip(w1s, w2s)]
    for a, b in ws:
        x = torch.relu(x @ a.T) @ b.T
    loss = ((x - y) ** 2).mean()
    loss.backward()
    return loss.detach(), [(a.grad, b.grad) for a, b in ws]


@functools.lru_cache(maxsize=256)
def stage_flops(pp: int, sizes: tuple, batch: int) -> tuple:
    """Each stage's FLOPs on the batch in one process, traced as on ranks (x needs no grad)."""
    d_in, hidden, d_out = sizes
    found = []
    for s in range(pp):
        h = torch.zeros(batch, d_in if s == 0 else d_out, requires_grad=s > 0)
        w1 = torch.zeros(hidden, h.shape[1], requires_grad=True)
        w2 = torch.zeros(d_out, hidden, requires_grad=True)
        with trace.watching() as t:
            (torch.relu(h @ w1.T) @ w2.T).sum().backward()
        found.append(t.flops())
    return tuple(found)


# --- the mechanism, as invariants over what each rank did --------------------------------

_ROLES = {"forward": ("tp",), "backward": ("tp", "dp"), "after": ("dp",)}
_PHASE_WORDS = {"forward": "invariants.in_forward", "backward": "invariants.in_backward",
                "after": "checks_2_4.after_backward"}


def _fail(key: str, **fields):
    raise Guard.wrong(key, **fields)


def _swapped(mine: dict, t) -> bool:
    """Whether this rank swapped its two groups: every multi-rank all-reduce of the forward pass
    (g: TP) ran over its DP group and every one after the backward pass (the average: DP) over
    its TP group, with at least one of each. One all-reduce in the wrong group is not a swap."""
    passes = {"forward": [], "after": []}
    for comm in t.ops("all_reduce"):
        if len(comm.group) > 1 and t.phase(comm) in passes:
            passes[t.phase(comm)].append(sorted(comm.group))
    return bool(passes["forward"] and passes["after"]) \
        and all(g == mine["dp"] for g in passes["forward"]) \
        and all(g == mine["tp"] for g in passes["after"])


def _in_groups(c, rank, t) -> None:
    """Every all-reduce over more than one rank runs in the group its pass allows."""
    mine = {role: c.mesh.peers(rank, role) for role in ("tp", "dp")}
    for comm in t.ops("all_reduce"):
        when, got = t.phase(comm), sorted(comm.group)
        if len(got) < 2 or any(got == mine[r] for r in _ROLES[when]):
            continue
        role = _ROLES[when][0]
        _fail("checks_2_4.group_of_pass", rank=rank, what=comm.describe(),
              phase=text(_PHASE_WORDS[when]), role=role.upper(), want=mine[role],
              note=text("checks_2_4.groups_swapped") if _swapped(mine, t) else "")


def moved(key: str, want, *, op: str, role: str | None = None, phases=None) -> Invariant:
    """The bytes of a rank's ``op`` (over its ``role`` group, in ``phases``): ``want(c, rank)``."""
    def rule(c, rank, t):
        group = c.mesh.peers(rank, role) if role else None
        if group is not None and len(group) < 2:  # nothing is asked of a group of one rank
            return
        got = sum(comm.size for comm in t.ops(op) if (group is None or sorted(comm.group) == group)
                  and (phases is None or t.phase(comm) in phases))
        if got != want(c, rank):
            _fail(key, rank=rank, got=got, want=want(c, rank), group=group, op=op, s=c.stage(rank))
    return Invariant(rule)


def whole_weights(c: Case) -> list:
    """The whole weights' shapes when tp > 1 (no other operand has one: see _STEP_HIDDEN)."""
    hidden = c.sizes[1]
    return [(hidden, c.d_in(s)) for s in range(c.pp)] + [(c.sizes[2], hidden)] if c.tp > 1 else []


def activation_bytes(c: Case, rank: int) -> int:  # a stage's output, on one replica's rows
    return c.rows * c.sizes[2] * 4


def share(c: Case, rank: int) -> float:  # the FLOPs of the rank's stage in one process, shared
    return stage_flops(c.pp, c.sizes, c.batch)[c.stage(rank)] / (c.dp * c.tp)


#: Megatron's split inside each stage and the DP average, on every rank (exercises 5 and 6).
TP_DP = (
    Invariant(_in_groups),
    flops(share, 1, tolerance=0.25),
    sharded(whole_weights, backward=None),
    moved("checks_2_4.tp_bytes", activation_bytes, op="all_reduce", role="tp",
          phases=("forward",)),
    moved("checks_2_4.dp_bytes", lambda c, rank: c.sizes[1] // c.tp * 4 * (  # the two shards
        c.d_in(c.stage(rank)) + c.sizes[2]), op="all_reduce", role="dp",
        phases=("backward", "after")),
)
STEP_OPS = ("all_reduce", "barrier")
STEP = (only(*STEP_OPS), *TP_DP)


# --- on the ranks --------------------------------------------------------------------------

class Guard:
    """While the student's step runs: an op not in ``ops`` refused before it can hang; each
    ``dist.new_group``'s ranks recorded, compared across ranks through the store (untraced)."""
    cases = itertools.count()

    def __init__(self, *ops: str):
        self.ops, self.calls, self.made, self.case = ops, [], [], next(Guard.cases)
        self.original = dist.new_group

    @staticmethod
    def wrong(key: str, **fields) -> ExerciseFailed:  # a method: while the student's code runs
        failed = ExerciseFailed(text(key, **fields))  # the checks' functions are off-limits
        failed.kind = "wrong"
        return failed

    def check(self, op, args):  # labs.exercises.trace.before_comm
        if op not in self.ops:
            raise self.wrong("invariants.only", rank=dist.get_rank(), what=op,
                             allowed=", ".join(self.ops))

    def __call__(self, ranks=None, *args, **kwargs):
        mine = None if ranks is None else sorted(int(r) for r in ranks)
        self.calls.append(mine)
        store = dist.distributed_c10d._get_default_store()  # the first rank's groups stay
        first = store.compare_set(f"labs-2.4/{self.case}/{len(self.calls)}", "", repr(mine))
        if first.decode() != repr(mine):  # a rule of hint 1, not an error in the student's code
            raise self.wrong("checks_2_4.new_group_differs", call=len(self.calls),
                             first=first.decode(), other=dist.get_rank(), theirs=mine)
        self.made.append(self.original(ranks, *args, **kwargs))
        return self.made[-1]

    @contextlib.contextmanager
    def installed(self):
        dist.new_group = dist.distributed_c10d.new_group = self
        try:
            with trace.before_comm(self.check):
                yield self
        finally:
            dist.new_group = dist.distributed_c10d.new_group = self.original

    def destroy(self) -> None:
        dist.barrier()  # every rank is done with them (thousands for many secrets)
        for group in self.made:
            if group not in (None, dist.GroupMember.NON_GROUP_MEMBER):
                dist.destroy_process_group(group)


def detached(value):
    """What a rank returned: tensors detached and copied, tuples and generators as lists."""
    if isinstance(value, (list, tuple, types.GeneratorType)):
        return [detached(v) for v in value]
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def _step_body(student_fn, c: Case, run):
    """Rank body: the student's step on copies of the full weights and the global batch."""
    w1s, w2s, x, y = data(c)
    guard = Guard(*STEP_OPS)
    with guard.installed():
        got = run(student_fn, c.dp, c.tp, w1s[0].clone(), w2s[0].clone(), x.clone(), y.clone())
    guard.destroy()
    return {"grads": detached(got), "groups": guard.calls}


# --- in the notebook's process -------------------------------------------------------------

def compare_shards(c: Case, rank: int, full, got, names) -> None:
    """The rank's two gradient shards against its part of ``full`` (another TP rank's named)."""
    t = c.mesh.coords(rank).tp
    for k, (name, dim) in enumerate(zip(names, (0, 1))):
        what, chunks = text("checks_2_4.what_shard", weight=name), full[k].chunk(c.tp, dim=dim)
        want, mine = chunks[t], got[k]
        if tuple(mine.shape) != tuple(want.shape):
            _fail("checks_2_4.shard_shape", rank=rank, what=what, expected=tuple(want.shape),
                  got=tuple(mine.shape))
        close = [torch.allclose(x, mine.to(x.dtype), rtol=1e-4, atol=1e-6) for x in chunks]
        if not close[t] and any(close):
            _fail("checks_2_4.shard_other_rank", rank=rank, other=close.index(True), what=what,
                  t=t, tp=c.tp)
        compare_tensors(want, mine, what=what, rank=rank, check_dtype=False,
                        factors={"dp": c.dp})


def _judge_step(c: Case, values, traces) -> None:
    """Two tensors; every group made by every rank, in one order; the invariants; the shards."""
    needed = [g for dim in ("tp", "dp") for g in c.mesh.group_ranks(dim) if len(g) > 1]
    for rank, value in enumerate(values):
        got, made = value["grads"], value["groups"]
        if not (isinstance(got, list) and len(got) == 2 and all(torch.is_tensor(g) for g in got)):
            _fail("checks_2_4.not_two_tensors", rank=rank, got=got)
        missing = [g for g in needed if g not in made]
        if missing:
            _fail("checks_2_4.new_group_missing", rank=rank, group=missing[0])
        if made != values[0]["groups"]:
            _fail("checks_2_4.new_group_order", rank=rank, first=values[0]["groups"], calls=made)
    hold(STEP, c, traces)
    _, full = reference(c)
    for rank, value in enumerate(values):
        compare_shards(c, rank, full[0], value["grads"], ("w1", "w2"))


# (dp, tp) among the meshes listed, then (low, high, without a secret) of D_in, j (H/tp =
# 2j + 1), D_out and a replica's rows; H stays above the rows and apart from D_in, D_out
# (whole_weights). The first: TP off; the second: DP off, and without a secret a gradient shard
# and the activation have the same shape (told apart by group and pass, never by shape).
_STEP_HIDDEN = (
    (((4, 1), (3, 1), (2, 1)), (3, 7, 5), (3, 5, 3), (2, 5, 3), (2, 5, 2)),
    (((1, 3), (1, 4), (1, 2)), (2, 5, 2), (1, 2, 1), (2, 4, 2), (1, 3, 3)),
    (((2, 2),), (3, 7, 5), (1, 3, 1), (2, 5, 4), (2, 4, 3)),
)


def step_cases() -> list[Case]:
    """Exercise 5's cases: the shown one, then the hidden ones (drawn from the secret)."""
    cases = [Case(msg("checks.case_numbered", n=1, what=msg(
        "checks_2_4.step_case", dp=2, tp=2, d_in=4, hidden=8, d_out=3, batch=8)),
        2, 2, (4, 8, 3), 8, hidden_seed(TAG, 90))]
    for k, (meshes, d_in, per_tp, d_out, rows) in enumerate(_STEP_HIDDEN, start=1):
        key = 300 + 10 * k
        dp, tp = meshes[hidden_int(TAG, key, 0, len(meshes) - 1, 0)]
        hidden = tp * (2 * hidden_int(TAG, key + 2, *per_tp) + 1)  # H/tp odd
        d_in, d_out = (hidden_int(TAG, key + j, *r) for j, r in ((1, d_in), (3, d_out)))
        sizes = (d_in + (d_in == hidden), hidden, d_out + (d_out == hidden))
        rows = min(hidden_int(TAG, key + 4, *rows), hidden - 1)
        cases.append(Case(msg("checks.case_hidden", n=k), dp, tp, sizes, dp * rows,
                          hidden_seed(TAG, 90 + k), hidden=True))
    return cases


#: The exercises on ranks: ``id -> (cases, rank body, judge)`` (tests/catalog/test_secrets.py).
RANK_EXERCISES = {"ex2_4_hybrid_step": (step_cases, _step_body, _judge_step)}


@graded("ex2_4_hybrid_step")
def check_hybrid_step(student_fn):
    """student_fn(dp, tp, w1, w2, x, y) on every rank of a dp × tp mesh (pp = 1, TP innermost)
    -> (grad of this rank's rows of w1, grad of this rank's columns of w2), averaged over DP."""
    check_cases("ex2_4_hybrid_step", student_fn, *RANK_EXERCISES["ex2_4_hybrid_step"])
