"""attention_checks.tiled: cost counts and tiled attention.

The sizes of the cost counts, and, after each query block of tiled attention, why a row has no
softmax (the same explanations as scaled dot-product attention's) or its weighted sum overflowed.
"""

from __future__ import annotations

import numpy as np

from .arrays import finite, positive_int
from .scaled_dot_product import _raise_blocked, _raise_overflow

def cost(n, m, d_k, d_v, h, bytes_per_number):
    n = positive_int("n", n)
    m = n if m is None else positive_int("m", m)
    d_k = positive_int("d_k", d_k)
    d_v = d_k if d_v is None else positive_int("d_v", d_v)
    return n, m, d_k, d_v, positive_int("h", h), positive_int("bytes_per_number", bytes_per_number)


def _rows_of_block(rows: np.ndarray, i: int, n: int) -> np.ndarray:
    """rows (..., b_q, 1) of the query block starting at i, as a (..., n) mask of all rows."""
    full = np.zeros((*rows.shape[:-2], n), dtype=bool)
    full[..., i:i + rows.shape[-2]] = rows[..., 0]
    return full


def tile_max(run_max, i: int, shape, Q, K, M) -> None:
    """The running max (..., b_q, 1) of query block i: NaN or +inf means Q K^T overflowed."""
    bad = np.isnan(run_max) | (run_max == np.inf)
    if np.any(bad):
        _raise_overflow(_rows_of_block(bad, i, shape[-2]), shape, Q, K, ("Q", "K"), M is not None)


def tile_sums(run_sum, i: int, shape, Q, K, M, window=None) -> None:
    """The running sums (..., b_q, 1) of query block i after every key: 0 means no weight at all.
    With a window, a row is blocked when the mask hides every key of its window."""
    if np.any(run_sum == 0):  # -inf everywhere: the mask's doing, or Q K^T overflowed
        empty = _rows_of_block(run_sum == 0, i, shape[-2])
        hidden = None if M is None else M == -np.inf
        if hidden is not None and window is not None:
            back = np.arange(shape[-2])[:, None] + shape[-1] - shape[-2] - np.arange(shape[-1])
            hidden = hidden | (back < 0) | (back >= window)  # outside the window counts as hidden
        if hidden is not None and np.any(blocked := empty & np.all(hidden, axis=-1)):
            _raise_blocked(blocked, shape, "mask" if window is None else "mask, within the window,")
        _raise_overflow(empty, shape, Q, K, ("Q", "K"), M is not None)


def tile_output(out, V) -> np.ndarray:
    """acc / l of a query block: finite unless the weighted sum of V overflowed."""
    return finite("the running sum acc = sum exp(s - r) v", out, {"V": V},
                  "scale V down or use scaled_dot_product_attention")
