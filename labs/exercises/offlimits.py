"""The course's own answers are off-limits while a student's code runs: one rule, every exercise.

While a check runs the student's code -- in the notebook's process or on a rank -- inside
:func:`forbidden`, these raise "this exercise asks you to write X yourself":

- everything the exercise's declaration names as implementing what it asks for
  (``references`` in labs/messages/exercises.py: course functions and classes, torch's);
  the function objects themselves are swapped, so every import path reaches the refusal
  (``pp.gpipe_order``, ``labs.pipeline.gpipe_order``, ``labs.pipeline.schedules.gpipe_order``
  and a name bound before the check are one object);
- every module-level function of the checks (``labs.exercises.*_checks`` and their helper
  modules), however imported, seen by a profile hook by its file: the checks' own reference
  answers are never a student's to call (their classes' methods -- a stage wrapper the check
  hands in -- are the student's to use);
- a recompiled copy of a refused course function (``exec(inspect.getsource(...))``): same
  bytecode, seen by a profile hook. Only the course's code is fingerprinted: the standard
  library's, torch's and numpy's never count.

A refusal that the student's code swallows still fails the check when the block ends. What
cannot be stopped this way (a table precomputed at import time, say) is left to the grader's
review flags (grader.copying).

Owns: the swap, the fingerprint hook and the refusal's message. Must not: import torch at
module level, the grader, or a notebook's checks module at import time.
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

__all__ = ["forbidden", "refuse", "targets", "guarded", "resolve", "CHECK_MODULES"]

_EXERCISES_DIR = Path(__file__).resolve().parent
_LABS_DIR = _EXERCISES_DIR.parent
#: The checks' modules, whose module-level functions are never a student's to call.
CHECK_MODULES = tuple(f"labs.exercises.{p.stem}" for p in sorted(_EXERCISES_DIR.glob("*.py"))
                      if p.stem.endswith("_checks") or p.stem in ("capstone_rules",))
_CHECK_FILES = frozenset(str(_EXERCISES_DIR / f"{m.rsplit('.', 1)[1]}.py")
                         for m in CHECK_MODULES)

_active: list = []  # [(exercise_id, refusals seen)] of the blocks entered, innermost last


def refuse(shown: str):
    """Raise the refusal of ``shown`` (called by a swapped function's code)."""
    exercise_id, seen = _active[-1] if _active else (None, [])
    if shown not in seen:
        seen.append(shown)
    failed = ExerciseFailed(text("checks.off_limits", shown=shown,
                                 exercise=catalog.label(exercise_id) if exercise_id else ""))
    failed.kind = "wrong"
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


def _functions(obj, shown: str) -> list:
    """``[(function, shown name)]`` whose code to swap for ``obj``: a function itself, the
    functions a class defines (methods, static and class methods, properties)."""
    obj = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
    if isinstance(obj, types.FunctionType):
        return [(obj, shown)]
    found = []
    if inspect.isclass(obj):
        for value in vars(obj).values():
            value = getattr(value, "__func__", getattr(value, "fget", value))
            if isinstance(value, types.FunctionType):
                found.append((value, shown))
    return found


_cache: dict = {}


def _module_path(dotted: str) -> str | None:
    """The file or folder of ``dotted`` when it names a module or package (found, not
    imported: a package refused whole costs no import on the ranks), else None."""
    try:
        spec = importlib.util.find_spec(dotted)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return str(Path(spec.origin).parent) + os.sep if spec.submodule_search_locations \
        else spec.origin


def targets(exercise_id: str) -> tuple[list, dict]:
    """``([(function, shown name)], {module file or folder: shown name})`` refused while the
    student's code of ``exercise_id`` runs: the functions of the declared references, and the
    modules and packages declared whole (any of their code, seen by the profile hook)."""
    if exercise_id in _cache:
        return _cache[exercise_id]
    found: list = []
    paths: dict = {}
    for dotted in catalog.REFERENCES.get(exercise_id, ()):
        path = _module_path(dotted)
        if path is not None:
            paths[path] = dotted
            continue
        obj = resolve(dotted)
        if obj is not None:
            found += _functions(obj, dotted)
    unique, seen = [], set()
    for fn, shown in found:
        if id(fn) not in seen:
            seen.add(id(fn))
            unique.append((fn, shown))
    _cache[exercise_id] = unique, paths
    return _cache[exercise_id]


def _refuser(shown: str, freevars: tuple) -> types.CodeType:
    """Code that calls :func:`refuse` with ``shown``, with as many free variables as the code
    it replaces (a function's closure must fit its code); it reads none of them."""
    names = ", ".join(freevars)
    lines = ["def _outer():"] + [f"    {v} = None" for v in freevars] + [
        "    def refused(*args, **kwargs):",
        f"        (lambda: ({names},))" if freevars else "        pass",
        "        from labs.exercises.offlimits import refuse",
        f"        refuse({shown!r})",
        "    return refused"]
    namespace: dict = {}
    exec(compile("\n".join(lines), f"<labs: off-limits {shown}>", "exec"), namespace)
    return namespace["_outer"]().__code__


_refusers: dict = {}


# Instructions that say the same whatever the namespace or the layout a copy was compiled in.
_SAME = {"LOAD_METHOD": "LOAD_ATTR", "LOAD_NAME": "LOAD_GLOBAL", "STORE_NAME": "STORE_GLOBAL",
         "PRECALL": None, "CACHE": None, "NOP": None, "RESUME": None, "EXTENDED_ARG": None,
         "KW_NAMES": None, "COPY_FREE_VARS": None, "MAKE_CELL": None}


_fingerprints: dict = {}  # id(code) -> (code, its fingerprint): the code kept, its id not reused


def _fingerprint(code) -> tuple:
    """What recompiling the same source keeps, in any namespace: the instructions (method and
    attribute loads alike, jumps without their offsets), the names and constants they use."""
    known = _fingerprints.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    if len(_fingerprints) > 50_000:
        _fingerprints.clear()
    _fingerprints[id(code)] = code, _fingerprinted(code)
    return _fingerprints[id(code)][1]


def _doc(code) -> str | None:
    """The docstring compiled into ``code`` (CPython keeps it first among the constants)."""
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def _fingerprinted(code) -> tuple:
    out = [("DOC", _doc(code))]  # an honest rewrite that happens to read the same has not
    # the course's docstring; a copy of its source has (and only a documented function is kept)
    for ins in dis.get_instructions(code):
        op = _SAME.get(ins.opname, ins.opname)
        if op is None:
            continue
        jump = ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
        arg = None if jump or hasattr(ins.argval, "co_code") else repr(ins.argval)
        out.append((op.replace("_BACKWARD", "").replace("_FORWARD", ""), arg))
    return tuple(out), code.co_argcount


def _is_course(code) -> bool:
    return Path(code.co_filename).resolve().is_relative_to(_LABS_DIR) if code.co_filename \
        and not code.co_filename.startswith("<") else False


def _checks_function(code, paths: dict) -> str | None:
    """``labs.exercises.x_checks.f`` when ``code`` is a module-level function of a checks
    module (a method's qualified name has a dot); the declared name when it is code of a
    module or package refused whole (``paths``); else None."""
    if code.co_filename in _CHECK_FILES and "." not in code.co_qualname:
        return f"labs.exercises.{Path(code.co_filename).stem}.{code.co_qualname}"
    for path, shown in paths.items():
        if code.co_filename.startswith(path):
            return shown
    return None


@contextlib.contextmanager
def _copies_refused(prints: dict, paths: dict, seen: list):
    """A profile hook: entering a module-level function of the checks, or code with the
    fingerprint of a refused course function (a recompiled copy), is recorded in ``seen``;
    the block's end refuses it."""
    previous = sys.getprofile()
    known: dict = {}  # id(code) -> (code, shown or None): each code object judged once per block

    def hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            entry = known.get(id(code))
            if entry is None or entry[0] is not code:  # (the code kept: its id is not reused)
                entry = known[id(code)] = (code, _checks_function(code, paths)
                                           or prints.get(_fingerprint(code)))
            if entry[1] is not None and entry[1] not in seen:
                seen.append(entry[1])
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


_plans: dict = {}


def _plan(exercise_id: str) -> tuple[list, dict, dict]:
    """``([(function, its refuser code)], {fingerprint: shown name}, {path: shown name})`` of
    ``exercise_id``, made once (the fingerprints of the functions' own code, before any swap)."""
    if exercise_id not in _plans:
        swaps, prints = [], {}
        functions, paths = targets(exercise_id)
        for fn, shown in functions:
            code = fn.__code__
            key = (shown, len(code.co_freevars))
            if key not in _refusers:
                _refusers[key] = _refuser(shown, code.co_freevars)
            if _is_course(code) and len(code.co_code) >= 150 and _doc(code):
                prints[_fingerprint(code)] = shown
            swaps.append((fn, _refusers[key]))
        _plans[exercise_id] = swaps, prints, paths
    return _plans[exercise_id]


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
        with _copies_refused(prints, paths, seen):
            yield
    finally:
        _active.pop()
        for fn, code in reversed(swapped):
            fn.__code__ = code
    if seen:
        refuse_after = seen[0]
        _active.append((exercise_id, []))
        try:
            refuse(refuse_after)
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
            result = self.__wrapped__(*args, **kwargs)
            # a generator's body (any one-pass iterator's) runs as it is read: read it here,
            # under the guard, and hand the check (and the grader's record) the list
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
