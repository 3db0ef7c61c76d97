"""What each rank did while a student's code ran: its communication and its matrix products.

A check runs the student's code on its ranks inside :func:`watching`, which records, whatever
route the code took (``dist.*``, a process group's methods, the functional collectives,
DTensor, a course helper -- one ``TorchDispatchMode`` sees every operator):

- every collective and send/recv (:class:`Comm`): which, over which group (global ranks), with
  which peer or root, how many bytes, the reduction, forward or backward pass, waited or not;
- every matrix product (:class:`Product`): operand shapes and FLOPs (``FlopCounterMode``'s
  formulas), forward or backward;
- marks the check adds (a pipeline stage's F and B) and the warnings torch gave.

While an operation blocks, the rank's note (``labs.runtime.rank.note``) names it, so a deadlock
names every rank's pending operation. The trace comes back as plain data (:meth:`Trace.as_data`),
which the grader records and replays; :mod:`labs.exercises.invariants` reads it.

Owns: recording. Must not: judge what it recorded, print, or import torch at module level (the
forkserver preloads this module; torch comes with the rank).
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import astuple, dataclass, field, replace

__all__ = ["Comm", "Product", "Trace", "watching", "current", "wire_bytes", "before_comm"]

_CANONICAL = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
              "reduce", "gather", "scatter", "barrier", "send", "recv")


def _canonical(name: str) -> str | None:
    """The operation an operator of ``torch.ops.c10d`` / ``torch.ops._c10d_functional`` runs
    (``_allgather_base_`` -> all_gather), or None for one that communicates nothing."""
    name = name.strip("_").replace("allreduce", "all_reduce").replace(
        "allgather", "all_gather").replace("alltoall", "all_to_all")
    return next((op for op in _CANONICAL if name.startswith(op)), None)


_REDUCTIONS = {0: "sum", 1: "avg", 2: "product", 3: "min", 4: "max", 5: "band", 6: "bor",
               7: "bxor", 8: "premul_sum"}
_PRODUCTS = ("mm", "addmm", "bmm", "baddbmm", "_scaled_dot_product_flash_attention",
             "_scaled_dot_product_efficient_attention", "convolution")


@dataclass(frozen=True)
class Comm:
    """One communication of a rank. ``size``: bytes of the whole tensor it is about (the
    gathered output, the input scattered, what a send/recv moved); ``peer``: the other rank of
    a send/recv, the root of a broadcast/reduce/gather/scatter (global ranks)."""
    seq: int
    op: str
    group: tuple
    peer: int | None
    size: int
    shape: tuple
    reduce: str | None
    backward: bool
    waited: bool

    @property
    def wire(self) -> float:
        """Bytes this rank puts on the wire for it (:func:`wire_bytes`)."""
        return wire_bytes(self.op, self.size, len(self.group))

    def describe(self) -> str:
        """``send to rank 2 (1024 B)`` / ``all_reduce over [0, 1] (64 B)``, for messages."""
        if self.op in ("send", "recv"):
            return f"{self.op} {'to' if self.op == 'send' else 'from'} rank {self.peer} " \
                   f"({self.size} B)"
        return f"{self.op} over {list(self.group)} ({self.size} B)"


@dataclass(frozen=True)
class Product:
    """One matrix product (attention, convolution) of a rank: operand shapes, FLOPs, pass."""
    seq: int
    op: str
    shapes: tuple
    flops: int
    backward: bool


def wire_bytes(op: str, size: int, group_size: int) -> float:
    """Bytes one rank sends for ``op`` on ``size`` bytes in a group of ``group_size`` (the ring
    algorithms the course teaches; a send sends its size, a receive nothing)."""
    g = max(1, group_size)
    if op == "all_reduce":
        return 2 * (g - 1) / g * size
    if op in ("all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"):
        return (g - 1) / g * size
    if op in ("broadcast", "reduce"):
        return size if g > 1 else 0
    return size if op == "send" else 0


@dataclass
class Trace:
    """What one rank did: built by :func:`watching`, read back by :meth:`from_data`."""
    rank: int = 0
    comms: list = field(default_factory=list)
    products: list = field(default_factory=list)
    marks: list = field(default_factory=list)  # (seq, kind, value)
    warnings: list = field(default_factory=list)
    _seq: int = 0

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def mark(self, kind: str, value=None) -> None:
        """Add a mark of the check's own (``trace.mark("F", 3)``) to the sequence."""
        self.marks.append((self._next(), str(kind), value))

    # --- reading ---
    def ops(self, op: str | None = None, *, backward: bool | None = None) -> list:
        """The communication operations (of kind ``op``; of one pass), in order."""
        return [c for c in self.comms if (op is None or c.op == op)
                and (backward is None or c.backward == backward)]

    def flops(self, *, backward: bool | None = None) -> int:
        return sum(p.flops for p in self.products if backward is None or p.backward == backward)

    def phase(self, comm: Comm) -> str:
        """'forward', 'backward', or 'after' the backward pass (no backward product follows)."""
        if comm.backward:
            return "backward"
        last = max((p.seq for p in self.products if p.backward), default=0)
        return "after" if comm.seq > last else "forward"

    def pending(self) -> list:
        """Operations whose ``Work`` was never waited for."""
        return [c for c in self.comms if not c.waited]

    def sequence(self, kinds=None) -> list:
        """The marks' ``(kind, value)`` in order (only ``kinds`` when given)."""
        return [(k, v) for _, k, v in self.marks if kinds is None or k in kinds]

    def as_data(self) -> dict:
        return {"rank": self.rank, "comms": [astuple(c) for c in self.comms],
                "products": [astuple(p) for p in self.products], "marks": list(self.marks),
                "warnings": list(self.warnings)}

    @classmethod
    def from_data(cls, data: dict) -> "Trace":
        def tup(v):
            return tuple(tup(x) for x in v) if isinstance(v, (list, tuple)) else v
        return cls(rank=int(data["rank"]), comms=[Comm(*tup(c)) for c in data["comms"]],
                   products=[Product(*tup(p)) for p in data["products"]],
                   marks=[tuple(m) for m in data["marks"]], warnings=list(data["warnings"]))


