"""Notebook 2.3's answers: the course's schedules, formulas and partition borrowed by any path,
orders that are another schedule, partitions that are balanced by another measure, executors
that do not pipeline; and right answers written unusually (generators, NamedTuples, an Enum, a
dataclass, exact fractions, a closed form, a binary search, numpy, a class, batch_isend_irecv)."""

from tests.support.both_ways import Answer

GPIPE, ONE_F_ONE_B, BUBBLE = "ex2_3_gpipe_order", "ex2_3_1f1b_order", "ex2_3_bubble"
MIN_M, PARTITION = "ex2_3_min_microbatches", "ex2_3_balanced_partition"
EXECUTOR, ZB = "ex2_3_1f1b_executor", "ex2_3_zb_h1_order"

# The reference executor (the solution cell's loop), its lines replaced by the wrong answers.
_EXECUTOR = '''
def my_1f1b_run(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
                group=None):
    stage, n_stages = dist.get_rank(group), dist.get_world_size(group)
    first, last = stage == 0, stage == n_stages - 1
    ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
    saved, sends, total = {}, [], 0.0
    for action in ORDER:
        mb = action.mb
        if action.kind == "F":
            if first:
                x = inputs[mb]
            else:
                x = torch.empty(activation_shape)
                dist.recv(x, src=ranks[stage - 1], group=group)
                x.requires_grad_()
            y = stage_module(x)
            if last:
                y = loss_fn(y, targets[mb]) / n_microbatches
                total += y.item()
            else:
                out = y.detach()
                sends.append((dist.isend(out, dst=ranks[stage + 1], group=group), out))
            saved[mb] = (x, y)
        else:
            x, y = saved.pop(mb)
            if last:
                y.backward()
            else:
                grad = torch.empty_like(y)
                dist.recv(grad, src=ranks[stage + 1], group=group)
                y.backward(grad)
            if not first:
                sends.append((dist.isend(x.grad, dst=ranks[stage - 1], group=group), x.grad))
    for work, _ in sends:
        work.wait()
    return total if last else None
'''
_1F1B = "pp.one_f_one_b_order(n_stages, n_microbatches, stage)"


def _executor(**changes) -> str:
    source = _EXECUTOR.replace("ORDER", changes.pop("order", _1F1B))
    for old, new in changes.values():
        assert old in source, old
        source = source.replace(old, new)
    return source


