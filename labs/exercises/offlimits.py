"""The course's own answers are off-limits while a student's code runs: one rule, every exercise.

While a check runs the student's code (in the notebook's process or on a rank) inside
:func:`forbidden`, these raise "this exercise asks you to write X yourself":

- what the exercise's declaration names as doing what it asks (``references`` in
  labs/exercises/text.py): a function or class, its function objects swapped so that every
  import path reaches the refusal (``pp.gpipe_order`` is ``labs.pipeline.schedules.gpipe_order``);
  a module or package (torch's pipelining), refused by its files' path without an import;
- every module-level function of the checks (``labs.exercises.*_checks``): their reference
  answers (the methods of a class a check hands in are the student's to use);
- a recompiled copy of a documented course function (``exec(inspect.getsource(...))``): same
  instructions and docstring in any namespace. Only course code is fingerprinted, never the
  standard library's, torch's or numpy's; an honest rewrite has no docstring.

A profile hook sees the last two. A refusal the student's code swallows still fails when the
block ends, and so does one followed by another error (torch's schedule reached, then failing
on the check's stage: the refusal is the verdict, not the error it led to). A library's own
class or function handed to a check in place of the student's (torch's ``Schedule1F1B`` given
to exercise 2's check) is refused before it runs, naming it. What this cannot stop (a table
computed before the check) is left to the review flags (grader.copying).

Owns: the swap, the hook, the refusal. Must not: import torch at module level, or the grader.
"""

from __future__ import annotations

import contextlib
import dis
import importlib
import importlib.util
import inspect
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path

from labs.exercises import catalog
from labs.exercises.errors import ExerciseFailed
from labs.messages import text

__all__ = ["forbidden", "refuse", "refuse_library", "library_name", "guarded", "resolve",
           "CHECK_MODULES", "LIBRARIES"]

_HERE = Path(__file__).resolve().parent
_LABS_DIR = str(_HERE.parent) + os.sep
#: The checks' modules, whose module-level functions are never a student's to call.
CHECK_MODULES = tuple(f"labs.exercises.{p.stem}" for p in sorted(_HERE.glob("*.py"))
                      if p.stem.endswith("_checks") or p.stem == "capstone_rules")
_CHECK_FILES = {str(_HERE / f"{m.rsplit('.', 1)[1]}.py"): m for m in CHECK_MODULES}
_active: list = []  # [(exercise_id, refusals seen)] of the blocks entered, innermost last


def refuse(shown: str):
    """Raise the refusal of ``shown`` (called by a swapped function's code)."""
    exercise_id, seen = _active[-1] if _active else (None, [])
    if shown not in seen:
        seen.append(shown)
    failed = ExerciseFailed(text("checks.off_limits", shown=shown,
                                 exercise=catalog.label(exercise_id) if exercise_id else ""))
    failed.kind = "wrong"
    failed.off_limits = shown
    raise failed


#: Packages whose own classes and functions are never a student's answer (the course's are
#: refused by name, per exercise).
LIBRARIES = ("torch", "numpy")


def library_name(obj) -> str | None:
    """``obj``'s dotted name if it is a library's own class or function (:data:`LIBRARIES`),
    not code the student wrote; else None."""
    target = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    if module.split(".")[0] not in LIBRARIES:
        return None
    public = module.split("._")[0]  # torch.distributed.pipelining.schedules, not a private path
    return f"{public}.{name}"


def refuse_library(shown: str):
    """Raise the refusal of a library object handed to a check as the student's answer."""
    exercise_id = _active[-1][0] if _active else None
    failed = ExerciseFailed(text("checks.library_answer", shown=shown,
                                 exercise=catalog.label(exercise_id) if exercise_id else ""))
    failed.kind = "wrong"
    failed.off_limits = shown
    raise failed