_current: list = []


def current() -> Trace | None:
    """The trace being recorded on this rank now (a check's stage wrapper marks on it), or None."""
    return _current[-1] if _current else None


def _nbytes(value) -> tuple[int, tuple]:
    """(bytes, shape of the first tensor) of a tensor or a (nested) list of tensors."""
    if hasattr(value, "element_size"):
        return value.numel() * value.element_size(), tuple(value.shape)
    found = [_nbytes(v) for v in value] if isinstance(value, (list, tuple)) else []
    return sum(n for n, _ in found), next((s for _, s in found), ())


class _Recorder:
    """The dispatch mode's bookkeeping: operator -> Comm / Product, Work -> waited."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.works: dict = {}  # id(Work) -> (index in trace.comms, the Work kept alive)
        self.functional: dict = {}  # id(output tensor) -> index in trace.comms

    def comm(self, name: str, args, kwargs, out) -> None:
        import torch
        import torch.distributed as dist
        from torch._C._distributed_c10d import ProcessGroup, Work

        op = _canonical(name)
        group = peer = reduce = None
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, torch.ScriptObject):
                kind = str(a._type())
                if kind.endswith("ProcessGroup"):
                    group = ProcessGroup.unbox(a)
                elif kind.endswith("ReduceOp"):
                    reduce = _REDUCTIONS.get(int(a.op()), "other")
            elif isinstance(a, str) and group is None and op != "barrier":
                with contextlib.suppress(Exception):  # a functional collective names its group
                    from torch.distributed.distributed_c10d import _resolve_process_group
                    group = _resolve_process_group(a)
        if group is None and name in ("all_reduce", "all_reduce_", "reduce_scatter_tensor") and \
                len(args) > 1 and isinstance(args[1], str):
            reduce = args[1].lower()
        members = tuple(dist.get_process_group_ranks(group)) if group is not None else ()
        tensors = [a for a in args if isinstance(a, (torch.Tensor, list, tuple))]
        size, shape = self._size(op, name, tensors, len(members) or 1)
        if op in ("send", "recv", "broadcast", "reduce", "gather", "scatter") and ints:
            local = ints[0]
            peer = members[local] if 0 <= local < len(members) else local
        work = out[-1] if isinstance(out, (tuple, list)) and out else out
        waited = not isinstance(work, torch.ScriptObject)  # functional: see wait_tensor
        comm = Comm(self.trace._next(), op, members, peer, size, shape, reduce,
                    torch._C._current_autograd_node() is not None, waited)
        index = len(self.trace.comms)
        self.trace.comms.append(comm)
        if isinstance(work, torch.ScriptObject):
            w = Work.unbox(work)
            self.works[id(w)] = (index, w)
        elif isinstance(out, torch.Tensor):
            self.functional[id(out)] = index

    @staticmethod
    def _size(op, name, tensors, g) -> tuple[int, tuple]:
        """Bytes of the whole tensor: a functional all-gather's input times the group; the
        input of a c10d reduce-scatter or all-to-all (second); else the first tensor."""
        if not tensors:
            return 0, ()
        if name in ("all_gather_into_tensor", "all_gather_into_tensor_coalesced"):
            n, s = _nbytes(tensors[0])
            return n * g, s
        second = op in ("reduce_scatter", "all_to_all") and len(tensors) > 1 and \
            not name.startswith(("reduce_scatter_tensor", "all_to_all_single"))
        return _nbytes(tensors[1] if second else tensors[0])

    def waited(self, work=None, tensor=None) -> None:
        """The operation of ``work`` (or a functional collective's output ``tensor``) waited."""
        index = (self.works.get(id(work), (None,))[0] if tensor is None
                 else self.functional.pop(id(tensor), None))
        if index is not None:
            self.trace.comms[index] = replace(self.trace.comms[index], waited=True)

    def product(self, func, args, kwargs, out) -> None:
        import torch
        from torch.utils.flop_counter import flop_registry

        packet = func._overloadpacket
        flops = 0
        if packet in flop_registry:
            with contextlib.suppress(Exception):
                flops = int(flop_registry[packet](*args, **kwargs, out_val=out))
        shapes = tuple(tuple(a.shape) for a in args if isinstance(a, torch.Tensor))
        self.trace.products.append(Product(self.trace._next(), packet.__name__, shapes, flops,
                                           torch._C._current_autograd_node() is not None))


def _mode(recorder: _Recorder):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Watching(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            namespace, name = func.namespace, func._overloadpacket.__name__
            op = _canonical(name) if namespace in ("c10d", "_c10d_functional") else None
            if op is not None:
                for check in _before:
                    check(op, args)
                out = func(*args, **kwargs)
                recorder.comm(name, args, kwargs, out)
                return out
            out = func(*args, **kwargs)
            if namespace == "_c10d_functional" and name == "wait_tensor" and args:
                recorder.waited(tensor=args[0])
            elif namespace == "aten" and name in _PRODUCTS:
                recorder.product(func, args, kwargs, out)
            return out
    return Watching()


_prefix: list = []
_before: list = []


@contextlib.contextmanager
def before_comm(check):
    """While recording, ``check(op, args)`` sees every communication operator's arguments
    before it runs (and may raise: a gloo receive of another dtype aborts the process)."""
    _before.append(check)
    try:
        yield
    finally:
        _before.remove(check)


def _note(words: str | None) -> None:
    """The rank's note: the block's own (the case), then what blocks now (``words``)."""
    # why here: labs.runtime.rank imports torch, which this module leaves to the rank
    from labs.runtime import rank

    head = _prefix[-1] if _prefix else ""
    rank.note(" · ".join(w for w in (head, words) if w) or None)


@contextlib.contextmanager
def _works_followed(recorder: _Recorder):
    """``Work.wait`` (and a true ``is_completed``) mark the operation waited; while a wait
    blocks, the rank's note names the operation."""
    from torch._C._distributed_c10d import Work

    wait, completed = Work.wait, Work.is_completed

    def traced_wait(self, *args, **kwargs):
        found = recorder.works.get(id(self))
        if found is not None:
            comm = recorder.trace.comms[found[0]]
            _note(f"#{comm.seq} {comm.describe()}")
        try:
            return wait(self, *args, **kwargs)
        finally:
            _note(None)
            recorder.waited(self)

    def traced_completed(self):
        done = completed(self)
        if done:
            recorder.waited(self)
        return done

    Work.wait, Work.is_completed = traced_wait, traced_completed
    try:
        yield
    finally:
        Work.wait, Work.is_completed = wait, completed


@contextlib.contextmanager
def watching(trace: Trace | None = None, *, note: str = ""):
    """Record what this rank does in the ``with`` block, into ``trace`` (a new one by default);
    yields the :class:`Trace`. ``note``: what the rank's note says while nothing blocks (the
    case being run), put before what a blocked operation adds."""
    import torch.distributed as dist

    if trace is None:
        trace = Trace(rank=dist.get_rank() if dist.is_initialized() else 0)
    _prefix.append(note)
    _note(None)
    recorder = _Recorder(trace)
    _current.append(trace)
    try:
        with warnings.catch_warnings(record=True) as caught, _works_followed(recorder), \
                _mode(recorder):
            warnings.simplefilter("always")
            yield trace
    finally:
        _current.pop()
        _prefix.pop()
        _note(None)
        for w in caught:
            line = f"{w.category.__name__}: {w.message}"
            if line not in trace.warnings:
                trace.warnings.append(line)
