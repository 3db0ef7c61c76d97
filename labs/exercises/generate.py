"""Generate the student notebooks (``notebooks/``) from the solution notebooks (``solutions/``).

In a solution code cell, exercise code sits between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` (nbgrader's markers). An ``### EXERCISE: <n>`` line directly before
``### BEGIN SOLUTION`` names the exercise (练习 n, as the notebook's heading numbers it). The
student version replaces each block with ``raise NotImplementedError("练习未完成：练习 n。…")``
(English edition: ``"Exercise not done yet: Exercise n. …"``) at the same indentation: the message names the exercise and says where its hints are (the
collapsible ``<details><summary>练习 n · 提示 k</summary>`` blocks in the markdown above), and
never gives code or a formula. The old ``### HINT: <text>`` line, which put the hint (too often
the answer) into the stub, is refused. The student version also clears outputs and
execution counts, drops cells tagged ``solution-only``, and tags every graded check cell
(``metadata.nbgrader.grade``) with ``raises-exception`` so that "Run All" and nbval go on past an
unfinished exercise. A cell whose stub sits at top level (not inside a function) would itself
raise on "Run All", so it gets the tag too. The output is deterministic byte for byte.

The stubs speak the notebook's language (:mod:`labs.messages`, catalog ``checks``):
``metadata.course.language`` if the solution notebook has it, else its edition folder
(``solutions/en/`` is English), else Chinese -- never the language of the shell that runs this.

    python -m labs.exercises.generate [--src solutions] [--dst notebooks] [--check] [--prune]

Owns: solution-to-student conversion and its command line. Must not: import the checks, the grader
or torch; run a notebook; or edit ``solutions/``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import re
import sys
import warnings
from pathlib import Path

import nbformat

from labs.messages import DEFAULT_LANGUAGE, EDITION_FOLDERS, LANGUAGES, text

__all__ = ["stub_message", "notebook_language",
           "is_graded", "graded_cells", "strip_solutions", "make_student_notebook", "dumps",
           "render", "out_of_sync", "generate", "main"]

BEGIN_RE = re.compile(r"^(?P<indent>[ \t]*)#+\s*BEGIN SOLUTION\s*$")
END_RE = re.compile(r"^[ \t]*#+\s*END SOLUTION\s*$")
EXERCISE_RE = re.compile(r"^[ \t]*#+\s*EXERCISE:\s*(?P<number>\d+)\s*$")
HINT_RE = re.compile(r"^[ \t]*#+\s*HINT:")
# Old module attributes, now their messages: STUB_MARKER (the prefix of every stub's message),
# DEFAULT_HINT (what a stub without an exercise number says after it), MARKDOWN_STUB (what
# replaces a solution in a markdown cell).
_MOVED = {"STUB_MARKER": "checks.stub_marker", "DEFAULT_HINT": "checks.stub_default_hint",
          "MARKDOWN_STUB": "checks.stub_markdown"}
SOLUTION_ONLY_TAG = "solution-only"
RAISES_TAG = "raises-exception"
# Notebook metadata kept in the student version (everything else is editor state).
KEEP_NB_METADATA = ("kernelspec", "language_info", "course")
# Cell metadata dropped from the student version (volatile execution state).
DROP_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")


def __getattr__(name: str):  # deprecated aliases, not a language mechanism
    if name in _MOVED:
        warnings.warn(f"{__name__}.{name} is deprecated: use labs.messages.text({_MOVED[name]!r})",
                      DeprecationWarning, stacklevel=2)
        return text(_MOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def stub_message(number: int | str | None, lang: str | None = None) -> str:
    """The text a stub raises: names exercise ``number`` and points to its hints, nothing more
    (in ``lang``, default the language of the moment)."""
    marker = text("checks.stub_marker", lang=lang)
    if number is None:
        return text("checks.stub_default", lang=lang, marker=marker)
    return text("checks.stub", lang=lang, marker=marker, number=number)


def notebook_language(nb, path: str | Path | None = None) -> str:
    """The language of solution notebook ``nb`` (at ``path``): ``metadata.course.language``,
    else its edition folder (``solutions/en/``), else the course's first language."""
    chosen = nb.metadata.get("course", {}).get("language")
    if chosen in LANGUAGES:
        return chosen
    if path is not None:
        return EDITION_FOLDERS.get(Path(path).parent.name, DEFAULT_LANGUAGE)
    return DEFAULT_LANGUAGE


