"""Benchmarks of the course (run via `python3 dev.py bench`; not part of the test command).

Measures, in one run, and prints a table of:

1. strict nbval over notebooks 00-09 against their floor: as many notebooks that import
   what every teaching notebook imports, apply the course's figure style and draw one
   small figure, through the same nbval command: ratio, target <= 1.5 (the old floor,
   one-cell `1 + 1` notebooks, is printed too);
2. kernel-side time of every widget callback (compute + draw), median over a
   sweep of its values: target <= 50 ms each;
3. browser-visible latency from moving a control to the redrawn output, from
   the real-browser test: target <= 300 ms each; and, from the same test, Run All of each
   notebook in JupyterLab: <= 5 s for 00-09, <= 15 s for those that train or time (10, 11);
4. attention_core.scaled_dot_product_attention against torch's
   F.scaled_dot_product_attention, CPU, float64, n = 256, 1024, 4096, d_k = 64:
   time ratio, target <= 2;
5. tiled_attention against the naive version at n = 16384, d_k = 64: peak
   memory ratio (target <= 0.1) and time ratio (target <= 2);
6. the test step of `python3 dev.py test` (pytest with the options of pyproject.toml, as CI
   runs it: no skip allowed) on all cores against the same suite with `-n 0`, back to back:
   ratio parallel / serial, target <= 0.6;
7. a class on one server (hub/): N = 1, 5, 10, 20 simulated students log in to
   a JupyterHub on 127.0.0.1 at once, pull the course, run notebook 03 and move
   its d_k slider 10 times (about 1 s apart); per N: login to ready server,
   run-all time, slider latency (median, p95: target <= 1 s), memory per
   student, errors (needs root and `python3 dev.py hub --setup`).

8. banded tiled attention (notebook 14): tiled_attention(..., window=128) with tiles of 128, time
   against n = 1024 .. 16384 (best of 5 each), checked against the plain call with the window
   mask at n = 2048: time per query at the largest n over that at the smallest, target <= 1.5
   (linear in n at a fixed window).

9. the test step (<= 5), the quick run (<= 1) and one notebook's own checks (<= 0.4, notebooks
   04 and 10) against one strict nbval pass over both editions, in the same run
   (scripts/bench_test_step.py).

Item 1 also prints, not as a target, the nbval time of 00-09 at the course's figure resolution
and at its former one (80 dpi, 11 pt).

Writes benchmarks/RESULTS.md (with the machine it ran on) and the summary table
between the bench markers in docs/benchmarks.md. Options: --skip-browser, --skip-nbval,
--skip-old-resolution,
--skip-suite, --suite-repeats N, --skip-hub, --hub-students N[,N...],
--only N[,N...].
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
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


# ---------------------------------------------------------------- 1. nbval vs floor

def _nbval_seconds(paths: list[Path], cwd: Path, env: dict | None = None) -> float:
    # The same options for the course and its floors: pyproject's addopts (which also run the
    # notebooks in parallel) are replaced by nbval's flags alone, one process, one kernel at a time.
    cmd = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
           "-p", "no:cacheprovider", "-p", "no:randomly", *map(str, paths)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"nbval failed:\n{proc.stdout[-3000:]}")
    return took


def bench_resolutions(repeats: int = 2) -> None:
    """Item 1, not a target: the same nbval of 00-09 at the course's resolution and at its former
    one (80 dpi, 11 pt; course/figures.py applies it when COURSE_FIGURE_RESOLUTION=old), back to
    back. Only the timing run sees the variable: stored outputs are made at the course's."""
    print("1b. strict nbval over notebooks 00-09 at the course's resolution and at the old one")
    old_env = dict(os.environ, COURSE_FIGURE_RESOLUTION="old")
    new, old = [], []
    for _ in range(repeats):
        new.append(_nbval_seconds(FIRST_TEN, ROOT))
        old.append(_nbval_seconds(FIRST_TEN, ROOT, env=old_env))
    print(f"  (resolution) 120 dpi / 12 pt: {min(new):.1f} s; 80 dpi / 11 pt (before): "
          f"{min(old):.1f} s; ratio {min(new) / min(old):.2f} (best of {repeats} each)")
    diagnostics.append(
        f"Item 1, resolution: strict nbval over notebooks 00-09 takes {min(new):.1f} s at the "
        f"course's 120 dpi and 12 pt, {min(old):.1f} s at the former 80 dpi and 11 pt "
        f"({min(new) / min(old):.2f} times; best of {repeats}, back to back).")


