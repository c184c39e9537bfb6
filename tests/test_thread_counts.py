"""The numbers the notebooks print do not depend on the BLAS thread count (issue #12's standard).

The stored outputs come from `python3 dev.py regenerate` with the BLAS library's default thread
count (one per core: 2 on the course's reference machine), and strict nbval compares them in the
same setting. This test runs strict nbval over every English notebook once more with one BLAS
thread: a printed number that differs is rounded too finely, or computed in an order that
depends on how the BLAS splits the work.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def test_the_blas_reads_the_thread_count_we_set():
    """Without this, the test below could pass with the default thread count."""
    code = ("import numpy, threadpoolctl; "
            "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info()))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **ONE_THREAD},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "1"


def test_the_blas_uses_the_kernels_the_outputs_were_computed_with():
    """On x86-64, OpenBLAS's Haswell kernels whatever the CPU (dev.DETERMINISTIC_ENV): with the
    kernels it would pick itself (SkylakeX on an Intel Xeon), notebook 10 prints other numbers."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OPENBLAS_CORETYPE=Haswell applies to x86-64 only")
    code = ("import numpy, threadpoolctl; "
            "print({p.get('architecture') for p in threadpoolctl.threadpool_info()})")
    out = subprocess.run([sys.executable, "-c", code], env=os.environ.copy(), capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "{'Haswell'}"


def test_stored_outputs_hold_with_one_blas_thread():
    cmd = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
           "-p", "no:cacheprovider", "-p", "no:randomly", *map(str, NOTEBOOKS)]
    proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **ONE_THREAD}, capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"with one BLAS thread:\n{proc.stdout[-4000:]}"
