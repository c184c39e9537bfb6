"""attention_checks.masks: the additive masks (0 = may attend, -inf = may not).

Boolean and 0/1 masks are refused, with how to convert them; a mask broadcasts to the scores
(..., n, m) without enlarging them. The sizes of causal masks (queries that are the last n of m
positions) and the lengths of padding masks.
"""

from __future__ import annotations

import numpy as np

from .arrays import as_numbers, positive_int

BOOL_MASK_HELP = (
    "attention_core only takes ADDITIVE masks: 0 where a key may be seen, -inf where it may "
    "not. A boolean mask is ambiguous: PyTorch uses True = may attend in "
    "F.scaled_dot_product_attention but True = may NOT attend in nn.MultiheadAttention "
    "(attn_mask, key_padding_mask). Convert it: np.where(allowed, 0.0, -np.inf) if True "
    "means 'may attend', or np.where(blocked, -np.inf, 0.0) if True means 'may not'")


def as_mask(mask, target_shape: tuple[int, ...], name: str = "mask",
            per_head_hint: bool = False) -> np.ndarray:
    """Check an additive mask: finite or -inf values, broadcastable to target_shape (..., n, m)
    without enlarging it (no new batch entries, no new axes)."""
    if np.asarray(mask).dtype == bool:
        raise ValueError(f"{name} is boolean (shape {np.shape(mask)}); {BOOL_MASK_HELP}")
    M = as_numbers(name, mask)
    top = np.max(M) if M.size else 0.0  # NaN and +inf show up here: one pass over the mask
    if np.isnan(top) or top == np.inf:
        bad = tuple(int(i) for i in np.argwhere(np.isnan(M) | (M == np.inf))[0])
        raise ValueError(f"{name} may only hold finite numbers (0 = may attend) and -inf "
                         f"(may not); it contains NaN or +inf: {M[bad]} at index {bad} "
                         f"(shape {M.shape})")
    if top == 1 and np.all((M == 0) | (M == 1)):
        raise ValueError(f"{name} holds only 0 and 1 (shape {M.shape}): that is an indicator "
                         f"mask, and adding 1 to a score blocks nothing; {BOOL_MASK_HELP}")
    try:
        full = np.broadcast_shapes(M.shape, target_shape)
    except ValueError:
        raise ValueError(f"{name} of shape {M.shape} does not broadcast to the scores' shape "
                         f"{target_shape} (..., n, m)") from None
    if full != target_shape:
        hint = ("; multi-head attention uses the same mask for every head: a per-head mask "
                "(..., h, n, m) is not supported (run scaled_dot_product_attention on each "
                "head instead)" if per_head_hint else "")
        raise ValueError(f"{name} of shape {M.shape} would enlarge the scores' shape "
                         f"{target_shape} to {full}; a mask must broadcast to (..., n, m) "
                         f"without adding axes or batch entries (its axes must match the "
                         f"scores' or be 1){hint}")
    return M


def query_key_sizes(n, m) -> tuple[int, int]:
    """n queries that are the last n of m >= n positions (m defaults to n)."""
    n = positive_int("n", n)
    m = n if m is None else positive_int("m", m)
    if m < n:
        raise ValueError(f"m = {m} keys is fewer than n = {n} queries: the queries are the last "
                         "n of the m positions, so m must be at least n")
    return n, m


def lengths(lengths, m: int) -> np.ndarray:
    """padding_mask's lengths: 1-D integers in 1..m."""
    m = positive_int("m", m)
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(f"lengths must be a 1-D list of integers, got {lengths.tolist()!r}")
    if np.any(lengths < 1) or np.any(lengths > m):
        raise ValueError(f"every length must be in 1..m = 1..{m}, got {lengths.tolist()}")
    return lengths
