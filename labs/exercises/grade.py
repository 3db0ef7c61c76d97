"""Score submitted notebooks: each in a fresh kernel, with a time limit, never modifying them.

    python -m labs.grade PATH [--out DIR] [--timeout SECONDS] [--cell-timeout SECONDS]
                              [--solutions DIR] [--kernel NAME]

PATH is one ``.ipynb`` or a folder searched recursively (``.ipynb_checkpoints`` skipped). The
source of a submission is found in the solutions folder by ``metadata.course.notebook``, else by
file name, else as the longest solution name that ends the submission's name
(``alice_2.0_collectives.ipynb``). Every graded check cell is replaced by the source's version
(matched by ``grade_id``, so an edited check does not count) and the notebook runs top to
bottom with errors allowed; a graded cell earns its points iff it ran without error, and its
message is the check's verdict (its ✅/❌ line with the indented lines below it). Check
cells missing from the submission, and cells not reached because the kernel died or time ran
out, score 0 with a message saying why. Results go to ``DIR/grades.csv`` (one row per
submission) and ``DIR/grades.json``, and a summary table is printed. The exit code is 0 whatever
the students scored; 2 on misuse (nothing to grade, no solutions).
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from .generate import graded_cells, is_graded

__all__ = ["ExerciseResult", "SubmissionResult", "GraderError", "find_submissions",
           "load_sources", "match_source", "prepare", "execute", "grade_submission",
           "summary_table", "write_reports", "default_solutions", "grade", "main"]

DEFAULT_TIMEOUT = 900.0
DEFAULT_CELL_TIMEOUT = 300.0
MSG_DELETED = "检查单元格被删除"
MSG_PASSED = "通过"


@dataclass
class ExerciseResult:
    grade_id: str
    points: float
    max_points: float
    message: str


@dataclass
class SubmissionResult:
    submission: str
    notebook: str | None
    exercises: list[ExerciseResult] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def max_total(self) -> float:
        return sum(e.max_points for e in self.exercises)

    def as_dict(self) -> dict:
        return {"submission": self.submission, "notebook": self.notebook,
                "total": self.total, "max_total": self.max_total, "error": self.error,
                "seconds": round(self.seconds, 2),
                "exercises": [asdict(e) for e in self.exercises]}


class GraderError(Exception):
    """Misuse of the grader (nothing to grade, no solutions); exit code 2."""


def find_submissions(path: Path) -> list[Path]:
    path = Path(path)
    if path.is_file():
        if path.suffix != ".ipynb":
            raise GraderError(f"{path} is not a .ipynb notebook")
        return [path]
    if not path.is_dir():
        raise GraderError(f"{path} does not exist")
    found = [p for p in sorted(path.rglob("*.ipynb"))
             if ".ipynb_checkpoints" not in p.relative_to(path).parts and p.is_file()]
    if not found:
        raise GraderError(f"no .ipynb notebooks found under {path}")
    return found


def load_sources(solutions: Path) -> dict[str, nbformat.NotebookNode]:
    solutions = Path(solutions)
    sources = {p.name: nbformat.read(str(p), as_version=4)
               for p in sorted(solutions.glob("*.ipynb"))} if solutions.is_dir() else {}
    if not sources:
        raise GraderError(f"no solution notebooks in {solutions} (use --solutions DIR)")
    for name, nb in sources.items():
        try:
            graded_cells(nb)
        except ValueError as exc:
            raise GraderError(f"{solutions / name}: {exc}") from None
    return sources


def match_source(path: Path, nb, sources: dict) -> str | None:
    course = nb.metadata.get("course", {})
    name = course.get("notebook") if isinstance(course, dict) else None
    if name in sources:
        return name
    if path.name in sources:
        return path.name
    suffixes = [n for n in sources if path.name.endswith(n)]
    return max(suffixes, key=len) if suffixes else None


def prepare(submission, source) -> tuple[nbformat.NotebookNode, dict[str, int]]:
    """The notebook to execute and ``{grade_id: cell index}`` of the checks in it.

    Graded cells take the source's code and metadata; outputs are cleared; the submission's
    own graded cells that the source does not know become ordinary cells.
    """
    nb = copy.deepcopy(submission)
    reference = graded_cells(source)
    by_cell_id = {cell.get("id"): grade_id for grade_id, cell in reference.items() if cell.get("id")}
    positions: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if is_graded(cell):
            grade_id = cell.metadata["nbgrader"].get("grade_id")
        elif cell.cell_type == "code":  # a check whose metadata was lost: known by its cell id
            grade_id = by_cell_id.get(cell.get("id"))
        else:
            continue
        if grade_id in reference and grade_id not in positions:
            cell.source = reference[grade_id].source
            cell.metadata = copy.deepcopy(reference[grade_id].metadata)
            positions[grade_id] = index
        else:  # unknown or duplicated check: run it, but it scores nothing
            cell.metadata.pop("nbgrader", None)
    return nb, positions


def _verdict(cell) -> str | None:
    """The check's verdict: its ✅/❌ line and the indented lines that follow it (the student's
    line and the exception, when their code raised), without the advice after them."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            lines = output.get("text", "").splitlines()
            for at, line in enumerate(lines):
                if line.startswith(("✅", "❌")):
                    block = [line.strip()]
                    for more in lines[at + 1:]:
                        if not more.startswith((" ", "\t")) or not more.strip():
                            break
                        block.append(more.rstrip())
                    return "\n".join(block)
    return None


