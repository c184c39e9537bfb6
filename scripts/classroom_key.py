"""The classroom edition, part 1: the check cells and the instructor key (`python3 dev.py classroom key`).

Every self-check cell ends with `answer = ...` and its "# Stuck?" lines, which name its question
in checks.QUESTIONS. The key copies each notebook with each `answer = ...` replaced by the worked
solution of its question, a markdown cell with the solution's explanation after it, runs it like
`dev.py regenerate` runs notebooks (same executor, fresh kernel, in notebooks/) and fails unless
every check in it says Correct. The copies go to build/key/ (ignored by git): never edited by
hand, never committed. scripts/classroom.py is the command; the guide and the session plan read
the check cells from here.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
KEY_DIR = ROOT / "build" / "key"
RUN_TIMES = ROOT / "docs" / "run-times.json"
sys.path.insert(0, str(ROOT))  # the course modules of this checkout, not of another one

from course import checks  # noqa: E402  (after the path above)

# The "# Stuck?" lines every check cell ends with, naming its question in checks.QUESTIONS.
STUCK = re.compile(r'^# Stuck\? .*?\b(?P<who>nb\d\d|checks)\.hint\("(?P<key>[^"]*)"\)', re.M)
STUCK_SOLUTION = re.compile(r'^# .*?\b(?P<who>nb\d\d|checks)\.solution\("(?P<key>[^"]*)"\)', re.M)
ANSWER = re.compile(r"^answer = \.\.\.(?P<comment>.*)$", re.M)


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def is_check_cell(cell) -> bool:
    return cell.cell_type == "code" and ANSWER.search(cell.source) is not None


def check_cells(nb) -> list[tuple[int, str]]:
    """(cell index, question key) of every self-check cell, from its "# Stuck?" line."""
    out = []
    for i, cell in enumerate(nb.cells):
        if is_check_cell(cell):
            m = STUCK.search(cell.source)
            out.append((i, m.group("key") if m else ""))
    return out


def key_notebook(path: Path):
    """A copy of the notebook with every `answer = ...` replaced by its registered solution."""
    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if not is_check_cell(cell):
            continue
        m = STUCK.search(cell.source)
        if m is None or m.group("key") not in checks.QUESTIONS:
            raise ValueError(f"{path.name}: a check cell names no registered question:\n"
                             f"{cell.source}")
        key = m.group("key")
        q = checks.QUESTIONS[key]
        lines = [line for line in cell.source.splitlines() if not line.startswith("# ")
                 or not (STUCK.match(line) or STUCK_SOLUTION.match(line))]
        source = "\n".join(lines)
        m = ANSWER.search(source)
        source = source[:m.start()] + checks.answer_lines(q.solution) + source[m.end():]
        cell.source = f"# instructor key: the worked solution of {key} (checks.QUESTIONS)\n{source}"
        cells.append(nbformat.v4.new_markdown_cell(f"**Worked solution ({key}).** {q.why}"))
    nb.cells = cells
    for i, cell in enumerate(nb.cells):  # new cells need ids of their own
        cell["id"] = f"key-{i:03d}"
    return nb


def verdicts(nb) -> list[tuple[str, str]]:
    """(question key, the text the check showed) for every check cell of an executed key."""
    out = []
    for cell in nb.cells:
        m = re.match(r"# instructor key: the worked solution of (\S+) ", cell.source)
        if cell.cell_type == "code" and m:
            shown = "".join("".join(o.get("data", {}).get("text/plain", ""))
                            for o in cell.get("outputs", []) if o.get("output_type") == "execute_result")
            out.append((m.group(1), shown))
    return out


def run_key(path: Path, out_dir: Path) -> tuple[str, float, list[str]]:
    """Build, run and write the key of one notebook: (name, seconds, problems)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from regenerate import execute  # the executor `dev.py regenerate` uses

    try:
        nb = key_notebook(path)
        seconds = execute(nb, path.parent)  # run where the notebook lives, like regenerate
    except Exception as e:  # a cell that raised: report it with the others
        return path.name, 0.0, [f"{path.name}: {type(e).__name__}: {str(e)[-1500:]}"]
    nb.metadata.pop("widgets", None)
    out_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / path.name)
    problems = [f"{path.name} {key}: the check says {shown[:300]!r}"
                for key, shown in verdicts(nb) if not shown.startswith("Correct")]
    return path.name, seconds, problems


def build_key(paths: list[Path], out_dir: Path = KEY_DIR, workers: int | None = None) -> int:
    """Build and run the key of every notebook in parallel; 0 if every check says Correct."""
    missing = [f"{p.name}: no question named in a check cell" for p in paths
               for _, key in check_cells(nbformat.read(p, as_version=4)) if key not in checks.QUESTIONS]
    if missing:
        print("\n".join(missing), file=sys.stderr)
        return 1
    workers = workers or min(len(paths), os.cpu_count() or 1)
    start = time.perf_counter()
    # the slowest notebooks first (by their last measured run time), so none starts last alone
    times = json.loads(RUN_TIMES.read_text(encoding="utf-8")) if RUN_TIMES.exists() else {}
    order = sorted(paths, key=lambda p: -times.get(p.stem, {}).get("seconds", float("inf")))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        done = dict(zip(order, pool.map(run_key, order, [out_dir] * len(order)), strict=True))
    results = [done[p] for p in paths]
    problems = [p for _, _, ps in results for p in ps]
    for name, seconds, ps in results:
        print(f"{out_dir.relative_to(ROOT) if out_dir.is_relative_to(ROOT) else out_dir}/{name}: "
              f"{'FAILED' if ps else 'every check Correct'} ({seconds:.1f} s)", flush=True)
    print(f"instructor key: {len(paths)} notebooks, "
          f"{sum(len(check_cells(nbformat.read(p, as_version=4))) for p in paths)} questions, "
          f"{time.perf_counter() - start:.1f} s with {workers} workers", flush=True)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def solution_is_well_formed(code: str) -> bool:
    """An expression, or statements whose last one is `answer = <expression>`."""
    try:
        ast.parse(code, mode="eval")
        return True
    except SyntaxError:
        pass
    try:
        last = ast.parse(code).body[-1]
    except (SyntaxError, IndexError):
        return False
    return (isinstance(last, ast.Assign) and len(last.targets) == 1
            and getattr(last.targets[0], "id", None) == "answer")
