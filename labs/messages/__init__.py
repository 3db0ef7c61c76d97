"""The course's words in the notebook's language: the language, the lookup, the catalogs' map.

Every sentence that ``labs/`` shows a student -- printed results and their interpretation,
plot titles and labels, check verdicts, launcher errors, ``labs doctor``, the grader's report --
is a key of one catalog, with its text in each language of :data:`LANGUAGES`::

    from labs.messages import text
    raise ValueError(text("launcher.world_size_too_large", world_size=9, most=2))

Each catalog lives beside the code that says it (issue 38): ``labs/pipeline/text.py`` holds
what labs.pipeline says, ``labs/exercises/text_2_3.py`` what notebook 2.3's checks say; the
grader's in ``grader/``; a package whose ``__init__`` speaks names its catalog
``text_<package>.py``, so that the module does not hide the function :func:`text` there
(``labs/models/text_models.py``). :data:`CATALOGS` maps each area to its module. A new sentence goes into its
package's catalog, both languages side by side.

A key is ``area.name``: the catalog is the module ``CATALOGS[area]``, whose ``MESSAGES``
maps ``name`` to ``{"zh": ..., "en": ...}``; the texts are ``str.format`` templates and every
language uses the same fields (tests/labs/messages/test_messages.py checks both, and that no Chinese string
literal is left in ``labs/`` or ``grader/`` outside the catalogs).

A sentence is one key, whole: what varies in it is a named field (a number, a name, code),
never a piece of language -- a noun phrase, "higher", a connecting word -- that code splices
into the middle of another sentence; a sentence with two forms (higher or lower, computed or
received) is two keys. A short text is a complete label (a column header, a legend entry, a control's label,
a unit, a case's name; a label in front of a colon and a whole sentence), and its module lists
it in ``LABELS`` beside ``MESSAGES`` (tests/labs/messages/test_messages.py counts the others).

Every key is written out in full where it is used (``text("area.name")``, or a dict literal
from a value to its key), never built at run time, so that grep finds every use of a message.
Text made before its language is known (a table of case labels at import time) is a
:class:`Message` (``lazy(key, **fields)``), formatted when shown: the one deferred form.

The language, first that applies:

1. :func:`set_language` (``labs.messages.set_language("en")``), for this process and the ranks
   it launches (it sets ``LABS_LANG``, which the launcher passes on);
2. the environment variable ``LABS_LANG`` (``zh`` or ``en``); the grader sets it from the
   submission's ``metadata.course.language``;
3. the notebook's edition: a notebook under a folder named ``en`` (``notebooks/en/``,
   ``solutions/en/``) is English. The kernel knows its notebook from ``JPY_SESSION_NAME``
   (JupyterLab) or, under nbval, nbconvert and the grader, from its working folder, which is
   the notebook's. In JupyterLab a notebook moved out of its edition's folder (a student's
   copy on the desktop) still speaks its language: its own ``metadata.course.language``;
4. Chinese, the course's first edition.

Owns: the language (its one piece of process state), the lookup, the map of catalogs and the
loaded ones. Must not: import anything of labs at import time (a catalog module, which is data,
is imported by name when its area is first used; the grader's only when the grader asks), or
print.
"""

from __future__ import annotations

import importlib
import os
import string
from pathlib import Path

__all__ = ["LANGUAGES", "DEFAULT_LANGUAGE", "LANG_ENV", "language", "set_language", "text",
           "Message", "lazy", "sentences", "catalog", "areas", "fields", "joined", "CATALOGS"]

LANGUAGES = ("zh", "en")
DEFAULT_LANGUAGE = "zh"
LANG_ENV = "LABS_LANG"
#: The folder name that marks an English notebook (notebooks/en/, solutions/en/).
EDITION_FOLDERS = {"en": "en"}

_catalogs: dict[str, dict] = {}


def _edition_of(path: str | os.PathLike | None) -> str | None:
    if not path:
        return None
    for part in Path(path).parts[:-1] if str(path).endswith(".ipynb") else Path(path).parts:
        if part in EDITION_FOLDERS:
            return EDITION_FOLDERS[part]
    return None


_declared_cache: dict = {}


def _declared(session: str) -> str | None:
    """``metadata.course.language`` of the notebook file a JupyterLab session names (read once
    per version of the file), or None."""
    path = Path(session)
    if not path.is_absolute():
        try:
            path = Path.cwd() / path.name  # the kernel runs in the notebook's folder
        except OSError:
            return None
    try:
        stamp = (str(path), path.stat().st_mtime_ns)
    except OSError:
        return None
    if stamp not in _declared_cache:
        lang = None
        try:
            import json

            with open(path, encoding="utf-8") as f:
                course = json.load(f).get("metadata", {}).get("course", {})
            lang = course.get("language") if isinstance(course, dict) else None
        except (OSError, ValueError, AttributeError):
            pass
        _declared_cache.clear()
        _declared_cache[stamp] = lang if lang in LANGUAGES else None
    return _declared_cache[stamp]


