"""Bench item 4: attention_core.scaled_dot_product_attention against torch's, CPU, float64."""

from __future__ import annotations

import numpy as np

from bench_report import median_time, record


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
        ours = median_time(ac.scaled_dot_product_attention, (Q, K, V), repeats)
        theirs = median_time(F.scaled_dot_product_attention, (tQ, tK, tV), repeats)
        record(4, f"n = {n}: core {ours * 1e3:.1f} ms, torch {theirs * 1e3:.1f} ms",
               f"ratio {ours / theirs:.2f}", "<= 2", ours / theirs <= 2)
