"""The README's exercise table, generated from the declaration (labs/exercises/text.py).

``python -m labs.exercises.readme`` prints the table; ``--write [README.md]`` puts it into the
README's section ``## 练习一览`` (tests/labs/exercises/test_exercise_declaration.py checks the README equals it).
Owns only the table's layout; the facts come from labs.exercises.catalog. Must not import the
checks or the grader.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from labs.exercises import catalog
from labs.messages import text

__all__ = ["table", "in_readme", "write"]


def _pattern(lang: str = "zh") -> re.Pattern:
    """The README's section (``## 练习一览``) up to its table, and the table: from its header
    row to the first blank line."""
    section = re.escape(text("exercises.readme_section", lang=lang))
    header = re.escape(text("exercises.table_header", lang=lang))
    return re.compile(rf"(^{section}\n.*?)(^{header}.*?\n)(?=\n|\Z)", re.M | re.S)


def table(lang: str = "zh") -> str:
    """One row per exercise, in the course's order: notebook, 练习 n：title, points, difficulty."""
    rows = [text("exercises.table_header", lang=lang), "|---|---|---|---|"]
    rows += [text("exercises.table_row", lang=lang, notebook=e.notebook, number=e.number,
                  title=catalog.title(e.id, lang), points=e.points,
                  difficulty=catalog.difficulty(e.id, lang))
             for e in sorted(catalog.EXERCISES.values(), key=lambda e: (e.notebook, e.number))]
    return "\n".join(rows) + "\n"


def in_readme(source: str) -> str | None:
    """The exercise table the README's text ``source`` holds now (None: no such section)."""
    found = _pattern().search(source)
    return found.group(2) if found else None


def write(path: Path) -> bool:
    """Put the generated table into the README at ``path``; True when that changed it."""
    old = path.read_text(encoding="utf-8")
    if in_readme(old) is None:
        raise SystemExit(f"{path}: no table under {text('exercises.readme_section', lang='zh')!r}")
    new = _pattern().sub(lambda m: m.group(1) + table("zh"), old, count=1)
    if new != old:
        path.write_text(new, encoding="utf-8")
    return new != old


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m labs.exercises.readme",
                                     description="The README's exercise table, from the declaration.")
    parser.add_argument("--write", type=Path, nargs="?", const=Path("README.md"), metavar="README",
                        help="write the table into this README (default: README.md)")
    args = parser.parse_args(argv)
    if args.write is None:
        print(table(), end="")
    else:
        print(f"{args.write}: {'updated' if write(args.write) else 'up to date'}")


if __name__ == "__main__":
    main()