# Item 1 measures notebooks 00-09; notebooks added later that train a model or time something
# have budgets of their own.
FIRST_TEN = [p for p in NOTEBOOKS if int(p.name[:2]) <= 9]


def _write_copies(folder: Path, nb, count: int) -> list[Path]:
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    paths = []
    for i in range(count):
        path = folder / f"{i:02d}_floor.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


def _plain_floor(folder: Path, count: int) -> list[Path]:
    """The old floor: one-cell notebooks `1 + 1` (a kernel start and stop, nothing else)."""
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2"},
                                           execution_count=1)]
    return _write_copies(folder, nbformat.v4.new_notebook(cells=[cell]), count)


# The floor of item 1: what every teaching notebook does before it teaches anything (its
# imports and the course's figure style: resolution, fonts incl. the Japanese one, inline
# backend settings), and one small figure like the course's, shown like theirs.
FIGURE_FLOOR_CELLS = [
    "import ipywidgets, matplotlib.pyplot as plt, numpy as np\n"
    "from course import figures\n"
    "\n"
    "figures.use_course_style()",
    "weights = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])\n"
    "tokens = [\"私\", \"は\", \"猫\"]\n"
    "fig, ax = plt.subplots(figsize=(3.4, 2.6), layout=\"constrained\")\n"
    "im = ax.imshow(weights, cmap=\"Blues\", vmin=0, vmax=1)\n"
    "ax.set_xticks(range(3), tokens)\n"
    "ax.set_yticks(range(3), tokens)\n"
    "ax.set(title=\"attention weights A\", xlabel=\"key position j\", "
    "ylabel=\"query position i\")\n"
    "fig.colorbar(im, ax=ax)\n"
    "plt.show()",
]


def _figure_floor(folder: Path, count: int) -> list[Path]:
    """Notebooks of FIGURE_FLOOR_CELLS, their stored outputs from a real run (as regenerate)."""
    from nbclient import NotebookClient
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in FIGURE_FLOOR_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    shown = [o for o in nb.cells[-1].outputs if "image/png" in o.get("data", {})]
    if len(shown) != 1 or any(o.output_type == "error" for c in nb.cells for o in c.outputs):
        raise RuntimeError(f"the figure floor did not draw one figure: {nb.cells}")
    return _write_copies(folder, nb, count)


def bench_nbval(repeats: int = 2) -> None:
    print("1. strict nbval over notebooks 00-09 vs as many figure-floor notebooks")
    count = len(FIRST_TEN)
    with tempfile.TemporaryDirectory() as tmp:
        plain, figure = Path(tmp) / "plain", Path(tmp) / "figure"
        plain.mkdir()
        figure.mkdir()
        plain_nbs = _plain_floor(plain, count)
        figure_nbs = _figure_floor(figure, count)
        plain_floor = min(_nbval_seconds(plain_nbs, plain) for _ in range(repeats))
        floor = min(_nbval_seconds(figure_nbs, figure) for _ in range(repeats))
    course = min(_nbval_seconds(FIRST_TEN, ROOT) for _ in range(repeats))
    ratio = course / floor
    record(1, f"{count} notebooks {course:.1f} s vs figure floor {floor:.1f} s",
           f"ratio {ratio:.2f}", "<= 1.5", ratio <= 1.5)
    print(f"  (floors) figure floor {floor:.1f} s; plain floor (`1 + 1`) {plain_floor:.1f} s, "
          f"so the figure floor is {floor / plain_floor:.2f} and the course "
          f"{course / plain_floor:.2f} times the plain one")
    diagnostics.append(
        f"Item 1, both floors: {count} notebooks that import what every teaching notebook "
        f"imports, apply the course's figure style and draw one small heatmap take {floor:.1f} s; "
        f"{count} one-cell `1 + 1` notebooks (the old floor) take {plain_floor:.1f} s. The course "
        f"takes {ratio:.2f} times the first and {course / plain_floor:.2f} times the second.")


# ---------------------------------------------------------------- 2. widget callbacks

