"""attention_checks.positions: sinusoidal positional encoding and rotary positions (RoPE).
"""

from __future__ import annotations

import numpy as np

from .arrays import as_array, finite_real, positive_int

def positional(num_positions, d_model, k=None):
    """num_positions (or the offset k) and an even d_model (sin/cos pairs)."""
    first = positive_int("num_positions", num_positions) if k is None else finite_real("k", k)
    d_model = positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even (sin/cos pairs), got d_model = {d_model}")
    return first, d_model


def rope(x, positions, base):
    """rope's x (..., n, d) with d even, positions (n integers; default 0..n-1) and base > 1."""
    x = as_array("x", x, min_ndim=2)
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"x's last axis d must be even (features are rotated in pairs), got d = {d}")
    p = np.arange(n) if positions is None else np.asarray(positions)
    if p.dtype.kind not in "iu" or p.dtype == bool:
        raise ValueError(f"positions must be integers (the token positions), got dtype {p.dtype}: "
                         f"{np.ravel(p)[:3].tolist()!r}")
    if p.ndim != 1 or p.shape[0] != n:
        raise ValueError(f"positions must be a 1-D array of length n = {n} (one position per "
                         f"row of x), got shape {p.shape}; a cached query at position t takes "
                         "positions=[t]")
    base = finite_real("base", base)
    if base <= 1:
        raise ValueError(f"base must be > 1 (theta_j = base^(-2j/d) must fall with j), got base = {base}")
    return x, p.astype(np.int64), base