WRONG = [
    # --- the course's own answers, by any path ---
    Answer(GPIPE, "a bare return of pp.gpipe_order (NamedTuples)", """
def my_gpipe_order(n_stages, n_microbatches, stage):
    return pp.gpipe_order(n_stages, n_microbatches, stage)
""", 0),
    Answer(ONE_F_ONE_B, "1F1B read off the course's ZB-H1 order", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    return [str(a) for a in pp.zb_h1_order(n_stages, n_microbatches, stage) if a.kind != "W"]
""", 0),
    Answer(ONE_F_ONE_B, "the course's full schedule, compute actions kept", """
from labs.pipeline.schedules import build_schedule
def my_1f1b_order(n_stages, n_microbatches, stage):
    return [str(a) for a in build_schedule("1f1b", n_stages, n_microbatches)[stage]
            if a.kind in ("F", "B")]
""", 0),
    Answer(BUBBLE, "pp.bubble_fraction", """
def my_bubble_fraction(p, m):
    return pp.bubble_fraction(p, m)
""", 0),
    Answer(BUBBLE, "the course's ZB-H1 bubble with t_W = 0", """
def my_bubble_fraction(p, m):
    return cost.zb_h1_bubble_fraction(p, m, 1.0, 1.0, 0.0)
""", 0),
    Answer(BUBBLE, "the simulator's idle share of a GPipe schedule", """
def my_bubble_fraction(p, m):
    from labs.pipeline import simulator
    orders = [[pp.Action(k, i, s) for k in "FB" for i in range(m)] for s in range(p)]
    return max(simulator.simulate(pp.add_communication(orders, p)).idle_fraction())
""", 0),
    Answer(MIN_M, "pp.min_microbatches", """
def my_min_microbatches(p, target):
    return pp.min_microbatches(p, target)
""", 0),
    Answer(PARTITION, "pp.balanced_partition", """
def my_balanced_partition(costs, n_stages):
    return pp.balanced_partition(costs, n_stages)
""", 0),
    Answer(EXECUTOR, "the course's executor", """
def my_1f1b_run(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
                group=None):
    n_stages, stage = dist.get_world_size(group), dist.get_rank(group)
    schedule = pp.build_schedule("1f1b", n_stages, n_microbatches)
    return pp.run_schedule(schedule, {stage: stage_module}, inputs=inputs, targets=targets,
                           loss_fn=loss_fn, activation_shape=activation_shape, group=group)
""", 0),
    Answer(EXECUTOR, "the course's three-loop 1F1B (labs.pipeline.one_f_one_b)", """
def my_1f1b_run(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
                group=None):
    from labs.pipeline import one_f_one_b as loops
    losses = loops.train_step_1f1b(stage_module, inputs, targets, loss_fn, n_microbatches,
                                   activation_shape, group)
    return sum(loss.item() for loss in losses) / n_microbatches if losses else None
""", 0),
    Answer(EXECUTOR, "torch's own 1F1B (torch.distributed.pipelining)", """
def my_1f1b_run(stage_module, inputs, targets, loss_fn, n_microbatches, activation_shape,
                group=None):
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B
    stage, n_stages = dist.get_rank(group), dist.get_world_size(group)
    piped = PipelineStage(stage_module, stage, n_stages, torch.device("cpu"), group=group,
                          input_args=torch.empty(activation_shape))
    schedule = Schedule1F1B(piped, n_microbatches, loss_fn=loss_fn)
    losses = []
    if stage == 0:
        schedule.step(torch.cat(inputs))
    elif stage == n_stages - 1:
        schedule.step(target=torch.cat(targets), losses=losses)
    else:
        schedule.step()
    return sum(l.item() for l in losses) / n_microbatches if losses else None
""", 0),
    Answer(ZB, "pp.zb_h1_order", """
def my_zb_h1_order(n_stages, n_microbatches, stage):
    return [f"{a.kind}{a.mb}" for a in pp.zb_h1_order(n_stages, n_microbatches, stage)]
""", 0),
    # --- another schedule ---
    Answer(GPIPE, "backwards in reverse micro-batch order", """
def my_gpipe_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    return [f"F{i}" for i in range(m)] + [f"B{i}" for i in reversed(range(m))]
""", 0),
    Answer(ONE_F_ONE_B, "a warm-up of p - s - 1 forwards, never cut to m", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    m, warmup = n_microbatches, n_stages - stage - 1
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}"]
    return order + [f"B{i}" for i in range(m - warmup, m)]
""", 0),
    Answer(ONE_F_ONE_B, "stage 0's order on every stage", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - 1, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}"]
    return order + [f"B{i}" for i in range(m - warmup, m)]
""", 0),
    Answer(ONE_F_ONE_B, "one forward too many in the warm-up (p - s)", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}"]
    return order + [f"B{i}" for i in range(m - warmup, m)]
""", 0),
    Answer(ONE_F_ONE_B, "GPipe's order", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    return [f"{k}{i}" for k in "FB" for i in range(n_microbatches)]
""", 0),
    Answer(BUBBLE, "PTD-P's ratio (p-1)/m, not the idle share", """
def my_bubble_fraction(p, m):
    return (p - 1) / m
""", 0),
    Answer(BUBBLE, "a percentage", """
def my_bubble_fraction(p, m):
    return 100 * (p - 1) / (m + p - 1)
""", 0),
    Answer(MIN_M, "a closed form without max(1, ...)", """
import math
def my_min_microbatches(p, target):
    return math.ceil((p - 1) * (1 - target) / target)
""", 0),
    Answer(MIN_M, "stops only below the target (>=)", """
def my_min_microbatches(p, target):
    m = 1
    while (p - 1) / (m + p - 1) >= target:
        m += 1
    return m
""", 0),
    Answer(PARTITION, "a DP minimising the sum of squares", """
def my_balanced_partition(costs, n_stages):
    n = len(costs)
    best = {(0, 0): (0, None)}
    for k in range(1, n_stages + 1):
        for i in range(k, n - (n_stages - k) + 1):
            best[(i, k)] = min((best[(j, k - 1)][0] + sum(costs[j:i]) ** 2, j)
                               for j in range(k - 1, i) if (j, k - 1) in best)
    bounds, i = [], n
    for k in range(n_stages, 0, -1):
        j = best[(i, k)][1]
        bounds.append((j, i))
        i = j
    return bounds[::-1]
""", 0),
    Answer(PARTITION, "a greedy fill up to the mean", """
def my_balanced_partition(costs, n_stages):
    n, target = len(costs), sum(costs) / n_stages
    bounds, start = [], 0
    for s in range(n_stages - 1):
        acc, i = costs[start], start + 1
        while i < n - (n_stages - s - 1) and acc + costs[i] <= target:
            acc, i = acc + costs[i], i + 1
        bounds.append((start, i))
        start = i
    return bounds + [(start, n)]
""", 0),
    Answer(PARTITION, "even by layer count", """
def my_balanced_partition(costs, n_stages):
    return [(s * len(costs) // n_stages, (s + 1) * len(costs) // n_stages)
            for s in range(n_stages)]
""", 0),
    Answer(PARTITION, "(start, last) instead of (start, stop)", """
def my_balanced_partition(costs, n_stages):
    return [(s * len(costs) // n_stages, (s + 1) * len(costs) // n_stages - 1)
            for s in range(n_stages)]
""", 0),
    Answer(EXECUTOR, "F_i then B_i, micro-batch after micro-batch (no pipelining)", _executor(
        order="[a for i in range(n_microbatches) for a in (pp.Action('F', i, stage), "
              "pp.Action('B', i, stage))]"), 0),
    Answer(EXECUTOR, "stage 0's 1F1B order on every stage", _executor(
        order="pp.one_f_one_b_order(n_stages, n_microbatches, 0)"), 0),
    Answer(EXECUTOR, "the loss not divided by the micro-batches", _executor(
        loss=("y = loss_fn(y, targets[mb]) / n_microbatches", "y = loss_fn(y, targets[mb])")),
        0),
    Answer(EXECUTOR, "the sends never waited for", _executor(
        wait=("        work.wait()", "        pass")), 0),
    Answer(EXECUTOR, "the loss broadcast to every stage (a collective)", _executor(
        ret=("    return total if last else None",
             "    loss = torch.tensor([total])\n"
             "    dist.broadcast(loss, src=ranks[-1], group=group)\n"
             "    return loss.item() if last else None")), 0),
    Answer(EXECUTOR, "group ranks as send/recv peers", _executor(
        ranks=("ranks = dist.get_process_group_ranks(group or dist.group.WORLD)",
               "ranks = list(range(n_stages))")), 0),
    Answer(ZB, "1F1B's order unchanged (no W)", """
def my_zb_h1_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}"]
    return order + [f"B{i}" for i in range(m - warmup, m)]
""", 0),
    Answer(ZB, "every W right after its B (nothing owed)", """
def my_zb_h1_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}", f"W{k}"]
    return order + [a for i in range(m - warmup, m) for a in (f"B{i}", f"W{i}")]
""", 0),
    Answer(ZB, "a W before its own B", """
def my_zb_h1_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"W{k}", f"B{k}"]
    return order + [a for i in range(m - warmup, m) for a in (f"W{i}", f"B{i}")]