SWEEP_CELL = r'''
import json as _json, statistics as _st, time as _time
import course.live as _live

def _values(c):
    if hasattr(c, "options") and len(getattr(c, "options", ())):
        return [("index", i) for i in range(len(c.options))]
    if hasattr(c, "min") and hasattr(c, "max"):
        step = getattr(c, "step", 1) or 1
        count = int(round((c.max - c.min) / step)) + 1
        picks = sorted({round(j * (count - 1) / 8) for j in range(9)}) if count > 9 else range(count)
        return [("value", type(c.value)(c.min + k * step)) for k in picks]
    if isinstance(c.value, bool):
        return [("value", True), ("value", False)]
    return []

_out = []
_boxes = [_ref() for _ref in _live.INTERACTIVES]   # weak references: skip widgets already gone
for _w, _box in enumerate(_b for _b in _boxes if _b is not None):
    for _name, _c in _box.controls.items():
        _start = getattr(_c, "index", None) if hasattr(_c, "options") else _c.value
        _times = []
        for _rep in range(2):
            for _attr, _v in _values(_c):
                _t = _time.perf_counter()
                setattr(_c, _attr, _v)      # fires the real observer: compute + draw + send
                _times.append(_time.perf_counter() - _t)
        setattr(_c, "index" if hasattr(_c, "options") else "value", _start)
        _times = _times[1:] or _times     # the very first call may pay one-off costs
        _out.append({"widget": _w, "live": type(_box.live).__name__, "control": _name,
                     "n": len(_times), "median_ms": 1e3 * _st.median(_times),
                     "max_ms": 1e3 * max(_times)})
print("BENCH-JSON " + _json.dumps(_out))
'''


def bench_widgets() -> None:
    from nbclient import NotebookClient
    print("2. kernel-side time of every widget callback (median over a sweep of its values)")
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(SWEEP_CELL))
        client = NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
        line = next((x for x in text.splitlines() if x.startswith("BENCH-JSON ")), None)
        if line is None:
            raise RuntimeError(f"{path.name}: sweep printed nothing: {nb.cells[-1].outputs}")
        for r in json.loads(line[len("BENCH-JSON "):]):
            ok = r["median_ms"] <= 50
            record(2, f"{path.stem} {r['live']}.{r['control']} ({r['n']} values)",
                   f"{r['median_ms']:.1f} ms (max {r['max_ms']:.0f})", "<= 50 ms", ok)


# ---------------------------------------------------------------- 3. browser latency

def bench_browser(run: bool) -> None:
    print("3. browser-visible latency, control change to redrawn output (real-browser test)")
    if run:  # -n 0: one process, so no other test competes with the measured latencies
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0",
                               str(ROOT / "tests" / "test_browser.py")], cwd=ROOT,
                              capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"browser test failed:\n{proc.stdout[-3000:]}")
    if not LATENCY_JSON.exists():
        record(3, "no browser latencies recorded (test skipped?)", "-", "<= 300 ms", False)
        return
    data = json.loads(LATENCY_JSON.read_text())
    print(f"  (recorded {data['created_utc']}, Chromium {data['chromium']})")
    for r in data["changes"]:  # ms: user event -> both the new text and the new image shown
        ms = float(r["ms"])
        record(3, f"{Path(r['notebook']).stem[:24]} {r['control']}: {r['action']}"[:58],
               f"{ms:.0f} ms", "<= 300 ms", ms <= 300)
    # Run All in JupyterLab, from the menu click to the last cell done (the same test): 00-09 must
    # stay under 5 s (issue #13, at the course's resolution); the notebooks that train a model or
    # time something have their own budget, 15 s (issue #12).
    for name, timings in sorted(data["notebooks"].items()):
        seconds = float(timings["run_all_s"])
        limit = 5.0 if int(Path(name).name[:2]) <= 9 else 15.0
        record(3, f"{Path(name).with_suffix('').as_posix()[:30]}: Run All in JupyterLab",
               f"{seconds:.1f} s", f"<= {limit:.0f} s", seconds <= limit)


# ---------------------------------------------------------------- 4. core vs torch

