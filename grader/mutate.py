"""Mutants of an exercise's reference answer: the plausible slips of a student, one at a time.

:func:`mutants` reads a solution cell, finds its ``### BEGIN SOLUTION`` ... ``### END SOLUTION``
lines and yields every single-point change of the code between them that a student could
make, each as ``(name, source)``: the cell's whole source with that one change (the rest of the
cell as written). The operators are the slips the checks must catch:

- ``drop``: an expression statement or augmented assignment left out (a communication call,
  a ``wait()``, an in-place update);
- ``reduce-op``: SUM and AVG (and MAX) swapped in a reduction, or AVG where none was given;
- ``group``: a ``group=`` argument dropped (the whole world) or swapped for another group;
- ``whole``: the whole tensor for its chunk (``x.chunk(n)[i]`` -> ``x``, a slice -> its base);
- ``order``: an order reversed (``reversed(...)``, ``[::-1]`` added or removed);
- ``bound``: off by one (an int constant ±1, ``<`` <-> ``<=``, ``>`` <-> ``>=``);
- ``swap``: two names of the same kind swapped (unpacked together, or adjacent parameters:
  ``left``/``right``, ``dp_index``/``tp_index``, ``src``/``dst``);
- ``arith``: an arithmetic operator for its opposite (+/-, *,/, //), a division dropped;
- ``logic``: a condition negated, ``and``/``or``, ``min``/``max``;
- ``copy``: a ``.clone()`` / ``.detach()`` / ``.contiguous()`` dropped.

Why not mutmut or cosmic-ray: both mutate files of an installed package and run a test command
in a fresh process per mutant; the answers live in notebook cells between markers, and a
mutant's check needs a warm process (its forkserver of ranks) to cost a second, not ten. The
operators above are the same kinds theirs are.

Owns: the operators and the naming of mutants. Must not: run anything.
"""

from __future__ import annotations

import ast
import copy
import textwrap

__all__ = ["solution_lines", "mutants"]

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
         ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_ARITH = {ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div], ast.Div: [ast.Mult,
          ast.FloorDiv], ast.FloorDiv: [ast.Div, ast.Mult], ast.Mod: [ast.FloorDiv]}
_COPIES = ("clone", "detach", "contiguous")
_REDUCTIONS = ("all_reduce", "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor",
               "reduce")


def solution_lines(source: str) -> tuple[int, int]:
    """1-based first and last line strictly between the markers (the whole cell without them)."""
    lines = source.splitlines()
    begins = [i for i, ln in enumerate(lines, 1) if ln.strip().lstrip("#").strip()
              == "BEGIN SOLUTION"]
    ends = [i for i, ln in enumerate(lines, 1) if ln.strip().lstrip("#").strip()
            == "END SOLUTION"]
    if not begins:
        return 1, len(lines)
    return begins[0] + 1, ends[-1] - 1


def _inside(node, first, last, blocks) -> bool:
    line = getattr(node, "lineno", None)
    return line is not None and any(a <= line <= b for a, b in blocks)


def _blocks(source: str) -> list[tuple[int, int]]:
    """Every (first, last) line range between a BEGIN and its END (a class has several)."""
    lines, out, start = source.splitlines(), [], None
    for i, ln in enumerate(lines, 1):
        word = ln.strip().lstrip("#").strip()
        if word == "BEGIN SOLUTION":
            start = i + 1
        elif word == "END SOLUTION" and start is not None:
            out.append((start, i - 1))
            start = None
    return out or [(1, len(lines))]


def _call_name(node) -> str | None:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _siblings(tree) -> list[tuple[str, str]]:
    """Pairs of names of one kind: unpacked by the same assignment, or adjacent parameters."""
    pairs = []
    for node in ast.walk(tree):
        groups = []
        if isinstance(node, (ast.Assign, ast.For)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            groups += [[e.id for e in t.elts if isinstance(e, ast.Name)]
                       for t in targets if isinstance(t, ast.Tuple)]
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            groups.append([a.arg for a in node.args.args])
        for names in groups:
            pairs += [(a, b) for a, b in zip(names, names[1:]) if a != b]
    return list(dict.fromkeys(pairs))


def _edits(node, siblings):
    """``(operator, make)`` for each mutation of ``node`` alone; ``make(node)`` changes a copy."""
    return [*_drop_edits(node), *_reduction_edits(node), *_call_edits(node),
            *_subscript_edits(node), *_bound_edits(node), *_arith_edits(node),
            *_logic_edits(node), *_swap_edits(node, siblings)]


def _drop_edits(node):
    """``drop``: a call statement or an in-place update left out, or a call out of a list."""
    out = []
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) or isinstance(
            node, ast.AugAssign):
        out.append(("drop", lambda n: ast.Pass()))
    if isinstance(node, (ast.List, ast.Tuple)) and isinstance(node.ctx, ast.Load):
        for k, element in enumerate(node.elts):  # a call left out of a list: [irecv, isend]
            if isinstance(element, ast.Call) and len(node.elts) > 1:
                out.append(("drop", lambda n, k=k: _without(n, k)))
    return out


def _reduction_edits(node):
    """``reduce-op``: a reduction's op swapped (SUM, AVG, MAX), or AVG where none was given."""
    out = []
    if isinstance(node, ast.Call) and _call_name(node) in _REDUCTIONS:
        op = next((k for k in node.keywords if k.arg == "op"), None)
        if op is None:
            out.append(("reduce-op", lambda n: _with_kw(n, "op", "dist.ReduceOp.AVG")))
        else:
            for new in ("SUM", "AVG", "MAX"):
                if not ast.unparse(op.value).endswith(new):
                    out.append(("reduce-op", lambda n, new=new: _with_kw(
                        n, "op", f"dist.ReduceOp.{new}")))
    return out


