"""``python -m grader.gradescope [--out gradescope.zip]`` (``make gradescope``): the autograder
zip to upload in Gradescope ("Configure Autograder", "Zip file upload").

Gradescope unpacks the zip into ``/autograder/source/``, runs its ``setup.sh`` there once when
it builds the autograder's image (Ubuntu; as root), and for each submission runs
``/autograder/run_autograder`` (the zip's, copied) with the student's files in
``/autograder/submission/``, then reads ``/autograder/results/results.json``
(:func:`grader.gradebook.gradescope`: one test per exercise, named by its title; the review flags
as tests only the instructor sees). The zip holds ``setup.sh``, ``run_autograder``, the course's
``labs/`` and ``grader/``, ``solutions/`` (the autograder is never shown to students) and what
the install needs; and the instructor's secret, when one is given (``$LABS_GRADE_SECRET``, as
``make gradescope SECRET="..."`` passes it), as ``secret.txt``: the one place it lives, read by
``run_autograder`` into the grader's environment. Each student's hidden cases come from it and
the student's Gradescope id (``submission_metadata.json``), so two students' cases differ.

Owns: choosing the zip's files and writing setup.sh. Must not: grade, or write outside ``--out``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import zipfile
from pathlib import Path

from labs.messages import text

__all__ = ["build", "setup_script", "main"]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("labs", "grader", "solutions")
FILES = ("requirements.txt", "pyproject.toml", "LICENSE", "LICENSE-docs")
SKIP = re.compile(r"(^|/)(__pycache__|\.ipynb_checkpoints)(/|$)|\.pyc$")


def setup_script(root: Path = ROOT) -> str:
    """Gradescope's ``setup.sh``: Python 3.11, bubblewrap (the grader's sandbox), a virtual
    environment with the course's pinned packages (torch's CPU build)."""
    torch = next(line.strip() for line in (root / "requirements.txt").read_text().splitlines()
                 if line.startswith("torch=="))
    return f"""#!/usr/bin/env bash
# Run once by Gradescope, as root, in /autograder/source, when it builds the autograder's image.
set -euo pipefail
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \\
    python3.11 python3.11-venv bubblewrap
python3.11 -m venv /autograder/venv
/autograder/venv/bin/pip install -q --index-url https://download.pytorch.org/whl/cpu {torch}
/autograder/venv/bin/pip install -q -r /autograder/source/requirements.txt
/autograder/venv/bin/pip install -q --no-deps -e /autograder/source
"""


def _entry(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build(out: Path, secret: str | None = None, root: Path = ROOT) -> Path:
    """Write the autograder zip to ``out``; its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        _entry(archive, "setup.sh", setup_script(root).encode(), executable=True)
        _entry(archive, "run_autograder",
               (root / "scripts" / "gradescope" / "run_autograder").read_bytes(), executable=True)
        for package in PACKAGES:
            for path in sorted((root / package).rglob("*")):
                name = path.relative_to(root).as_posix()
                if path.is_file() and not path.is_symlink() and not SKIP.search(name):
                    _entry(archive, name, path.read_bytes())
        for name in FILES:
            if (root / name).is_file():
                _entry(archive, name, (root / name).read_bytes())
        if secret:
            _entry(archive, "secret.txt", secret.encode())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.gradescope",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("gradescope.zip"))
    args = parser.parse_args(argv)
    secret = os.environ.get("LABS_GRADE_SECRET") or None
    path = build(args.out, secret)
    print(text("grade.gradescope_built" if secret else "grade.gradescope_built_no_secret",
               path=path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
