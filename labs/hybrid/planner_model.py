"""Old path of :mod:`labs.planner.model`: warns DeprecationWarning and stands for it (removed in
labs 0.2).

Must not: define a name of its own, or be imported by labs' own modules."""
from labs import _moved

__all__: list[str] = []  # every name is labs.planner.model's
__moved_to__ = "labs.planner.model"
_moved.old_module(__name__, __moved_to__)