def _median_time(f, args, repeats: int) -> float:
    f(*args)  # warm up (first-touch page faults, thread pools)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_vs_torch() -> None:
    import torch
    import torch.nn.functional as F

    import attention_core as ac
    print(f"4. scaled_dot_product_attention vs torch {torch.__version__} "
          f"(CPU, float64, d_k = 64, {torch.get_num_threads()} threads)")
    for n in (256, 1024, 4096):
        rng = np.random.default_rng(0)
        Q, K, V = (rng.normal(size=(n, 64)) for _ in range(3))
        tQ, tK, tV = (torch.from_numpy(x) for x in (Q, K, V))
        out, _ = ac.scaled_dot_product_attention(Q, K, V)
        assert np.allclose(out, F.scaled_dot_product_attention(tQ, tK, tV).numpy())
        repeats = 30 if n < 4096 else 10
        ours = _median_time(ac.scaled_dot_product_attention, (Q, K, V), repeats)
        theirs = _median_time(F.scaled_dot_product_attention, (tQ, tK, tV), repeats)
        record(4, f"n = {n}: core {ours * 1e3:.1f} ms, torch {theirs * 1e3:.1f} ms",
               f"ratio {ours / theirs:.2f}", "<= 2", ours / theirs <= 2)


# ---------------------------------------------------------------- 5. tiled vs naive

def _peak_and_time(f):
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    result = f()
    took = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, peak, took


def bench_tiled(n: int = 16384, d_k: int = 64, block_size: int = 1024) -> None:
    import attention_core as ac
    print(f"5. tiled_attention (block_size = {block_size}) vs naive at n = {n}, d_k = {d_k}")
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(n, d_k)) for _ in range(3))
    naive, naive_peak, naive_t = _peak_and_time(lambda: ac.scaled_dot_product_attention(Q, K, V)[0])
    tiled, tiled_peak, tiled_t = _peak_and_time(lambda: ac.tiled_attention(Q, K, V, block_size))
    err = float(np.max(np.abs(naive - tiled)))
    del naive, tiled
    mem, tm = tiled_peak / naive_peak, tiled_t / naive_t
    record(5, f"peak memory: tiled {tiled_peak / 2**20:.0f} MiB, naive {naive_peak / 2**20:.0f} MiB",
           f"ratio {mem:.4f}", "<= 0.1", mem <= 0.1)
    record(5, f"time: tiled {tiled_t:.2f} s, naive {naive_t:.2f} s (max diff {err:.1e})",
           f"ratio {tm:.2f}", "<= 2", tm <= 2)


# ---------------------------------------------------------------- 8. banded tiled attention

def bench_banded(window: int = 128, block_size: int = 128, d_k: int = 32) -> None:
    import attention_core as ac
    print(f"8. tiled_attention(window = {window}, block_size = {block_size}), d_k = {d_k}: time vs n")
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(2048, d_k)) for _ in range(3))
    plain = ac.scaled_dot_product_attention(Q, K, V, ac.sliding_window_mask(2048, window))[0]
    assert np.allclose(ac.tiled_attention(Q, K, V, block_size, window=window), plain, atol=1e-12)
    per_query = {}
    for n in (1024, 2048, 4096, 8192, 16384):
        Q, K, V = (rng.normal(size=(n, d_k)) for _ in range(3))
        best = min(_median_time(ac.tiled_attention, (Q, K, V, block_size, None, window), 1)
                   for _ in range(5))
        per_query[n] = best / n
        print(f"  n = {n:5d}: {best * 1e3:7.1f} ms, {best / n * 1e6:5.2f} us per query", flush=True)
    ratio = per_query[16384] / per_query[1024]
    record(8, "time per query, n = 16384 over n = 1024", f"ratio {ratio:.2f}", "<= 1.5", ratio <= 1.5)


# ---------------------------------------------------------------- 6. parallel test step

# What CI sets: a skip would shrink the suite, so it fails the run instead.
CI_ENV = {"REQUIRE_TORCH": "1", "REQUIRE_BROWSER": "1", "REQUIRE_NO_SKIPS": "1"}


