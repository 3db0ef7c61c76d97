"""The check of notebook 2.1's 练习 6, ZeRO-1 by hand, on real ranks (served to the notebook by
labs.exercises.data_parallel_checks, whose module the notebook imports).

The student's optimizer class trains a small MLP for a few steps on 2 or 4 ranks (and on two
data-parallel pairs, a subgroup case); the check compares the weights with a plain optimizer's
and verifies the mechanism the statement asks for, on every rank:

- the optimizer state this rank holds, summed over EVERY optimizer alive in the rank (not only
  ``self.optim``: a second optimizer over the other parameters is counted too), covers only
  its shard, about 1/N of the full state, each parameter on exactly one rank, balanced;
- ``step()`` really communicates (a broadcast or another collective reaches the process group):
  updating every parameter locally from the averaged gradients keeps the replicas equal without
  sharding anything, and is refused;
- the ready-made sharded optimizers (torch's ZeroRedundancyOptimizer, the lab's) are refused.

Owns: 练习 6's cases and rank body. Must not: import the grader, print (the verdict is
labs.exercises.checks'), or keep process groups in globals.
"""
from __future__ import annotations

from labs.data import regression_batch, shard_batch
from labs.exercises import routes
from labs.exercises.checks import ExerciseFailed, assert_close, case, graded, msg
from labs.exercises.ranks import run_on_ranks
from labs.exercises.secret import hidden_int, hidden_seed
from labs.messages import text
from labs.models import MLP

__all__ = ["check_zero1", "CHECK_TIMEOUT"]

CHECK_TIMEOUT = 30.0  # seconds per launch; a correct solution needs well under 1 s
TAG = "2.1"  # the domain of 2.1's hidden seeds (as labs.exercises.data_parallel_checks)


def _seed(part: str, seed: int) -> int:
    """Seed ``seed`` of ``part``: itself without the instructor's secret, else drawn from it."""
    return hidden_seed(f"{TAG}/{part}", seed)


def _int(part: str, key: int, low: int, high: int, default):
    """A hidden case's number: ``default`` without the instructor's secret, else one in
    [low, high] drawn from it."""
    return type(default)(hidden_int(f"{TAG}/{part}", key, low, high, default))


# --- exercise 6: ZeRO-1 by hand, on real ranks -------------------------------------------

ZERO1_STEPS = 3
#: torch's and the lab's sharded optimizers: the exercise is to write one, not to call one.
_READY_MADE = (("torch.distributed.optim", "ZeroRedundancyOptimizer"),
               ("labs.data_parallel.zero", "ShardedOptimizer"),
               ("labs.data_parallel.zero_stages", "Zero2Optimizer"),
               ("labs.data_parallel.zero_stages", "Zero3Optimizer"))
#: Their modules: no function of theirs may run inside the exercise, by any route.
_READY_MODULES = ("torch.distributed.optim.zero_redundancy_optimizer", "labs.data_parallel.zero",
                  "labs.data_parallel.zero_stages")
_ZERO1_OPTIMIZERS = {"adam": ("torch.optim.Adam", dict(lr=1e-2)),
                     "sgd_momentum": ("torch.optim.SGD", dict(lr=0.05, momentum=0.9))}


def _optimizer(name):
    import torch

    cls_name, options = _ZERO1_OPTIMIZERS[name]
    return getattr(torch.optim, cls_name.rsplit(".", 1)[1]), dict(options)


class _refused:
    """Inside a rank: the ready-made sharded optimizers raise when constructed."""

    def __enter__(self):
        import importlib

        self.saved = []
        for module_name, name in _READY_MADE:
            cls = getattr(importlib.import_module(module_name), name)
            shown = f"{module_name}.{name}"

            def refuse(self_, *args, _shown=shown, **kwargs):
                raise ExerciseFailed(text("checks_2_1.ready_made_optimizer", shown=_shown))
            self.saved.append((cls, cls.__init__))
            cls.__init__ = refuse
        return self

    def __exit__(self, *exc):
        for cls, init in reversed(self.saved):
            cls.__init__ = init
        return False


def _zero1_batch(step, sizes, seed):
    return regression_batch(step, 8, sizes[0], sizes[-1], seed=seed)


