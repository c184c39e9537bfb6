"""The numbers the notebooks print do not depend on the BLAS thread count (issue #12's standard).

The stored outputs come from `python3 dev.py regenerate` with the BLAS library's default thread
count (one per core: 2 on the course's reference machine). Every kernel of a test run computes
with one BLAS thread (the root conftest.py sets it before any kernel starts), so strict nbval
over every notebook compares a one-thread run with outputs stored at another count: a printed
number that differs is rounded too finely, or computed in an order that depends on how the BLAS
splits the work. These tests check that this setting is in force, and that the stored outputs
were not made with it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

import dev
from dev import TEST_THREADS

ROOT = Path(__file__).resolve().parents[1]
BLAS_INFO = ("import numpy, threadpoolctl; info = threadpoolctl.threadpool_info(); "
             "print(max(p['num_threads'] for p in info), sorted({p.get('architecture') for p in info}))")


def _kernel_like_blas(env: dict) -> tuple[int, str]:
    """The BLAS thread count and kernels a process started with `env` uses (as a kernel would)."""
    out = subprocess.run([sys.executable, "-c", BLAS_INFO], env=env, capture_output=True,
                         text=True, check=True).stdout.split(" ", 1)
    return int(out[0]), out[1].strip()


def test_every_kernel_of_the_test_run_computes_with_one_blas_thread():
    """What nbval's kernels inherit (os.environ of this run): one thread. Without it, strict
    nbval would compare outputs at the thread count they were stored with."""
    assert {k: os.environ.get(k) for k in TEST_THREADS} == TEST_THREADS
    threads, _ = _kernel_like_blas(os.environ.copy())
    assert threads == 1


def test_the_stored_outputs_are_made_with_another_thread_count():
    """regenerate runs with dev.py's environment, which leaves the thread count to the BLAS (one
    per core), on a machine with more than one core (docs/run-times.json records it)."""
    assert not set(TEST_THREADS) & set(dev.DETERMINISTIC_ENV)
    env = {k: v for k, v in os.environ.items() if k not in TEST_THREADS}
    threads, _ = _kernel_like_blas({**env, **dev.DETERMINISTIC_ENV})
    assert threads > 1 or (os.cpu_count() or 1) == 1  # the BLAS's own default: one per core
    machines = {r["machine"] for r in json.loads((ROOT / "docs" / "run-times.json").read_text()).values()}
    assert all(", 1 cores" not in m and ", 1 core," not in m for m in machines), machines


def test_the_blas_uses_the_kernels_the_outputs_were_computed_with():
    """On x86-64, OpenBLAS's Haswell kernels whatever the CPU (dev.DETERMINISTIC_ENV): with the
    kernels it would pick itself (SkylakeX on an Intel Xeon), notebook 10 prints other numbers."""
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("OPENBLAS_CORETYPE=Haswell applies to x86-64 only")
    _, kernels = _kernel_like_blas(os.environ.copy())
    assert kernels == "['Haswell']"


NUMPY_SIMD = ("from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f; "
              "print(' '.join(d)); print(' '.join(k for k in d if f.get(k)))")


def test_numpy_computes_with_its_avx2_loops_on_every_cpu():
    """numpy's AVX-512 loops are off in every kernel of the run (dev.simd_env): a kernel that
    started with the run's environment imports numpy and has none of them in use. On a CPU
    without AVX-512 they are off anyway; then this checks that the names are numpy's own (numpy
    refuses to import with one it does not know), on an AVX-512 CPU that the switch works."""
    out = subprocess.run([sys.executable, "-c", NUMPY_SIMD], env=os.environ.copy(),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    dispatched, in_use = out[0].split(), (out[1].split() if len(out) > 1 else [])
    wanted = dev.avx512_names(dispatched)
    assert platform.machine() not in ("x86_64", "AMD64") or wanted, dispatched
    assert os.environ.get("NPY_DISABLE_CPU_FEATURES", "").split() == wanted
    assert not set(wanted) & set(in_use), in_use


def test_the_avx512_targets_of_each_numpy_version_are_found():
    """The names numpy 2.0 and 2.4 dispatch on x86-64 (their `__cpu_dispatch__`)."""
    numpy_2_0 = ["SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2", "AVX512F",
                 "AVX512CD", "AVX512_KNL", "AVX512_KNM", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL",
                 "AVX512_ICL"]
    numpy_2_4 = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert dev.avx512_names(numpy_2_0) == numpy_2_0[8:]
    assert dev.avx512_names(numpy_2_4) == ["X86_V4", "AVX512_ICL", "AVX512_SPR"]
    assert dev.avx512_names(["NEON", "ASIMD", "ASIMDHP"]) == []   # an arm64 machine: nothing to switch off