def resolve(dotted: str):
    """The object a dotted name denotes (None if it cannot be imported here)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - not a module (or an optional one): shorter prefix
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return None
        return obj
    return None


def _module_path(dotted: str) -> str | None:
    """The file, or the folder of a package, that ``dotted`` names (found, not imported)."""
    try:
        spec = importlib.util.find_spec(dotted)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return (str(Path(spec.origin).parent) + os.sep if spec.submodule_search_locations
            else spec.origin)


def _functions(obj) -> list:
    """The functions whose code to swap for ``obj``: itself, or those a class defines."""
    obj = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
    values = list(vars(obj).values()) if inspect.isclass(obj) else [obj]
    values = [getattr(v, "__func__", getattr(v, "fget", v)) for v in values]
    return [v for v in values if isinstance(v, types.FunctionType)]


def _refuser(shown: str, freevars: tuple) -> types.CodeType:
    """Code that calls :func:`refuse` with ``shown``, with as many free variables as the code
    it replaces (a function's closure must fit its code); it reads none of them."""
    lines = ["def _outer():"] + [f"    {v} = None" for v in freevars] + [
        "    def refused(*args, **kwargs):",
        f"        (lambda: ({', '.join(freevars)},))" if freevars else "        pass",
        "        from labs.exercises.offlimits import refuse",
        f"        refuse({shown!r})", "    return refused"]
    namespace: dict = {}
    exec(compile("\n".join(lines), f"<labs: off-limits {shown}>", "exec"), namespace)
    return namespace["_outer"]().__code__


# Instructions that read the same whatever the namespace or the layout a copy was compiled in.
_SAME = {"LOAD_METHOD": "LOAD_ATTR", "LOAD_NAME": "LOAD_GLOBAL", "STORE_NAME": "STORE_GLOBAL",
         "PRECALL": None, "CACHE": None, "NOP": None, "RESUME": None, "EXTENDED_ARG": None,
         "KW_NAMES": None, "COPY_FREE_VARS": None, "MAKE_CELL": None}
_prints: dict = {}  # id(code) -> (code, fingerprint): the code kept, so its id is not reused


def _doc(code) -> str | None:
    """The docstring compiled into ``code`` (CPython keeps it first among the constants)."""
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def _fingerprint(code) -> tuple:
    """What recompiling the same source keeps, in any namespace: the docstring, the
    instructions (method and attribute loads alike, jumps without offsets), their names and
    constants."""
    known = _prints.get(id(code))
    if known is None or known[0] is not code:
        out = [("DOC", _doc(code))]
        for ins in dis.get_instructions(code):
            op = _SAME.get(ins.opname, ins.opname)
            if op is not None:
                jump = ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
                arg = None if jump or hasattr(ins.argval, "co_code") else repr(ins.argval)
                out.append((op.replace("_BACKWARD", "").replace("_FORWARD", ""), arg))
        if len(_prints) > 50_000:
            _prints.clear()
        known = _prints[id(code)] = code, (tuple(out), code.co_argcount)
    return known[1]


_plans: dict = {}


def _plan(exercise_id: str) -> tuple[list, dict, dict]:
    """``([(function, refuser code)], {fingerprint: shown}, {module path: shown})`` of
    ``exercise_id``, made once (the fingerprints of the functions' own code, before a swap)."""
    if exercise_id not in _plans:
        swaps, prints, paths, seen = [], {}, {}, set()
        for dotted in catalog.REFERENCES.get(exercise_id, ()):
            path = _module_path(dotted)
            if path is not None:
                paths[path] = dotted
                continue
            obj = resolve(dotted)
            for fn in _functions(obj) if obj is not None else ():
                if id(fn) in seen:
                    continue
                seen.add(id(fn))
                code = fn.__code__
                if code.co_filename.startswith(_LABS_DIR) and len(code.co_code) >= 150 \
                        and _doc(code):
                    prints[_fingerprint(code)] = dotted
                swaps.append((fn, _refuser(dotted, code.co_freevars)))
        _plans[exercise_id] = swaps, prints, paths
    return _plans[exercise_id]


def _refused(code, prints: dict, paths: dict) -> str | None:
    """What ``code`` is, if the block refuses it: a checks function, a refused module's code,
    a copy of a refused course function."""
    module = _CHECK_FILES.get(code.co_filename)
    if module is not None and "." not in code.co_qualname:  # a method's name has a dot
        return f"{module}.{code.co_qualname}"
    shown = next((s for p, s in paths.items() if code.co_filename.startswith(p)), None)
    return shown or (prints.get(_fingerprint(code)) if prints else None)


@contextlib.contextmanager
def _watched(prints: dict, paths: dict, seen: list):
    """A profile hook: each code the block enters that it refuses is added to ``seen``."""
    previous = sys.getprofile()
    known: dict = {}  # id(code) -> (code, refused as): each code judged once per block

    def hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            entry = known.get(id(code))
            if entry is None or entry[0] is not code:
                entry = known[id(code)] = code, _refused(code, prints, paths)
            if entry[1] is not None and entry[1] not in seen:
                seen.append(entry[1])
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


@contextlib.contextmanager
def forbidden(exercise_id: str):
    """The course's answers to ``exercise_id`` refused for the ``with`` block (see the module's
    docstring); nested blocks keep the innermost exercise's refusals."""
    plan, prints, paths = _plan(exercise_id)
    swapped = [(fn, fn.__code__) for fn, _ in plan]
    for fn, refuser in plan:
        fn.__code__ = refuser
    seen: list = []
    _active.append((exercise_id, seen))
    try:
        with _watched(prints, paths, seen):
            yield
    except Exception as exc:  # noqa: BLE001 - after a refused call, the refusal is the verdict
        if seen and getattr(exc, "off_limits", None) is None:
            try:
                refuse(seen[0])
            except ExerciseFailed as failed:
                raise failed from exc
        raise
    finally:
        _active.pop()
        for fn, code in reversed(swapped):
            fn.__code__ = code
    if seen:  # reached and swallowed: refused all the same
        _active.append((exercise_id, []))
        try:
            refuse(seen[0])
        finally:
            _active.pop()


class _Guarded:
    """A student's object as a check holds it: calling it runs it under :func:`forbidden`;
    everything else (its attributes, ``apply``, pickling to a rank) is the object's own."""

    def __init__(self, target, exercise_id: str):
        self.__wrapped__, self._exercise_id = target, exercise_id

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True  # noqa: F841
        with forbidden(self._exercise_id):
            shown = library_name(self.__wrapped__)
            if shown is not None:  # torch's Schedule1F1B given for my_1f1b_order, say
                refuse_library(shown)
            result = self.__wrapped__(*args, **kwargs)
            # a generator's body runs as it is read: read it here, under the guard, and hand
            # the check (and the grader's record) its items
            return list(result) if isinstance(result, Iterator) else result

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self.__wrapped__, name)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)


def guarded(args: tuple, exercise_id: str) -> tuple:
    """``args`` with every callable (the student's functions and classes) guarded."""
    return tuple(_Guarded(a, exercise_id) if callable(a) and not isinstance(a, _Guarded) else a
                 for a in args)