""", 0),
    Answer(ZB, "stage 0's order on every stage", """
def my_zb_h1_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - 1, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"F{warmup + k}", f"B{k}", f"W{k}"]
    return order + [a for i in range(m - warmup, m) for a in (f"B{i}", f"W{i}")]
""", 0),
]

RIGHT = [
    Answer(GPIPE, "a generator", """
def my_gpipe_order(n_stages, n_microbatches, stage):
    for kind in "FB":
        for i in range(n_microbatches):
            yield f"{kind}{i}"
"""),
    Answer(GPIPE, "its own NamedTuple actions", """
from typing import NamedTuple
class Step(NamedTuple):
    kind: str
    mb: int
def my_gpipe_order(n_stages, n_microbatches, stage):
    return [Step(k, i) for k in "FB" for i in range(n_microbatches)]
"""),
    Answer(ONE_F_ONE_B, "an Enum for the kinds, (kind, mb) tuples", """
import enum
class Kind(enum.Enum):
    FORWARD = "F"
    BACKWARD = "B"
def my_1f1b_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    fwd = [(Kind.FORWARD, i) for i in range(m)]
    bwd = [(Kind.BACKWARD, i) for i in range(m)]
    steady = [a for pair in zip(fwd[warmup:], bwd) for a in pair]
    return fwd[:warmup] + steady + bwd[m - warmup:]
