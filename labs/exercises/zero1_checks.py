"""The check of notebook 2.1's exercise 6, ZeRO-1 by hand, on real ranks (the notebook imports
it from labs.exercises.data_parallel_checks), and the cases on ranks both share. The student's
optimizer trains a small MLP a few steps, the check averaging the gradients as DDP would: the
weights equal an unsharded optimizer's, bit-identical on the group's ranks; the state a rank
holds (every torch optimizer that stepped there) is no more than the fullest rank's of the
statement's partition, the group holding it whole once; the parameters leave their owners by
collectives in the group (:data:`SENT`).

Owns: 2.1's cases on ranks (Case, cases_of, the group helpers); exercise 6's cases, rank body
and mechanism. Must not: import the grader, print (the verdict is labs.exercises.checks'), or
keep process groups in globals.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.optim.optimizer import register_optimizer_step_post_hook

from labs.data import regression_batch, shard_batch
from labs.data_parallel.zero import partition_by_size
from labs.exercises.checks import ExerciseFailed, Message, assert_close, graded, msg
from labs.exercises.invariants import Invariant, groups, hold, only
from labs.exercises.ranks import check_cases
from labs.exercises.secret import drawing, hidden_seed
from labs.messages import text
from labs.models import MLP

__all__ = ["check_zero1", "Case", "cases_of", "rank_group", "dp_group", "joined",
           "SENT", "TAG", "CHECK_TIMEOUT", "STEPS"]

CHECK_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s
TAG = "2.1"  # the domain of 2.1's hidden seeds and sizes (labs.exercises.secret)
STEPS = 3
OPTIMIZERS = {"adam": ("Adam", dict(lr=1e-2), 2),  # (torch.optim class, options, states)
              "sgd_momentum": ("SGD", dict(lr=0.05, momentum=0.9), 1)}


@dataclass(frozen=True)
class Case:
    """A case of 2.1 on ranks: an MLP of ``sizes`` trained by data-parallel ``groups``."""
    label: Message
    world_size: int
    sizes: tuple  # the MLP's widths
    seeds: tuple  # each group's model and data
    groups: tuple  # the process groups (global ranks); one of every rank: the default group
    hidden: bool = False
    batch: int = 8  # each group's global batch
    optimizer: str = ""  # exercise 6's: a key of OPTIMIZERS

    @property
    def numels(self) -> list:
        return [n for a, b in zip(self.sizes, self.sizes[1:]) for n in (a * b, b)]


def cases_of(part: str, rows) -> list[Case]:
    """``Case`` of each ``(label, world size, sizes, number of groups, hidden, fields)``: the
    groups split the ranks in order; each group's seed drawn from the instructor's secret."""
    return [Case(label, ws, sizes, tuple(hidden_seed(f"{TAG}/{part}", k + g) for g in range(n)),
                 tuple(tuple(range(g * ws // n, (g + 1) * ws // n)) for g in range(n)), hidden,
                 **fields)
            for k, (label, ws, sizes, n, hidden, fields) in enumerate(rows)]


def rank_group(c: Case, rank: int) -> tuple:
    return next(g for g in c.groups if rank in g)


def dp_group(c: Case, rank: int, comm=None) -> dict:
    """The group each collective of ``rank`` belongs in (invariants.groups): its DP group."""
    return {"DP": rank_group(c, rank)}


def joined(c: Case) -> tuple:
    """On a rank: (the group to pass as ``group=``, None for the default one; its members;
    their index in ``c.groups``). Every rank makes every group, as new_group asks."""
    made = [dist.new_group(list(g)) for g in c.groups] if len(c.groups) > 1 else [None]
    members = rank_group(c, dist.get_rank())
    return made[c.groups.index(members)], members, c.groups.index(members)


def _sent(c: Case, rank: int, trace) -> None:
    """Every parameter's bytes leave their owner each step (a broadcast's size, an all-gather's
    output, an all-reduce with zeros elsewhere), and not many more (one round more at most)."""
    sent, params = sum(comm.size for comm in trace.comms), 4 * sum(c.numels)
    if not STEPS * params <= sent <= (STEPS + 1) * params:
        raise ExerciseFailed(text("checks_2_1.params_sent", rank=rank, sent=sent, steps=STEPS,
                                  least=STEPS * params, most=(STEPS + 1) * params))


#: ZeRO-1's communication: the updated parameters from their owners, by collectives in the
#: group given (the gradients' all-reduce is the check's own, as DDP's is).
SENT = (only("broadcast", "all_gather", "all_reduce"), groups(dp_group), Invariant(_sent))


class _Stepped(dict):
    """The torch optimizers that stepped, by id (torch's global step hook calls :meth:`saw`: a
    method, as every callback the student's code reaches is), and the state they hold."""

    def saw(self, optimizer, args, kwargs) -> None:
        self[id(optimizer)] = optimizer

    def held(self) -> int:
        """State elements (Adam's m and v, a momentum buffer; step counters aside)."""
        return sum(v.numel() for o in self.values() for state in o.state.values()
                   for k, v in state.items() if torch.is_tensor(v) and k != "step")


def _zero1_body(student_cls, c: Case, run):
    """Rank body: STEPS steps of the student's optimizer on this rank's slice, the gradients
    averaged first (sent back: the judge steps on them); the weights and the state held."""
    group, members, k = joined(c)
    model = MLP(list(c.sizes), seed=c.seeds[k])
    name, options, _ = OPTIMIZERS[c.optimizer]
    averaged, stepped = [], _Stepped()
    with register_optimizer_step_post_hook(stepped.saw):
        opt = run(student_cls, model.parameters(), getattr(torch.optim, name), group=group,
                  **options)
        for step in range(STEPS):
            model.zero_grad(set_to_none=True)
            batch = regression_batch(step, c.batch, c.sizes[0], c.sizes[-1], seed=c.seeds[k])
            model(*shard_batch(*batch, members.index(dist.get_rank()), len(members)))[1].backward()
            grads = [p.grad for p in model.parameters()]  # DDP's all-reduce, in one message
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat, group=group)
            averaged.append(flat.div_(len(members)).clone())
            for g, part in zip(grads, flat.split(c.numels)):
                g.copy_(part.view_as(g))
            run(opt.step)
    return {"weights": {n: p.detach().clone() for n, p in model.named_parameters()},
            "held": stepped.held(), "averaged": averaged}