def _zero1_on_rank(student_cls, sizes, optimizer, pairs, seeds):
    """Inside a rank: ZERO1_STEPS steps of the student's optimizer on this rank's data slice
    (gradients averaged over the group by the check; group k's model and data from seeds[k]);
    what it ended with."""
    import gc

    import torch
    import torch.distributed as dist

    group, pair = None, 0
    if pairs:  # data-parallel pairs {0, 1}, {2, 3}, each on its own data
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        pair = dist.get_rank() // 2
        group = groups[pair]
    seed = seeds[pair]
    rank, world_size = dist.get_rank(group), dist.get_world_size(group)
    model = MLP(sizes, seed=seed)
    params = list(model.parameters())
    cls, options = _optimizer(optimizer)
    calls: list = []
    with _refused(), routes.borrowed(_READY_MODULES) as seen:
        opt = student_cls(model.parameters(), cls, group=group, **options)
        for step in range(ZERO1_STEPS):
            for p in params:
                p.grad = None
            x, y = shard_batch(*_zero1_batch(step, sizes, seed), rank, world_size)
            model(x, y)[1].backward()
            for p in params:  # what DDP would do: the student's step() gets averaged gradients
                dist.all_reduce(p.grad, group=group)
                p.grad.div_(world_size)
            with routes.counting(calls):
                opt.step()
    if seen:  # reloaded, recompiled from its source, or reached under another name
        raise ExerciseFailed(text("checks_2_1.ready_made_optimizer", shown=seen[0]))
    index = {id(p): i for i, p in enumerate(params)}
    states = None
    # every optimizer alive in this rank, wherever the student keeps it (by type(o), not
    # isinstance: isinstance reads o.__class__, which warns on deprecated module attributes
    # such as torch.distributed.reduce_op, printing absolute paths into the notebook)
    for local in [o for o in gc.get_objects() if issubclass(type(o), torch.optim.Optimizer)]:
        states = {} if states is None else states
        for p, state in local.state.items():  # state elements per parameter (step counters aside)
            numel = sum(v.numel() for k, v in state.items() if torch.is_tensor(v) and k != "step")
            key = index.get(id(p), -1)
            states[key] = states.get(key, 0) + numel
    return dict(seed=seed, weights={n: p.detach().clone() for n, p in model.named_parameters()},
                states=states, numels=[p.numel() for p in params], calls=len(calls))


def _zero1_model(sizes, seed=0):
    return MLP(sizes, seed=seed)


def _zero1_expected(sizes, optimizer, seed):
    model = MLP(sizes, seed=seed)
    cls, options = _optimizer(optimizer)
    opt = cls(model.parameters(), **options)
    for step in range(ZERO1_STEPS):
        opt.zero_grad()
        model(*_zero1_batch(step, sizes, seed))[1].backward()
        opt.step()
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _greedy_max_load(numels, world_size):
    """The fullest rank's elements under the greedy rule (largest first, least loaded rank)."""
    loads = [0] * world_size
    for n in sorted(numels, reverse=True):
        loads[loads.index(min(loads))] += n
    return max(loads)