def is_graded(cell) -> bool:
    """A graded check cell: a code cell with ``metadata.nbgrader.grade`` true."""
    return cell.cell_type == "code" and bool(cell.metadata.get("nbgrader", {}).get("grade"))


def graded_cells(nb) -> dict:
    """``{grade_id: cell}`` of the graded check cells, in notebook order."""
    cells = {}
    for index, cell in enumerate(nb.cells):
        if is_graded(cell):
            grade_id = cell.metadata["nbgrader"].get("grade_id")
            if not grade_id:
                raise ValueError(f"graded cell #{index} has no metadata.nbgrader.grade_id")
            if grade_id in cells:
                raise ValueError(f"duplicate grade_id {grade_id!r} (cell #{index})")
            cells[grade_id] = cell
    return cells


def _py_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def strip_solutions(source: str, *, markdown: bool = False,
                    lang: str | None = None) -> tuple[str, bool]:
    """Replace every BEGIN/END SOLUTION block of ``source`` with a stub (in ``lang``).

    Returns the new source and whether a stub sits at top level (indentation zero).
    Raises ValueError on unbalanced markers.
    """
    out: list[str] = []
    top_level = False
    inside = False
    for number, line in enumerate(source.split("\n"), 1):
        begin, end = BEGIN_RE.match(line), END_RE.match(line)
        if inside:
            if begin:
                raise ValueError(f"line {number}: nested BEGIN SOLUTION")
            inside = not end
            continue
        if end:
            raise ValueError(f"line {number}: END SOLUTION without BEGIN SOLUTION")
        if HINT_RE.match(line):
            summary = text("checks.hint_summary_example", lang=lang)
            raise ValueError(f"line {number}: '### HINT:' is retired (a stub must not carry the "
                             "answer): mark the block with '### EXERCISE: <n>' and put the hints "
                             f"in <details><summary>{summary}</summary> markdown")
        if not begin:
            out.append(line)
            continue
        inside = True
        exercise = None
        if out and EXERCISE_RE.match(out[-1]):
            exercise = EXERCISE_RE.match(out.pop()).group("number")
        indent = begin.group("indent")
        if markdown:
            out.append(text("checks.stub_markdown", lang=lang))
        else:
            message = stub_message(exercise, lang=lang)
            out.append(f"{indent}raise NotImplementedError({_py_string(message)})")
            top_level = top_level or indent == ""
    if inside:
        raise ValueError("BEGIN SOLUTION without END SOLUTION")
    return "\n".join(out), top_level


def _add_tag(cell, tag: str) -> None:
    tags = list(cell.metadata.get("tags", []))
    if tag not in tags:
        cell.metadata["tags"] = tags + [tag]


