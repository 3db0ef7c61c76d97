"""Flags for the instructor: exercise code that calls the course's own implementation of what
the exercise asks for, or that is the solution cell itself (up to names, comments and
docstrings). Static (``ast``), in the grader's process; a flag is for review, never a penalty.

:data:`REFERENCES` maps a ``grade_id`` to the dotted names that implement that exercise in the
course (``labs``) or in torch, as its declaration names them (labs/exercises/text.py); the
checks refuse some of them at run time too (see each ``*_checks.py``). A source notebook may
add its own in ``metadata.course.references`` (``{grade_id: [dotted names]}``). A name in the
student's cell is resolved through the imports of the setup cell and of the exercise's cells,
and through the course's usual aliases (``dist``, ``F``, ``nn``); a name that cannot be
resolved matches by its last part when that part is distinctive (10 characters or more, e.g.
``ring_all_reduce``).

Owns: the copy and tampering flags (what the report's review column says). Must not: change a
score, or run any of the code it reads.
"""

from __future__ import annotations

import ast
import importlib.util
import textwrap

from labs.exercises import catalog, offlimits

__all__ = ["REFERENCES", "TAMPERING", "references_in", "tampering_in", "normalized",
           "matches_solution", "flags"]

#: ``grade_id -> dotted names`` that implement the exercise, from its one declaration
#: (labs/exercises/text.py, ``Exercise.references``).
REFERENCES = catalog.REFERENCES
#: What exercise code has no reason to touch: IPython's hooks, the checks and the grader's
#: machinery, the interpreter's module table. A name the source notebook uses too (its setup
#: imports ``graded``, say) is not flagged. The verdict does not depend on any of it (it is
#: the judge's, from the record): the flag tells the instructor who tried.
TAMPERING = ("get_ipython", "set_custom_exc", "input_transformers_cleanup",
             "input_transformers_post", "ast_transformers", "register_magic_function",
             "run_check", "graded", "labs.exercises",
             "sys.modules", "__builtins__", "builtins", "settrace", "setprofile",
             "LABS_GRADE_RECORDS", "LABS_GRADE_SECRET", "LABS_GRADE_MARK")
ALIASES = {"dist": "torch.distributed", "F": "torch.nn.functional", "nn": "torch.nn",
           "np": "numpy"}
DISTINCTIVE = 10
#: A solution block shorter than this (in AST nodes: a few lines, what the third hint walks
#: through) is written the same way honestly: equal to it means nothing, so it is not flagged.
MIN_SOLUTION_NODES = 150


def _imports(tree) -> dict[str, str]:
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    names[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _parse(code: str):
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        try:  # IPython magics and shell lines: drop them and try again
            return ast.parse("\n".join(line for line in code.splitlines()
                                       if not line.lstrip().startswith(("%", "!"))))
        except (SyntaxError, ValueError):
            return None


def references_in(code: str, wanted, *, context: str = "") -> list[str]:
    """The names of ``wanted`` (dotted) that ``code`` refers to, sorted."""
    wanted = tuple(wanted)
    tree = _parse(code)
    if tree is None or not wanted:
        return []
    imports = dict(ALIASES)
    ctx = _parse(context)
    if ctx is not None:
        imports.update(_imports(ctx))
    imports.update(_imports(tree))
    defined = {n.name for n in ast.walk(tree)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    defined |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)}
    defined |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    found = set()
    imported = {full for full in _imports(tree).values()}
    for full in imported:
        found.update(name for name in wanted if full == name or (
            full.startswith(name + ".") and _is_module(name)))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            parts = _dotted(node)
            if not parts:
                continue
            if parts[0] in defined and parts[0] not in imports:
                continue
            head = imports.get(parts[0])
            resolved = ".".join([head, *parts[1:]]) if head else None
            for name in wanted:
                last = name.rsplit(".", 1)[-1]
                if resolved == name or _same_object(resolved, name) or (
                        resolved and resolved.startswith(name + ".") and _is_module(name)):
                    found.add(name)  # the name itself, a re-export of it, or part of a module
                elif "." not in name and parts == [name] and name not in defined:
                    found.add(name)  # a builtin (``sum``) that the cell did not redefine
                elif head is None and parts[-1] == last and len(last) >= DISTINCTIVE:
                    found.add(name)
    return sorted(found)


_objects: dict = {}


