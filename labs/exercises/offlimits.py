"""The course's own answers are off-limits while a student's code runs: one rule, every exercise.

While a check runs the student's code -- in the notebook's process or on a rank -- inside
:func:`forbidden`, these raise "this exercise asks you to write X yourself":

- everything the exercise's declaration names as implementing what it asks for
  (``references`` in labs/messages/exercises.py: course functions and classes, torch's);
  the function objects themselves are swapped, so every import path reaches the refusal
  (``pp.gpipe_order``, ``labs.pipeline.gpipe_order``, ``labs.pipeline.schedules.gpipe_order``
  and a name bound before the check are one object);
- every module-level function of the checks (``labs.exercises.*_checks`` and their helper
  modules): the checks' own reference answers are never a student's to call;
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
import importlib
import inspect
import sys
import types
from pathlib import Path

from labs.exercises import catalog
from labs.exercises.errors import ExerciseFailed
from labs.messages import text

__all__ = ["forbidden", "refuse", "targets", "guarded", "CHECK_MODULES"]

_EXERCISES_DIR = Path(__file__).resolve().parent
_LABS_DIR = _EXERCISES_DIR.parent
#: The checks' modules, whose module-level functions are never a student's to call.
CHECK_MODULES = tuple(f"labs.exercises.{p.stem}" for p in sorted(_EXERCISES_DIR.glob("*.py"))
                      if p.stem.endswith("_checks") or p.stem in ("capstone_rules",))

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


def _resolve(dotted: str):
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


def targets(exercise_id: str) -> list:
    """``[(function, shown name)]`` refused while the student's code of ``exercise_id`` runs."""
    if exercise_id in _cache:
        return _cache[exercise_id]
    found: list = []
    for dotted in catalog.REFERENCES.get(exercise_id, ()):
        obj = _resolve(dotted)
        if obj is not None:
            found += _functions(obj, dotted)
    for module_name in CHECK_MODULES:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, types.FunctionType) and value.__module__ == module_name:
                found.append((value, f"{module_name}.{name}"))
    unique, seen = [], set()
    for fn, shown in found:
        if id(fn) not in seen:
            seen.add(id(fn))
            unique.append((fn, shown))
    _cache[exercise_id] = unique
    return unique


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


def _fingerprint(code) -> tuple:
    consts = tuple(c for c in code.co_consts if not hasattr(c, "co_code"))
    return code.co_code, code.co_names, code.co_varnames, repr(consts)


def _is_course(code) -> bool:
    return Path(code.co_filename).resolve().is_relative_to(_LABS_DIR) if code.co_filename \
        and not code.co_filename.startswith("<") else False


@contextlib.contextmanager
def _copies_refused(prints: dict, seen: list):
    """A profile hook: entering code with the fingerprint of a refused course function (a
    recompiled copy) is recorded in ``seen``; the block's end refuses it."""
    previous = sys.getprofile()

    def hook(frame, event, arg):
        if event == "call":
            shown = prints.get(_fingerprint(frame.f_code))
            if shown is not None and shown not in seen:
                seen.append(shown)
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


_plans: dict = {}


def _plan(exercise_id: str) -> tuple[list, dict]:
    """``([(function, its refuser code)], {fingerprint: shown name})`` of ``exercise_id``,
    made once (the fingerprints of the functions' own code, read before any swap)."""
    if exercise_id not in _plans:
        swaps, prints = [], {}
        for fn, shown in targets(exercise_id):
            code = fn.__code__
            key = (shown, len(code.co_freevars))
            if key not in _refusers:
                _refusers[key] = _refuser(shown, code.co_freevars)
            if _is_course(code) and len(code.co_code) >= 150:
                prints[_fingerprint(code)] = shown
            swaps.append((fn, _refusers[key]))
        _plans[exercise_id] = swaps, prints
    return _plans[exercise_id]


@contextlib.contextmanager
def forbidden(exercise_id: str):
    """The course's answers to ``exercise_id`` refused for the ``with`` block (see the module's
    docstring); nested blocks keep the innermost exercise's refusals."""
    plan, prints = _plan(exercise_id)
    swapped = [(fn, fn.__code__) for fn, _ in plan]
    for fn, refuser in plan:
        fn.__code__ = refuser
    seen: list = []
    _active.append((exercise_id, seen))
    try:
        with _copies_refused(prints, seen):
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
            return self.__wrapped__(*args, **kwargs)

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
