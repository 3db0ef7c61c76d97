"""Hosted notebooks (Google Colab, Kaggle): what the first cell of every notebook calls there.

A hosted runtime opens one notebook file with nothing of the course around it. The notebook's first
cell (written by ``python -m labs.exercises.hosted_cell``, identical in both editions but for the
language literal) therefore works before ``labs`` exists:

1. it sets the notebook's language (``LABS_LANG``, unless already set): a hosted kernel sees no
   notebook path, so the edition folder cannot tell it;
2. on Colab (``google.colab`` imported, or ``COLAB_RELEASE_TAG``) or Kaggle
   (``KAGGLE_KERNEL_RUN_TYPE``) only, it pip-installs the course's lab package from the student
   handout's zip at :data:`HANDOUT_URL` (or from ``$LABS_COURSE_SOURCE``, a URL or local path)
   with ``--no-deps``, then calls :func:`bootstrap`. The handout (``python -m grader.handout
   --zip``) holds ``labs/`` and the student notebooks, never ``solutions/`` or ``grader/``: a
   hosted notebook installs what a student may have, not the repository;
3. anywhere else it does nothing more (no output, no import of labs).

:func:`bootstrap` installs only the course's requirements that the runtime lacks, with the
runtime's torch, numpy and ipywidgets pinned as constraints (pip fails rather than replace them),
and says in one line what it kept and installed, with a note when the runtime's torch is not the
tested one (``labs doctor``'s range) and a line per torch API a notebook uses that it lacks.

Where the handout is published is an instructor's setting: :data:`HANDOUT_URL` is the one place to
set it; the cell tool copies it into every notebook (tests/course/test_hosted.py checks they agree).

Owns: the hosted runtime's detection, the bootstrap cell's identity (:func:`is_hosted_cell`), the
list of what to install there and the install itself. Must not: import torch, numpy or ipywidgets
(their versions are read from metadata), the grader or the course's modules; install anything
outside :func:`bootstrap`; upgrade or replace a package the runtime already has.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile

from labs.messages import joined, language, text
from labs.torch_versions import PINNED_TORCH, TORCH_RANGE, missing_torch_apis, torch_support

__all__ = ["HANDOUT_URL", "SOURCE_ENV", "CELL_ID", "CELL_TAG", "KEPT", "DISTRIBUTION",
           "FONT_PACKAGE", "runtime", "is_hosted_cell", "requirements", "missing", "constraints",
           "bootstrap"]

#: What the first cell pip-installs on a hosted runtime: the handout's zip (``make handout``
#: writes ``handout.zip``) at an address students can download without logging in (a course web
#: page, a release of a students' repository). AN INSTRUCTOR'S SETTING, NOT SET YET: the placeholder
#: is in the reserved ``.invalid`` domain, so an unset address fails at once. Set it here, run
#: ``python -m labs.exercises.hosted_cell solutions/*.ipynb solutions/en/*.ipynb`` and ``make
#: handout``, then publish that ``handout.zip`` at this address.
HANDOUT_URL = "https://handout-url-not-set.invalid/handout.zip"
#: Overrides :data:`HANDOUT_URL` (another course's handout, or a local path in tests).
SOURCE_ENV = "LABS_COURSE_SOURCE"
#: The bootstrap cell's id and tag (the tag survives editors that rewrite ids).
CELL_ID = "hosted-setup"
CELL_TAG = "hosted-setup"
#: The runtime's own packages: never installed over, pinned as constraints when present.
KEPT = ("torch", "numpy", "ipywidgets")
DISTRIBUTION = "dist-training-course"
#: The Chinese edition's figure font (the pin of requirements.txt; labs.notebook.fonts reads it).
FONT_PACKAGE = "mplfonts==0.0.11"

_RUNTIMES = {"colab": "Google Colab", "kaggle": "Kaggle"}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def runtime(environ=None, modules=None) -> str | None:
    """``"colab"``, ``"kaggle"`` or None (anywhere else), as the first cell decides it."""
    environ = os.environ if environ is None else environ
    modules = sys.modules if modules is None else modules
    if "google.colab" in modules or "COLAB_RELEASE_TAG" in environ:
        return "colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in environ:
        return "kaggle"
    return None


def is_hosted_cell(cell) -> bool:
    """Whether a notebook cell (nbformat node or dict) is the hosted bootstrap cell: its tag, or
    its id (``cell.id``, or ``metadata.id`` as Colab saves it)."""
    metadata = cell.get("metadata") or {}
    tags = metadata.get("tags") or ()
    return (cell.get("cell_type") == "code"
            and (CELL_TAG in tags or CELL_ID in (cell.get("id"), metadata.get("id"))))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(distribution: str = DISTRIBUTION) -> list[str]:
    """The run-time requirements the installed course declares (pyproject's ``dependencies``,
    without the extras)."""
    declared = importlib.metadata.requires(distribution) or []
    return [r for r in declared if "extra ==" not in r.replace('"', "").replace("'", "")]


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing(required, installed=_installed) -> list[str]:
    """The requirements of ``required`` whose distribution is absent (``installed(name)`` is its
    version or None). A present one is kept as it is, whatever its version: a hosted runtime's
    packages belong to the runtime."""
    out = []
    for requirement in required:
        match = _NAME.match(requirement)
        if match and installed(match.group(1)) is None:
            out.append(requirement.split(";")[0].strip())
    return out


def constraints(installed=_installed) -> list[str]:
    """``name==version`` of each package of :data:`KEPT` the runtime has: pip may not move them."""
    return [f"{name}=={version}" for name in KEPT if (version := installed(name))]


def _torch_notes(version: str | None, missing_apis=missing_torch_apis) -> list[str]:
    """What to say of the runtime's torch: nothing for the tested one; a note in the range, a
    warning outside it, and one line per API a notebook uses that it lacks (imports torch)."""
    if version is None:
        return [text("hosted.torch_missing")]
    low, high = (".".join(map(str, v)) for v in TORCH_RANGE)
    support = torch_support(version)
    if support == "tested":
        return []
    key = "hosted.torch_untested" if support == "in_range" else "hosted.torch_outside"
    return [text(key, version=version, low=low, high=high, tested=PINNED_TORCH)] + [
        text("hosted.torch_api_missing", version=version, name=name, notebooks=notebooks)
        for name, notebooks in missing_apis()]


def bootstrap(*, run=subprocess.run, installed=_installed, missing_apis=missing_torch_apis,
              out=None) -> dict:
    """Install what the course needs and the runtime lacks (never over :data:`KEPT`), print one
    line (and a torch note when not the tested version). Returns ``{"runtime", "installed",
    "kept", "returncode"}``; called by the notebook's first cell on a hosted runtime."""
    out = out or sys.stdout
    needed = missing(requirements(), installed)
    if language() == "zh":
        needed += missing([FONT_PACKAGE], installed)
    pins = constraints(installed)
    code = 0
    if needed:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(pins) + "\n")
        try:
            code = run([sys.executable, "-m", "pip", "install", "-q", "-c", f.name, *needed],
                       check=False).returncode
        finally:
            os.unlink(f.name)
        importlib.invalidate_caches()
        if code:
            print(text("hosted.install_failed", names=", ".join(needed), code=code), file=out)
    name = runtime()
    if not code:
        said = [text("hosted.ready", runtime=_RUNTIMES.get(name, name or "local"),
                     distribution=DISTRIBUTION, version=installed(DISTRIBUTION) or "?")]
        if pins:
            said.append(text("hosted.ready_kept", kept=", ".join(pins)))
        said.append(text("hosted.ready_installed", installed=", ".join(needed)) if needed
                    else text("hosted.ready_nothing_installed"))
        print(joined(said, "clauses"), file=out)
    for note in _torch_notes(installed("torch"), missing_apis):
        print(note, file=out)
    return {"runtime": name, "installed": needed, "kept": pins, "returncode": code}
