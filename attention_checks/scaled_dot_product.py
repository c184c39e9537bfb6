"""attention_checks.scaled_dot_product: softmax and scaled dot-product attention.

The inputs of softmax and of attention (Q, K, V and the mask), and, after computing, why a row
of the scores has no softmax: the mask blocks every key of it, or Q K^T overflowed float64.
"""

from __future__ import annotations

import numpy as np

from .arrays import _batch, as_array, as_numbers
from .masks import as_mask

def _row_list(rows: np.ndarray) -> tuple[str, str]:
    """'s' or '' and the first few indices of the True entries of rows, as text."""
    idx = [tuple(int(i) for i in r) for r in np.argwhere(rows)]
    where = ", ".join(map(str, idx[:5])) + (f" and {len(idx) - 5} more" if len(idx) > 5 else "")
    return ("s" if len(idx) > 1 else ""), where


def softmax_input(x, axis) -> np.ndarray:
    """softmax's x as floats, with an axis it has, of length > 0, and a finite max along it."""
    x = as_numbers("x", x)
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis, got a scalar")
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
            or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an integer in {-x.ndim}..{x.ndim - 1} for input of "
                         f"shape {x.shape}, got {axis!r}")
    if x.shape[axis] == 0:
        raise ValueError(f"softmax over axis {axis} of length 0 is undefined (input shape "
                         f"{x.shape}): there is nothing to share the weight 1 between")
    x_max = np.max(x, axis=axis, keepdims=True)  # NaN and +inf show up here too: one pass
    if np.any(np.isnan(x_max)) or np.any(x_max == np.inf):
        raise ValueError(f"softmax input of shape {x.shape} contains NaN or +inf")
    if np.any(x_max == -np.inf):
        s, where = _row_list(np.squeeze(x_max == -np.inf, axis=axis))
        at = f" at index{'es' if s else ''} {where} of the other axes" if x.ndim > 1 else ""
        raise ValueError(f"softmax input of shape {x.shape} is -inf everywhere along axis "
                         f"{axis}{at}; softmax of a slice that is -inf everywhere is undefined "
                         "(0/0)")
    return x


def attention(Q, K, V, mask):
    """Checked Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v) or None, and the additive mask
    (None, or broadcastable to the scores (..., n, m) without enlarging them)."""
    Q = as_array("Q", Q, min_ndim=2)
    K = as_array("K", K, min_ndim=2)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same last dimension d_k, got Q {Q.shape} "
                         f"and K {K.shape}")
    if Q.shape[-1] == 0:
        raise ValueError(f"Q and K have d_k = 0 features (Q {Q.shape}, K {K.shape}); "
                         "the scale 1/sqrt(d_k) is undefined")
    if K.shape[-2] == 0:
        raise ValueError(f"K has m = 0 key positions (shape {K.shape}); every query needs "
                         "at least one key (softmax over no keys is undefined)")
    if V is None:
        batch = _batch(Q, K, names=f"Q {Q.shape} and K {K.shape}")
    else:
        V = as_array("V", V, min_ndim=2)
        if K.shape[-2] != V.shape[-2]:
            raise ValueError(f"K and V must have the same number of positions m, got K "
                             f"{K.shape} and V {V.shape}")
        batch = _batch(Q, K, V, names=f"Q {Q.shape}, K {K.shape} and V {V.shape}")
    M = None if mask is None else as_mask(mask, (*batch, Q.shape[-2], K.shape[-2]))
    return Q, K, V, M


def _raise_blocked(rows: np.ndarray, shape: tuple[int, ...], what: str) -> None:
    """rows (..., n) is True where every key of that query row is blocked."""
    s, where = _row_list(rows)
    raise ValueError(f"the {what} blocks every key for query row{s} {where} (index over "
                     f"(..., n) of scores with shape {shape}); softmax of a row that is -inf "
                     "everywhere is undefined (0/0)")


def _raise_overflow(rows: np.ndarray, shape: tuple[int, ...], Q, K, names, masked: bool) -> None:
    """rows (..., n) is True where the scores of that query row left float64's range."""
    s, where = _row_list(rows)
    q, k = names
    raise ValueError(f"{q} {k}^T overflowed: the scores{' + mask' if masked else ''} of query "
                     f"row{s} {where} (index over (..., n) of scores with shape {shape}) are "
                     f"beyond float64's range (about 1.8e308), so their softmax cannot be "
                     f"computed; the entries of {q} reach {np.max(np.abs(Q)):.3g} and those "
                     f"of {k} {np.max(np.abs(K)):.3g} in absolute value: scale them down")


def scores(S, M, Q, K, names=("Q", "K"), what="mask") -> None:
    """Say why a row of the scores S = Q K^T / sqrt(d_k) + M (..., n, m) has no softmax, if one has none.

    Q and K are finite (checked) and the mask holds no NaN or +inf (checked), so NaN or +inf
    in a row can only come from Q K^T leaving float64's range. A row that is -inf everywhere
    is the mask's doing if the mask alone blocks it, otherwise an overflow to -inf.
    """
    row_max = np.max(S, axis=-1)  # (..., n): NaN, +inf and -inf all show up here
    if np.all(np.isfinite(row_max)):
        return
    overflow = np.isnan(row_max) | (row_max == np.inf)
    if np.any(overflow):
        _raise_overflow(overflow, S.shape, Q, K, names, M is not None)
    empty = row_max == -np.inf
    if M is not None:
        blocked = empty & np.all(np.broadcast_to(M, S.shape) == -np.inf, axis=-1)
        if np.any(blocked):
            _raise_blocked(blocked, S.shape, what)
    _raise_overflow(empty, S.shape, Q, K, names, M is not None)
