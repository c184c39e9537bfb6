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
7. a class on one server (hub/): N = 1, 5, 10, 20, 30 simulated students log in to
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

10. the static edition with its live figures' frames (scripts/bench_site.py): `dev.py site`
    from scratch (<= 90 s) and again unchanged (no frame redrawn), the site's size (<= 100 MB),
    and in Chromium a slider step to its frame (<= 100 ms, the slowest).

Item 1 also prints, not as a target, the nbval time of 00-09 at the course's figure resolution
and at its former one (80 dpi, 11 pt).

Writes benchmarks/RESULTS.md (with the machine it ran on) and the summary table
between the bench markers in docs/benchmarks.md. Options: --skip-browser, --skip-nbval,
--skip-old-resolution,
--skip-suite, --suite-repeats N, --skip-hub, --hub-students N[,N...],
--only N[,N...].

This file is the entry point: each item is a module of its own beside it (bench_nbval.py for 1,
bench_widgets.py 2, bench_browser.py 3, bench_torch.py 4, bench_tiled.py 5, bench_suite.py 6,
bench_hub.py 7, bench_banded.py 8, bench_test_step.py 9, bench_site.py 10), and bench_report.py
holds what they share: the recorded rows, the machine and the writing of the results.
"""

from __future__ import annotations

import argparse
import os
import sys

# scripts/ is on sys.path: this file runs as a script
import bench_banded
import bench_browser
import bench_hub
import bench_nbval
import bench_site
import bench_suite
import bench_test_step
import bench_tiled
import bench_torch
import bench_widgets
from bench_report import machine, record, write_results


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
    ap.add_argument("--hub-students", default=bench_hub.HUB_STUDENTS, help="item 7: class sizes")
    ap.add_argument("--only", default="1,2,3,4,5,6,7,8,9,10")
    args = ap.parse_args()
    only = {int(x) for x in args.only.split(",")}
    print(machine(), "\n")
    if 1 in only and not args.skip_nbval:
        bench_nbval.bench_nbval()
        if not args.skip_old_resolution:
            bench_nbval.bench_resolutions()
    if 2 in only:
        bench_widgets.bench_widgets()
    if 3 in only:
        bench_browser.bench_browser(run=not args.skip_browser)
    if 4 in only:
        bench_torch.bench_vs_torch()
    if 5 in only:
        bench_tiled.bench_tiled()
    if 8 in only:
        bench_banded.bench_banded()
    if 6 in only and not args.skip_suite:
        bench_suite.bench_suite(args.suite_repeats)
    if 9 in only and not args.skip_suite:
        bench_test_step.bench_test_step(record, bench_suite.suite_seconds,
                                        dict(os.environ, **bench_suite.CI_ENV))
    if 10 in only:
        bench_site.bench_site()
    if 7 in only and not args.skip_hub:
        bench_hub.bench_hub([int(x) for x in args.hub_students.split(",")])
    partial = (only != {1, 2, 3, 4, 5, 6, 7, 8, 9, 10} or args.skip_nbval or args.skip_old_resolution
               or args.skip_suite or args.skip_hub)
    write_results(partial)
    return 0


if __name__ == "__main__":
    sys.exit(main())
