"""Old module paths that notebooks handed out before a move still import, kept working for one
course run (see the README).

Until the packages ``labs.data_parallel``, ``labs.tensor_parallel`` and ``labs.pipeline`` existed,
their files sat flat in ``labs/`` (``labs.tp_communications``, ``labs.pipeline_planning`` ...);
later the formulas went into ``labs.formulas`` (``labs.memory`` -> ``labs.formulas.memory``).
Notebooks handed out before import those paths (tests/support/fixtures/pre_layout/ holds them), so
an import hook maps each old module to its new home, with a DeprecationWarning:
``import labs.tp_communications as comm`` gives a module whose attributes are
``labs.tensor_parallel.comm``'s. ``python -m labs.ddp_script`` runs the new script, and
``labs.launcher`` after a bare ``import labs`` is the old module too (:func:`install` gives the
``labs`` module this fallback for the old names only; its own names are imported explicitly).
Where a name or a signature changed, the old module keeps the old behaviour through a thin adapter
in :mod:`labs._compat` that calls the new owner. Only the paths such a notebook uses are here; the
others went when nothing in the course, its tests or its docs used them any more.

Names that moved out of a module that stays (``labs.bench.ddp.compute_vs_comm`` is now
``labs.data_parallel.experiments.compute_vs_comm``) are served by that module's ``__getattr__``
via :func:`moved_attribute`. Everything here goes away in labs 0.2, after the current course run.

Owns: the import hook and the table of old paths and names. Must not: hold course logic, import the
modules it maps before they are asked for, or import ``grader``.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

from labs.messages import text

#: When the old names go (in English; the warnings say it in the notebook's language).
REMOVED_IN = text("runtime.removed_in", lang="en")

# old module -> new module: the paths the notebooks of tests/support/fixtures/pre_layout/ use
MOVED_MODULES = {
    "labs.ddp_script": "labs.data_parallel.script",
    "labs.plots_dp": "labs.data_parallel.plots",
    "labs.tp_communications": "labs.tensor_parallel.comm",
    "labs.tensor_parallel_model": "labs.tensor_parallel.model",
    "labs.tensor_parallel_verify": "labs.tensor_parallel.verify",
    "labs.tensor_parallel_experiments": "labs.tensor_parallel.experiments",
    "labs.tensor_parallel_planning": "labs.formulas.cost",
    "labs.plots_tp": "labs.tensor_parallel.plots",
    "labs.pipeline_experiments": "labs.pipeline.experiments",
    "labs.pipeline_planning": "labs.formulas.cost",
    "labs.plots_pp": "labs.pipeline.plots",
    "labs.launcher": "labs.runtime.launcher",
    # the formulas went into their own package (issue 38)
    "labs.memory": "labs.formulas.memory",
}

# (old module, name) -> "new.module:name": names that changed, or whose behaviour changed and
# are kept by an adapter in labs._compat for the old module only
RENAMED = {
    **{("labs.tp_communications", old): f"labs.tensor_parallel.comm:{new}" for old, new in (
        ("_CopyToRegion", "CopyToTensorParallelRegion"),
        ("_ReduceFromRegion", "ReduceFromTensorParallelRegion"),
        ("_ScatterToRegion", "ScatterToTensorParallelRegion"),
        ("_GatherFromRegion", "GatherFromTensorParallelRegion"),
        ("_GatherFromSequenceRegion", "GatherFromSequenceParallelRegion"),
        ("_ReduceScatterToSequenceRegion", "ReduceScatterToSequenceParallelRegion"))},
    ("labs.tensor_parallel_planning", "layer_weight_bytes"):
        "labs.formulas.memory:layer_weight_bytes",
    ("labs.tensor_parallel_planning", "TPDecision"): "labs.formulas.cost:FitDecision",
    # "does it fit" left the memory module for labs.formulas.fit (offered by labs.formulas.cost)
    ("labs.memory", "fits_on_one_card"): "labs.formulas.cost:fits_on_one_card",
    ("labs.memory", "FitReport"): "labs.formulas.cost:FitDecision",
    **{("labs.tensor_parallel_planning", name): f"labs._compat:{name}"
       for name in ("tp_layer_comm", "layerwise_comm")},
    **{("labs.tensor_parallel_experiments", name): f"labs._compat:{name}"
       for name in ("layerwise_step", "overlap_backward")},
    ("labs.plots_tp", "plot_timeline"): "labs._compat:plot_timeline",
    **{("labs.pipeline_planning", name): f"labs._compat:{name}"
       for name in ("ADAM_MIXED_BYTES_PER_PARAM", "transformer_layer_params", "model_state_bytes",
                    "states_per_gpu", "judge_pipeline", "pp_bytes_per_step", "tp_bytes_per_step")},
}

# (module that stays, name) -> "new.module:name": names that left a module that still exists
MOVED_ATTRIBUTES = {
    **{("labs.bench.ddp", name): f"labs.data_parallel.experiments:{name}"
       for name in ("COMPUTE_HEAVY", "SMALL", "step_times", "speedup", "compute_vs_comm")},
    **{("labs.pipeline.experiments", name): f"labs.pipeline.step:{name}"
       for name in ("VOCAB", "TINY", "SMALL", "PipelineRun", "build_stages", "average_replicas",
                    "pipeline_step", "torch_pipeline_step", "merge", "reference_step",
                    "compare")},
}


def _internal(frame) -> bool:
    name = frame.f_globals.get("__name__", "")
    return (name == "labs" or name.startswith(("importlib", "labs._moved", "labs._compat"))
            or name.startswith("labs.") and frame.f_code.co_name == "__getattr__"  # a module's
            or frame.f_code.co_filename.startswith("<frozen importlib"))


def _warn(message: str) -> None:
    """A DeprecationWarning attributed to the first frame outside the import system and this
    module (the notebook cell or the file that used the old name), so that the filters which
    show such warnings in ``__main__`` -- Python's and IPython's -- show this one."""
    frame = sys._getframe(1)
    while frame is not None and _internal(frame):
        frame = frame.f_back
    if frame is None:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return
    module_globals = frame.f_globals
    warnings.warn_explicit(message, DeprecationWarning, frame.f_code.co_filename, frame.f_lineno,
                           module=module_globals.get("__name__") or frame.f_code.co_filename,
                           registry=module_globals.setdefault("__warningregistry__", {}))


def _resolve(target: str):
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


class MovedModule(types.ModuleType):
    """An old module path: every attribute is the new module's, except the renamed ones."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(old, f"Moved to {new}; this old name is removed in {REMOVED_IN}.")
        self.__moved_to__ = new

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        target = RENAMED.get((self.__name__, name))
        if target is not None:
            return _resolve(target)
        return getattr(importlib.import_module(self.__moved_to__), name)

    def __reduce__(self):
        # by reference, as pickle treats modules: a notebook function that uses an old module
        # travels to the ranks (labs.launch pickles it) and imports the old name there
        return importlib.import_module, (self.__name__,)

    def __dir__(self):
        new = importlib.import_module(self.__moved_to__)
        return sorted(set(dir(new)) | {n for (m, n) in RENAMED if m == self.__name__})


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old module paths (after the normal finders have not found them)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self,
                                               origin=f"moved to {MOVED_MODULES[fullname]}")

    def create_module(self, spec):
        new = MOVED_MODULES[spec.name]
        _warn(text("runtime.moved_module", old=spec.name, new=new,
                   removed_in=text("runtime.removed_in")))
        importlib.import_module(new)  # fail here, at import, if the new module is broken
        return MovedModule(spec.name, new)

    def exec_module(self, module) -> None:
        pass

    def get_code(self, fullname):
        """``python -m labs.ddp_script``: run the new module's code."""
        new = MOVED_MODULES[fullname]
        return importlib.util.find_spec(new).loader.get_code(new)

    def is_package(self, fullname) -> bool:
        return False