def _expected(c: Case, k: int, averaged) -> dict:
    """Group ``k``'s weights after the unsharded optimizer's steps, in one process, on the
    gradients the group's ranks were given (float32 rounding would not survive Adam)."""
    model = MLP(list(c.sizes), seed=c.seeds[k])
    name, options, _ = OPTIMIZERS[c.optimizer]
    opt = getattr(torch.optim, name)(model.parameters(), **options)
    for flat in averaged:
        for p, part in zip(model.parameters(), flat.split(c.numels)):
            p.grad = part.view_as(p).clone()
        opt.step()
    return {n: p.detach() for n, p in model.named_parameters()}


def _judge_zero1(c: Case, values, traces) -> None:
    hold(SENT, c, traces)
    per = OPTIMIZERS[c.optimizer][2]  # state elements per parameter element
    for k, members in enumerate(c.groups):
        expected = _expected(c, k, values[members[0]]["averaged"])
        for rank in members:
            for name, value in expected.items():
                got = values[rank]["weights"][name]
                assert_close(value, got, rank=rank, what=text(
                    "checks_2_1.what_weight_after", steps=STEPS, name=name))
                if not torch.equal(got, values[members[0]]["weights"][name]):
                    raise ExerciseFailed(text("checks_2_1.not_bitwise_equal", rank=rank,
                                              first=members[0], name=name))
        # no more than the fullest rank of the statement's partition (partition_by_size's)
        most = per * max(sum(c.numels[i] for i in part)
                         for part in partition_by_size(c.numels, len(members)))
        full = per * sum(c.numels)
        held = [values[rank]["held"] for rank in members]
        for rank, n in zip(members, held):
            if n > most:
                raise ExerciseFailed(text("checks_2_1.state_not_sharded", rank=rank, held=n,
                                          most=most, full=full, g=len(members)))
        if not full <= sum(held) <= full + per * (len(members) - 1):  # padding allowed
            raise ExerciseFailed(text("checks_2_1.state_total", held=held, full=full))


def zero1_cases() -> list[Case]:
    """Shown: 2 ranks with Adam, 4 with SGD momentum; hidden (drawn): no even split of the
    parameters (on 2 or 4 ranks), and two pairs {0, 1}, {2, 3} (broadcast's src is global)."""
    draw = drawing(f"{TAG}/zero1")
    adam, sgd = dict(optimizer="adam"), dict(optimizer="sgd_momentum")
    return cases_of("zero1", [
        (msg("checks_2_1.case_zero1", n=1, world_size=2, optimizer="Adam", sizes=[8, 16, 4]),
         2, (8, 16, 4), 1, False, adam),
        (msg("checks_2_1.case_zero1", n=2, world_size=4, optimizer=msg("checks_2_1.sgd_momentum"),
             sizes=[8, 16, 4]), 4, (8, 16, 4), 1, False, sgd),
        # without a secret 57 parameters in tensors of 30, 6, 18, 3
        (msg("checks.case_hidden", n=1), 2 * draw(10, 1, 2, 1),
         (draw(11, 2, 9, 5), draw(12, 2, 9, 6), draw(13, 1, 6, 3)), 1, True, sgd),
        (msg("checks.case_hidden", n=2), 2 * draw(20, 1, 2, 2),
         (draw(21, 2, 9, 5), draw(22, 2, 9, 7), draw(23, 2, 9, 7), draw(24, 1, 6, 3)), 1, True,
         adam),
        (msg("checks.case_hidden", n=3), 4,
         (draw(31, 2, 9, 5), draw(32, 2, 9, 6), draw(33, 1, 6, 3)), 2, True, adam)])


#: ``id -> (cases, rank body, judge)`` (tests/catalog/test_secrets.py).
RANK_EXERCISES = {"ex2_1_zero1": (zero1_cases, _zero1_body, _judge_zero1)}


@graded("ex2_1_zero1")
def check_zero1(student_cls):
    """``student_cls(params, optimizer_class, group=None, **defaults)`` and its ``step()``:
    ZeRO-1, each rank holding and updating its own shard, then sending it to the others."""
    check_cases("ex2_1_zero1", student_cls, *RANK_EXERCISES["ex2_1_zero1"],
                timeout=CHECK_TIMEOUT, deadlock="checks_2_1.deadlock_collective")
