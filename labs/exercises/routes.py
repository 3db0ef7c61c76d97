"""Inside a rank: refuse every route to a ready-made collective, and record point-to-point traffic.

A build exercise ("write the ring yourself") must not reach a collective by another door than
``dist.<name>``: the same function in ``torch.distributed.distributed_c10d`` (or a reloaded
copy of that module), a ``ProcessGroup`` method (``dist.group.WORLD.allreduce``), an operator
of ``torch.ops.c10d`` / ``torch.ops._c10d_functional``, or the functional collectives
(``torch.distributed._functional_collectives``, ``torch.distributed.nn.functional``).
:func:`guarded` closes all of them for the duration of a ``with`` block, except those the
exercise names as allowed, and records every send and receive (peer, bytes) that reaches the
process group, whatever function the student called (``isend``, ``send``, ``P2POp``,
``batch_isend_irecv``, or the group's own ``send``/``recv``).

This module only guards and records; what a check concludes from the traffic (a ring talks to
its two neighbours only, 2(N-1)/N·S bytes per rank) is decided by the check that uses it.
It must not import torch at module level (the forkserver preloads it; torch comes with the rank).
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field

__all__ = ["Traffic", "guarded", "entered", "counting", "borrowed", "COLLECTIVES"]

#: The collectives of ``torch.distributed`` (module functions) an exercise may refuse.
COLLECTIVES = ("all_reduce", "all_reduce_coalesced", "reduce", "broadcast", "all_gather",
               "all_gather_single", "all_gather_into_tensor", "all_gather_coalesced",
               "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor",
               "all_to_all", "all_to_all_single", "gather", "scatter", "broadcast_object_list",
               "all_gather_object", "gather_object", "scatter_object_list")

# ProcessGroup methods (C++) that run a collective; the module function each one serves.
_GROUP_METHODS = {
    "allreduce": "all_reduce", "allreduce_coalesced": "all_reduce_coalesced",
    "reduce": "reduce", "broadcast": "broadcast", "allgather": "all_gather",
    "allgather_coalesced": "all_gather", "allgather_into_tensor_coalesced": "all_gather",
    "_allgather_base": "all_gather_into_tensor", "all_gather_single": "all_gather_single",
    "all_gather_single_coalesced": "all_gather_single", "reduce_scatter": "reduce_scatter",
    "_reduce_scatter_base": "reduce_scatter_tensor",
    "reduce_scatter_single": "reduce_scatter_single",
    "reduce_scatter_single_coalesced": "reduce_scatter_single",
    "reduce_scatter_tensor_coalesced": "reduce_scatter_tensor", "alltoall": "all_to_all",
    "alltoall_base": "all_to_all_single", "all_to_all_single": "all_to_all_single",
    "gather": "gather", "scatter": "scatter"}

# Operators of torch.ops that run a collective.
_OPS = {"c10d": ("allreduce_", "allreduce_coalesced_", "allgather_", "_allgather_base_",
                 "allgather_coalesced_", "allgather_into_tensor_coalesced_", "reduce_scatter_",
                 "_reduce_scatter_base_", "reduce_scatter_tensor_coalesced_", "reduce_",
                 "broadcast_", "alltoall_", "alltoall_base_", "gather_", "scatter_"),
        "_c10d_functional": ("all_reduce", "all_reduce_", "all_reduce_coalesced",
                             "all_reduce_coalesced_", "all_gather_into_tensor",
                             "all_gather_into_tensor_coalesced", "all_gather_into_tensor_out",
                             "reduce_scatter_tensor", "reduce_scatter_tensor_coalesced",
                             "all_to_all_single", "broadcast", "broadcast_")}

# Modules whose public functions are collectives by another name.
_FUNCTIONAL = ("torch.distributed._functional_collectives", "torch.distributed.nn.functional")


@dataclass
class Traffic:
    """What this rank sent and received through its process groups: ``(peer, bytes)`` pairs,
    the peer as a global rank."""
    sent: list = field(default_factory=list)
    received: list = field(default_factory=list)

    @property
    def bytes_sent(self) -> int:
        return sum(size for _, size in self.sent)

    @property
    def peers(self) -> set:
        return {peer for peer, _ in self.sent} | {peer for peer, _ in self.received}


def _global_rank(group, group_rank: int) -> int:
    import torch.distributed as dist

    try:
        return dist.get_global_rank(group, group_rank)
    except (ValueError, RuntimeError):  # the default group: group ranks are global ranks
        return group_rank


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


@contextlib.contextmanager
def guarded(refuse, *, allowed=(), traffic: Traffic | None = None, dtype_check=None):
    """Within the block, calling a collective not in ``allowed`` calls ``refuse(shown)``
    (which raises), whatever the route; sends and receives are appended to ``traffic``, and
    each one's tensors are first passed to ``dtype_check(kind, tensors)`` when given (a receive
    buffer of another dtype than the sender's makes gloo abort the process: a check can say
    "dtype" before that happens)."""
    import importlib

    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import ProcessGroup
    from torch.distributed import distributed_c10d

    saved = []

    def swap(owner, name, new):
        saved.append((owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type)
                      else getattr(owner, name)))
        setattr(owner, name, new)

    def refuser(shown):
        def refused(*args, **kwargs):
            refuse(shown)
        return refused

    for module, shown in ((dist, "dist"), (distributed_c10d, "distributed_c10d")):
        for name in COLLECTIVES:
            if name not in allowed and hasattr(module, name):
                swap(module, name, refuser(f"{shown}.{name}"))
    for module_name in _FUNCTIONAL:
        try:
            module = importlib.import_module(module_name)
        except Exception:  # an optional part of torch that this build lacks
            continue
        for name in dir(module):
            value = getattr(module, name)
            if (callable(value) and not name.startswith("_") and not isinstance(value, type)
                    and any(word in name for word in ("all_", "reduce", "broadcast", "gather",
                                                      "scatter", "permute"))):
                swap(module, name, refuser(f"{module_name}.{name}"))
    for method, served in _GROUP_METHODS.items():
        original = ProcessGroup.__dict__.get(method)
        if original is None:
            continue
        swap(ProcessGroup, method, _method_guard(original, method, served in allowed, refuse))
    for namespace, names in _OPS.items():
        ops = getattr(torch.ops, namespace)
        for name in names:
            swap(ops, name, refuser(f"torch.ops.{namespace}.{name}"))
    if traffic is not None:
        for method, log in (("send", traffic.sent), ("recv", traffic.received)):
            swap(ProcessGroup, method, _recorder(ProcessGroup.__dict__[method], log, method,
                                                 dtype_check))
        swap(ProcessGroup, "recv_anysource", refuser("dist.recv(src=None)"))
    try:
        yield traffic
    finally:
        for owner, name, original in reversed(saved):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


_MISSING = object()


def _method_guard(original, method, allowed, refuse):
    """A collective method of ProcessGroup: refused unless the collective it serves is allowed
    (this also closes a reloaded copy of distributed_c10d, whose functions call these)."""
    def guard(self, *args, **kwargs):
        if not allowed:
            refuse(f"ProcessGroup.{method}")
        return original(self, *args, **kwargs)
    return guard


def _recorder(original, log, kind, dtype_check):
    def record(self, tensors, peer, *args, **kwargs):
        if dtype_check is not None:
            dtype_check(kind, tensors)
        log.append((_global_rank(self, peer), _nbytes(tensors)))
        return original(self, tensors, peer, *args, **kwargs)
    return record


@contextlib.contextmanager
def _calls_seen(on_call):
    """A profile hook for the block: ``on_call(code, seen)`` for every Python call, ``seen`` the
    list it yields; an earlier profile hook keeps running."""
    seen: list = []
    previous = sys.getprofile()

    def hook(frame, event, arg):
        if event == "call":
            on_call(frame.f_code, seen)
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


@contextlib.contextmanager
def entered(functions):
    """Record, in the list it yields, each of ``functions`` ((path fragment of the module file,
    function name) pairs) that the block enters, by any route: a name imported early, the module
    through a variable, a reloaded copy of the module (same file). A profile hook, so a call is
    seen wherever it comes from; the caller decides what to do with it."""
    def on_call(code, seen):
        filename = code.co_filename.replace("\\", "/")
        for fragment, name in functions:
            if code.co_name == name and fragment in filename and name not in seen:
                seen.append(name)

    with _calls_seen(on_call) as seen:
        yield seen


@contextlib.contextmanager
def counting(calls: list):
    """Within the block, append the name of every collective or point-to-point operation that
    reaches a process group (any route: dist.*, the group's methods) to ``calls``."""
    from torch._C._distributed_c10d import ProcessGroup

    saved = []
    for method in (*_GROUP_METHODS, "send", "recv", "recv_anysource"):
        original = ProcessGroup.__dict__.get(method)
        if original is None:
            continue
        saved.append((method, original))
        setattr(ProcessGroup, method, _counter(original, method, calls))
    try:
        yield calls
    finally:
        for method, original in reversed(saved):
            setattr(ProcessGroup, method, original)


def _counter(original, method, calls):
    def count(self, *args, **kwargs):
        calls.append(method)
        return original(self, *args, **kwargs)
    return count


def _fingerprints(module_names) -> tuple[dict, dict]:
    """``({file: module name}, {fingerprint: the function's dotted name})`` of ``module_names``:
    every function they define (methods of their classes included), for :func:`borrowed`."""
    import importlib
    import inspect

    files, codes = {}, {}
    for name in module_names:
        try:
            module = importlib.import_module(name)
        except Exception:  # an optional part of torch that this build lacks
            continue
        if getattr(module, "__file__", None):
            files[module.__file__] = name
        own = [v for v in vars(module).values() if getattr(v, "__module__", None) == name]
        values = own + [v for c in own if inspect.isclass(c) for v in vars(c).values()]
        for value in values:
            value = getattr(value, "__func__", getattr(value, "fget", value))
            code = getattr(value, "__code__", None)
            if code is not None and len(code.co_code) >= 150:  # not a few lines anyone writes
                codes[_fingerprint(code)] = f"{name}.{value.__qualname__}"
    return files, codes


def _fingerprint(code) -> tuple:
    """What recompiling the same source keeps, whatever the file or the class's name."""
    consts = tuple(c for c in code.co_consts if not hasattr(c, "co_code"))
    return code.co_code, code.co_names, code.co_varnames, repr(consts)


@contextlib.contextmanager
def borrowed(module_names):
    """Record, in the list it yields, every function of ``module_names`` that the block runs,
    however the student reached it: imported under another name, through a reloaded module
    (same file), or recompiled from its source (``exec(inspect.getsource(...))``: the same
    bytecode under any class name). The caller refuses what it finds."""
    files, codes = _fingerprints(module_names)
    def on_call(code, seen):
        shown = (f"{files[code.co_filename]}" if code.co_filename in files
                 else codes.get(_fingerprint(code)))
        if shown is not None and shown not in seen:
            seen.append(shown)

    with _calls_seen(on_call) as seen:
        yield seen
