"""Bench item 5: tiled_attention against the naive version at n = 16384: peak memory and time."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from bench_report import record


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
