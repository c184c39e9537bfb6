"""Bench item 6: the test step on all cores against the same suite with `-n 0`, back to back.

Its `suite_seconds` (the test step, timed) serves item 9 too (bench_test_step.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from bench_report import LATENCY_JSON, ROOT, diagnostics, record


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


def suite_seconds(extra: list[str]) -> tuple[float, dict, float | None]:
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
            took, serial_counts, cores = suite_seconds(["-n", "0"])
            serial.append((took, cores))
            took, parallel_counts, cores = suite_seconds([])
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
