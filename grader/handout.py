"""``python -m grader.handout [--out DIR] [--edition zh|en|both] [--zip]``: what students get.

The handout is a folder (and, with ``--zip``, ``DIR.zip``: what a hosted notebook's first cell
installs, see :data:`labs.notebook.hosted.HANDOUT_URL`) that stands alone: the student notebooks of one or
both editions (``notebooks/`` and ``notebooks/en/``, as ``make notebooks`` generates them from the
solutions: exercises stubbed, hidden answers removed), the lab package ``labs/`` (no caches), the
students' own README (``handout_files/README.md`` and ``README.en.md`` beside this module: install,
check, open, hand in, ask; the English one as ``README.md`` in an English-only handout) and errata,
the students' ``Makefile`` (``handout_files/Makefile``: ``setup``, ``lab``, ``check``, ``doctor``,
``clean``; its default edition the handout's first), and what they need (``requirements.txt``,
``pyproject.toml``, ``environment.yml``, the licences). It holds no ``solutions/``, no ``grader/``,
no tests and no secret: the hidden cases come from the instructor's ``--secret`` at grading time
and are never written anywhere. Every relative link of its READMEs and errata resolves inside it
(a link the errata make to a file an edition's handout lacks keeps its text, not its target).

Owns: choosing, writing and copying the handout's files. Must not: generate notebooks (``make
notebooks`` does, before), grade, or write anything outside ``DIR`` (and ``DIR.zip``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from labs.messages import text

__all__ = ["EDITIONS", "FILES", "BOTH_ONLY", "build", "readme", "makefile", "links", "main"]

ROOT = Path(__file__).resolve().parents[1]
#: Per edition: its notebooks' folder, its README and its errata.
EDITIONS = {"zh": ("notebooks", "README.md", "ERRATA.md"),
            "en": ("notebooks/en", "README.en.md", "ERRATA.en.md")}
#: The handout's own README (one per edition) and Makefile, kept beside this module.
FILES = Path(__file__).resolve().parent / "handout_files"
#: Ends a README line that only a handout of both editions keeps (the language switch, the other
#: edition's folder).
BOTH_ONLY = "<!-- both editions -->"
COMMON = ("requirements.txt", "pyproject.toml", "environment.yml", "LICENSE", "LICENSE-docs")
MARK = ".course-handout"  # a folder holding it is ours to rebuild
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def readme(name: str, both: bool, files: Path = FILES) -> str:
    """The students' README ``name`` (``README.md`` or ``README.en.md``): the lines ending in
    :data:`BOTH_ONLY` kept (without it) only when ``both`` editions are handed out."""
    lines = []
    for line in (files / name).read_text(encoding="utf-8").splitlines():
        if line.rstrip().endswith(BOTH_ONLY):
            if not both:
                continue
            line = line.rstrip()[:-len(BOTH_ONLY)].rstrip()
        lines.append(line)
    return "\n".join(lines).rstrip() + "\n"


def makefile(edition: str, files: Path = FILES) -> str:
    """The students' Makefile, ``make lab`` opening ``edition`` unless told otherwise."""
    return (files / "Makefile").read_text(encoding="utf-8").replace("@EDITION@", edition)


def links(markdown: str) -> list[str]:
    """The relative link targets of ``markdown`` (no URL, no anchor of the same page), without
    their ``#anchor``."""
    targets = (m.group(3) for m in _LINK.finditer(markdown))
    return [t.split("#")[0] for t in targets
            if not re.match(r"^[a-z][a-z0-9+.-]*:", t, flags=re.I) and not t.startswith("#")]


def _unlink_missing(markdown: str, out: Path) -> str:
    """``markdown`` (a file at the top of ``out``) with each link to a file ``out`` lacks turned
    into its text."""
    def keep(m: re.Match) -> str:
        target = links(m.group(0))
        return m.group(0) if not target or (out / target[0]).exists() else m.group(2)
    return _LINK.sub(keep, markdown)


def _editions(edition: str) -> list[str]:
    if edition == "both":
        return ["zh", "en"]
    if edition not in EDITIONS:
        raise ValueError(f"edition {edition!r}: zh, en or both")
    return [edition]


def build(out: Path, edition: str = "both", root: Path = ROOT, files: Path = FILES) -> Path:
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
    errata = []
    for ed in editions:
        folder, name, errata_name = EDITIONS[ed]
        notebooks = sorted((root / folder).glob("*.ipynb"))
        if not notebooks:
            raise FileNotFoundError(f"no student notebooks in {root / folder} (make notebooks)")
        (out / folder).mkdir(parents=True, exist_ok=True)
        for nb in notebooks:
            shutil.copy2(nb, out / folder / nb.name)
        written = "README.md" if editions == ["en"] else name
        (out / written).write_text(readme(name, len(editions) > 1, files), encoding="utf-8")
        if (root / errata_name).is_file():
            errata.append(errata_name)
    shutil.copytree(root / "labs", out / "labs", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
    for name in COMMON:
        if (root / name).is_file():
            shutil.copy2(root / name, out / name)
    (out / "Makefile").write_text(makefile(editions[0], files), encoding="utf-8")
    for name in errata:  # after everything else: a link is kept when its file is there
        body = (root / name).read_text(encoding="utf-8")
        (out / name).write_text(_unlink_missing(body, out), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grader.handout",
        description="Build what students get: student notebooks, labs/, their README and "
                    "Makefile; no solutions/, no grader/, no tests.")
    parser.add_argument("--out", type=Path, default=Path("handout"),
                        help="the handout folder (default: ./handout)")
    parser.add_argument("--edition", choices=["zh", "en", "both"], default="both",
                        help="which edition's notebooks (default: both)")
    parser.add_argument("--zip", action="store_true",
                        help="also write OUT.zip (what hosted notebooks install: labs.notebook.hosted)")
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
