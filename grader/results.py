"""The grader's results and reports: what one submission scored, and the files instructors read.

Owns: :class:`ExerciseResult`, :class:`SubmissionResult` (with its JSON form), :class:`GraderError`
(misuse: exit 2), the per-submission result files (``DIR/submissions/<name>.json``, written
atomically, never through a symlink), ``grades.csv`` / ``grades.json`` and the summary table
printed at the end. Must not: run or judge anything, or read the notebooks themselves.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import secrets
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from labs.messages import text

__all__ = ["ExerciseResult", "SubmissionResult", "GraderError", "RESULT_VERSION",
           "summary_table", "check_out_folder", "result_name", "write_result", "read_result",
           "write_reports", "number"]

RESULT_VERSION = 2



@dataclass
class ExerciseResult:
    grade_id: str
    points: float
    max_points: float
    message: str
    flags: list[str] = field(default_factory=list)


@dataclass
class SubmissionResult:
    submission: str
    notebook: str | None
    exercises: list[ExerciseResult] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    sandbox: str = "none"
    restarts: int = 0
    sha256: str = ""
    source_sha256: str = ""
    limits_weak: list[str] = field(default_factory=list)  # limits that did not fully hold
    cases: str = ""  # grader.submission.cases_fingerprint: the key to the hidden cases, the checks
    failed: bool = False  # grading failed for a reason outside the student's code: no grade

    @property
    def total(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def max_total(self) -> float:
        return sum(e.max_points for e in self.exercises)

    @property
    def flags(self) -> list[str]:
        return [f"{e.grade_id}: {f}" for e in self.exercises for f in e.flags]

    def as_dict(self) -> dict:
        return {"submission": self.submission, "notebook": self.notebook,
                "total": self.total, "max_total": self.max_total, "error": self.error,
                "seconds": round(self.seconds, 2), "sandbox": self.sandbox,
                "restarts": self.restarts, "sha256": self.sha256,
                "source_sha256": self.source_sha256, "cases": self.cases, "failed": self.failed,
                "version": RESULT_VERSION,
                "limits_weak": self.limits_weak,
                "exercises": [asdict(e) for e in self.exercises]}

    @classmethod
    def from_dict(cls, data: dict) -> "SubmissionResult":
        exercises = [ExerciseResult(e["grade_id"], float(e["points"]), float(e["max_points"]),
                                    str(e["message"]), list(e.get("flags", [])))
                     for e in data["exercises"]]
        return cls(submission=data["submission"], notebook=data["notebook"],
                   exercises=exercises, error=data["error"], seconds=float(data["seconds"]),
                   sandbox=data.get("sandbox", "none"), restarts=int(data.get("restarts", 0)),
                   sha256=data.get("sha256", ""), source_sha256=data.get("source_sha256", ""),
                   limits_weak=[str(k) for k in data.get("limits_weak", [])],
                   cases=str(data.get("cases", "")), failed=bool(data.get("failed", False)))


class GraderError(Exception):
    """Misuse of the grader (nothing to grade, no solutions, a bad output folder); exit 2."""


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _pad(s: str, width: int) -> str:
    return s + " " * (width - _width(s))


def number(x: float) -> str:
    """A score as the reports write it (``3``, ``1.5``)."""
    return f"{x:g}"


_num = number


def summary_table(results: list[SubmissionResult]) -> str:
    """A plain-text table per source notebook: one row per submission, one column per check."""
    blocks = []
    for notebook in dict.fromkeys(r.notebook for r in results):
        group = [r for r in results if r.notebook == notebook]
        ids = list(dict.fromkeys(e.grade_id for r in group for e in r.exercises))
        header = [text("grade.col_submission"), *ids, text("grade.col_total"),
                  text("grade.col_flags"), text("grade.col_note")]
        rows = []
        for r in group:
            by_id = {e.grade_id: e for e in r.exercises}
            flagged = [e.grade_id for e in r.exercises if e.flags]
            rows.append([r.submission,
                         *(f"{_num(by_id[i].points)}/{_num(by_id[i].max_points)}" if i in by_id
                           else "-" for i in ids),
                         f"{_num(r.total)}/{_num(r.max_total)}", " ".join(flagged),
                         (r.error or "").replace("\n", " ")])
        widths = [max(_width(row[k]) for row in [header, *rows]) for k in range(len(header))]
        lines = [f"== {notebook or text('grade.unknown_notebook')} =="]
        for row in [header, ["-" * w for w in widths], *rows]:
            lines.append("  ".join(_pad(cell, w) for cell, w in zip(row, widths)).rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _open_dir(path: Path) -> int:
    """A descriptor of the folder ``path``, refusing a symlink."""
    return os.open(str(path), os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))


def _write_atomic(folder: Path, name: str, data: bytes) -> Path:
    """Write ``folder/name`` as a new file then rename it into place: never through a symlink
    (a symlink planted at the name is replaced, its target untouched), never half-written."""
    dfd = _open_dir(folder)
    try:
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            os.unlink(tmp, dir_fd=dfd)
            raise
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    finally:
        os.close(dfd)
    return folder / name


def check_out_folder(out: Path) -> Path:
    """Create (or check) the output folder and its ``submissions/``: no symlinks, folders."""
    out = Path(out)
    for folder in (out, out / "submissions"):
        if folder.is_symlink():
            raise GraderError(f"{folder} is a symlink: refusing to write through it")
        if folder.exists() and not folder.is_dir():
            raise GraderError(f"{folder} exists and is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        os.close(_open_dir(folder))
    return out


def result_name(label: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label.replace(os.sep, "__")).strip("._") or "x"
    return f"{safe[:80]}-{hashlib.sha256(label.encode()).hexdigest()[:8]}.json"


def write_result(result: SubmissionResult, out: Path) -> Path:
    data = json.dumps(result.as_dict(), ensure_ascii=False, indent=1).encode() + b"\n"
    return _write_atomic(Path(out) / "submissions", result_name(result.submission), data)


def read_result(out: Path, label: str) -> SubmissionResult | None:
    folder = Path(out) / "submissions"
    path = folder / result_name(label)
    try:
        if path.is_symlink() or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != RESULT_VERSION or data.get("submission") != label:
            return None
        return SubmissionResult.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_reports(results: list[SubmissionResult], out: Path) -> tuple[Path, Path]:
    out = check_out_folder(out)
    report = {"sandbox": sorted({r.sandbox for r in results}),
              "limits_weak": sorted({k for r in results for k in r.limits_weak}),
              "submissions": [r.as_dict() for r in results]}
    json_path = _write_atomic(out, "grades.json", (json.dumps(
        report, ensure_ascii=False, indent=1) + "\n").encode())
    ids = list(dict.fromkeys(e.grade_id for r in results for e in r.exercises))
    header = ["submission", "notebook", "total", "max_total", "error", "flags", "sandbox"]
    for i in ids:
        header += [f"{i}", f"{i} max", f"{i} message", f"{i} flags"]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(header)
    for r in results:
        by_id = {e.grade_id: e for e in r.exercises}
        # a failed grading is no grade: its points stay empty, its error says why
        row = [r.submission, r.notebook or "", "" if r.failed else _num(r.total),
               _num(r.max_total), r.error or "", " | ".join(r.flags), r.sandbox]
        for i in ids:
            e = by_id.get(i)
            row += ([_num(e.points) if not r.failed else "", _num(e.max_points), e.message,
                     " | ".join(e.flags)] if e else ["", "", "", ""])
        writer.writerow(row)
    # utf-8-sig so that spreadsheet programs read the Chinese messages correctly
    csv_path = _write_atomic(out, "grades.csv", buffer.getvalue().encode("utf-8-sig"))
    return csv_path, json_path


