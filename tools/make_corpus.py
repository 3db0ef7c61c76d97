# Provenance: docstrings of CPython standard-library modules (text that ships with Python, PSF License).
"""Build ``labs/assets/corpus.txt``, the English text every course notebook trains on.

The corpus is the docstrings (module, classes, functions, methods) of a fixed, sorted list of
pure-Python standard-library modules, normalised to printable ASCII plus newline so that a
character-level tokenizer stays below 100 symbols. Docstrings change a little between Python
versions, so the corpus is generated once and committed; rerun this script only to replace it:

    python tools/make_corpus.py            # writes labs/assets/corpus.txt
    python tools/make_corpus.py --check    # only reports what it would write
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import unicodedata
import warnings
from pathlib import Path

MODULES = sorted([
    "argparse", "base64", "bisect", "calendar", "configparser", "contextlib", "copy", "csv",
    "dataclasses", "difflib", "doctest", "fractions", "ftplib", "functools", "gettext",
    "heapq", "imaplib", "ipaddress", "json", "logging", "numbers", "optparse", "pathlib",
    "pprint", "queue", "random", "sched", "shlex", "shutil", "smtplib", "statistics",
    "string", "tarfile", "tempfile", "textwrap", "threading", "timeit", "typing", "uuid",
    "warnings", "zipfile",
])

MIN_BYTES, MAX_BYTES = 200_000, 400_000
OUTPUT = Path(__file__).resolve().parent.parent / "labs" / "assets" / "corpus.txt"


def module_docstrings(name: str) -> list[str]:
    """Cleaned docstrings of a module and of the classes, functions and methods it defines."""
    with warnings.catch_warnings():  # e.g. typing.io warns that it is deprecated when touched
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(name)
        return _cleaned_docstrings(module, name)


def _cleaned_docstrings(module, name: str) -> list[str]:
    docs = [module.__doc__]
    for attr in sorted(vars(module)):
        obj = vars(module)[attr]
        if getattr(obj, "__module__", None) != name or attr.startswith("_"):
            continue
        if inspect.isclass(obj):
            docs.append(obj.__doc__)
            for member in sorted(vars(obj)):
                method = vars(obj)[member]
                if inspect.isfunction(method) and (not member.startswith("_") or member == "__init__"):
                    docs.append(method.__doc__)
        elif inspect.isfunction(obj):
            docs.append(obj.__doc__)
    return [inspect.cleandoc(doc) for doc in docs if isinstance(doc, str) and doc.strip()]


def to_printable_ascii(text: str) -> str:
    """Fold accents and typographic quotes to ASCII; keep only printable ASCII and newlines."""
    text = text.replace("\t", "    ").replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate({0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"',
                           0x2013: "-", 0x2014: "--", 0x2026: "..."})
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text if ch == "\n" or " " <= ch <= "~")


def build_corpus() -> str:
    seen: set[str] = set()
    paragraphs = []
    for name in MODULES:
        for doc in module_docstrings(name):
            doc = to_printable_ascii(doc).strip()
            if doc and doc not in seen:  # inherited or repeated docstrings appear once
                seen.add(doc)
                paragraphs.append(doc)
    return "\n\n".join(paragraphs) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only, write nothing")
    args = parser.parse_args()
    corpus = build_corpus()
    size = len(corpus.encode("ascii"))
    print(f"{len(MODULES)} modules, {size:,} bytes, {len(set(corpus))} distinct characters "
          f"(Python {sys.version.split()[0]})")
    if not MIN_BYTES <= size <= MAX_BYTES:
        raise SystemExit(f"corpus is {size:,} bytes, outside [{MIN_BYTES:,}, {MAX_BYTES:,}]: "
                         "add or remove modules in MODULES")
    if not args.check:
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(corpus, encoding="ascii", newline="\n")
        print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