"""),
    Answer(ONE_F_ONE_B, "the course's Action NamedTuple, built by hand", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    order = [pp.Action("F", i, stage) for i in range(warmup)]
    for k in range(m - warmup):
        order += [pp.Action("F", warmup + k, stage), pp.Action("B", k, stage)]
    return order + [pp.Action("B", i, stage) for i in range(m - warmup, m)]
"""),
    Answer(ONE_F_ONE_B, "torch's count: p - s warm-up forwards, then B before F", """
def my_1f1b_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage, m)
    order = [f"F{i}" for i in range(warmup)]
    for k in range(m - warmup):
        order += [f"B{k}", f"F{warmup + k}"]
    return order + [f"B{i}" for i in range(m - warmup, m)]
"""),
    Answer(BUBBLE, "an exact Fraction", """
from fractions import Fraction
def my_bubble_fraction(p, m):
    return Fraction(p - 1, m + p - 1)
"""),
    Answer(MIN_M, "a closed form in exact fractions", """
import math
from fractions import Fraction
def my_min_microbatches(p, target):
    t = Fraction(target)
    return max(1, math.ceil((p - 1) * (1 - t) / t))
"""),
    Answer(PARTITION, "a binary search over the stage costs that can occur", """
def my_balanced_partition(costs, n_stages):
    def stages_needed(cap):
        used, acc = 1, 0
        for c in costs:
            used, acc = (used + 1, c) if acc + c > cap else (used, acc + c)
        return used
    n = len(costs)
    caps = sorted({sum(costs[a:b]) for a in range(n) for b in range(a + 1, n + 1)
                   if sum(costs[a:b]) >= max(costs)})
    low, high = 0, len(caps) - 1
    while low < high:  # the least cap that n_stages stages can keep to
        mid = (low + high) // 2
        low, high = (low, mid) if stages_needed(caps[mid]) <= n_stages else (mid + 1, high)
    bounds, start, acc = [], 0, 0
    for i, c in enumerate(costs):
        if i > start and (acc + c > caps[low] or n - i == n_stages - len(bounds) - 1):
            bounds.append((start, i))
            start, acc = i, 0
        acc += c
    return bounds + [(start, n)]
"""),
    Answer(PARTITION, "a numpy DP, numpy integers in the pairs", """
import numpy as np
def my_balanced_partition(costs, n_stages):
    n = len(costs)
    prefix = np.concatenate([[0.0], np.cumsum(costs)])
    best = np.full((n_stages + 1, n + 1), np.inf)
    cut = np.zeros((n_stages + 1, n + 1), dtype=np.int64)
    best[0, 0] = 0.0
    for k in range(1, n_stages + 1):
        for i in range(k, n + 1):
            j = np.arange(k - 1, i)
            worst = np.maximum(best[k - 1, j], prefix[i] - prefix[j])
            best[k, i], cut[k, i] = worst.min(), j[worst.argmin()]
    bounds, i = [], np.int64(n)
    for k in range(n_stages, 0, -1):
        bounds.append((cut[k, i], i))
        i = cut[k, i]
    return bounds[::-1]
"""),
    Answer(EXECUTOR, "a class, with batch_isend_irecv", """
class OneFOneB:
    def __call__(self, stage_module, inputs, targets, loss_fn, n_microbatches,
                 activation_shape, group=None):
        self.stage, p = dist.get_rank(group), dist.get_world_size(group)
        self.ranks = dist.get_process_group_ranks(group or dist.group.WORLD)
        self.group, self.works, kept, total = group, [], {}, 0.0
        warmup = min(p - self.stage - 1, n_microbatches)
        steps = [("F", i) for i in range(warmup)]
        for k in range(n_microbatches - warmup):
            steps += [("F", warmup + k), ("B", k)]
        steps += [("B", i) for i in range(n_microbatches - warmup, n_microbatches)]
        for kind, mb in steps:
            if kind == "F":
                x = inputs[mb] if self.stage == 0 else self.receive(activation_shape, -1)
                y = stage_module(x)
                if self.stage == p - 1:
                    y = loss_fn(y, targets[mb]) / n_microbatches
                    total += float(y)
                else:
                    self.send(y.detach(), +1)
                kept[mb] = (x, y)
            else:
                x, y = kept.pop(mb)
                if self.stage == p - 1:
                    y.backward()
                else:
                    y.backward(self.receive(y.shape, +1))
                if self.stage > 0:
                    self.send(x.grad, -1)
        for work in self.works:
            work.wait()
        return total if self.stage == p - 1 else None

    def receive(self, shape, side):
        buffer = torch.empty(shape)
        op = dist.P2POp(dist.irecv, buffer, self.ranks[self.stage + side], self.group)
        for work in dist.batch_isend_irecv([op]):
            work.wait()
        return buffer.requires_grad_() if side < 0 else buffer

    def send(self, tensor, side):
        op = dist.P2POp(dist.isend, tensor, self.ranks[self.stage + side], self.group)
        self.works += dist.batch_isend_irecv([op])

my_1f1b_run = OneFOneB()
"""),
    Answer(ZB, "a generator of dataclass actions", """
from dataclasses import dataclass
@dataclass(frozen=True)
class Act:
    kind: str
    mb: int
def my_zb_h1_order(n_stages, n_microbatches, stage):
    m = n_microbatches
    warmup = min(n_stages - stage - 1, m)
    owed = []
    yield from (Act("F", i) for i in range(warmup))
    for i in range(m):
        if i + warmup < m:
            yield Act("F", i + warmup)
        yield Act("B", i)
        owed.append(i)
        if i >= stage:
            yield Act("W", owed.pop(0))
    yield from (Act("W", i) for i in owed)
"""),
]
