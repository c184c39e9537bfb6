"""What the benchmark items share: the recorded rows and diagnostics, the machine, the timing
helper of items 4 and 8, and the report (benchmarks/RESULTS.md, where a run of some items
replaces only theirs, and the summary table between the bench markers of docs/benchmarks.md).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
LATENCY_JSON = ROOT / "artifacts" / "browser" / "latency.json"

rows: list[tuple[str, str, str, str, str]] = []  # (item, case, measured, target, verdict)
diagnostics: list[str] = []  # measured facts that explain a result, not targets


def record(item, case, value, target, ok):
    rows.append((item, case, value, target, "met" if ok else "MISSED"))
    print(f"  {case:58s} {value:>22s}   target {target:10s} {'met' if ok else 'MISSED'}",
          flush=True)


def median_time(f, args, repeats: int) -> float:
    f(*args)  # warm up (first-touch page faults, thread pools)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pytest_seconds(args: list[str], cwd: Path = ROOT, env: dict | None = None,
                   what: str | None = None) -> float:
    """The wall time of `pytest -q args` run from `cwd`; a failed run raises with the end of its
    output, named `what` (by default the command)."""
    cmd = [sys.executable, "-m", "pytest", "-q", *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{what or ' '.join(cmd[2:])} failed:\n{proc.stdout[-3000:]}")
    return took


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for mod in ("torch", "matplotlib", "ipywidgets", "jupyterlab", "nbval"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except Exception:
            pass
    return (f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cores{mem}; "
            + ", ".join(versions))


def _number(text: str) -> float:
    """The first number in a measured value like 'ratio 0.85' or '36.7 ms (max 39)'."""
    for word in text.replace("(", " ").split():
        try:
            return float(word)
        except ValueError:
            continue
    return 0.0


ITEMS_LINE = ("Items: 1 strict nbval over notebooks 00-09 vs as many notebooks that import, apply the "
              "course's figure style and draw one small figure; 2 kernel-side "
              "widget callback (compute + draw + send), median over a sweep of each control; 3 browser "
              "latency from a control change to the redrawn text and image; 4 core vs torch "
              "F.scaled_dot_product_attention, float64 CPU; 5 tiled vs naive attention at n = 16384; "
              "6 the test step of `python3 dev.py test` on all cores vs serially, same suite, same "
              "run; 7 a class of N students on one JupyterHub; 8 banded tiled attention; 9 the test "
              "step, the quick run and one notebook's checks vs one nbval pass; 10 the static site "
              "with its live figures' frames.")


def read_record(text: str) -> tuple[list[tuple], dict[str, str], list[str]]:
    """The rows, the date and machine of each item ("Item N measured on ...: machine") and the
    diagnostics (paragraphs after the items line) of a RESULTS.md."""
    rows_, measured, notes = [], {}, []
    for line in text.split("\n\nItems: ", 1)[0].splitlines():   # the record's table, not the notes
        if line.startswith("| ") and line.split("|")[1].strip().isdigit():
            rows_.append(tuple(c.strip() for c in line.strip().strip("|").split(" | ")))
        elif line.startswith("Item ") and " measured on " in line:
            item = line.split()[1]
            measured[item] = line
    if "Measured by `python3 dev.py bench` on " in text and not measured:   # an older record
        when = text.split("Measured by `python3 dev.py bench` on ", 1)[1].split(".\n", 1)[0]
        mach = text.split("Machine: ", 1)[1].split(".\n", 1)[0] if "Machine: " in text else "?"
        measured = {r[0]: f"Item {r[0]} measured on {when}: {mach}." for r in rows_}
    body = text.split("\n\n")
    after = next((k for k, b in enumerate(body) if b.startswith("Items: ")), None)
    for b in body[after + 1:] if after is not None else []:
        if not b.strip():
            continue
        if b.startswith("Item ") or not notes:   # a note, and the tables and lines that follow it
            notes.append(b.strip())
        else:
            notes[-1] += "\n\n" + b.strip()
    return rows_, measured, notes


def _item_of_note(note: str) -> str | None:
    words = note.split()
    return words[1].rstrip(",:") if len(words) > 1 and words[0] == "Item" else None


def write_results(partial: bool = False) -> None:
    """The record: benchmarks/RESULTS.md and docs/benchmarks.md's summary. A run of some items
    only (--only, --skip-...) replaces those items' rows and notes in the record and keeps the
    others' as they were, each item with the date and machine it was measured on."""
    global rows, diagnostics
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ran = {str(r[0]) for r in rows}
    measured = {item: f"Item {item} measured on {when}: {machine()}." for item in sorted(ran, key=int)}
    if partial and RESULTS.exists():
        old_rows, old_measured, old_notes = read_record(RESULTS.read_text(encoding="utf-8"))
        rows = sorted([r for r in old_rows if r[0] not in ran] + [tuple(map(str, r)) for r in rows],
                      key=lambda r: int(r[0]))   # stable: each item's rows keep their order
        measured = {**{k: v for k, v in old_measured.items() if k not in ran}, **measured}
        diagnostics = [n for n in old_notes if _item_of_note(n) not in ran] + diagnostics
    rows = [tuple(map(str, r)) for r in rows]
    table = ["| # | case | measured | target | |", "|---|---|---|---|---|"]
    table += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    RESULTS.parent.mkdir(exist_ok=True)
    dates = "\n\n".join(measured[k] for k in sorted(measured, key=int))
    RESULTS.write_text(
        "# Benchmark results\n\n"
        f"Measured by `python3 dev.py bench`, item by item (a run of some items replaces only "
        f"theirs; last run {when}):\n\n{dates}\n\n" + "\n".join(table) + "\n\n" + ITEMS_LINE + "\n"
        + "".join(f"\n{d}\n" for d in diagnostics), encoding="utf-8")
    missed = sum(r[4] == "MISSED" for r in rows)
    names = {1: "nbval 00-09 vs figure floor", 2: "widget callback, kernel side",
             3: "browser latency; Run All in JupyterLab", 4: "core vs torch sdpa (float64)", 5: "tiled vs naive, n = 16384",
             6: "test step, parallel vs serial",
             7: "a class on one server (hub)", 8: "banded tiled attention, time per query",
             9: "test step, quick run, one notebook vs one nbval pass",
             10: "static site with live frames: build, size, switch"}
    short = ["| # | measurement | target | met | worst case |", "|---|---|---|---|---|"]
    for item in sorted({r[0] for r in rows}, key=int):
        mine = [r for r in rows if r[0] == item]
        bad = [r for r in mine if r[4] == "MISSED"]
        worst = max(mine, key=lambda r: _number(r[2]) / _number(r[3]))  # closest to its target
        targets = " and ".join(dict.fromkeys(r[3] for r in mine))
        short.append(f"| {item} | {names[int(item)]} | {targets} | {len(mine) - len(bad)} of "
                     f"{len(mine)} | {worst[2]} ({worst[1]}) |")
    summary = (f"Last run {when} ({machine().split(';')[0]}; each item's date and machine are in "
               f"the record): {len(rows) - missed} of {len(rows)} "
               f"measurements meet their target; every measurement is in "
               f"[benchmarks/RESULTS.md](../benchmarks/RESULTS.md).\n\n" + "\n".join(short)
               + "".join(f"\n\n{d}" for d in diagnostics))
    readme = ROOT / "docs" / "benchmarks.md"
    text = readme.read_text()
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        readme.write_text(f"{head}{start}\n{summary}\n{end}{tail}")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}; {missed} target(s) missed")
