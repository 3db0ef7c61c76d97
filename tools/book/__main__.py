"""``python -m tools.book build [--out book] [--work build/book]``: the web book (``make book``).

Must not: execute notebooks or use the network (tools/book/build.py says what the build does).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.book.build import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.book",
                                     description="Build the course's web book (both editions).")
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build", help="build the static site")
    build_parser.add_argument("--out", type=Path, default=Path("book"),
                              help="the site's folder (default: book)")
    build_parser.add_argument("--work", type=Path, default=Path("build/book"),
                              help="sources and Sphinx's files (default: build/book)")
    args = parser.parse_args(argv)
    try:
        build(args.out.resolve(), args.work.resolve())
    except RuntimeError as exc:
        print(f"book: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
