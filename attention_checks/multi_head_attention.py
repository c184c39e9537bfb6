"""attention_checks.multi_head_attention: multi-head and grouped-query attention.

Splitting into heads and merging them, the arguments of multi_head_attention (checked once for
the forward and the backward pass), grouped-query attention's h query heads per h_kv key/value
heads, and, after computing, a projection that overflowed.
"""

from __future__ import annotations

import numpy as np

from .arrays import _batch, as_array, finite, positive_int
from .masks import as_mask

def heads(X, num_heads=None) -> tuple[np.ndarray, int | None]:
    """split_heads' X (..., n, h*d) and h (h must divide the last axis); merge_heads' X (..., h, n, d)."""
    if num_heads is None:
        return as_array("X", X, min_ndim=3), None
    X = as_array("X", X, min_ndim=2)
    num_heads = positive_int("num_heads", num_heads)
    if X.shape[-1] % num_heads:
        raise ValueError(f"last dimension {X.shape[-1]} of shape {X.shape} is not divisible by "
                         f"num_heads = {num_heads}")
    return X, num_heads


def multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, mask_name="mask",
               num_kv_heads=None):
    """The arguments of multi_head_attention and of its backward pass, checked once for both.

    Returns X_q, X_kv, W_Q, W_K, W_V, W_O as float arrays, h, h_kv and the mask M (or None).
    """
    X_q = as_array("X_q", X_q, min_ndim=2)
    X_kv = as_array("X_kv", X_kv, min_ndim=2)
    W_Q, W_K, W_V, W_O = (as_array(name, W, min_ndim=2) for name, W in
                          (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))
    h = positive_int("num_heads", num_heads)
    h_kv = h if num_kv_heads is None else positive_int("num_kv_heads", num_kv_heads)
    if h % h_kv:
        raise ValueError(f"num_heads = {h} is not a multiple of num_kv_heads = {h_kv}: each "
                         "key/value head must serve the same number of query heads")
    d_model = X_q.shape[-1]
    if X_kv.shape[-1] != d_model:
        raise ValueError(f"X_q and X_kv must have the same d_model, got X_q {X_q.shape} "
                         f"and X_kv {X_kv.shape}")
    if X_kv.shape[-2] == 0:
        raise ValueError(f"X_kv has m = 0 key positions (shape {X_kv.shape}); every query "
                         "needs at least one key (softmax over no keys is undefined)")
    batch = _batch(X_q, X_kv, names=f"X_q {X_q.shape} and X_kv {X_kv.shape}")
    for name, W, heads, heads_name in (("W_Q", W_Q, h, "num_heads"), ("W_K", W_K, h_kv, "num_kv_heads"),
                                       ("W_V", W_V, h_kv, "num_kv_heads")):
        if W.ndim != 2 or W.shape[0] != d_model:
            raise ValueError(f"{name} must have shape (d_model, h*d) = ({d_model}, ...), "
                             f"got {W.shape}")
        if W.shape[1] % heads:
            raise ValueError(f"{name} has {W.shape[1]} columns, not divisible by "
                             f"{'num_heads' if h_kv == h else heads_name} = {heads} (shape {W.shape})")
    if h_kv == h and W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q and W_K must have the same shape (d_model, h*d_k), got "
                         f"W_Q {W_Q.shape} and W_K {W_K.shape}")
    if h_kv != h and W_K.shape[1] // h_kv != W_Q.shape[1] // h:
        raise ValueError(f"W_K must have shape (d_model, h_kv*d_k) = ({d_model}, "
                         f"{h_kv * (W_Q.shape[1] // h)}) for h_kv = {h_kv} heads of the width "
                         f"d_k = {W_Q.shape[1] // h} of W_Q {W_Q.shape}, got {W_K.shape}")
    if W_Q.shape[1] == 0:
        raise ValueError(f"W_Q and W_K have 0 columns (shape {W_Q.shape}), so d_k = 0; the "
                         "scale 1/sqrt(d_k) is undefined")
    if W_O.shape != (W_V.shape[1] * h // h_kv, d_model):
        raise ValueError(f"W_O must have shape (h*d_v, d_model) = ({W_V.shape[1] * h // h_kv}, "
                         f"{d_model}), got {W_O.shape}")
    M = None
    if mask is not None:
        M = as_mask(mask, (*batch, X_q.shape[-2], X_kv.shape[-2]), mask_name, per_head_hint=True)
        M = M[..., None, :, :] if M.ndim >= 2 else M  # (..., 1, n, m): the same for every head
    return X_q, X_kv, W_Q, W_K, W_V, W_O, h, h_kv, M


def grouped(Q, K, V):
    """grouped_query_attention's Q (..., h, n, d_k), K (..., h_kv, m, d_k), V (..., h_kv, m, d_v),
    with h a multiple of h_kv; returns them and the group size h / h_kv."""
    Q, K, V = (as_array(name, a, min_ndim=3) for name, a in (("Q", Q), ("K", K), ("V", V)))
    if K.shape[-3] != V.shape[-3]:
        raise ValueError(f"K and V must have the same number of heads h_kv, got K {K.shape} "
                         f"and V {V.shape}")
    if K.shape[-3] == 0 or Q.shape[-3] % K.shape[-3]:
        raise ValueError(f"Q has h = {Q.shape[-3]} heads (shape {Q.shape}), not a multiple of "
                         f"h_kv = {K.shape[-3]} key/value heads (K {K.shape}): every key/value "
                         "head must serve the same number of query heads")
    return Q, K, V, Q.shape[-3] // K.shape[-3]


def projections(Q, K, V, X_q, X_kv, W_Q, W_K, W_V) -> None:
    """Q = X_q W_Q, K = X_kv W_K, V = X_kv W_V were computed from finite inputs: did one overflow?"""
    for what, P, x, W, x_name, W_name in (("X_q @ W_Q", Q, X_q, W_Q, "X_q", "W_Q"),
                                          ("X_kv @ W_K", K, X_kv, W_K, "X_kv", "W_K"),
                                          ("X_kv @ W_V", V, X_kv, W_V, "X_kv", "W_V")):
        finite(what, P, {x_name: x, W_name: W})