def _same_object(dotted: str | None, wanted: str) -> bool:
    """Whether ``dotted`` (``labs.pipeline.gpipe_order``, a package's re-export) names the same
    course or torch object as ``wanted`` (``labs.pipeline.schedules.gpipe_order``): compared by
    importing both (course code, never the student's)."""
    if not dotted or dotted == wanted or dotted.rsplit(".", 1)[-1] != wanted.rsplit(".", 1)[-1] \
            or dotted.split(".")[0] not in ("labs", "torch"):
        return False
    for name in (dotted, wanted):
        if name not in _objects:
            _objects[name] = offlimits.resolve(name)
    return _objects[dotted] is not None and _objects[dotted] is _objects[wanted]


_modules: dict = {}


def _is_module(dotted: str) -> bool:
    """Whether a declared reference names a whole module or package (found, not imported)."""
    if dotted not in _modules:
        try:
            _modules[dotted] = importlib.util.find_spec(dotted) is not None
        except (ImportError, ValueError, AttributeError):
            _modules[dotted] = False
    return _modules[dotted]


class _Canon(ast.NodeTransformer):
    """Names, arguments and docstrings out: what is left is the code's shape and its calls."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=self._name(node.id), ctx=node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg=self._name(node.arg)), node)

    def _body(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return node

    def visit_FunctionDef(self, node):
        node = self._body(node)
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node = self._body(node)
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node


def normalized(code: str) -> str | None:
    tree = _parse(code)
    if tree is None:
        return None
    tree = _Canon()._body(tree)
    tree = _Canon().visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def _solution_size(code: str) -> int:
    """AST nodes between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, every such block of
    the cell (a class has several) counted (all of the cell if it has none)."""
    blocks, block, inside = [], [], False
    for line in code.splitlines():
        text = line.strip().lstrip("#").strip()
        if text == "BEGIN SOLUTION":
            inside, block = True, []
        elif text == "END SOLUTION":
            inside = False
            blocks.append(textwrap.dedent("\n".join(block)))
        elif inside:
            block.append(line)
    trees = [_parse(b) for b in blocks] if blocks else [_parse(code)]
    return sum(sum(1 for _ in ast.walk(t)) for t in trees if t is not None)


def matches_solution(student: str, solution: str) -> bool:
    if _solution_size(solution) < MIN_SOLUTION_NODES:
        return False
    a, b = normalized(student), normalized(solution)
    return a is not None and a == b


def _prefixes(dotted: str) -> list[str]:
    """``a.b.c`` -> ``a.b.c`` and every dotted prefix of it with two parts or more."""
    parts = dotted.split(".")
    return [dotted] + [".".join(parts[:k]) for k in range(2, len(parts))]


def _words(code: str) -> set[str]:
    """Every name, attribute, dotted name, imported module and string constant of ``code``."""
    tree = _parse(code)
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
            parts = _dotted(node)
            if parts:
                found.update(".".join(parts[:k]) for k in range(2, len(parts) + 1))
        elif isinstance(node, ast.alias):
            found.update({node.asname or "", *_prefixes(node.name)})
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update(_prefixes(node.module))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(w for w in TAMPERING if w in node.value)
    return found


def _assigned(code: str) -> set[str]:
    """The names ``code`` binds (assignments, definitions) and the attributes it assigns."""
    tree = _parse(code)
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found


def tampering_in(student_cells: list[str], source_cells: list[str]) -> list[str]:
    """The names of :data:`TAMPERING` the student's code uses and the source's does not, or
    rebinds (``graded = …``, ``checks.run_check = …``) whatever the source does."""
    used = set().union(*map(_words, student_cells)) if student_cells else set()
    known = set().union(*map(_words, source_cells)) if source_cells else set()
    rebound = set().union(*map(_assigned, student_cells)) if student_cells else set()
    return sorted(w for w in TAMPERING if w in used and (w not in known or w in rebound))


def flags(grade_id: str, student_cells: list[str], solution_cells: list[str], *,
          context: str = "", extra: dict | None = None,
          source_cells: list[str] | None = None) -> dict:
    """``{"references": [names], "solution": bool, "tampering": [names]}`` for one exercise
    (``source_cells``: the source notebook's setup and exercise cells, whose names are not
    tampering)."""
    wanted = tuple(REFERENCES.get(grade_id, ())) + tuple((extra or {}).get(grade_id, ()))
    refs = sorted({n for code in student_cells for n in references_in(code, wanted,
                                                                       context=context)})
    same = any(matches_solution(code, sol) for code in student_cells for sol in solution_cells)
    tampering = tampering_in([*student_cells, context],
                             list(source_cells if source_cells is not None else solution_cells))
    return {"references": refs, "solution": same, "tampering": tampering}
