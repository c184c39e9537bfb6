"""Bench item 9 (issue 24): the test step against one strict nbval pass, as the course grows.

The yardstick is one strict nbval pass over every notebook of both editions on all cores
(`-n auto`), timed in the same run as what it is compared with:

- the test step of `python3 dev.py test` (pytest with pyproject's options, as CI runs it, no skip
  allowed): target <= 5 times the pass;
- the quick run for contributors (CONTRIBUTING.md, "A quick run while you work"): <= 1 time;
- one notebook's own checks (its companion's test file and its strict nbval, both editions),
  for a typical notebook (04) and the slowest (10): <= 0.4 times each.

Each command runs once (the whole item takes about 2 test steps); bench.py prints the rows.
"""

from __future__ import annotations

from pathlib import Path

from bench_report import pytest_seconds  # scripts/ is on sys.path: bench.py runs as a script

ROOT = Path(__file__).resolve().parents[1]
QUICK_RUN = ["tests/test_core.py", "tests/test_attention_checks.py", "tests/test_learning.py",
             "tests/test_positions.py", "tests/test_properties.py", "tests/test_checks.py",
             "tests/test_no_reveal.py", "tests/test_live.py",
             *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_nb*.py"))]
ONE_NOTEBOOK = ("04_masking", "10_learning_to_attend")


def _seconds(args: list[str], env: dict) -> float:
    """pytest `args` from the repository root (pyproject's options apply): its wall time."""
    return pytest_seconds(["-p", "no:cacheprovider", *args], ROOT, env)


def nbval_pass_seconds(env: dict) -> float:
    """Strict nbval over notebooks/ and notebooks/ja/, nothing else, on all cores."""
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("**/[0-9][0-9]_*.ipynb"))
    return _seconds(["-o", "addopts=", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
                     str(ROOT / "tests" / "nbval_sanitize.cfg"), "-n", "auto", "--dist", "loadfile",
                     *notebooks], env)


def bench_test_step(record, suite_seconds, env: dict) -> None:
    print("9. the test step, the quick run and one notebook's checks against one strict nbval "
          "pass over both editions (-n auto), in the same run")
    base = nbval_pass_seconds(env)
    count = len(list((ROOT / "notebooks").glob("**/[0-9][0-9]_*.ipynb")))
    print(f"  one strict nbval pass over {count} notebooks (both editions): {base:.0f} s")
    full, counts, _cores = suite_seconds([])
    record(9, f"test step ({counts['tests']} tests) {full:.0f} s vs nbval pass {base:.0f} s",
           f"ratio {full / base:.1f}", "<= 5", full / base <= 5)
    quick = _seconds(QUICK_RUN, env)
    record(9, f"quick run {quick:.0f} s vs nbval pass {base:.0f} s", f"ratio {quick / base:.2f}",
           "<= 1", quick / base <= 1)
    for stem in ONE_NOTEBOOK:
        mine = [f"tests/test_nb{stem}.py", f"notebooks/{stem}.ipynb", f"notebooks/ja/{stem}.ipynb"]
        took = _seconds(mine, env)
        record(9, f"notebook {stem[:2]}'s own checks {took:.0f} s vs nbval pass {base:.0f} s",
               f"ratio {took / base:.2f}", "<= 0.4", took / base <= 0.4)
