"""Old path of :mod:`labs.hardware`: warns DeprecationWarning and stands for it (removed in
labs 0.2).

Must not: define a name of its own, or be imported by labs' own modules."""
from labs import _moved

__all__: list[str] = []  # every name is labs.hardware's
__moved_to__ = "labs.hardware"
_moved.old_module(__name__, __moved_to__)
