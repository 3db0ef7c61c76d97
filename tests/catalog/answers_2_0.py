"""Notebook 2.0's answers: rings that are not rings, all-reduces by another door, formulas
borrowed or off by a factor; and right answers written unusually."""

from tests.support.both_ways import Answer

RING, RS_AG, BYTES = "ex2_0_ring_all_reduce", "ex2_0_rs_ag_all_reduce", "ex2_0_ring_bytes"

WRONG = [
    Answer(RING, "dist.all_reduce instead of a ring", """
def my_ring_all_reduce(tensor):
    dist.all_reduce(tensor)
    return tensor
""", 0),
    Answer(RING, "the course's ring under another name", """
from labs.collectives import ring_all_reduce as helper
def my_ring_all_reduce(tensor):
    return helper(tensor)
""", 0),
    Answer(RING, "everyone sends everything to everyone", """
def my_ring_all_reduce(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    mine = tensor.clone()
    works, parts = [], []
    for p in range(n):
        if p != rank:
            buf = torch.empty_like(tensor)
            parts.append(buf)
            works += [dist.isend(mine, p), dist.irecv(buf, p)]
    for w in works:
        w.wait()
    for buf in parts:
        tensor.add_(buf)
    return tensor
""", 0),
    Answer(RING, "a ring that never waits for its sends", """
def my_ring_all_reduce(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = tensor.view(-1).tensor_split(n)
    right, left = (rank + 1) % n, (rank - 1) % n
    buffer = torch.empty_like(chunks[0])
    for step in range(n - 1):
        send, target = chunks[(rank - step) % n], chunks[(rank - step - 1) % n]
        incoming = buffer[: target.numel()]
        dist.isend(send.clone(), dst=right)
        dist.irecv(incoming, src=left).wait()
        target.add_(incoming)
    for step in range(n - 1):
        send, target = chunks[(rank - step + 1) % n], chunks[(rank - step) % n]
        dist.isend(send.clone(), dst=right)
        dist.irecv(target, src=left).wait()
    return tensor
""", 0),
    Answer(RING, "whole tensor around the ring, n-1 times", """
def my_ring_all_reduce(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % n, (rank - 1) % n
    passing = tensor.clone()
    total = tensor.clone()
    for step in range(n - 1):
        incoming = torch.empty_like(passing)
        works = [dist.irecv(incoming, src=left), dist.isend(passing, dst=right)]
        for w in works:
            w.wait()
        total += incoming
        passing = incoming
    tensor.copy_(total)
    return tensor
""", 0),
    Answer(RS_AG, "all_gather of the whole tensor and a local sum", """
def all_reduce_from_rs_ag(tensor):
    n = dist.get_world_size()
    flat = tensor.view(-1)
    everyone = flat.new_empty(n * flat.numel())
    dist.all_gather_single(everyone, flat.contiguous())
    shard = flat.new_empty(1)
    dist.reduce_scatter_single(shard, flat.new_zeros(n))
    flat.copy_(everyone.view(n, -1).sum(0))
    return tensor
""", 0),
    Answer(RS_AG, "dist.all_reduce after all", """
def all_reduce_from_rs_ag(tensor):
    dist.all_reduce(tensor)
    return tensor
""", 0),
    Answer(BYTES, "the course's formula", """
def ring_bytes_sent_per_rank(size_bytes, world_size):
    return cost.ring_all_reduce_bytes_per_rank(size_bytes, world_size)
""", 0),
    Answer(BYTES, "one pass of the ring only: (N-1)/N·S", """
def ring_bytes_sent_per_rank(size_bytes, world_size):
    return (world_size - 1) / world_size * size_bytes
""", 0),
    Answer(BYTES, "2·S, the whole tensor twice", """
def ring_bytes_sent_per_rank(size_bytes, world_size):
    return 2 * size_bytes
""", 0),
]

RIGHT = [
    Answer(BYTES, "an exact fractions.Fraction", """
from fractions import Fraction
def ring_bytes_sent_per_rank(size_bytes, world_size):
    return Fraction(2 * (world_size - 1), world_size) * size_bytes
"""),
    Answer(BYTES, "a numpy float", """
import numpy as np
def ring_bytes_sent_per_rank(size_bytes, world_size):
    return np.float64(2 * (world_size - 1) * size_bytes) / world_size
"""),
    Answer(RING, "a class whose instances are called", """
class Ring:
    def __call__(self, tensor):
        rank, n = dist.get_rank(), dist.get_world_size()
        chunks = list(tensor.view(-1).tensor_split(n))
        right, left = (rank + 1) % n, (rank - 1) % n
        for phase in ("reduce", "gather"):
            for step in range(n - 1):
                k = (rank - step + (phase == "gather")) % n
                j = (k - 1) % n
                incoming = torch.empty_like(chunks[j])
                ops = [dist.P2POp(dist.isend, chunks[k].contiguous(), right),
                       dist.P2POp(dist.irecv, incoming, left)]
                for w in dist.batch_isend_irecv(ops):
                    w.wait()
                if phase == "reduce":
                    chunks[j].add_(incoming)
                else:
                    chunks[j].copy_(incoming)
        return tensor
my_ring_all_reduce = Ring()
"""),
]
