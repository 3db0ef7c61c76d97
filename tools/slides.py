"""Slides made from the solution notebooks: reveal.js decks built by nbconvert (``make slides``).

    python tools/slides.py mark              # write the slide metadata into solutions/ and solutions/en/
    python tools/slides.py mark --check      # exit 1 when a notebook's slide metadata is not what mark writes
    python tools/slides.py build [--out slides] [--assets DIR] [NOTEBOOK ...]
    python tools/slides.py fetch-assets DIR  # reveal.js, require.js and MathJax with npm, for --assets

Every cell gets ``metadata.slideshow.slide_type`` (what nbconvert's reveal.js slides and RISE read),
by these rules, so that the decks can be rebuilt and the metadata checked:

- a markdown cell with a ``#`` or ``##`` heading starts a slide; one with a ``###`` heading (and
  none higher) a sub-slide (below it, reveal.js' down arrow); other markdown continues the slide;
- a code cell continues the slide of the text above it, with its outputs (figures included);
- skipped (not on any slide): the hosted-setup cell (Colab/Kaggle bootstrap), every exercise's
  solution and check cell (``metadata.nbgrader``, a ``BEGIN SOLUTION`` block, the
  ``solution-only`` tag), and every code cell from an exercise's heading (``### 练习 n`` /
  ``### Exercise n``) up to the next ``##`` heading: reference code shown after an exercise.
  The exercises' statements stay, so the instructor can put a task on the projector.

Decks come from solutions/ (executed: outputs and figures) into OUT/zh/ and OUT/en/, one
``<name>.slides.html`` each, long slides scrolling. By default the browser loads reveal.js,
require.js and MathJax from their CDNs when the deck is opened; ``--assets DIR`` (a folder that
``fetch-assets`` filled) copies them beside the decks and points the decks at the copies, so the
decks open without a network.

Must not: execute a notebook, change anything in a notebook but ``metadata.slideshow`` (``mark``),
or write into solutions/ when building.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = {"zh": ROOT / "solutions", "en": ROOT / "solutions" / "en"}
HEADING = re.compile(r"^(#{1,6})\s+\S", re.M)
EXERCISE = re.compile(r"^###\s+(练习\s*\d+|Exercise\s+\d+)", re.M)
FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1", re.M | re.S)
HOSTED_TAG, SOLUTION_ONLY_TAG = "hosted-setup", "solution-only"
# What --assets DIR holds (fetch-assets lays it out so): npm package -> the folder it unpacks to.
ASSETS = {"reveal.js@4.0.2": "reveal.js", "requirejs@2.3.7": "requirejs",
          "mathjax@2.7.9": "mathjax"}
# What the decks load of them (MathJax: the TeX input and CommonHTML output only, about 15 of
# its 73 MB).
COPIED = ("reveal.js/dist", "reveal.js/plugin", "requirejs/require.js", "mathjax/MathJax.js",
          "mathjax/config", "mathjax/extensions", "mathjax/jax/input", "mathjax/jax/element",
          "mathjax/jax/output/CommonHTML", "mathjax/fonts/HTML-CSS/TeX/woff",
          "mathjax/localization")


def heading_levels(markdown: str) -> list[int]:
    """The levels of the headings of a markdown cell, outside fenced code blocks."""
    return [len(m.group(1)) for m in HEADING.finditer(FENCE.sub("", markdown))]


def slide_types(cells) -> list[str]:
    """The ``slide_type`` of every cell (``slide``, ``subslide``, ``-`` or ``skip``), by the
    rules of the module docstring. ``cells`` are nbformat cells (dicts)."""
    types, after_exercise = [], False
    for cell in cells:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown":
            levels = heading_levels(source)
            if EXERCISE.search(FENCE.sub("", source)):
                after_exercise = True
            elif levels and min(levels) <= 2:
                after_exercise = False
            if "BEGIN SOLUTION" in source or SOLUTION_ONLY_TAG in tags:
                types.append("skip")
            elif levels and min(levels) <= 2:
                types.append("slide")
            elif levels and min(levels) == 3:
                types.append("subslide")
            else:
                types.append("-")
        elif cell["cell_type"] == "code":
            hidden = (HOSTED_TAG in tags or SOLUTION_ONLY_TAG in tags or after_exercise
                      or "nbgrader" in cell.get("metadata", {}) or "BEGIN SOLUTION" in source)
            types.append("skip" if hidden else "-")
        else:  # raw cells are not for the audience
            types.append("skip")
    return types


def notebooks(editions=EDITIONS) -> list[Path]:
    return [p for folder in editions.values() for p in sorted(folder.glob("*.ipynb"))]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def unmarked(path: Path) -> list[int]:
    """The cells of ``path`` whose slide metadata differs from what :func:`mark` writes."""
    cells = _load(path)["cells"]
    return [i for i, (cell, kind) in enumerate(zip(cells, slide_types(cells)))
            if cell.get("metadata", {}).get("slideshow") != {"slide_type": kind}]


def mark(path: Path) -> bool:
    """Write the slide metadata into notebook ``path``; True when the file changed. Only
    ``metadata.slideshow`` changes; the file is written as nbformat writes it (sorted keys,
    indent 1), as every notebook of the course is."""
    if not unmarked(path):
        return False
    import nbformat  # only here: the check above needs none of it

    nb = nbformat.read(str(path), as_version=4)
    for cell, kind in zip(nb.cells, slide_types(nb.cells)):
        cell.metadata["slideshow"] = {"slide_type": kind}
    text = nbformat.writes(nb, version=4)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    return True


def _install_assets(assets: Path, out: Path) -> dict:
    """Copy the parts of ``assets`` the decks load into ``out/_assets``; the exporter's URLs,
    relative to a deck in ``out/<edition>/``."""
    missing = [f"{assets / folder}/{entry}" for folder, entry in
               (("reveal.js", "dist/reveal.js"), ("requirejs", "require.js"),
                ("mathjax", "MathJax.js")) if not (assets / folder / entry).is_file()]
    if missing:
        raise SystemExit(f"--assets {assets}: missing {', '.join(missing)} "
                         f"(fill it with: python tools/slides.py fetch-assets {assets})")
    target = out / "_assets"
    for part in COPIED:
        source, dest = assets / part, target / part
        if not source.exists():  # an optional part (the three files above are checked)
            continue
        if dest.exists():
            shutil.rmtree(dest) if dest.is_dir() else dest.unlink()
        dest.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, dest)
    return {"reveal_url_prefix": "../_assets/reveal.js",
            "require_js_url": "../_assets/requirejs/require.js",
            "mathjax_url": "../_assets/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"}


def build(paths, out: Path, assets: Path | None = None) -> list[Path]:
    """Build one reveal.js deck per solution notebook in ``paths`` into ``out/<edition>/``, from
    the notebooks' slide metadata (what ``mark`` wrote, or an instructor's own split), the
    notebooks untouched; returns the decks written."""
    import nbformat
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    out = Path(out)
    urls = _install_assets(Path(assets), out) if assets else {}
    config = Config()
    config.SlidesExporter.reveal_scroll = True  # long cells (the title cell) scroll
    config.SlidesExporter.reveal_number = "c/t"
    for name in ("reveal_url_prefix",):
        if name in urls:
            config.SlidesExporter[name] = urls[name]
    for name in ("require_js_url", "mathjax_url"):
        if name in urls:
            config.HTMLExporter[name] = urls[name]
            config.SlidesExporter[name] = urls[name]
    exporter = SlidesExporter(config=config)
    written = []
    for path in map(Path, paths):
        edition = "en" if path.parent.name == "en" else "zh"
        nb = nbformat.read(str(path), as_version=4)
        for cell, kind in zip(nb.cells, slide_types(nb.cells)):
            # a cell the rules skip (an answer, a check) stays off the slides whatever its
            # metadata says; a cell without slide metadata (added since `mark`) gets the rules'
            if kind == "skip" or "slideshow" not in cell.metadata:
                cell.metadata["slideshow"] = {"slide_type": kind}
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        target = out / edition / f"{path.stem}.slides.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        written.append(target)
    return written


def fetch_assets(folder: Path) -> None:
    """Fill ``folder`` with the npm packages of :data:`ASSETS` (needs npm and the network, once,
    on the instructor's machine)."""
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("fetch-assets needs npm (Node.js); or present with a network: "
                         "the decks load reveal.js from its CDN by default")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for package, name in ASSETS.items():
            tarball = subprocess.run([npm, "pack", package, "--silent"], cwd=work, check=True,
                                     capture_output=True, text=True).stdout.strip().splitlines()[-1]
            unpack = Path(work) / name
            unpack.mkdir()
            subprocess.run(["tar", "xzf", str(Path(work) / tarball), "-C", str(unpack),
                            "--strip-components=1"], check=True)
            if (folder / name).exists():
                shutil.rmtree(folder / name)
            shutil.move(str(unpack), str(folder / name))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/slides.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    marking = sub.add_parser("mark", help="write the slide metadata into the solution notebooks")
    marking.add_argument("--check", action="store_true", help="only report; exit 1 if out of date")
    building = sub.add_parser("build", help="build the reveal.js decks")
    building.add_argument("--out", type=Path, default=ROOT / "slides")
    building.add_argument("--assets", type=Path, help="a folder fetch-assets filled (offline decks)")
    building.add_argument("notebooks", nargs="*", type=Path,
                          help="solution notebooks (default: all of both editions)")
    fetching = sub.add_parser("fetch-assets", help="download reveal.js, require.js and MathJax")
    fetching.add_argument("folder", type=Path)
    args = parser.parse_args(argv)

    if args.command == "mark":
        stale = {p: unmarked(p) for p in notebooks()}
        stale = {p: cells for p, cells in stale.items() if cells}
        for path, cells in stale.items():
            where = path.relative_to(ROOT)
            if args.check:
                print(f"{where}: slide metadata out of date in cells {cells[:10]} "
                      f"(run python tools/slides.py mark)")
            else:
                mark(path)
                print(f"{where}: slide metadata written ({len(cells)} cells)")
        return 1 if (args.check and stale) else 0
    if args.command == "fetch-assets":
        fetch_assets(args.folder)
        print(f"{args.folder}: {', '.join(ASSETS)}; build with --assets {args.folder}")
        return 0
    for path in build(args.notebooks or notebooks(), args.out, args.assets):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