def _call_edits(node):
    """A call's slips: ``group=`` dropped, a copy dropped, min/max swapped, an order reversed."""
    out = []
    if not isinstance(node, ast.Call):
        return out
    for k in node.keywords:
        if k.arg == "group" and not (isinstance(k.value, ast.Constant)
                                    and k.value.value is None):
            out.append(("group", lambda n: _with_kw(n, "group", "None")))
    if _call_name(node) in _COPIES and isinstance(node.func, ast.Attribute):
        out.append(("copy", lambda n: n.func.value))
    if _call_name(node) in ("min", "max") and isinstance(node.func, ast.Name):
        other = "max" if node.func.id == "min" else "min"
        out.append(("logic", lambda n, o=other: _renamed_call(n, o)))
    if _call_name(node) == "reversed" and node.args:
        out.append(("order", lambda n: n.args[0]))
    if _call_name(node) == "range":
        out.append(("order", lambda n: ast.Call(ast.Name("reversed", ast.Load()), [n], [])))
    return out


def _subscript_edits(node):
    """``whole`` for a chunk or a slice, ``order`` for a ``[::-1]`` removed."""
    out = []
    if not isinstance(node, ast.Subscript):
        return out
    value = node.value
    if isinstance(value, ast.Call) and _call_name(value) in ("chunk", "tensor_split", "split"):
        out.append(("whole", lambda n: n.value.func.value))
    if isinstance(node.slice, ast.Slice):
        s = node.slice
        if s.step is not None and ast.unparse(s.step) == "-1" and s.lower is s.upper is None:
            out.append(("order", lambda n: n.value))
        elif s.step is None:
            out.append(("whole", lambda n: n.value))
    return out


def _bound_edits(node):
    """``bound``: an int constant off by one, or a comparison's bound flipped."""
    out = []
    if isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) < 1000:
        out += [("bound", lambda n, d=d: ast.Constant(n.value + d)) for d in (1, -1)]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
        out.append(("bound", lambda n: _compare(n, _FLIP[type(n.ops[0])]())))
    return out


def _arith_edits(node):
    """``arith``: an arithmetic operator for its opposite, or a division dropped."""
    out = []
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        out += [("arith", lambda n, new=new: ast.BinOp(n.left, new(), n.right))
                for new in _ARITH[type(node.op)]]
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):
            out.append(("arith", lambda n: n.left))
    return out


def _logic_edits(node):
    """``logic``: ``and``/``or`` swapped, or an ``if``/``while`` condition negated."""
    out = []
    if isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append(("logic", lambda n, o=other: ast.BoolOp(o(), n.values)))
    if isinstance(node, (ast.If, ast.While)):
        out.append(("logic", lambda n: _negated(n)))
    return out


def _swap_edits(node, siblings):
    """``swap``: a name read for its sibling (unpacked together, or an adjacent parameter)."""
    out = []
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        for a, b in siblings:
            for old, new in ((a, b), (b, a)):
                if node.id == old:
                    out.append(("swap", lambda n, new=new: ast.Name(new, ast.Load())))
    return out


def _without(node, k):
    node.elts = node.elts[:k] + node.elts[k + 1:]
    return node


def _with_kw(node, name, value):
    node.keywords = [k for k in node.keywords if k.arg != name]
    node.keywords.append(ast.keyword(name, ast.parse(value, mode="eval").body))
    return node


def _renamed_call(node, name):
    node.func = ast.Name(name, ast.Load())
    return node


def _compare(node, op):
    node.ops = [op]
    return node


def _negated(node):
    node.test = ast.UnaryOp(ast.Not(), node.test)
    return node


class _Replace(ast.NodeTransformer):
    def __init__(self, target_index, make):
        self.index, self.target, self.make, self.done = 0, target_index, make, None

    def generic_visit(self, node):
        here = self.index
        self.index += 1
        if here == self.target:
            before = ast.unparse(node)
            new = self.make(node)
            self.done = (before, ast.unparse(new) if new is not None else "")
            return ast.copy_location(new, node) if isinstance(new, ast.AST) else new
        return super().generic_visit(node)


def mutants(source: str):
    """Yield ``(name, mutated cell source)`` for every single change inside the solution's
    markers; ``name`` is ``operator: `before` -> `after``` (with ``#k`` when repeated)."""
    tree = ast.parse(textwrap.dedent(source))
    blocks = _blocks(source)
    siblings = _siblings(tree)
    nodes = list(_walk(tree))
    seen: dict = {}
    for index, node in enumerate(nodes):
        if not _inside(node, 0, 0, blocks):
            continue
        for operator, make in _edits(node, siblings):
            changed = copy.deepcopy(tree)
            replacer = _Replace(index, lambda n, make=make: make(n))
            changed = replacer.visit(changed)
            if replacer.done is None:
                continue
            before, after = replacer.done
            ast.fix_missing_locations(changed)
            try:
                text = ast.unparse(changed)
            except Exception:  # noqa: BLE001 - a change that cannot be written: not a mutant
                continue
            if text == ast.unparse(tree):
                continue
            name = f"{operator}: `{_short(before)}` -> `{_short(after)}`"
            seen[name] = seen.get(name, 0) + 1
            yield (name if seen[name] == 1 else f"{name} #{seen[name]}"), text


def _walk(tree):
    """Nodes in the order :class:`_Replace` numbers them (generic_visit's, depth first)."""
    yield tree
    for child in ast.iter_child_nodes(tree):
        yield from _walk(child)


def _short(code: str, most: int = 70) -> str:
    code = " ".join(code.split())
    return code if len(code) <= most else code[:most - 1] + "…"