def make_student_notebook(nb, name: str | None = None, lang: str | None = None):
    """Return the student version of solution notebook ``nb`` (``nb`` is not modified).

    ``name`` (the file name) is recorded as ``metadata.course.notebook`` so the grader finds
    the source of a renamed submission. The stubs speak ``lang`` (default:
    :func:`notebook_language` of ``nb``).
    """
    graded_cells(nb)  # validates grade ids
    lang = lang or notebook_language(nb)
    nb = copy.deepcopy(nb)
    nb.nbformat, nb.nbformat_minor = 4, max(int(nb.get("nbformat_minor", 0)), 5)
    metadata = {key: nb.metadata[key] for key in KEEP_NB_METADATA if key in nb.metadata}
    if "language_info" in metadata:  # the version differs between machines; keep the name
        metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
    if name is not None:
        metadata["course"] = {**metadata.get("course", {}), "notebook": name}
    nb.metadata = nbformat.from_dict(metadata)

    cells, seen_ids = [], set()
    for index, cell in enumerate(nb.cells):
        tags = cell.metadata.get("tags", [])
        if SOLUTION_ONLY_TAG in tags:
            continue
        where = f"{name or 'notebook'} cell #{index}"
        try:
            source, top_level = strip_solutions(cell.source, markdown=cell.cell_type != "code",
                                                lang=lang)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if is_graded(cell) and source != cell.source:
            raise ValueError(f"{where}: a graded check cell must not contain a solution block")
        cell.source = source
        for key in DROP_CELL_METADATA:
            cell.metadata.pop(key, None)
        if tags:
            cell.metadata["tags"] = list(dict.fromkeys(tags))
        elif "tags" in cell.metadata:
            del cell.metadata["tags"]
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            if is_graded(cell):
                _add_tag(cell, RAISES_TAG)
                cell.metadata["editable"] = False
                cell.metadata["deletable"] = False
            elif top_level:
                _add_tag(cell, RAISES_TAG)
        cell_id = cell.get("id")
        if not cell_id or cell_id in seen_ids:
            cell_id = hashlib.sha1(f"{name}:{index}:{cell.source}".encode()).hexdigest()[:12]
        cell["id"] = cell_id
        seen_ids.add(cell_id)
        cells.append(cell)
    nb.cells = cells
    return nb


def dumps(nb) -> bytes:
    """Serialize like ``nbformat.write`` does (sorted keys, indent 1, trailing newline)."""
    text = nbformat.writes(nb, version=4)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def render(path: Path) -> bytes:
    """The bytes of the student notebook generated from solution notebook ``path``."""
    nb = nbformat.read(str(path), as_version=4)
    return dumps(make_student_notebook(nb, name=path.name, lang=notebook_language(nb, path)))


def _notebooks(folder: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(folder.glob("*.ipynb"))} if folder.is_dir() else {}


def out_of_sync(src: Path, dst: Path) -> list[str]:
    """Lines describing every student notebook that differs from what would be generated."""
    sources, targets = _notebooks(Path(src)), _notebooks(Path(dst))
    problems = []
    for name, path in sources.items():
        target = Path(dst) / name
        if name not in targets:
            problems.append(f"missing:   {target} (run python -m labs.exercises.generate)")
        elif target.read_bytes().replace(b"\r\n", b"\n") != render(path):  # git autocrlf
            problems.append(f"different: {target} (regenerate it; never edit it by hand)")
    for name in sorted(set(targets) - set(sources)):
        problems.append(f"extra:     {targets[name]} (no {Path(src) / name}; use --prune)")
    return problems


def generate(src: Path, dst: Path, *, prune: bool = False) -> list[Path]:
    """Write every student notebook that changed; returns the paths written (or removed)."""
    src, dst = Path(src), Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    changed = []
    sources = _notebooks(src)
    for name, path in sources.items():
        data, target = render(path), dst / name
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
            changed.append(target)
    for name, path in _notebooks(dst).items():
        if name not in sources and prune:
            path.unlink()
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.exercises.generate",
        description="Generate student notebooks from solution notebooks.")
    parser.add_argument("--src", default="solutions", help="solution notebooks (default: solutions)")
    parser.add_argument("--dst", default="notebooks", help="student notebooks (default: notebooks)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 listing notebooks that are out of sync")
    parser.add_argument("--prune", action="store_true",
                        help="remove student notebooks that have no solution notebook")
    args = parser.parse_args(argv)
    src, dst = Path(args.src), Path(args.dst)
    if not _notebooks(src):
        print(f"error: no *.ipynb in {src}", file=sys.stderr)
        return 2
    try:
        if args.check:
            problems = out_of_sync(src, dst)
            for line in problems:
                print(line)
            if problems:
                print(f"{len(problems)} student notebook(s) out of sync with {src}", file=sys.stderr)
                return 1
            print(f"{dst} is in sync with {src}")
            return 0
        changed = generate(src, dst, prune=args.prune)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"{'removed' if not path.exists() else 'wrote'} {path}")
    extra = sorted(set(_notebooks(dst)) - set(_notebooks(src)))
    for name in extra:
        print(f"warning: {dst / name} has no source in {src} (use --prune)", file=sys.stderr)
    if not changed:
        print(f"{dst} already up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