def _busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux /proc/stat), or None.

    Machine-wide, because the suite's own rusage misses much of it: the browsers, servers and
    kernels that the tests start are not all reaped by the process that measures."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    except OSError:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, fields)
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _suite_seconds(extra: list[str]) -> tuple[float, dict, float | None]:
    """The test step of `python3 dev.py test` (pytest with pyproject's options) plus `extra`:
    its seconds, its test counts and the cores the machine kept busy on average meanwhile."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", f"--junitxml={junit}", *extra]
        busy = _busy_cpu_seconds()
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              env=dict(os.environ, **CI_ENV))
        took = time.perf_counter() - start
        busy = None if busy is None else (_busy_cpu_seconds() - busy) / took
        if proc.returncode:
            raise RuntimeError(f"{' '.join(cmd[2:])} failed:\n{proc.stdout[-3000:]}")
        suite = ET.parse(junit).getroot()
        suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
        counts = {k: int(suite.get(k, 0)) for k in ("tests", "skipped", "failures", "errors")}
    return took, counts, busy


def bench_suite(repeats: int) -> None:
    print(f"6. the test step on all cores vs serially (-n 0), same suite, back to back, "
          f"best of {repeats}")
    serial, parallel = [], []  # (seconds, cores used on average)
    kept = LATENCY_JSON.read_bytes() if LATENCY_JSON.exists() else None  # item 3's, from -n 0
    try:
        for _ in range(repeats):  # alternate, so a busy spell of the machine hits both
            took, serial_counts, cores = _suite_seconds(["-n", "0"])
            serial.append((took, cores))
            took, parallel_counts, cores = _suite_seconds([])
            parallel.append((took, cores))
            if serial_counts != parallel_counts or serial_counts["skipped"]:
                raise RuntimeError(f"not the same suite: serial {serial_counts}, "
                                   f"parallel {parallel_counts}")
    finally:
        if kept is not None:
            LATENCY_JSON.write_bytes(kept)
    s, s_cores = min(serial, key=lambda run: run[0])  # the fastest run of each kind
    p, p_cores = min(parallel, key=lambda run: run[0])
    print(f"  serial runs {', '.join(f'{x:.0f}' for x, _ in serial)} s; parallel runs "
          f"{', '.join(f'{x:.0f}' for x, _ in parallel)} s; {serial_counts['tests']} tests each, "
          f"none skipped")
    if s_cores is not None:
        # The serial run already keeps s_cores busy (browsers, servers and kernels beside
        # pytest): the same work on os.cpu_count() cores cannot take less than this share.
        bound = s_cores / os.cpu_count()
        print(f"  cores busy on average: serial {s_cores:.2f}, parallel {p_cores:.2f} of "
              f"{os.cpu_count()}; so the parallel run cannot take less than {bound:.2f} times "
              f"the serial one")
        diagnostics.append(
            f"Item 6: the serial test step kept {s_cores:.2f} of the {os.cpu_count()} cores busy "
            f"on average and the parallel one {p_cores:.2f} (whole machine, /proc/stat), so the "
            f"same work cannot take less than {bound:.2f} times the serial time on this machine.")
    record(6, f"{serial_counts['tests']} tests: parallel {p:.0f} s, serial {s:.0f} s "
              f"({os.cpu_count()} cores)", f"ratio {p / s:.2f}", "<= 0.6", p / s <= 0.6)


# ---------------------------------------------------------------- 7. a class on one server

HUB_STUDENTS = "1,5,10,20"
HUB_MOVES, HUB_THINK_S = 10, 1.0  # slider moves per student, about 1 s apart (0.5-1.5 s)


def _p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (with 10 values: the largest)."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def _hub_class(hubctl, students, n: int) -> dict:
    """One hub, n new Unix users, the whole class at once; everything removed afterwards."""
    import pwd
    import secrets
    import shutil

    tag = secrets.token_hex(3)
    names = [f"{hubctl.STUDENT_PREFIX}{tag}-{k}" for k in range(1, n + 1)]
    tmp = Path(tempfile.mkdtemp(prefix="an-hub-bench-"))
    tmp.chmod(0o755)
    created, hub, memory = [], None, {}
    try:
        repo = hubctl.publish_course(tmp / "course.git")
        for name in names:
            hubctl.create_student(name, trust=[tmp / "course.git"])
            created.append(name)
        hub = hubctl.Hub(tmp / "state", names)
        hub.start()
        link = hubctl.course_link(hub.url, repo, notebook=hubctl.NOTEBOOK_03)

        def after(s):  # the student's server and kernel, still running
            memory[s.name] = students.memory_of_uid(pwd.getpwnam(s.name).pw_uid)

        start = time.perf_counter()
        results = students.run_class(hub.url, names, hub.password, link, repo, "main",
                                     hubctl.COURSE_FOLDER, hubctl.NOTEBOOK_03, HUB_MOVES,
                                     HUB_THINK_S, after=after)
        took = time.perf_counter() - start
        hub_rss = 0.0  # the hub and its proxy: paid once, whatever the class size
        for pid in hub.own_pids():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    hub_rss += int(line.split()[1]) / 1024
        return {"results": results, "memory": memory, "took": took, "hub_rss_mib": hub_rss}
    finally:
        if hub is not None:
            hub.stop()
            logs = ROOT / "artifacts" / "hub"   # the hub's log (and every server's) of this class
            logs.mkdir(parents=True, exist_ok=True)
            shutil.copy(hub.log_path, logs / f"bench-N{n}.log")
        for name in created:
            hubctl.remove_student(name)
        shutil.rmtree(tmp, ignore_errors=True)


def _median_max(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f} s ({max(xs):.1f} s)" if xs else "-"


def bench_hub(counts: list[int]) -> None:
    sys.path.insert(0, str(ROOT / "hub"))
    import hubctl
    import students

    print(f"7. a class on one server: N students at once log in, pull the course, run notebook 03, "
          f"move its d_k slider {HUB_MOVES} times")
    reasons = hubctl.problems()
    if reasons:
        print("  not run: " + "; ".join(reasons))
        record(7, "not run (see the reason above)", "-", "<= 1000 ms", False)
        return
    table = ["| N | login to ready server, median (max) | run-all, median (max) | slider median "
             "| slider p95 | memory per student (PSS; RSS) | hub + proxy (RSS) | errors |",
             "|---|---|---|---|---|---|---|---|"]
    served, all_passed = 0, True  # served: the largest N such that it and every smaller N passed
    for n in counts:
        run = _hub_class(hubctl, students, n)
        res = run["results"]
        errors = [e for r in res for e in r.errors]
        lat = [ms for r in res for ms in r.slider_ms]
        ready = sorted(r.ready_s for r in res if r.ready_s is not None)
        run_all = sorted(r.run_all_s for r in res if r.run_all_s is not None)
        pss = [m["pss_mib"] for m in run["memory"].values()]
        rss = [m["rss_mib"] for m in run["memory"].values()]
        p95 = _p95(lat) if lat else float("inf")
        med = statistics.median(lat) if lat else float("inf")
        ok = p95 <= 1000 and not errors and len(lat) == n * HUB_MOVES
        all_passed = all_passed and ok
        served = n if all_passed else served
        record(7, f"N = {n}: slider p95 (median {med:.0f} ms), {len(errors)} errors",
               f"{p95:.0f} ms", "<= 1000 ms", ok)

        mem = f"{statistics.median(pss):.0f} MiB; {statistics.median(rss):.0f} MiB" if pss else "-"
        table.append(f"| {n} | {_median_max(ready)} | {_median_max(run_all)} | {med:.0f} ms | "
                     f"{p95:.0f} ms | {mem} | {run['hub_rss_mib']:.0f} MiB | {len(errors)} |")
        print(f"  N = {n:2d}: ready {_median_max(ready)}, run-all {_median_max(run_all)}, slider "
              f"{med:.0f} / {p95:.0f} ms (median / p95 of {len(lat)} moves), per student {mem} "
              f"(PSS; RSS), hub + proxy {run['hub_rss_mib']:.0f} MiB, {len(errors)} errors, "
              f"whole class {run['took']:.0f} s", flush=True)
        for e in errors[:5]:
            print(f"    error: {e[:300]} (hub log: artifacts/hub/bench-N{n}.log)")
    diagnostics.append(
        f"Item 7, a class on one server (hub/, {HUB_MOVES} slider moves per student about "
        f"{HUB_THINK_S:.0f} s apart, all students starting at once):\n\n" + "\n".join(table)
        + "\n\nLargest class measured with slider p95 <= 1 s and no errors: "
        + (f"{served} students." if served else "none."))


# ---------------------------------------------------------------- report

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


def write_results(partial: bool = False) -> None:
    """The whole record: benchmarks/RESULTS.md and docs/benchmarks.md's summary. A run of some
    items only (--only, --skip-...) writes benchmarks/RESULTS-partial.md and leaves the record of
    the last full run as it is."""
    if partial:
        out = RESULTS.with_name("RESULTS-partial.md")
        out.parent.mkdir(exist_ok=True)
        out.write_text("# Benchmark results of a partial run (not the record)\n\n"
                       f"Machine: {machine()}.\n\n| # | case | measured | target | |\n|---|---|---|---|---|\n"
                       + "".join(f"| {a} | {b} | {c} | {d} | {e} |\n" for a, b, c, d, e in rows))
        print(f"\nwrote {out.relative_to(ROOT)} (a partial run: the record in "
              f"{RESULTS.relative_to(ROOT)} is left as it is)")
        return
    table = ["| # | case | measured | target | |", "|---|---|---|---|---|"]
    table += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        "# Benchmark results\n\n"
        f"Measured by `python3 dev.py bench` on {when}.\n\n"
        f"Machine: {machine()}.\n\n" + "\n".join(table) + "\n\n"
        "Items: 1 strict nbval over notebooks 00-09 vs as many notebooks that import, apply the "
        "course's figure style and draw one small figure; 2 kernel-side "
        "widget callback (compute + draw + send), median over a sweep of each control; 3 browser "
        "latency from a control change to the redrawn text and image; 4 core vs torch "
        "F.scaled_dot_product_attention, float64 CPU; 5 tiled vs naive attention at n = 16384; "
        "6 the test step of `python3 dev.py test` on all cores vs serially, same suite, same "
        "run; 7 a class of N students on one JupyterHub.\n"
        + "".join(f"\n{d}\n" for d in diagnostics))
    missed = sum(r[4] == "MISSED" for r in rows)
    names = {1: "nbval 00-09 vs figure floor", 2: "widget callback, kernel side",
             3: "browser latency; Run All in JupyterLab", 4: "core vs torch sdpa (float64)", 5: "tiled vs naive, n = 16384",
             6: "test step, parallel vs serial",
             7: "a class on one server (hub)", 8: "banded tiled attention, time per query",
             9: "test step, quick run, one notebook vs one nbval pass"}
    short = ["| # | measurement | target | met | worst case |", "|---|---|---|---|---|"]
    for item in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == item]
        bad = [r for r in mine if r[4] == "MISSED"]
        worst = max(mine, key=lambda r: _number(r[2]) / _number(r[3]))  # closest to its target
        targets = " and ".join(dict.fromkeys(r[3] for r in mine))
        short.append(f"| {item} | {names[item]} | {targets} | {len(mine) - len(bad)} of "
                     f"{len(mine)} | {worst[2]} ({worst[1]}) |")
    summary = (f"Last run ({when}, {machine().split(';')[0]}): {len(rows) - missed} of {len(rows)} "
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-browser", action="store_true", help="reuse the last latency.json")
    ap.add_argument("--skip-nbval", action="store_true")
    ap.add_argument("--skip-old-resolution", action="store_true",
                    help="item 1: leave out the nbval time at the former 80 dpi / 11 pt")
    ap.add_argument("--skip-suite", action="store_true",
                    help="skip item 6 (runs the whole test suite twice per repeat)")
    ap.add_argument("--suite-repeats", type=int, default=2, metavar="N",
                    help="item 6: best of N alternating serial/parallel pairs (default 2)")
    ap.add_argument("--skip-hub", action="store_true", help="leave out item 7 (the hub)")
    ap.add_argument("--hub-students", default=HUB_STUDENTS, help="item 7: class sizes")
    ap.add_argument("--only", default="1,2,3,4,5,6,7,8,9")
    args = ap.parse_args()
    only = {int(x) for x in args.only.split(",")}
    print(machine(), "\n")
    if 1 in only and not args.skip_nbval:
        bench_nbval()
        if not args.skip_old_resolution:
            bench_resolutions()
    if 2 in only:
        bench_widgets()
    if 3 in only:
        bench_browser(run=not args.skip_browser)
    if 4 in only:
        bench_vs_torch()
    if 5 in only:
        bench_tiled()
    if 8 in only:
        bench_banded()
    if 6 in only and not args.skip_suite:
        bench_suite(args.suite_repeats)
    if 9 in only and not args.skip_suite:
        import bench_test_step  # scripts/ is on sys.path: this file runs as a script
        bench_test_step.bench_test_step(record, _suite_seconds, dict(os.environ, **CI_ENV))
    if 7 in only and not args.skip_hub:
        bench_hub([int(x) for x in args.hub_students.split(",")])
    partial = (only != {1, 2, 3, 4, 5, 6, 7, 8, 9} or args.skip_nbval or args.skip_old_resolution
               or args.skip_suite or args.skip_hub)
    write_results(partial)
    return 0


if __name__ == "__main__":
    sys.exit(main())