def language() -> str:
    """The language the course speaks now: ``"zh"`` or ``"en"`` (see the module's docstring)."""
    chosen = os.environ.get(LANG_ENV, "").strip().lower()
    if chosen:
        if chosen not in LANGUAGES:
            raise ValueError(f"{LANG_ENV}={chosen!r}: the course speaks {' or '.join(LANGUAGES)}; "
                             f"set {LANG_ENV}=zh or {LANG_ENV}=en, or unset it.")
        return chosen
    session = os.environ.get("JPY_SESSION_NAME")
    if session:
        return _edition_of(session) or _declared(session) or DEFAULT_LANGUAGE
    try:
        here = Path.cwd()
    except OSError:
        return DEFAULT_LANGUAGE
    return EDITION_FOLDERS.get(here.name, DEFAULT_LANGUAGE)


def set_language(lang: str | None) -> None:
    """Speak ``lang`` from now on, here and in the ranks launched from here (None: back to the
    default rules)."""
    if lang is None:
        os.environ.pop(LANG_ENV, None)
        return
    if lang not in LANGUAGES:
        raise ValueError(f"language {lang!r}: choose one of {', '.join(LANGUAGES)}.")
    os.environ[LANG_ENV] = lang


#: area -> the module holding its ``MESSAGES``, beside the code that says them.
CATALOGS = {
    "collectives": "labs.collectives.text_collectives",
    "models": "labs.models.text_models",
    "summary": "labs.summary.text_summary",
    "cost": "labs.formulas.text_cost",
    "memory": "labs.formulas.text_memory",
    "hosted": "labs.notebook.text_hosted",
    "plots": "labs.notebook.text_plots",
    "data_parallel": "labs.data_parallel.text",
    "tensor_parallel": "labs.tensor_parallel.text",
    "tensor_parallel_readings": "labs.tensor_parallel.text_readings",
    "pipeline": "labs.pipeline.text",
    "pipeline_readings": "labs.pipeline.text_readings",
    "hybrid": "labs.hybrid.text",
    "planner": "labs.planner.text",
    "widgets": "labs.planner.text_widgets",
    "runtime": "labs.runtime.text",
    "doctor": "labs.runtime.text_doctor",
    "exercises": "labs.exercises.text",
    "checks": "labs.exercises.text_checks",
    "invariants": "labs.exercises.text_invariants",
    **{f"checks_2_{n}": f"labs.exercises.text_2_{n}" for n in range(6)},
    # The grader's (the package beside labs): loaded only when the grader asks for its words.
    "grade": "grader.text",
    "record": "grader.text_record",
}


def catalog(area: str) -> dict[str, dict[str, str]]:
    """The messages of ``area`` (the module ``CATALOGS[area]``)."""
    if area not in _catalogs:
        if area not in CATALOGS:
            raise KeyError(f"no message catalog {area!r} (labs.messages.CATALOGS)")
        _catalogs[area] = importlib.import_module(CATALOGS[area]).MESSAGES
    return _catalogs[area]


def areas() -> list[str]:
    """The names of every catalog."""
    return sorted(CATALOGS)


def text(key: str, /, lang: str | None = None, **values) -> str:
    """The message ``key`` (``area.name``) in ``lang`` (default: :func:`language`), with
    ``values`` filled in."""
    area, _, name = key.partition(".")
    entry = catalog(area).get(name)
    if entry is None:
        raise KeyError(f"no message {key!r} in {CATALOGS.get(area, area)}")
    template = entry[lang or language()]
    return template.format(**values) if values or "{" in template else template


def sentences(*parts: str, lang: str | None = None) -> str:
    """Sentences run together as ``lang`` (default: :func:`language`) writes them: no space in
    Chinese, one in English; empty parts left out, and a sentence given twice said once."""
    return ("" if (lang or language()) == "zh" else " ").join(dict.fromkeys(p for p in parts if p))


#: How each language runs items together: a list (a、b / a, b), settings or numbers with
#: units (a，b / a, b), clauses (a；b / a; b).
_JOINERS = {"list": {"zh": "、", "en": ", "}, "comma": {"zh": "，", "en": ", "},
            "clauses": {"zh": "；", "en": "; "}}


def joined(items, kind: str = "list", lang: str | None = None) -> str:
    """``items`` (as strings) run together as ``lang`` (default: :func:`language`) writes a
    ``kind`` of :data:`_JOINERS`: ``"list"``, ``"comma"`` or ``"clauses"``."""
    return _JOINERS[kind][lang or language()].join(map(str, items))


class Message:
    """A message to show later: a key and its fields, formatted in the language of the moment
    when it is shown (``str()``, ``format()``, or as a field of another message). For text
    built at import time, e.g. a table of case labels."""

    __slots__ = ("key", "fields")

    def __init__(self, key: str, /, **fields):
        self.key = key
        self.fields = fields

    def __str__(self) -> str:
        return text(self.key, **self.fields)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"lazy({self.key!r}, **{self.fields!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Message) and (self.key, self.fields) == (other.key, other.fields)

    def __hash__(self) -> int:
        return hash(self.key)


def lazy(key: str, /, **fields) -> Message:
    """The message ``key`` with ``fields``, formatted only when shown (see :class:`Message`)."""
    return Message(key, **fields)


def fields(template: str) -> set[str]:
    """The names a template fills in (``{rank}``, ``{size:.1f}`` -> {"rank", "size"})."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(template) if name}
