"""Old path of :mod:`labs.planner.view`: warns DeprecationWarning and stands for it (removed in
labs 0.2).

Must not: define a name of its own, or be imported by labs' own modules."""
from labs import _moved

__all__: list[str] = []  # every name is labs.planner.view's
__moved_to__ = "labs.planner.view"
_moved.old_module(__name__, __moved_to__)