def _error(cell) -> str | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}".strip()
    return None


def execute(nb, cwd: Path, *, timeout: float, cell_timeout: float,
            kernel_name: str | None) -> tuple[int, str | None]:
    """Run ``nb`` in a fresh kernel in place. Returns (cells completed, reason it stopped)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    client = NotebookClient(
        nb, timeout=int(max(1, cell_timeout)), allow_errors=True, interrupt_on_timeout=False,
        shutdown_kernel="immediate", kernel_name=kernel_name or "python3",
        resources={"metadata": {"path": str(cwd)}}, record_timing=False)
    deadline = time.monotonic() + timeout
    done = 0
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                left = deadline - time.monotonic()
                if left <= 0:
                    return done, f"超过总时间限制 {timeout:g} 秒，评分停在第 {index + 1} 个单元格之前"
                overall = left < cell_timeout
                limit = int(max(1, min(cell_timeout, left)))
                client.timeout = limit
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    if overall:
                        return done, (f"超过总时间限制 {timeout:g} 秒"
                                      f"（第 {index + 1} 个单元格未运行完）")
                    return done, f"第 {index + 1} 个单元格运行超过 {limit} 秒（超时），评分停止"
                except DeadKernelError:
                    return done, f"内核在第 {index + 1} 个单元格崩溃，评分停止"
                done = index + 1
    except DeadKernelError:
        return done, f"内核在第 {done + 1} 个单元格崩溃，评分停止"
    except Exception as exc:  # noqa: BLE001 - kernel failed to start, or similar
        return done, f"内核出错：{type(exc).__name__}: {exc}"
    return done, None


def grade_submission(path: Path, sources: dict, *, label: str | None = None,
                     timeout: float = DEFAULT_TIMEOUT, cell_timeout: float = DEFAULT_CELL_TIMEOUT,
                     kernel_name: str | None = None) -> SubmissionResult:
    """Grade one submission; the file is only read (into memory), never written."""
    start = time.monotonic()
    result = SubmissionResult(submission=label or str(path), notebook=None)
    try:
        _grade_into(result, Path(path), sources, timeout=timeout, cell_timeout=cell_timeout,
                    kernel_name=kernel_name)
    finally:
        result.seconds = time.monotonic() - start
    return result


def _grade_into(result: SubmissionResult, path: Path, sources: dict, *, timeout: float,
                cell_timeout: float, kernel_name: str | None) -> None:
    try:
        submission = nbformat.reads(path.read_bytes().decode("utf-8-sig"), as_version=4)
        unreadable = None
    except Exception as exc:  # noqa: BLE001 - any unreadable file scores 0
        submission, unreadable = nbformat.v4.new_notebook(), f"无法读取笔记本：{type(exc).__name__}: {exc}"
    name = match_source(path, submission, sources)
    if name is None:
        result.error = unreadable or "找不到对应的原始笔记本（文件名或 metadata.course.notebook 不匹配）"
        return
    result.notebook = name
    reference = graded_cells(sources[name])
    if unreadable:
        result.error = unreadable
        result.exercises = [ExerciseResult(gid, 0.0, float(c.metadata["nbgrader"].get("points", 0)),
                                           unreadable) for gid, c in reference.items()]
        return
    nb, positions = prepare(submission, sources[name])
    done, stopped = execute(nb, path.parent.resolve(), timeout=timeout, cell_timeout=cell_timeout,
                            kernel_name=kernel_name)
    result.error = stopped
    for grade_id, ref_cell in reference.items():
        max_points = float(ref_cell.metadata["nbgrader"].get("points", 0))
        if grade_id not in positions:
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, MSG_DELETED))
            continue
        cell = nb.cells[positions[grade_id]]
        if positions[grade_id] >= done:
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, stopped or "未运行"))
            continue
        error = _error(cell)
        if error is None:
            result.exercises.append(
                ExerciseResult(grade_id, max_points, max_points, _verdict(cell) or MSG_PASSED))
        else:
            result.exercises.append(ExerciseResult(grade_id, 0.0, max_points, _verdict(cell) or error))


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _num(x: float) -> str:
    return f"{x:g}"


def summary_table(results: list[SubmissionResult]) -> str:
    """A plain-text table per source notebook: one row per submission, one column per check."""
    blocks = []
    for notebook in dict.fromkeys(r.notebook for r in results):
        group = [r for r in results if r.notebook == notebook]
        ids = list(dict.fromkeys(e.grade_id for r in group for e in r.exercises))
        header = ["提交", *ids, "总分", "备注"]
        rows = []
        for r in group:
            by_id = {e.grade_id: e for e in r.exercises}
            rows.append([r.submission,
                         *(f"{_num(by_id[i].points)}/{_num(by_id[i].max_points)}" if i in by_id
                           else "-" for i in ids),
                         f"{_num(r.total)}/{_num(r.max_total)}", r.error or ""])
        widths = [max(_width(row[k]) for row in [header, *rows]) for k in range(len(header))]
        lines = [f"== {notebook or '（未知笔记本）'} =="]
        for row in [header, ["-" * w for w in widths], *rows]:
            lines.append("  ".join(_pad(cell, w) for cell, w in zip(row, widths)).rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def write_reports(results: list[SubmissionResult], out: Path) -> tuple[Path, Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out / "grades.json", out / "grades.csv"
    json_path.write_text(json.dumps({"submissions": [r.as_dict() for r in results]},
                                    ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    ids = list(dict.fromkeys(e.grade_id for r in results for e in r.exercises))
    header = ["submission", "notebook", "total", "max_total", "error"]
    for i in ids:
        header += [f"{i}", f"{i} max", f"{i} message"]
    # utf-8-sig so that spreadsheet programs read the Chinese messages correctly
    with csv_path.open("w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for r in results:
            by_id = {e.grade_id: e for e in r.exercises}
            row = [r.submission, r.notebook or "", _num(r.total), _num(r.max_total), r.error or ""]
            for i in ids:
                e = by_id.get(i)
                row += [_num(e.points), _num(e.max_points), e.message] if e else ["", "", ""]
            writer.writerow(row)
    return csv_path, json_path


def default_solutions() -> Path:
    here = Path("solutions")
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "solutions"


def grade(path: Path, *, solutions: Path | None = None, out: Path = Path("grades"),
          timeout: float = DEFAULT_TIMEOUT, cell_timeout: float | None = None,
          kernel_name: str | None = None, log=print) -> list[SubmissionResult]:
    """Grade every submission under ``path``; write the reports into ``out``."""
    path = Path(path)
    submissions = find_submissions(path)
    sources = load_sources(solutions or default_solutions())
    cell_timeout = min(timeout, cell_timeout or DEFAULT_CELL_TIMEOUT)
    results = []
    for number, sub in enumerate(submissions, 1):
        label = str(sub.relative_to(path)) if path.is_dir() else sub.name
        log(f"[{number}/{len(submissions)}] {label} ...", flush=True)
        result = grade_submission(sub, sources, label=label, timeout=timeout,
                                  cell_timeout=cell_timeout, kernel_name=kernel_name)
        log(f"    {_num(result.total)}/{_num(result.max_total)} 分"
            + (f"（{result.error}）" if result.error else ""), flush=True)
        results.append(result)
    csv_path, json_path = write_reports(results, out)
    log("", flush=True)
    log(summary_table(results), flush=True)
    log(f"\n结果已写入 {csv_path} 和 {json_path}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m labs.grade",
        description="Grade submitted notebooks (one .ipynb or a folder of them).")
    parser.add_argument("path", type=Path, help="a submission .ipynb or a folder of submissions")
    parser.add_argument("--out", type=Path, default=Path("grades"),
                        help="folder for grades.csv and grades.json (default: ./grades)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"time limit per submission in seconds (default: {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--cell-timeout", type=float, default=None,
                        help=f"time limit per cell (default: min(--timeout, {DEFAULT_CELL_TIMEOUT:g}))")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="folder of the solution notebooks (default: ./solutions)")
    parser.add_argument("--kernel", default=None, help="Jupyter kernel name (default: python3)")
    args = parser.parse_args(argv)
    if args.timeout <= 0 or (args.cell_timeout is not None and args.cell_timeout <= 0):
        parser.error("timeouts must be positive")
    try:
        grade(args.path, solutions=args.solutions, out=args.out, timeout=args.timeout,
              cell_timeout=args.cell_timeout, kernel_name=args.kernel)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
