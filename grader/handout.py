"""``python -m grader.handout [--out DIR] [--edition zh|en|both] [--zip]``: what students get.

The handout is a folder (and, with ``--zip``, ``DIR.zip``) holding the student notebooks of one
or both editions (``notebooks/`` and ``notebooks/en/``, as ``make notebooks`` generates them from
the solutions: exercises stubbed, hidden answers removed), the lab package ``labs/`` (no caches),
the README's student part (everything above the instructor guide; the English one as
``README.md`` in an English-only handout), and what ``make lab`` needs (``requirements.txt``,
``pyproject.toml``, ``Makefile``, ``environment.yml``, the licences and the errata). It holds no
``solutions/``, no ``grader/`` and no secret: the hidden cases come from the instructor's
``--secret`` at grading time and are never written anywhere.

Owns: choosing and copying the handout's files. Must not: generate notebooks (``make notebooks``
does, before), grade, or write anything outside ``DIR``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from labs.messages import text

__all__ = ["EDITIONS", "INSTRUCTOR_HEADINGS", "build", "student_readme", "main"]

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = {"zh": ("notebooks", "README.md", "ERRATA.md"),
            "en": ("notebooks/en", "README.en.md", "ERRATA.en.md")}
# The first heading of each README's part that is not for students (instructors, contributors).
INSTRUCTOR_HEADINGS = {"README.md": "## 讲师指南", "README.en.md": "## Instructor guide"}
COMMON = ("requirements.txt", "pyproject.toml", "Makefile", "environment.yml", "LICENSE",
          "LICENSE-docs")
MARK = ".course-handout"  # a folder holding it is ours to rebuild


def student_readme(name: str, root: Path = ROOT) -> str:
    """The README ``name`` up to (not including) its instructor guide."""
    text = (root / name).read_text(encoding="utf-8")
    heading = INSTRUCTOR_HEADINGS[name]
    found = re.search(rf"^{re.escape(heading)}", text, flags=re.M)
    if found is None:
        raise ValueError(f"{name}: no heading {heading!r}")
    return text[:found.start()].rstrip() + "\n"


def _editions(edition: str) -> list[str]:
    if edition == "both":
        return ["zh", "en"]
    if edition not in EDITIONS:
        raise ValueError(f"edition {edition!r}: zh, en or both")
    return [edition]


def build(out: Path, edition: str = "both", root: Path = ROOT) -> Path:
    """Write the handout into ``out`` (replaced when it is an earlier handout; refused when it
    is another non-empty folder). Returns ``out``."""
    out = Path(out)
    editions = _editions(edition)
    if out.exists():
        if not (out / MARK).is_file() and any(out.iterdir()):
            raise FileExistsError(f"{out} exists and is not a handout: refusing to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARK).write_text(f"editions: {' '.join(editions)}\n", encoding="utf-8")
    for ed in editions:
        folder, readme, errata = EDITIONS[ed]
        notebooks = sorted((root / folder).glob("*.ipynb"))
        if not notebooks:
            raise FileNotFoundError(f"no student notebooks in {root / folder} (make notebooks)")
        (out / folder).mkdir(parents=True, exist_ok=True)
        for nb in notebooks:
            shutil.copy2(nb, out / folder / nb.name)
        name = "README.md" if editions == ["en"] else readme
        (out / name).write_text(student_readme(readme, root), encoding="utf-8")
        if (root / errata).is_file():
            shutil.copy2(root / errata, out / errata)
    shutil.copytree(root / "labs", out / "labs", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
    for name in COMMON:
        if (root / name).is_file():
            shutil.copy2(root / name, out / name)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader.handout",
        description="Build what students get: student notebooks, labs/, the README's student "
                    "part; no solutions/, no grader/.")
    parser.add_argument("--out", type=Path, default=Path("handout"),
                        help="the handout folder (default: ./handout)")
    parser.add_argument("--edition", choices=["zh", "en", "both"], default="both",
                        help="which edition's notebooks (default: both)")
    parser.add_argument("--zip", action="store_true", help="also write OUT.zip")
    args = parser.parse_args(argv)
    try:
        out = build(args.out, args.edition)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    files = sum(1 for p in out.rglob("*") if p.is_file())
    print(text("grade.handout_written", folder=out, files=files))
    if args.zip:
        archive = shutil.make_archive(str(out), "zip", root_dir=out.parent, base_dir=out.name)
        print(text("grade.handout_archive", archive=archive))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