def _check_zero1_case(student_cls, world_size, sizes, optimizer, pairs, part="zero1"):
    import torch

    groups = [[0, 1], [2, 3]] if pairs else [list(range(world_size))]
    # group k trains on seed k; with the instructor's secret on one drawn from it
    seeds = tuple(_seed(part, k) for k in range(len(groups)))
    results = run_on_ranks(_zero1_on_rank, world_size,
                           (student_cls, sizes, optimizer, pairs, seeds), timeout=CHECK_TIMEOUT,
                           deadlock="checks_2_1.deadlock_broadcast")
    per_state = 2 if optimizer == "adam" else 1  # state elements per parameter element
    for seed, members in zip(seeds, groups):  # group k trains on seeds[k] (as _zero1_on_rank)
        expected = _zero1_expected(sizes, optimizer, seed)
        initial = dict(_zero1_model(sizes, seed).named_parameters())
        for rank in members:  # a parameter never updated here: its owner did not broadcast it
            for name, value in expected.items():
                got = results[rank]["weights"][name]
                if torch.equal(got, initial[name].detach()) and not torch.equal(got, value):
                    raise ExerciseFailed(text("checks_2_1.not_updated_here", rank=rank,
                                              name=name, steps=ZERO1_STEPS))
        for rank in members:
            for name, value in expected.items():
                got = results[rank]["weights"][name]
                assert_close(value, got,
                             what=text("checks_2_1.what_weight_after", steps=ZERO1_STEPS,
                                       name=name), rank=rank)
        for rank in members[1:]:
            for name, value in results[members[0]]["weights"].items():
                if not torch.equal(value, results[rank]["weights"][name]):
                    raise ExerciseFailed(text("checks_2_1.not_bitwise_equal", rank=rank,
                                              first=members[0], name=name))
        numels = [p.numel() for p in _zero1_model(sizes).parameters()]
        owners: dict = {}
        for rank in members:
            if len(members) > 1 and not results[rank]["calls"]:
                raise ExerciseFailed(text("checks_2_1.step_without_communication", rank=rank))
            states = results[rank]["states"]
            if states is None:
                raise ExerciseFailed(text("checks_2_1.no_local_optimizer", rank=rank))
            if -1 in states:
                raise ExerciseFailed(text("checks_2_1.foreign_tensor", rank=rank))
            held = sum(states.values())
            if held >= per_state * sum(numels):
                raise ExerciseFailed(text("checks_2_1.full_state", rank=rank, held=held,
                                          total=sum(numels)))
            for i in states:
                owners.setdefault(i, []).append(rank)
        shared = {i: r for i, r in owners.items() if len(r) > 1}
        if shared:
            i, ranks = next(iter(shared.items()))
            raise ExerciseFailed(text("checks_2_1.shared_owner", index=i, ranks=ranks))
        missing = [i for i in range(len(numels)) if i not in owners]
        if missing:
            raise ExerciseFailed(text("checks_2_1.no_owner", index=missing[0]))
        loads = [sum(numels[i] for i, r in owners.items() if r == [rank]) for rank in members]
        if max(loads) > _greedy_max_load(numels, len(members)):
            raise ExerciseFailed(text("checks_2_1.unbalanced", loads=loads))


def _zero1_cases() -> list:
    """(label, world size, sizes, optimizer, pairs, hidden): with the instructor's secret the
    hidden cases' widths, and the world size of the first two (2 or 4: the batch of 8 rows is
    split evenly), are drawn from it; every rank of a group still owns a tensor."""
    def draw(key, low, high, default):
        return _int("zero1", key, low, high, default)

    return [(msg("checks_2_1.case_zero1", n=1, world_size=2, optimizer="Adam", sizes=[8, 16, 4]),
             2, [8, 16, 4], "adam", False, False),
            (msg("checks_2_1.case_zero1", n=2, world_size=4,
                 optimizer=msg("checks_2_1.sgd_momentum"), sizes=[8, 16, 4]),
             4, [8, 16, 4], "sgd_momentum", False, False),
            # without a secret 57 parameters in tensors of 30, 6, 18, 3: no even split on 2 or
            # 4 ranks
            (msg("checks.case_hidden", n=1), 2 * draw(10, 1, 2, 1),
             [draw(11, 2, 9, 5), draw(12, 2, 9, 6), draw(13, 1, 6, 3)], "sgd_momentum", False,
             True),
            (msg("checks.case_hidden", n=2), 2 * draw(20, 1, 2, 2),
             [draw(21, 2, 9, 5), draw(22, 2, 9, 7), draw(23, 2, 9, 7), draw(24, 1, 6, 3)], "adam",
             False, True),
            # 4 ranks, two groups {0, 1} and {2, 3}: broadcast's src is a global rank
            (msg("checks.case_hidden", n=3), 4,
             [draw(31, 2, 9, 5), draw(32, 2, 9, 6), draw(33, 1, 6, 3)], "adam", True, True)]


@graded("ex2_1_zero1")
def check_zero1(student_cls):
    for n, (label, world_size, sizes, optimizer, pairs, hidden) in enumerate(_zero1_cases()):
        with case(label, hidden=hidden):
            _check_zero1_case(student_cls, world_size, sizes, optimizer, pairs,
                              part=f"zero1/case{n + 1}")