def moved_attribute(module: str, name: str):
    """For a module's ``__getattr__``: the object ``name`` moved to, with a DeprecationWarning;
    AttributeError when ``name`` never was there."""
    target = MOVED_ATTRIBUTES.get((module, name))
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    _warn(text("runtime.moved_attribute", old=f"{module}.{name}", new=target.replace(":", "."),
               removed_in=text("runtime.removed_in")))
    return _resolve(target)


class _Package(types.ModuleType):
    """The ``labs`` package: an old module path used as its attribute (``labs.launcher`` after a
    bare ``import labs``) is imported then; every other name is the package's own, imported
    explicitly in ``labs/__init__.py``."""

    def __getattr__(self, name: str):
        if f"{self.__name__}.{name}" in MOVED_MODULES:
            return importlib.import_module(f"{self.__name__}.{name}")
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __reduce__(self):
        # by reference, as pickle treats modules: a notebook function that uses ``labs``
        # travels to the ranks (cloudpickle knows plain modules only by their exact type)
        return importlib.import_module, (self.__name__,)


def install(package: str = "labs") -> None:
    """Put the finder on ``sys.meta_path`` once, and give ``package`` the fallback for the old
    paths (``import labs`` does it)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
    module = sys.modules[package]
    if type(module) is types.ModuleType:
        module.__class__ = _Package
