"""Lab module of the hands-on distributed training course.

``labs.launch(fn, world_size)`` runs a function on several processes from a notebook, a test
or a script; the submodules hold the mechanisms each notebook builds (collectives, data
parallel, tensor parallel, pipeline, hybrid) and the calculators that check the chapter's
numbers. ``import labs`` is cheap: torch is imported when the launcher is first used.
"""

_LAUNCHER_NAMES = ("launch", "device", "LaunchError", "RankError", "RankCrashedError",
                   "LaunchTimeoutError")

__all__ = list(_LAUNCHER_NAMES) + ["environment"]


def __getattr__(name):
    if name in _LAUNCHER_NAMES:
        from labs import launcher
        return getattr(launcher, name)
    if name == "environment":
        from labs.doctor import environment
        return environment
    raise AttributeError(f"module 'labs' has no attribute {name!r}")
