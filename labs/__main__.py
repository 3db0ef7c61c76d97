"""Command line: ``python -m labs doctor``, ``python -m labs check NOTEBOOK`` (the install check)
and ``python -m labs run MODULE:FUNCTION``.

Owns: parsing the command line and dispatching to :mod:`labs.runtime`. Must not: hold the doctor's,
the install check's or torchrun's logic, or import ``grader``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labs.messages import text
from labs.runtime.doctor import doctor
from labs.runtime.install_check import check as install_check


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labs")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help=text("doctor.cli_doctor"))
    check = sub.add_parser("check", help=text("doctor.cli_check"))
    check.add_argument("notebook", type=Path, help=text("doctor.cli_notebook"))
    run = sub.add_parser("run", help=text("doctor.cli_run"))
    run.add_argument("target", help=text("doctor.cli_target"))
    run.add_argument("--backend", default="auto", choices=["auto", "gloo", "nccl"])
    run.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    if args.command == "doctor":
        return 0 if doctor() else 1
    if args.command == "check":
        return 0 if install_check(args.notebook) else 1
    # why here: torchrun imports torch, which `doctor` must not import before its own checks
    from labs.runtime.torchrun import run as run_target
    run_target(args.target, backend=args.backend, timeout=args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
