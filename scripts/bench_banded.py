"""Bench item 8: banded tiled attention (notebook 14), time per query against n."""

from __future__ import annotations

import numpy as np

from bench_report import median_time, record


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
        best = min(median_time(ac.tiled_attention, (Q, K, V, block_size, None, window), 1)
                   for _ in range(5))
        per_query[n] = best / n
        print(f"  n = {n:5d}: {best * 1e3:7.1f} ms, {best / n * 1e6:5.2f} us per query", flush=True)
    ratio = per_query[16384] / per_query[1024]
    record(8, "time per query, n = 16384 over n = 1024", f"ratio {ratio:.2f}", "<= 1.5", ratio <= 1.5)
